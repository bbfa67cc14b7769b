"""Linear algebra: mm/bmm/mv/dot/addmm kernels with PyTorch's shape and dtype
checks, diagonal/trace/det, and matmul by rank (the body of derivatives.yaml's
`matmul` composite).

PyTorch has no backward node for matmul itself: `at::matmul` picks an op by the
ranks of its operands and records that op's node (1-D @ 1-D -> dot, 2-D @ 1-D ->
mv, 2-D @ 2-D -> mm; batched shapes fold into mm/mv or broadcast into bmm and
view back with `_unsafe_view`). `matmul_by_rank` does the same, so `yg.matmul`,
`Tensor.matmul`, `@` and `yg.ops.matmul.default` record what PyTorch records.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime import dispatch
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops.namespace import (
    NUMPY_NAMESPACE,
    array_namespace,
    per_matrix,
    register_numpy_kernels,
)
from yamlgrad.runtime.errors import argument_type
from yamlgrad.runtime.errors import scalar_type_name as _st
from yamlgrad.runtime.errors import type_meta_name as _tm
from yamlgrad.runtime.ops.common import (
    _constant_like,
    _dim,
    _lapack,
    _raw,
    _size_at,
    _sizes,
    _zero_outside,
)
from yamlgrad.runtime.ops.complex_numbers import conj
from yamlgrad.runtime.ops.elementwise import sign
from yamlgrad.runtime.ops.reductions import _product_of_others
from yamlgrad.runtime.ops.shapes import expand, reshape, transpose
from yamlgrad.runtime.wrappers.kernel_errors import broadcast_pair

KERNELS = (
    "mm_kernel",
    "bmm_kernel",
    "dot_kernel",
    "vdot_kernel",
    "mv_kernel",
    "addmm_kernel",
    "baddbmm_kernel",
    "addmv_kernel",
    "addr_kernel",
    "addbmm_kernel",
    "addmm",
    "diag_embed",
    "diagonal_view",
    "diagonal_backward",
    "trace",
    "outer_column",
    "triangle",
    "diag_rank",
    "linalg_inv_ex",
    "linalg_det_kernel",
)
BACKWARD_HELPERS = (
    "mm_mat1_backward",
    "mm_mat2_backward",
    "outer",
    "mv",
    "bmm",
    "trace_backward",
    "take_diagonal",
    "diagonal_backward",
    "tril",
    "triu",
    "linalg_det_backward",
)
COMPOSITE_HELPERS = ("matmul_by_rank",)


# PyTorch's checks of its matrix kernels: shapes, and one dtype (element-wise ops
# promote; these refuse operands of two dtypes, each with its own message).


def _check_expands(x: Any, target: tuple[int, ...]) -> None:
    """`self` of addmm/baddbmm must expand to the product's shape."""
    shape = list(np.shape(x))
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(torch.{_st(np.result_type(x))}Tensor{{{_sizes(tuple(shape))}}}, "
            f"size={list(target)}): the number of sizes provided ({len(target)}) must "
            f"be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    offset = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        want = target[i + offset]
        if shape[i] != 1 and shape[i] != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing "
                f"size ({shape[i]}) at non-singleton dimension {i + offset}.  Target "
                f"sizes: {list(target)}.  Tensor sizes: {shape}"
            )


def _check_mm_shapes(a: Any, b: Any) -> None:
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
            f"and {b.shape[0]}x{b.shape[1]})"
        )


def mm_kernel(a: Any, b: Any) -> Any:
    if (
        type(a) is type(b) is np.ndarray
        and a.ndim == 2 == b.ndim
        and a.dtype == b.dtype
        and a.shape[1] == b.shape[0]
    ):
        return np.matmul(a, b)  # the checks below pass: no call of ours
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.dtype != b.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_tm(a.dtype)} != {_tm(b.dtype)}"
        )
    _check_mm_shapes(a, b)
    return np.matmul(a, b) if type(a) is type(b) is np.ndarray else _matmul(a, b)


def _matmul(a: Any, b: Any) -> Any:
    """matmul in the arrays' namespace: numpy's, another backend's (Dask, CuPy),
    or the error of mixed ones."""
    if type(a) is type(b) is np.ndarray:
        return np.matmul(a, b)
    return backend.namespace_of(a, b).matmul(a, b)


def bmm_kernel(a: Any, b: Any) -> Any:
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_batch2(a, b)
    _check_batch2_dtype(a.dtype, a, b)
    product = np.matmul(a, b) if type(a) is type(b) is np.ndarray else _matmul(a, b)
    return _in_batch2_dtype(product, b)


def _check_batch2(a: Any, b: Any) -> None:
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )


def _check_batch2_dtype(dtype: Any, b1: Any, b2: Any) -> None:
    """batch2 of batch1's `dtype`: checked only by the product's kernel, which an
    empty product (or a zero-length inner dim) never runs."""
    if b2.dtype != dtype and 0 not in (*b1.shape, b2.shape[2]):
        raise RuntimeError(
            f"expected scalar type {_st(dtype)} but found {_st(b2.dtype)}"
        )


def _in_batch2_dtype(product: Any, b2: Any) -> Any:
    """A batched product in batch2's dtype, which PyTorch gives the result."""
    if product.dtype == b2.dtype:
        return product
    return backend.namespace_of(product).astype(product, b2.dtype)


def _check_dot(a: Any, b: Any) -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_st(a.dtype)} and {_st(b.dtype)}"
        )
    if a.size != b.size:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.size}] and src [{b.size}] "
            f"to have the same number of elements, but got {a.size} and {b.size} "
            "elements respectively"
        )


def dot_kernel(a: Any, b: Any) -> Any:
    _check_dot(a, b)
    return np.dot(a, b)


def vdot_kernel(a: Any, b: Any) -> Any:
    """sum(conj(a) * b): vdot conjugates its first vector (none on real ones)."""
    _check_dot(a, b)
    return np.vdot(a, b)


def mv_kernel(mat: Any, vec: Any) -> Any:
    rows = _size_at(mat, 0)
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {mat.ndim}, {vec.ndim}"
        )
    if mat.dtype != vec.dtype:
        v, m = _st(vec.dtype), _st(mat.dtype)
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}"
        )
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{mat.shape[1]}), vec "
            f"({vec.shape[0]})"
        )
    if type(mat) is type(vec) is np.ndarray:
        return np.matmul(mat, vec)
    return _matmul(mat, vec)


def addmm_kernel(x: Any, mat1: Any, mat2: Any, beta: float, alpha: float) -> Any:
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    _check_mm_shapes(mat1, mat2)
    _check_expands(x, (mat1.shape[0], mat2.shape[1]))
    for name, a in (("self", x), ("mat1", mat1)):
        dtype = a.dtype if hasattr(a, "dtype") else np.result_type(a)
        if dtype != mat2.dtype:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got "
                f"{_st(dtype)} and {_st(mat2.dtype)}"
            )
    return addmm(x, mat1, mat2, beta, alpha)


def addmv_kernel(x: Any, mat: Any, vec: Any, beta: float, alpha: float) -> Any:
    """beta * x + alpha * (mat @ vec). x is a vector of mat's rows or one
    element (PyTorch's checks, in its order: the size error reads x.size(0))."""
    ranks = (np.ndim(x), mat.ndim, vec.ndim)
    if ranks[1:] != (2, 1) or ranks[0] > 1:
        raise RuntimeError(
            "vector + matrix @ vector expected, got " + ", ".join(map(str, ranks))
        )
    size = math.prod(np.shape(x))
    if mat.shape[1] != vec.shape[0] or size not in (mat.shape[0], 1):
        raise RuntimeError(
            f"size mismatch, got input ({_size_at(x, 0)}), mat ({mat.shape[0]}x"
            f"{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    mv_kernel(mat, vec)  # its dtype check
    return addmm(x, mat, vec, beta, alpha)


def addr_kernel(x: Any, vec1: Any, vec2: Any, beta: float, alpha: float) -> Any:
    """beta * x + alpha * outer(vec1, vec2)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(
                f"addr: Expected 1-D argument {name}, but got {v.ndim}-D"
            )
    _check_expands(x, (vec1.shape[0], vec2.shape[0]))
    return addmm(x, vec1[:, None], vec2[None, :], beta, alpha)


def _matmul_numpy(mat1: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """mat1 @ mat2; an outer product (inner size 1) as a broadcast multiply, the
    same products without a matrix product's setup (several times faster)."""
    if mat1.shape[-1] == 1 and mat1.ndim == mat2.ndim == 2:
        return np.multiply(mat1, mat2)
    return np.matmul(mat1, mat2)


def addbmm_kernel(x: Any, b1: Any, b2: Any, beta: float, alpha: float) -> Any:
    """beta * x + alpha * sum_i b1[i] @ b2[i]: one matrix product over the
    batch laid side by side. `x` is expanded to the result's sizes before the
    batches' ranks are checked, as in PyTorch."""
    _check_expands(x, (_size_at(b1, 1), _size_at(b2, 2)))
    for name, b in (("batch1", b1), ("batch2", b2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, {b2.shape[1]}]."
        )
    batch, n, k = b1.shape
    xp = np if type(b1) is np.ndarray else backend.namespace_of(b1, b2)
    left = xp.reshape(xp.permute_dims(b1, (1, 0, 2)), (n, batch * k))
    return addmm(x, left, xp.reshape(b2, (batch * k, b2.shape[2])), beta, alpha)


def baddbmm_kernel(x: Any, b1: Any, b2: Any, beta: float, alpha: float) -> Any:
    target = (_size_at(b1, 0), _size_at(b1, 1), _size_at(b2, 2))
    _check_expands(x, target)
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_batch2(b1, b2)
    dtype = x.dtype if backend.is_foreign(x) else np.result_type(x)
    if b1.dtype != dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_tm(dtype)}, batch1: "
            f"{_tm(b1.dtype)}, batch2: {_tm(b2.dtype)}"
        )
    _check_batch2_dtype(dtype, b1, b2)
    return _in_batch2_dtype(addmm(x, b1, b2, beta, alpha), b2)


def addmm(x: Any, mat1: Any, mat2: Any, beta: float, alpha: float) -> Any:
    """beta * x + alpha * (mat1 @ mat2), batched for baddbmm. With beta 0, x is
    ignored (nan and inf in it do not propagate), as in PyTorch."""
    numpy = type(mat1) is np.ndarray
    xp = np if numpy else backend.namespace_of(x, mat1, mat2)
    product = _matmul_numpy(mat1, mat2) if numpy else xp.matmul(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        shape = np.broadcast_shapes(np.shape(x), product.shape)
        product = xp.broadcast_to(product, shape)
        return product.copy() if numpy else product
    if beta != 1:
        x = x * beta
    if (
        numpy
        and np.shape(x) == product.shape[-np.ndim(x) :]
        and (np.result_type(x, product) == product.dtype)
    ):  # into the product this kernel made: no third array
        return np.add(x, product, out=product)
    return x + product


def _diagonal_index(n1: int, n2: int, offset: int) -> tuple[Any, Any]:
    """Row and column indices of the `offset` diagonal of an n1 x n2 matrix."""
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rows = np.arange(length) + max(-offset, 0)
    return rows, rows + offset


def diag_embed(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """A tensor whose (dim1, dim2) matrices hold the last dim of `x` on a diagonal."""
    x = np.asarray(x)
    ndim = x.ndim + 1
    d1, d2 = _dim(dim1, ndim, "diag_embed"), _dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (size, size), dtype=x.dtype)
    rows, cols = _diagonal_index(size, size, offset)
    out[..., rows, cols] = x
    return np.moveaxis(out, (-2, -1), (d1, d2))


def diagonal_view(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """np.diagonal, writeable when `x` is (numpy hands out a read-only view, but
    an in-place op on a tensor's diagonal writes through it, as in PyTorch)."""
    d1, d2 = _dim(dim1, np.ndim(x), "diagonal"), _dim(dim2, np.ndim(x), "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = np.diagonal(x, offset, d1, d2)
    if isinstance(x, np.ndarray) and x.flags.writeable:
        out.flags.writeable = True
    return out


def _diagonal_backward(
    grad: Any, sizes: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> Any:
    """Zeros of `sizes` with `grad` written on the diagonal that `diagonal` reads."""
    grad = np.asarray(grad)
    if any(n < 0 for n in sizes):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    out = np.zeros(sizes, dtype=grad.dtype)
    # PyTorch's order: diagonal's dim checks on the zeros, then copy_'s broadcast
    copy_into(diagonal_view(out, offset, dim1, dim2), grad)
    return out


def copy_into(dst: np.ndarray, src: Any) -> None:
    """`dst.copy_(src)`: src broadcast to dst's shape, with PyTorch's texts for
    shapes that do not broadcast or that broadcast to a larger shape."""
    a = tuple(dst.shape)
    broadcast = broadcast_pair(a, tuple(np.shape(src)))
    if broadcast != a:
        raise RuntimeError(
            f"output with shape {list(a)} doesn't match the broadcast shape "
            f"{list(broadcast)}"
        )
    np.copyto(dst, src)


def trace(x: Any) -> Any:
    """The sum of a matrix's main diagonal (PyTorch accepts matrices only)."""
    if np.ndim(x) != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {np.ndim(x)}"
        )
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return backend.namespace_of(x).linalg.trace(x)
    return np.trace(x)


def outer_column(self_ndim: int, vec2_ndim: int) -> tuple[int, int]:
    """`outer`'s column shape for `self` (-1, 1), after PyTorch's 1-D checks."""
    for name, n in (("self", self_ndim), ("vec2", vec2_ndim)):
        if n != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {n}-D")
    return (-1, 1)


def triangle(x: Any, diagonal: int, upper: bool) -> Any:
    """`tril`/`triu` of the last two dims, with PyTorch's rank check."""
    if np.ndim(x) < 2:
        name = "triu" if upper else "tril"
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    xp = np if type(x) is np.ndarray else backend.namespace_of(x)
    return xp.triu(x, k=diagonal) if upper else xp.tril(x, k=diagonal)


def diag_rank(ndim: int) -> int:
    """`diag`'s input rank, 1 or 2, else PyTorch's error."""
    if ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return ndim


def linalg_inv_ex(a: Any, check_errors: bool) -> tuple[Any, Any]:
    """(inverse, info) as torch.linalg.inv_ex: info is 0 for each invertible matrix;
    a singular one raises (numpy cannot go on), with PyTorch's message when asked.
    Another backend's inverse is the standard's (a lazy one is not checked)."""
    if type(a) is not np.ndarray and backend.is_foreign(a):
        xp = backend.namespace_of(a)
        info = xp.zeros(a.shape[:-2], dtype=xp.int32)
        if backend.is_lazy(a):  # Dask's inv takes one 2-D matrix in one chunk
            return per_matrix(_inverses, a, shape=tuple(a.shape[-2:])), info
        return xp.linalg.inv(a), info
    a = np.asarray(a)
    if _square_floats(a):
        inverse, info = _getri(a)
        if info:
            raise _singular(info)
        return inverse, np.zeros(a.shape[:-2], dtype=np.int32)
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular(1) from None
    # LAPACK's layout, as PyTorch returns it: each matrix column-major
    inverse = np.swapaxes(np.ascontiguousarray(np.swapaxes(inverse, -1, -2)), -1, -2)
    return inverse, np.zeros(np.shape(a)[:-2], dtype=np.int32)


def _inverses(a: np.ndarray) -> np.ndarray:
    """The inverses of a block of whole matrices (a singular one raises)."""
    return linalg_inv_ex(a, True)[0]


def _singular(info: int) -> RuntimeError:
    return RuntimeError(
        f"linalg.inv: The diagonal element {info} is zero, the inversion could not "
        "be completed because the input matrix is singular."
    )


def _square_floats(a: np.ndarray) -> bool:
    """Float square matrices, not empty: what LAPACK's getri takes."""
    return (
        a.dtype.kind in "fc"
        and a.size > 0
        and a.ndim >= 2
        and a.shape[-1] == a.shape[-2]
    )


def _getri(a: np.ndarray) -> tuple[np.ndarray, int]:
    """The inverses, by LAPACK's getrf and getri per matrix (numpy's inv solves
    against the identity, several times slower), each column-major as
    PyTorch's; or, for a singular matrix, its zero pivot's position (from 1)."""
    getrf, getri = _lapack("getrf", a), _lapack("getri", a)
    n = a.shape[-1]
    transposed = np.empty(a.shape, dtype=a.dtype)
    for i in np.ndindex(*a.shape[:-2]):
        lu, pivots, info = getrf(a[i])
        if info > 0:
            return transposed, info
        transposed[i] = getri(lu, pivots, lwork=max(1, 64 * n))[0].T
    return np.swapaxes(transposed, -1, -2), 0


def linalg_det_kernel(a: Any) -> tuple[Any, Any, Any]:
    """(det, LU, pivots) as torch._linalg_det: LAPACK's getrf per matrix, the
    product of U's diagonal negated for an odd permutation (numpy's det is
    several times slower on float32); the factors, each matrix column-major with
    pivots from 1 as PyTorch's, are kept for the backward. As PyTorch's, a
    row-major real A is factored as A^T (det(A^T) = det(A)), whose column-major
    matrices are A's own memory."""
    a = np.asarray(a)
    batch, n = a.shape[:-2], a.shape[-1] if a.ndim else 0
    pivots = np.zeros(batch + (n,), dtype=np.int32)
    if not _square_floats(a):
        return np.linalg.det(a), np.array(a), pivots
    getrf = _lapack("getrf", a)
    out = np.empty(batch, dtype=a.dtype)
    factors = np.empty(batch + (n, n), dtype=a.dtype)  # each one transposed
    source = np.swapaxes(a, -1, -2) if _factors_transpose(a) else a
    for i in np.ndindex(*batch):
        lu, pivots[i], _ = getrf(source[i])
        factors[i] = lu.T
        out[i] = _det_of_lu(lu, pivots[i])
    pivots += 1
    return out, np.swapaxes(factors, -1, -2), pivots


def _factors_transpose(a: np.ndarray) -> bool:
    """Whether `_linalg_det` factors A^T rather than A (PyTorch's rule)."""
    return a.flags.c_contiguous and a.dtype.kind != "c"


def _inverse_transposed(
    A: np.ndarray, LU: np.ndarray, pivots: np.ndarray
) -> np.ndarray:
    """A^{-T} from the LU factors of A or A^T (getri per matrix, no second
    factorisation); zeros for a singular matrix (a zero on U's diagonal, so a
    determinant of exactly 0, which the gradient det * A^{-T} multiplies)."""
    getri, n = _lapack("getri", LU), LU.shape[-1]
    transposed = _factors_transpose(A)
    out = np.empty(LU.shape, dtype=LU.dtype)
    for i in np.ndindex(*LU.shape[:-2]):
        inverse, info = getri(LU[i], pivots[i] - 1, lwork=max(1, 64 * n))
        out[i] = 0 if info else inverse if transposed else inverse.T
    return out


def _det_of_lu(lu: np.ndarray, pivots: np.ndarray) -> Any:
    """The product of U's diagonal, negated for an odd permutation."""
    swaps = np.count_nonzero(pivots != np.arange(len(pivots)))
    return np.prod(np.diagonal(lu)) * (-1 if swaps % 2 else 1)


def _det_floor(grad: Any, A: Any) -> tuple[Any, Any]:
    """det forward + backward as the fewest LAPACK calls: one getrf per matrix,
    its diagonal's product, and getri from the same factors (the kernel and the
    formula each factor A); the floor of this LAPACK-bound op (benchmarks/ops.py)."""
    getrf, getri, n = _lapack("getrf", A), _lapack("getri", A), A.shape[-1]
    det = np.empty(A.shape[:-2], dtype=A.dtype)
    gA = np.empty(A.shape, dtype=A.dtype)
    for i in np.ndindex(*A.shape[:-2]):
        lu, pivots, _ = getrf(A[i])
        inverse = getri(lu, pivots, lwork=max(1, 64 * n))[0]
        det[i] = _det_of_lu(lu, pivots)
        gA[i] = (grad[i] * det[i]) * inverse.T
    return det, gA


FLOORS = {"linalg_det": _det_floor, "_linalg_det": _det_floor}


def _inverse(a: Any) -> np.ndarray:
    """np.linalg.inv by getri, raising numpy's LinAlgError for a singular matrix
    (linalg_det_backward then takes the cofactors by SVD)."""
    a = np.asarray(a)
    if not _square_floats(a):
        return np.linalg.inv(a)
    inverse, info = _getri(a)
    if info:
        raise np.linalg.LinAlgError("Singular matrix")
    return inverse


def mm_mat1_backward(grad: Any, mat2: Any) -> Any:
    return grad @ conj(mat2.T)


def mm_mat2_backward(grad: Any, mat1: Any) -> Any:
    return conj(mat1.T) @ grad


def outer(a: Any, b: Any) -> Any:
    if backend.is_foreign(a) or backend.is_foreign(b):  # the standard has no outer
        return a[:, None] * b[None, :]
    return array_namespace(a, b).outer(a, b)


def mv(matrix: Any, vector: Any) -> Any:
    return array_namespace(matrix, vector).mv(matrix, vector)


def bmm(a: Any, b: Any) -> Any:
    return array_namespace(a, b).bmm(a, b)


def trace_backward(grad: Any, sizes: tuple[int, ...]) -> Any:
    """grad on the main diagonal of a matrix of `sizes`, zeros elsewhere (by
    selection: a nan or inf grad stays off the rest, as in PyTorch)."""
    if isinstance(grad, Tensor):
        return _zero_outside(expand(grad, tuple(sizes)), np.eye(*sizes, dtype=bool))
    if backend.is_foreign(grad):
        xp = backend.namespace_of(grad)
        rows, columns = xp.arange(sizes[0]), xp.arange(sizes[1])
        diagonal = xp.reshape(rows, (-1, 1)) == columns
        return xp.where(diagonal, grad, xp.zeros(tuple(sizes), dtype=grad.dtype))
    out = np.zeros(tuple(sizes), dtype=np.result_type(grad))
    np.fill_diagonal(out, grad)  # the diagonal alone, written into fresh zeros
    return out


def take_diagonal(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """`x.diagonal(offset, dim1, dim2)` (named so as not to hide `diagonal` args)."""
    if type(x) is not np.ndarray and backend.is_foreign(x):
        return diagonal_of(x, offset, dim1, dim2)
    return array_namespace(x).diagonal(x, offset, dim1, dim2)


def diagonal_of(x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """np.diagonal of another backend's array, a new array (no view): the two
    dims moved last, then the standard's linalg.diagonal."""
    d1, d2 = _dim(dim1, x.ndim, "diagonal"), _dim(dim2, x.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    xp = backend.namespace_of(x)
    return xp.linalg.diagonal(xp.moveaxis(x, (d1, d2), (-2, -1)), offset=offset)


def diagonal_backward(
    grad: Any, sizes: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> Any:
    """Undo `diagonal`: zeros of `sizes` with `grad` on that diagonal."""
    xp = array_namespace(grad)
    return xp.diagonal_backward(grad, sizes, offset, dim1, dim2)


def tril(x: Any, diagonal: int) -> Any:
    return _triangle_of(x, diagonal, False)


def triu(x: Any, diagonal: int) -> Any:
    return _triangle_of(x, diagonal, True)


def _triangle_of(x: Any, diagonal: int, upper: bool) -> Any:
    """triu/tril of an ndarray, a Tensor (recorded) or another backend's array
    (the standard spells the diagonal `k=`)."""
    if backend.is_foreign(x):
        xp = backend.namespace_of(x)
        return xp.triu(x, k=diagonal) if upper else xp.tril(x, k=diagonal)
    xp = array_namespace(x)
    return xp.triu(x, diagonal) if upper else xp.tril(x, diagonal)


def _cofactors_by_svd(A: np.ndarray) -> np.ndarray:
    """d det(A)/dA without inverting A, exact for a singular A: with A = U S Vh,
    det(U) det(Vh) * U diag(product of the other singular values) Vh."""
    U, S, Vh = np.linalg.svd(A)
    sign = np.linalg.det(U) * np.linalg.det(Vh)
    others = _product_of_others(S, -1) * sign[..., None]
    return np.matmul(U * others[..., None, :], Vh)


def linalg_det_backward(grad: Any, det: Any, A: Any, LU: Any, pivots: Any) -> Any:
    """d det(A) = det(A) * A^{-T}, scaled by grad per matrix, A^{-T} from the
    forward's LU factors. As PyTorch's first-order backward, a matrix whose LU
    has a zero on U's diagonal (det exactly 0) gets a zero gradient, whatever
    its rank; under create_graph (Tensors) a singular A gets the cofactor
    matrix from an SVD, as PyTorch's does."""
    xp = array_namespace(grad, A)
    if xp is NUMPY_NAMESPACE and _square_floats(np.asarray(LU)):
        scale = np.reshape(grad, tuple(det.shape) + (1, 1))
        inverse_t = _inverse_transposed(np.asarray(A), LU, pivots)
        return (scale * np.reshape(det, tuple(det.shape) + (1, 1))) * inverse_t
    try:
        inverse = xp.linalg_inv(A)
    except (np.linalg.LinAlgError, RuntimeError) as singular:
        if "singular" not in str(singular).lower():
            raise
        # TODO: under create_graph the cofactors are a constant here, where
        # PyTorch differentiates its SVD route (that needs a linalg_svd op).
        scale = xp.reshape(grad, tuple(det.shape) + (1, 1))
        return scale * _constant_like(grad, _cofactors_by_svd(np.asarray(_raw(A))))
    scale = xp.reshape(grad * det, tuple(det.shape) + (1, 1))
    return scale * xp.transpose(inverse, -1, -2)


def matmul_by_rank(input: Tensor, other: Tensor) -> Tensor:
    """The matrix product of two tensors, by their ranks, as `torch.matmul`.

    >>> yg.matmul(yg.ones(2, 3), yg.ones(3))  # mv: grad_fn=<MvBackward0>
    tensor([3., 3.])
    """
    for position, (name, value) in enumerate((("input", input), ("other", other))):
        if not isinstance(value, Tensor):
            raise TypeError(
                argument_type("matmul", name, position + 1, "Tensor", value)
            )
    ops: Any = dispatch.ops
    dims = (input.ndim, other.ndim)
    if dims == (1, 1):
        return ops.dot(input, other)
    if dims == (2, 1):
        return ops.mv(input, other)
    if dims == (2, 2):
        return ops.mm(input, other)
    if dims == (1, 2):  # PyTorch: unsqueeze(0).mm(other).squeeze_(0)
        return ops.squeeze_(ops.mm(ops.unsqueeze(input, 0), other), 0)
    if dims[0] == 2 and dims[1] >= 3:
        return _transposed(ops, input, other)
    if dims[0] >= 3 and dims[1] in (1, 2):
        return _folded(ops, input, other)
    if dims[1] >= 3 or (dims[0] >= 3 and dims[1] >= 3):
        return _batched(ops, input, other)
    raise RuntimeError(
        "both arguments to matmul need to be at least 1D, but they are "
        f"{dims[0]}D and {dims[1]}D"
    )


def _folded(ops: Any, input: Tensor, other: Tensor) -> Tensor:
    """N-D @ 1-D or 2-D: fold the batch into rows, mm or mv, view back
    (UnsafeViewBackward0 over MmBackward0/MvBackward0, as PyTorch)."""
    batch = tuple(input.shape[:-1])
    rows = ops.reshape(input, (_count(batch), input.shape[-1]))
    if other.ndim == 1:
        return ops.OVERLOADS["_unsafe_view"]["default"](ops.mv(rows, other), batch)
    out_shape = batch + (other.shape[-1],)
    return ops.OVERLOADS["_unsafe_view"]["default"](ops.mm(rows, other), out_shape)


def _transposed(ops: Any, input: Tensor, other: Tensor) -> Tensor:
    """2-D @ N-D as PyTorch computes it: `(other.mT @ input.mT).mT`, the first
    product folded into one mm (CloneBackward0 over TransposeBackward0 on top,
    from `contiguous()`: none for an empty result, which is contiguous)."""
    unsafe_view = ops.OVERLOADS["_unsafe_view"]["default"]
    other_t = ops.contiguous(ops.transpose(other, -1, -2))
    batch = tuple(other_t.shape[:-1])
    rows = unsafe_view(other_t, (_count(batch), other_t.shape[-1]))
    product = unsafe_view(ops.mm(rows, ops.t(input)), batch + (input.shape[0],))
    return ops.contiguous(ops.transpose(product, -1, -2))


def _batched(ops: Any, input: Tensor, other: Tensor) -> Tensor:
    """Batched shapes: broadcast the batch dims, bmm on 3-D, view back
    (UnsafeViewBackward0 over BmmBackward0)."""
    a = ops.reshape(input, (1,) + tuple(input.shape)) if input.ndim == 1 else input
    b = ops.reshape(other, tuple(other.shape) + (1,)) if other.ndim == 1 else other
    batch = _broadcast_batch(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    count = 1
    for size in batch:
        count *= size
    a3 = ops.reshape(ops.expand(a, batch + (n, k)), (count, n, k))
    b3 = ops.reshape(ops.expand(b, batch + (k, m)), (count, k, m))
    out_shape = (
        batch + ((n,) if input.ndim > 1 else ()) + ((m,) if other.ndim > 1 else ())
    )
    return ops.OVERLOADS["_unsafe_view"]["default"](ops.bmm(a3, b3), out_shape)


def _broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {len(out)}"
            )
        out.append(y if x == 1 else x)  # 1 broadcasts to the other size, 0 too
    return tuple(reversed(out))


def _count(batch: tuple[int, ...]) -> int:
    """The rows a batch folds into (explicit: -1 is ambiguous for an empty one)."""
    n = 1
    for size in batch:
        n *= size
    return n


register_numpy_kernels(
    diagonal_backward=_diagonal_backward,
    mv=_matmul,
    bmm=_matmul,
    linalg_inv=_inverse,
)
