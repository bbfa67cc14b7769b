"""Running PyTorch programs on yamlgrad: `torch` and every `torch.*` as yamlgrad's.

`install_as_torch()` puts a finder first on `sys.meta_path` that answers
`import torch` with yamlgrad and `import torch.nn.functional` with
`yamlgrad.nn.functional`, the very module objects (one `nn.Module` class, one
grad mode), and registers the yamlgrad modules already loaded under their
`torch.*` names at once. `python -m yamlgrad script.py [args]` (`__main__.py`)
runs a script with it installed.

Three decisions:

* A `torch.*` name yamlgrad has no module for raises ModuleNotFoundError naming
  it, and never falls through to the path finder: a real torch installed beside
  would otherwise serve `torch._C` or `torch.distributed`, whose classes do not
  take yamlgrad's tensors ("argument 'input' must be Tensor, not Tensor").
* Installing while the real torch is imported is refused: its modules are in
  `sys.modules`, where every later `import torch` would find them.
* The import system sets a freshly loaded submodule as an attribute of its
  package. Registering the loaded modules up front keeps `torch.autograd.gradcheck`
  the function it is, not the module of that name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

ERR_REAL_TORCH = (
    "install_as_torch(): the real torch is already imported ({}); install yamlgrad "
    "as torch before anything imports torch (or run the program with "
    "`python -m yamlgrad script.py`)"
)
ERR_NO_MODULE = (
    "No module named '{}': torch is yamlgrad here (yamlgrad.install_as_torch), "
    "and yamlgrad has no module '{}'"
)


class _TorchLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the torch spec on the module; it keeps its own.
        module.__spec__ = self.spec


class TorchFinder(importlib.abc.MetaPathFinder):
    """Finds `torch.<rest>` as `yamlgrad.<rest>`, and nothing else."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        name = "yamlgrad" + fullname[len("torch") :]
        if name in sys.modules:
            return importlib.machinery.ModuleSpec(fullname, _TorchLoader(name))
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(
                ERR_NO_MODULE.format(fullname, name), name=fullname
            )
        return importlib.machinery.ModuleSpec(fullname, _TorchLoader(name))


class TorchAliasHandle:
    """What `install_as_torch()` returns: `remove()` takes the alias away again
    (the `torch.*` names it registered and its finder)."""

    def __init__(self, finder: TorchFinder) -> None:
        self.finder = finder

    def remove(self) -> None:
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
            del sys.modules[name]

    def __enter__(self) -> TorchAliasHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _is_torch_name(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def install_as_torch() -> TorchAliasHandle:
    """Make `import torch` (and `torch.*`) import yamlgrad, in every module.

    >>> import yamlgrad
    >>> handle = yamlgrad.install_as_torch()
    >>> import torch.nn.functional as F      # yamlgrad.nn.functional
    >>> handle.remove()                       # optional: `torch` is free again

    Call it before anything imports torch; installing twice returns the
    installed alias.
    """
    for finder in sys.meta_path:
        if isinstance(finder, TorchFinder):
            return TorchAliasHandle(finder)
    yamlgrad = sys.modules["yamlgrad"]
    real = [
        name
        for name, module in sys.modules.items()
        if _is_torch_name(name)
        and module is not yamlgrad
        and not (module.__name__ or "").startswith("yamlgrad")
    ]
    if real:
        raise ImportError(
            ERR_REAL_TORCH.format(getattr(sys.modules[real[0]], "__file__", real[0]))
        )
    for name, module in list(sys.modules.items()):
        if name == "yamlgrad" or name.startswith("yamlgrad."):
            public = name[len("yamlgrad") :]
            if public.split(".")[1:2] in (["runtime"], ["generated"], ["tools"]):
                continue  # the implementation, which PyTorch's paths never name
            sys.modules.setdefault("torch" + public, module)
    finder = TorchFinder()
    sys.meta_path.insert(0, finder)
    return TorchAliasHandle(finder)
