"""The array namespace: numpy's own functions on the numpy side, the family
kernels under PyTorch's names, the recorded ops on the Tensor side."""

from __future__ import annotations

import numpy as np

import yamlgrad as yg
from yamlgrad.runtime.ops import shapes
from yamlgrad.runtime.ops.namespace import (
    NUMPY_NAMESPACE,
    TENSOR_NAMESPACE,
    array_namespace,
)


def test_numpy_names_are_numpy_functions_themselves() -> None:
    xp = array_namespace(np.ones(2), 1.0)
    assert xp is NUMPY_NAMESPACE
    assert xp.sum is np.sum and xp.where is np.where and xp.exp is np.exp


def test_pytorch_names_are_the_family_kernels() -> None:
    assert NUMPY_NAMESPACE.transpose is shapes.transpose_kernel
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(NUMPY_NAMESPACE.transpose(x, 0, 1), x.T)


def test_tensor_side_records_the_op() -> None:
    x = yg.ones(2, 3, requires_grad=True)
    xp = array_namespace(np.ones(2), x)
    assert xp is TENSOR_NAMESPACE
    y = xp.transpose(x, 0, 1)
    assert type(y.grad_fn).__name__ == "TransposeBackward0"
    z = xp.gather(x, 1, np.zeros((2, 1), dtype=np.int64))
    assert type(z.grad_fn).__name__ == "GatherBackward0"
