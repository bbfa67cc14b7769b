"""`ops`: the generated ops, for the runtime code that sits below generated/.

generated/ imports the runtime, so the runtime never imports generated/. The few
places below it that must run an op on Tensors, so that it is recorded (a helper
of a backward formula under `create_graph=True`, CopySlices, a composite), call it
as `ops.<name>`. The package facade fills `ops` in once, at import.
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace
from typing import Any

ops: Any = SimpleNamespace()


def bind_ops(module: ModuleType) -> None:
    """Called once by the facade with generated/VariableType."""
    ops.__dict__.update(vars(module))
