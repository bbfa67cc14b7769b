"""`torch.autograd.Variable`: PyTorch's pre-0.4 wrapper, now a Tensor.

`Variable(t)` returns a Tensor sharing `t`'s data (as a detached alias, so
`t` keeps its own flags), with `requires_grad` as asked; `volatile` warns that
it was removed, as in PyTorch. `isinstance(x, Variable)` is true of every
Tensor, which is what PyTorch's `VariableMeta` answers.
"""

from __future__ import annotations

import warnings
from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor

WARN_VOLATILE = (
    "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."
)


class VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """`Variable(data, requires_grad=False, volatile=False)` -> Tensor."""

    def __new__(  # type: ignore[misc]
        cls,
        data: Any = None,
        requires_grad: bool = False,
        volatile: bool = False,
        **kwargs: Any,
    ) -> Tensor:
        if volatile:
            warnings.warn(WARN_VOLATILE, stacklevel=2)
        if data is None:
            data = Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(data).__name__}"
            )
        alias = data.detach()
        if requires_grad:
            alias.requires_grad_(True)
        return alias
