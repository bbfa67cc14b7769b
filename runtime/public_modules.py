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

Two more kinds of path are importable, both derived from what exists:

* an attribute: `import yamlgrad.cuda.amp` or `import yamlgrad.backends.cudnn`
  imports the namespace object that `yamlgrad.cuda.amp` already is (a module
  view of it, when it is not a module);
* PyTorch's file layout (`TORCH_LAYOUT`): PyTorch defines `Linear` in
  `torch/nn/modules/linear.py`, yamlgrad in runtime/nn/layers.py. Each such
  path is a view of the namespace that holds the names (`yamlgrad.nn`), so
  `from torch.nn.modules.linear import Linear` finds `nn.Linear`, and a layer
  added to `nn` later is found under every one of them with no entry here. A
  file of the runtime package under a name PyTorch also uses
  (runtime/nn/module.py as `nn.modules.module`) is searched too, after the
  namespace, for the names it keeps to itself.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections import deque
from types import ModuleType, SimpleNamespace
from typing import Any

# PyTorch's submodules whose names live in one yamlgrad namespace: public path ->
# (the namespace that holds their names, PyTorch's submodule names). The names
# are PyTorch's file layout; what each path offers is whatever the namespace
# holds, plus the runtime file of that name where there is one.
TORCH_LAYOUT: dict[str, tuple[str, tuple[str, ...]]] = {
    "nn.modules": (
        "nn",
        (
            "activation", "adaptive", "batchnorm", "channelshuffle", "container",
            "conv", "distance", "dropout", "flatten", "fold", "instancenorm",
            "lazy", "linear", "loss", "module", "normalization", "padding",
            "pixelshuffle", "pooling", "rnn", "sparse", "transformer",
            "upsampling", "utils",
        ),
    ),
    "nn": ("nn", ("modules",)),
    "nn.utils": (
        "nn.utils",
        (
            "clip_grad", "convert_parameters", "fusion", "init", "parametrizations",
            "parametrize", "rnn", "spectral_norm", "stateless", "weight_norm",
        ),
    ),
    "optim": (
        "optim",
        ("adagrad", "adam", "adamw", "optimizer", "rmsprop", "sgd"),
    ),
    "utils.data": (
        "utils.data",
        ("dataloader", "dataset", "sampler", "_utils", "distributed"),
    ),
    "utils.data._utils": ("utils.data", ("collate", "fetch", "worker")),
    "distributions": (
        "distributions",
        (
            "bernoulli", "beta", "binomial", "categorical", "cauchy", "chi2",
            "dirichlet", "exponential", "gamma", "geometric", "gumbel",
            "half_cauchy", "half_normal", "independent", "kumaraswamy",
            "laplace", "log_normal", "lowrank_multivariate_normal",
            "mixture_same_family", "multinomial", "multivariate_normal",
            "negative_binomial", "normal", "one_hot_categorical", "pareto",
            "poisson", "studentT", "transformed_distribution", "uniform",
            "weibull", "fishersnedecor", "inverse_gamma", "logistic_normal",
            "generalized_pareto", "continuous_bernoulli", "von_mises",
            "lkj_cholesky", "relaxed_bernoulli", "relaxed_categorical",
        ),
    ),
}  # fmt: skip


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
    if hasattr(module, "__all__") and "__dir__" not in vars(module):
        # dir() shows the public names (PyTorch's), not the module's imports
        # and helpers (`np`, `Any`, error constants), which stay reachable.
        module.__dir__ = lambda: sorted(module.__all__)  # type: ignore[method-assign]
    for name, sub in list(sys.modules.items()):
        if name.startswith(real + "."):
            sys.modules.setdefault(public + name[len(real) :], sub)
    if hasattr(module, "__path__"):
        _FINDER.packages[public] = real
        if _FINDER not in sys.meta_path:
            # First: the path finder would find the file through the package's
            # __path__ and load a second copy under the public name.
            sys.meta_path.insert(0, _FINDER)


def _published_modules(root: str) -> None:
    """Publish every runtime module that `root` and its public modules list in
    their `__all__`, each once, under its shortest such name (`yamlgrad.nn`,
    then `yamlgrad.nn.functional`, and `yamlgrad.autograd.functional`, which
    lives in runtime/func/)."""
    seen = {id(sys.modules[root])}
    pending = deque([(root, sys.modules[root])])
    while pending:
        prefix, parent = pending.popleft()
        for name in getattr(parent, "__all__", ()):
            value = getattr(parent, name, None)
            if not isinstance(value, ModuleType):
                continue
            if id(value) in seen or not value.__name__.startswith(root + ".runtime."):
                continue
            seen.add(id(value))
            publish(f"{prefix}.{name}", value)
            pending.append((f"{prefix}.{name}", value))


class _NamespaceView(ModuleType):
    """A module whose names are those of other objects (modules or namespaces),
    searched in order: how `yamlgrad.nn.modules.linear` offers `nn`'s names."""

    def __init__(self, name: str, sources: tuple[Any, ...], layout: bool) -> None:
        super().__init__(name)
        self.__dict__["_sources"] = sources
        self.__dict__["_layout"] = layout
        self.__path__: list[str] = []  # a package: its own paths import through here
        self.__all__ = sorted({n for source in sources for n in _public_names(source)})

    def __getattr__(self, name: str) -> Any:
        for source in self.__dict__["_sources"]:
            try:
                return getattr(source, name)
            except AttributeError:
                continue
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        # `import torch.backends.cudnn as cudnn; cudnn.benchmark = True` sets
        # the flag where yamlgrad.backends.cudnn reads it.
        source = self.__dict__["_sources"][0]
        if isinstance(source, SimpleNamespace) and not name.startswith("__"):
            setattr(source, name, value)
        else:
            super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.__all__})


def _public_names(source: Any) -> list[str]:
    names = getattr(source, "__all__", None)
    if names is None:
        names = [n for n in vars(source) if not n.startswith("_")]
    return list(names)


class _ExistingLoader(importlib.abc.Loader):
    """Loads a name as an object that already exists (a module or a view)."""

    def __init__(self, make: Any) -> None:
        self.make = make

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.make()

    def exec_module(self, module: ModuleType) -> None:
        pass


class LayoutFinder(importlib.abc.MetaPathFinder):
    """Finds `yamlgrad.<path>` as an attribute of its parent (`yamlgrad.cuda.amp`)
    or as a path of PyTorch's layout (`yamlgrad.nn.modules.linear`)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.root + "."):
            return None
        parent_name, _, child = fullname.rpartition(".")
        make = self._attribute(parent_name, child) or self._layout(fullname)
        if make is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _ExistingLoader(make))

    def _attribute(self, parent_name: str, child: str) -> Any:
        parent = sys.modules.get(parent_name)
        if parent is None or getattr(parent, "_layout", False):
            return None  # a layout view's paths are PyTorch's, not its attributes
        value = getattr(parent, child, None)
        if isinstance(value, ModuleType):
            if value.__name__.startswith(self.root + ".runtime."):
                # A runtime package reached by attribute (a `distributions`
                # the facade exports): its submodules then import as its own.
                publish(f"{parent_name}.{child}", value)
            return lambda: value
        if isinstance(value, SimpleNamespace):
            name = f"{parent_name}.{child}"
            return lambda: _NamespaceView(name, (value,), layout=False)
        return None

    def _layout(self, fullname: str) -> Any:
        public = fullname[len(self.root) + 1 :]
        package, _, child = public.rpartition(".")
        if public in TORCH_LAYOUT:  # the package itself: `yamlgrad.nn.modules`
            package, child = public, ""
        elif package not in TORCH_LAYOUT:
            return None
        namespace_path, children = TORCH_LAYOUT[package]
        namespace = importlib.import_module(f"{self.root}.{namespace_path}")
        twin = _runtime_twin(namespace, child)
        if child and child not in children and twin is None:
            return None
        sources = (namespace,) if twin is None else (namespace, twin)
        return lambda: _NamespaceView(
            fullname, sources + _package_modules(namespace), layout=True
        )


def _package_modules(namespace: ModuleType) -> tuple[ModuleType, ...]:
    """The loaded modules of `namespace`'s runtime package, searched last: where
    PyTorch's private bases live here (`_ConvNd`, `_BatchNorm`, `_Loss`), which
    programs import from their PyTorch files for isinstance checks."""
    if not getattr(namespace, "__path__", None):
        return ()
    prefix = namespace.__name__ + "."
    return tuple(
        module
        for name, module in sorted(sys.modules.items())
        if name.startswith(prefix) and "." not in name[len(prefix) :]
    )


def _runtime_twin(namespace: ModuleType, child: str) -> ModuleType | None:
    """The runtime module `child` beside `namespace`'s own file, if there is one
    (runtime/nn/module.py for `nn.modules.module`)."""
    if not child or not getattr(namespace, "__path__", None):
        return None
    name = f"{namespace.__name__}.{child}"
    try:
        found = importlib.util.find_spec(name)
    except (ModuleNotFoundError, ValueError):
        return None
    return importlib.import_module(name) if found is not None else None


def publish_layout(root: str) -> None:
    """Serve `root`'s attribute paths and PyTorch's layout (see the docstring)."""
    for package in TORCH_LAYOUT:
        module = sys.modules.get(f"{root}.{package}")
        if module is not None and not hasattr(module, "__path__"):
            # A plain module standing for a PyTorch package (runtime/nn/utils.py
            # as torch.nn.utils): an empty path lets its layout paths import.
            module.__path__ = []  # type: ignore[attr-defined]
    if not any(isinstance(f, LayoutFinder) and f.root == root for f in sys.meta_path):
        # After AliasFinder, which serves a real file first; before the path finder.
        sys.meta_path.insert(1, LayoutFinder(root))
