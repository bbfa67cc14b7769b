"""`yg.nn.Parameter`: a leaf Tensor that a Module registers as one of its parameters.

As `torch.nn.Parameter`: it requires grad unless told otherwise, it shares its data
with the tensor it wraps, ops on it return plain Tensors, and its repr says what it
is.

>>> p = Parameter(yg.zeros(2))
>>> p.requires_grad, isinstance(p, yg.Tensor)
(True, True)
"""

from __future__ import annotations

import copy
from typing import Any

from yamlgrad.runtime.autograd.tensor import (
    Tensor,
    format_tensor,
    rebuild_tensor,
    reduce_tensor,
)

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a Module's parameter (a leaf; requires grad by default)."""

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = Tensor([])
        array = data._data if isinstance(data, Tensor) else data
        super().__init__(array)
        if isinstance(data, Tensor):
            # The wrapped tensor and the parameter are one storage, one version.
            self._version_counter = data.version_counter
        self.requires_grad = requires_grad

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A Parameter on a copy of the data with the same `requires_grad`, and
        nothing else: no `.grad`, no attributes (as `torch.nn.Parameter`'s)."""
        if id(self) not in memo:
            data = copy.deepcopy(self._data, memo)
            memo[id(self)] = rebuild_tensor(type(self), data, self._requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickled as a Tensor, but without a warning for its hooks (PyTorch's
        Parameter does not look at them)."""
        return reduce_tensor(self)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + format_tensor(self)
