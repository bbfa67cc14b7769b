"""`yg.matmul`, `Tensor.matmul` and `@`: PyTorch's composite matmul (at::matmul).

PyTorch has no backward node for matmul itself: `at::matmul` picks an op by the
ranks of its operands and records that op's node. This module does the same for
the cases whose node a yamlgrad op can name:

    1-D @ 1-D -> dot  (DotBackward0)
    2-D @ 1-D -> mv   (MvBackward0)
    2-D @ 2-D -> mm   (MmBackward0)

Every other rank combination goes to the `matmul` entry of derivatives.yaml
(MatmulBackward0, correct gradients and double backward for any broadcast batch
shape). PyTorch records different nodes there: `1-D @ 2-D` is
`unsqueeze(0).mm(...).squeeze_(0)` (SqueezeBackward4, an in-place op yamlgrad
lacks), and batched shapes end in `_unsafe_view` (UnsafeViewBackward0) over an
mm, mv or bmm. tests/test_torch_parity.py pins those differences with strict
xfails.

The YAML entry has `python_binding: false`, so this function owns the public name;
the entry stays reachable as `yg.ops.matmul.default`.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime import formulas
from yamlgrad.runtime.errors import argument_type
from yamlgrad.runtime.tensor import Tensor

__all__ = ["matmul"]


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """The matrix product of two tensors, by their ranks, as `torch.matmul`.

    >>> yg.matmul(yg.ones(2, 3), yg.ones(3))  # mv: grad_fn=<MvBackward0>
    tensor([3., 3.])
    """
    for position, (name, value) in enumerate((("input", input), ("other", other))):
        if not isinstance(value, Tensor):
            raise TypeError(
                argument_type("matmul", name, position + 1, "Tensor", value)
            )
    ops: Any = formulas.ops
    dims = (input.ndim, other.ndim)
    if dims == (1, 1):
        return ops.dot(input, other)
    if dims == (2, 1):
        return ops.mv(input, other)
    if dims == (2, 2):
        return ops.mm(input, other)
    return ops.OVERLOADS["matmul"]["default"](input, other)
