"""yamlgrad's pytest plugin (entry point `pytest11`): no numpy warning from
yamlgrad in a user's test report.

`import yamlgrad` (and an op pack's import) filters numpy's RuntimeWarnings raised
in its own modules (runtime/errors.py, silence_numpy_warnings): log(0) gives -inf
silently, as in PyTorch. pytest collects and runs every test inside its own
`warnings.catch_warnings()`, which puts the filters back as they were when it
ends: a filter installed by an import during collection is gone before the first
test, and a test's `-W error` or `filterwarnings` come in front of it. So, inside
each test's context, the filters are installed again, in front. They only match
yamlgrad's (and op packs') modules: the user's own numpy code warns as before.
Nothing happens in a run that never imports yamlgrad.
"""

from __future__ import annotations

import sys
from typing import Any


def pytest_runtest_setup(item: Any) -> None:
    errors = sys.modules.get("yamlgrad.runtime.errors")
    if errors is not None:
        errors.resilence_numpy_warnings()
