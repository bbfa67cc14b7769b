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

from yamlgrad.runtime.autograd.tensor_repr import format_tensor
from yamlgrad.runtime.autograd.tensor import (
    Tensor,
    inference_class,
    pickle_state,
    plain_class,
    rebuild_tensor,
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
            # The wrapped tensor and the parameter are one storage, one version,
            # and an inference tensor or not, whatever the mode.
            self._version_counter = data.version_counter
            cls = plain_class(type(self))
            self.__class__ = inference_class(cls) if data.is_inference() else cls
        self.requires_grad = requires_grad

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A Parameter on a copy of the data (its own memory, at version 0) with
        the same `requires_grad`, and nothing else: no `.grad`, no attributes,
        no slots (as `torch.nn.Parameter`'s, which clones the data)."""
        if id(self) not in memo:
            data = copy.deepcopy(self._data)
            memo[id(self)] = rebuild_tensor(
                type(self), data, self._requires_grad, version=0
            )
        return memo[id(self)]

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickled as PyTorch's: a Parameter around `self.data` (a Tensor, which
        pickle rebuilds and `copy.copy` shares), without a warning for its hooks
        (PyTorch's Parameter does not look at them)."""
        args = (plain_class(type(self)), self.data, self._requires_grad)
        return rebuild_parameter, args, pickle_state(self)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + format_tensor(self)


def rebuild_parameter(cls: type[Parameter], data: Tensor, requires_grad: bool) -> Any:
    """A Parameter of class `cls` around `data` (what pickle and copy call)."""
    parameter = Parameter.__new__(cls)
    Parameter.__init__(parameter, data, requires_grad)
    return parameter
