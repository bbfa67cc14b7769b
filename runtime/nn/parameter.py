"""`yg.nn.Parameter`: a leaf Tensor that a Module registers as one of its parameters.

As `torch.nn.Parameter`: it requires grad unless told otherwise, it shares its data
with the tensor it wraps, ops on it return plain Tensors, and its repr says what it
is.

>>> p = Parameter(yg.zeros(2))
>>> p.requires_grad, isinstance(p, yg.Tensor)
(True, True)
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime.autograd.tensor import Tensor, format_tensor

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

    def __repr__(self) -> str:
        return "Parameter containing:\n" + format_tensor(self)
