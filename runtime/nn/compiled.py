"""`yg.compile(module)`'s result: PyTorch's `OptimizedModule`.

It holds the module as its one submodule, `_orig_mod`, so its parameters, state
dict (keys `_orig_mod.weight`, ...), `train()` / `eval()`, `to()` and
`zero_grad()` are the module's; a call runs the compiled call of the module
(its hooks and `forward`), and any other attribute is read from the module.
"""

from __future__ import annotations

from typing import Any, TextIO

from yamlgrad.runtime.nn.module import Module


class OptimizedModule(Module):
    """A module whose calls run through `yg.compile` (see the module docstring)."""

    _orig_mod: Module

    def __init__(self, mod: Module, calls: Any) -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call_impl"] = calls

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_compiled_call_impl"](*args, **kwargs)

    def explain(self, file: TextIO | None = None) -> None:
        """Print the module's compiled graphs, their guards and their source."""
        self.__dict__["_compiled_call_impl"].explain(file)

    def explanation(self) -> str:
        """What explain() prints."""
        return self.__dict__["_compiled_call_impl"].explanation()

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            mod = self.__dict__.get("_modules", {}).get("_orig_mod")
            if mod is None:
                raise
            return getattr(mod, name)
