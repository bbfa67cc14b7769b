"""PyTorch's module paths for yamlgrad's public packages.

The public packages live in runtime/ (`yamlgrad.runtime.autograd`) and are
published under PyTorch's paths (`yamlgrad.autograd`), so a program written for
torch imports what it always imports:

    from yamlgrad.autograd.function import Function
    from yamlgrad.autograd.gradcheck import gradcheck
    import yamlgrad.nn.functional as F

Each public name is the very module object of its runtime twin, never a second
copy of it: a second copy would hold a second `Function` class, a second grad
mode state. `publish` registers a package and every submodule already loaded;
`AliasFinder` serves a submodule imported later (a module added to the package
needs no entry anywhere).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any


class _AliasLoader(importlib.abc.Loader):
    """Loads a public name as the runtime module it stands for."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the public spec on the module; it keeps its own.
        module.__spec__ = self.spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds `yamlgrad.<public>.<rest>` as `yamlgrad.runtime.<public>.<rest>`."""

    def __init__(self, packages: dict[str, str]) -> None:
        self.packages = packages  # public prefix -> runtime prefix

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        for public, real in self.packages.items():
            if fullname.startswith(public + "."):
                name = real + fullname[len(public) :]
                try:
                    found = importlib.util.find_spec(name)
                except ModuleNotFoundError:
                    found = None
                if found is None:
                    return None
                return importlib.machinery.ModuleSpec(fullname, _AliasLoader(name))
        return None


_FINDER = AliasFinder({})


def publish(public: str, module: ModuleType) -> None:
    """Register `module` (and its loaded submodules) under the name `public`."""
    real = module.__name__
    sys.modules[public] = module
    for name, sub in list(sys.modules.items()):
        if name.startswith(real + "."):
            sys.modules.setdefault(public + name[len(real) :], sub)
    if hasattr(module, "__path__"):
        _FINDER.packages[public] = real
        if _FINDER not in sys.meta_path:
            # First: the path finder would find the file through the package's
            # __path__ and load a second copy under the public name.
            sys.meta_path.insert(0, _FINDER)
