"""torch.linalg's composites, and PyTorch's older top-level spellings: bodies
made only of recorded ops, as PyTorch's CompositeImplicitAutograd kernels in
LinearAlgebra.cpp and BatchLinearAlgebra.cpp are, so each records the nodes
PyTorch's records (a matrix 2-norm AmaxBackward0 over LinalgSvdBackward0,
multi_dot MmBackward0s in the optimal order under ViewBackward0, vander
CatBackward0, ...), with PyTorch's checks and error texts.

An op PyTorch computes with fewer outputs when no gradient is needed (svdvals
and eigvalsh skip the vectors) asks `_may_require_grad`, PyTorch's
_may_require_fw_or_bw_grad.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from yamlgrad.runtime.autograd import grad_mode
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops as _ops
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.common import _dim
from yamlgrad.runtime.ops.linalg_solves import singular_error
from yamlgrad.runtime.wrappers import inplace_ops
from yamlgrad.runtime.wrappers.interposition import tracing
from yamlgrad.runtime.wrappers.variable_type_utils import (
    bool_arg,
    float_arg,
    int_arg,
    return_type,
)

COMPOSITE_HELPERS = (
    "svd_outputs",
    "svd_legacy",
    "svdvals_of",
    "eigh_outputs",
    "eigvalsh_of",
    "slogdet_outputs",
    "logdet_of",
    "solve_ex_outputs",
    "solve_of",
    "lu_factor_outputs",
    "lu_solve_legacy",
    "pinv_of",
    "pinverse_of",
    "qr_legacy",
    "matrix_norm_of",
    "norm_of",
    "cond_of",
    "matrix_power_of",
    "multi_dot_of",
    "tensorinv_of",
    "tensorsolve_of",
    "vander_of",
    "linalg_vander_of",
    "vecdot_of",
    "inner_of",
    "kron_of",
    "cross_of",
)

ops: Any = _ops


def _may_require_grad(A: Tensor) -> bool:
    """PyTorch's _may_require_fw_or_bw_grad: whether a gradient of A may be
    asked for, backward (grad mode on, A requires grad) or forward (a tangent);
    and always while yg.compile traces (on copies, under no_grad), as the
    compiled graph may be differentiated."""
    return (
        (grad_mode.is_grad_enabled() and A.requires_grad)
        or getattr(A, "_fw_grad", None) is not None
        or _tracing()
    )


def _constant(array: np.ndarray) -> Tensor:
    return Tensor._make(array)


# Note [Writes while tracing]
# matrix_power(A, 0) and vander write into a tensor (copy_, item assignment),
# recording PyTorch's CopyBackwards and CopySlices. yg.compile's graph holds
# derivatives.yaml entries only, and those writes are not entries: while it
# traces, these bodies compute the same values out of place (add, cat).


def _tracing() -> bool:
    return tracing.active > 0 and tracing.is_recording()


# -- decompositions ------------------------------------------------------------------


def svd_outputs(A: Tensor, full_matrices: bool, driver: str | None) -> Any:
    """torch.linalg.svd: _linalg_svd with U and Vh (LinalgSvdBackward0)."""
    U, S, Vh = ops._linalg_svd(A, full_matrices, True, driver=driver)
    return return_type("linalg_svd", ("U", "S", "Vh"))(U, S, Vh)


def svd_legacy(A: Tensor, some: bool, compute_uv: bool) -> Any:
    """torch.svd: (U, S, V) with V = Vh^H (TransposeBackward0); without
    compute_uv, zeros for U (m x m) and V (n x n), as PyTorch's."""
    some = bool_arg(some, "svd", "some", 2)
    compute_uv = bool_arg(compute_uv, "svd", "compute_uv", 3)
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.svd: The input tensor A must have at least 2 dimensions."
        )
    if compute_uv:
        U, S, Vh = ops._linalg_svd(A, not some, True)
    else:
        S = svdvals_of(A, None)
        m, n = A.shape[-2], A.shape[-1]
        batch = tuple(A.shape[:-2])
        U = _constant(np.zeros(batch + (m, m), dtype=A._data.dtype))
        Vh = _constant(np.zeros(batch + (n, n), dtype=A._data.dtype))
    return return_type("svd", ("U", "S", "V"))(U, S, ops.transpose(Vh, -2, -1))


def svdvals_of(A: Tensor, driver: str | None) -> Tensor:
    """torch.linalg.svdvals: S of _linalg_svd, U and Vh computed only when a
    gradient may be asked for (the backward needs them)."""
    return ops._linalg_svd(A, False, _may_require_grad(A), driver=driver)[1]


def eigh_outputs(A: Tensor, UPLO: str) -> Any:
    """torch.linalg.eigh: _linalg_eigh with its eigenvectors."""
    L, V = ops._linalg_eigh(A, UPLO, True)
    return return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))(L, V)


def eigvalsh_of(A: Tensor, UPLO: str) -> Tensor:
    """torch.linalg.eigvalsh: the eigenvalues, the vectors only for a gradient."""
    return ops._linalg_eigh(A, UPLO, _may_require_grad(A))[0]


def slogdet_outputs(A: Tensor, legacy: bool) -> Any:
    """(sign, logabsdet) of _linalg_slogdet, as torch.linalg.slogdet or, with
    `legacy`, torch.slogdet (whose named tuple is `slogdet`)."""
    sign, logabsdet = ops._linalg_slogdet(A)[:2]
    name = "slogdet" if legacy else "linalg_slogdet"
    return return_type(name, ("sign", "logabsdet"))(sign, logabsdet)


def logdet_of(A: Tensor) -> Tensor:
    """torch.logdet: logabsdet, nan where the determinant is negative
    (WhereBackward0 over LinalgSlogdetBackward0)."""
    if A.ndim >= 2 and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"logdet: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    sign, logabsdet = ops._linalg_slogdet(A)[:2]
    nan = _constant(np.array(np.nan, dtype=logabsdet._data.dtype))
    return ops.where(ops.eq(sign, -1.0), nan, logabsdet)


def solve_ex_outputs(A: Tensor, B: Tensor, left: bool, check_errors: bool) -> Any:
    """torch.linalg.solve_ex: (result, info) of _linalg_solve_ex."""
    result, _, _, info = ops._linalg_solve_ex(
        A, B, left=left, check_errors=check_errors
    )
    return return_type("linalg_solve_ex", ("result", "info"))(result, info)


def solve_of(A: Tensor, B: Tensor, left: bool) -> Tensor:
    """torch.linalg.solve: _linalg_solve_ex, then PyTorch's error for a
    singular A (LinalgSolveExBackward0)."""
    result, _, _, info = ops._linalg_solve_ex(A, B, left=left)
    error = singular_error(info._data, "torch.linalg.solve")
    if error is not None:
        raise error
    return result


def lu_factor_outputs(A: Tensor, pivot: bool) -> Any:
    """torch.linalg.lu_factor: (LU, pivots) of linalg_lu_factor_ex, which
    raises for a singular A."""
    LU, pivots, _ = ops.linalg_lu_factor_ex(A, pivot=pivot, check_errors=True)
    return return_type("linalg_lu_factor", ("LU", "pivots"))(LU, pivots)


def lu_solve_legacy(B: Tensor, LU: Tensor, pivots: Tensor) -> Tensor:
    """torch.lu_solve(B, LU, pivots): linalg.lu_solve with its arguments in
    the new order, and PyTorch's deprecation warning."""
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will "
        "be removed in a future PyTorch release.\nNote that torch.linalg.lu_solve "
        "has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould "
        "be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
        UserWarning,
        stacklevel=3,
    )
    return ops.linalg_lu_solve(LU, pivots, B)


def pinv_of(A: Tensor, atol: Any, rtol: Any, hermitian: bool) -> Tensor:
    """linalg.pinv with float tolerances (or rcond, the relative one) as 0-d
    float64 tensors, as PyTorch's overloads pass them on."""

    def tolerance(value: Any) -> Any:
        if value is None or isinstance(value, Tensor):
            return value
        return _constant(np.array(value, dtype=np.float64))

    pinv = ops.OVERLOADS["linalg_pinv"]["atol_rtol_tensor"]
    return pinv(A, atol=tolerance(atol), rtol=tolerance(rtol), hermitian=hermitian)


def pinverse_of(A: Tensor, rcond: Any) -> Tensor:
    """torch.pinverse: linalg.pinv with rcond as its relative tolerance."""
    return pinv_of(A, 0.0, float_arg(rcond, "pinverse", "rcond", 2), False)


def qr_legacy(A: Tensor, some: bool) -> Any:
    """torch.qr: linalg.qr in 'reduced' (some) or 'complete' mode, with
    PyTorch's deprecation warning."""
    some = bool_arg(some, "qr", "some", 2)
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed "
        "in a future PyTorch release.\nThe boolean parameter 'some' has been "
        "replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
        "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some "
        "else 'complete')",
        UserWarning,
        stacklevel=3,
    )
    Q, R = ops.linalg_qr(A, "reduced" if some else "complete")
    return return_type("qr", ("Q", "R"))(Q, R)


# -- norms ---------------------------------------------------------------------------


def _matrix_dims(A: Tensor, dim: Any, op: str = "linalg.matrix_norm") -> list[int]:
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        shown = dims[0] if len(dims) == 1 else dims
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {shown}")
    dims = [_dim(d, A.ndim, op) for d in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(f"{op}: dims must be different. Got ({dims[0]}, {dims[1]})")
    return dims


def _backshift(dims: list[int], ndim: int) -> list[int]:
    """PyTorch's create_dim_backshift_permutation: the two dims moved last."""
    return [d for d in range(ndim) if d not in dims] + dims


def _by_singular_values(A: Tensor, dims: list[int], keepdim: bool, reduce: Any) -> Any:
    permutation = _backshift(dims, A.ndim)
    result = reduce(svdvals_of(ops.permute(A, permutation), None))
    if keepdim:
        reverse = [permutation.index(d) for d in range(A.ndim)]
        result = ops.permute(ops.unsqueeze(result, -1), reverse)
    return result


def matrix_norm_of(A: Tensor, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    """torch.linalg.matrix_norm: 'fro' as a vector 2-norm, 'nuc' and +-2 from
    the singular values (their sum, largest, smallest), +-1 and +-inf as the
    largest or smallest vector 1-norm of the columns or rows."""
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif abs(float(ord)) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_number(ord)} not supported.")
    dims = _matrix_dims(A, dim)
    _check_float(A, "linalg.matrix_norm")
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, dims, keepdim, dtype=dtype)
    A_ = A if dtype is None else ops.to(A, dtype)
    if ord == "nuc":
        return _by_singular_values(
            A_, dims, keepdim, lambda s: ops.sum(s, [-1], keepdim)
        )
    largest = float(ord) > 0
    if abs(float(ord)) == 2.0:
        extreme = ops.amax if largest else ops.amin
        return _by_singular_values(
            A_, dims, keepdim, lambda s: extreme(s, [-1], keepdim)
        )
    if abs(float(ord)) == math.inf:
        dims = dims[::-1]
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    sums = ops.linalg_vector_norm(A, 1, [dims[0]], keepdim, dtype=dtype)
    return (ops.amax if largest else ops.amin)(sums, [dims[1]], keepdim)


def _number(x: Any) -> str:
    return str(int(x)) if float(x) == int(x) else str(x)


def _check_float(A: Tensor, op: str) -> None:
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(A._data.dtype)}"
        )


def norm_of(A: Tensor, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    """torch.linalg.norm: a matrix norm for 2 dims (given, or those of a
    matrix when an ord is), else a vector norm (2 by default)."""
    dims = [dim] if isinstance(dim, int) else None if dim is None else list(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}"
        )
    if dims is None and ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D "
            f"or 2D. Got {A.ndim}D."
        )
    if isinstance(ord, str) or (
        ord is not None and (len(dims) == 2 if dims is not None else A.ndim == 2)
    ):
        return matrix_norm_of(A, ord, [0, 1] if dims is None else dims, keepdim, dtype)
    return ops.linalg_vector_norm(
        A, 2 if ord is None else ord, dims, keepdim, dtype=dtype
    )


def cond_of(A: Tensor, p: Any) -> Tensor:
    """torch.linalg.cond: s_max / s_min (ord None or +-2, SqueezeBackward1), the
    nuclear norm times that of the inverse, or any other ord's norm times that
    of the inverse (inf for a singular matrix, NanToNumBackward0)."""
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.cond: The input tensor must have at least 2 dimensions."
        )
    ord = 2 if p is None else p
    valid = (
        ord in ("fro", "nuc")
        if isinstance(ord, str)
        else abs(float(ord))
        in (
            1.0,
            2.0,
            math.inf,
        )
    )
    if isinstance(ord, str) or abs(float(ord)) != 2.0:
        shown = ord if isinstance(ord, str) else _cond_ord(ord)
        if valid and A.shape[-1] != A.shape[-2]:
            raise RuntimeError(
                f"linalg.cond(ord={shown}): A must be batches of square matrices, "
                f"but they are {A.shape[-2]} by {A.shape[-1]} matrices"
            )
    if not valid:
        shown = ord if isinstance(ord, str) else float(ord)
        raise RuntimeError(
            f"linalg.cond got an invalid norm type: {_number(shown) if not isinstance(shown, str) else shown}"
        )
    if math.prod(A.shape) == 0:
        return _constant(np.zeros(tuple(A.shape[:-2]), dtype=A._data.dtype))
    if not isinstance(ord, str) and abs(float(ord)) == 2.0:
        s = svdvals_of(A, None)
        s_max, s_min = ops.narrow(s, -1, 0, 1), ops.narrow(s, -1, s.shape[-1] - 1, 1)
        ratio = s_min / s_max if float(ord) < 0 else s_max / s_min
        return ops.squeeze(ratio, -1)
    if ord == "nuc":
        s = svdvals_of(A, None)
        return ops.sum(s, [-1]) * ops.sum(ops.reciprocal(s), [-1])
    # PyTorch fills and fixes in place (masked_fill_, nan_to_num_); out of place
    # here, which records the same nodes without changing a saved inverse.
    inverse, info = ops.linalg_inv_ex(A)
    singular = _constant(info._data[..., None, None] > 0)
    inverse = ops.masked_fill(inverse, singular, math.inf)
    result = matrix_norm_of(A, ord, [-2, -1], False, None) * matrix_norm_of(
        inverse, ord, [-2, -1], False, None
    )
    return ops.nan_to_num(result, math.inf, math.inf, -math.inf)


def _cond_ord(ord: Any) -> str:
    """The ord as PyTorch prints it in cond's messages (std::to_string)."""
    if isinstance(ord, float) and not math.isinf(ord):
        return f"{ord:.6f}"
    return "inf" if ord == math.inf else "-inf" if ord == -math.inf else str(ord)


def matrix_rank(A: Tensor, atol: Any, rtol: Any, hermitian: bool) -> Tensor:
    """torch.linalg.matrix_rank: the singular values (absolute eigenvalues when
    `hermitian`) above max(atol, rtol * the largest), int64, no gradient."""
    op = "torch.linalg.matrix_rank"
    if A.ndim < 2:
        raise RuntimeError(
            f"{op}: The input tensor input must have at least 2 dimensions."
        )
    m, n = A.shape[-2], A.shape[-1]
    if m * n == 0 or math.prod(A.shape) == 0:
        return _constant(np.zeros(tuple(A.shape[:-2]), dtype=np.int64))
    atol_ = np.zeros(()) if atol is None else np.asarray(_value(atol), dtype=np.float64)
    default = np.finfo(A._data.dtype).eps * max(m, n)
    if rtol is not None:
        rtol_ = np.asarray(_value(rtol), dtype=np.float64)
    elif atol is not None:
        rtol_ = np.where(atol_ > 0, 0.0, default)
    else:
        rtol_ = np.asarray(default)
    with grad_mode.no_grad():
        if hermitian:
            S = ops.abs(ops._linalg_eigh(A, "L", False)[0])._data
        else:
            S = ops._linalg_svd(A, False, False)[1]._data
    largest = S.max(-1, keepdims=True)
    tol = np.maximum(atol_[..., None], rtol_[..., None] * largest)
    return _constant(np.sum(S > tol, axis=-1).astype(np.int64))


def _value(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


# -- products ----------------------------------------------------------------------


def matrix_power_of(A: Tensor, n: int) -> Tensor:
    """torch.linalg.matrix_power: the identity for n = 0 (CopyBackwards, into a
    clone of A), A's clone for 1, the inverse for -1, and for larger |n| the
    products of A (or its inverse) by binary decomposition, as PyTorch's."""
    op = "linalg.matrix_power"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{op}: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if n == 0:
        eye = _constant(np.eye(A.shape[-2], A.shape[-1], dtype=A._data.dtype))
        if _tracing():  # Note [Writes while tracing]
            return ops.add(ops.mul(A, 0.0), eye)
        return inplace_ops.copy_(ops.clone(A), eye)
    if n == 1:
        return ops.clone(A)
    if n == -1:
        return ops.linalg_inv(A)
    a = ops.linalg_inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return ops.matmul(a, a)
    if n == 3:
        return ops.matmul(ops.matmul(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else ops.matmul(z, z)
        if bit:
            result = z if result is None else ops.matmul(result, z)
    return result


def multi_dot_of(tensors: list[Tensor]) -> Tensor:
    """torch.linalg.multi_dot: matrix products in the order of fewest scalar
    multiplications (for three matrices by the two costs, else PyTorch's
    dynamic programme); a 1-D first or last operand is a row or a column, left
    out of the result's shape (ViewBackward0 on top)."""
    count = len(tensors)
    if count < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {count}")
    first, last = tensors[0], tensors[-1]
    out_shape: list[int] = []
    mats = list(tensors)
    for position, (t, at) in enumerate(((first, 0), (last, count - 1))):
        which = "first" if position == 0 else "last"
        if t.ndim == 1:
            mats[at] = ops.unsqueeze(t, 0 if position == 0 else -1)
        elif t.ndim == 2:
            out_shape.append(t.shape[0] if position == 0 else t.shape[1])
        else:
            raise RuntimeError(
                f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.ndim}D"
            )
    for i in range(1, count - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D"
            )
    for i in range(1, count):
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i - 1} and {i} with shapes "
                f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} cannot "
                "be multiplied"
            )
    if count == 2:
        return ops.view(ops.mm(mats[0], mats[1]), out_shape)
    if count == 3:
        a, b = mats[0].shape[0], mats[1].shape[0]
        c, d = mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            result = ops.mm(mats[0], ops.mm(mats[1], mats[2]))
        else:
            result = ops.mm(ops.mm(mats[0], mats[1]), mats[2])
        return ops.view(result, out_shape)
    order = _chain_order([tuple(m.shape) for m in mats])
    return ops.view(_chain_product(mats, order, 0, count - 1), out_shape)


def _chain_order(shapes: list[tuple[int, ...]]) -> list[list[int]]:
    """PyTorch's matrix_chain_order: split[i][j] is where the product of
    matrices i..j splits, for the fewest scalar multiplications."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[assignment]
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(mats: list[Tensor], order: list[list[int]], i: int, j: int) -> Any:
    if i == j:
        return mats[i]
    k = order[i][j]
    return ops.mm(
        _chain_product(mats, order, i, k), _chain_product(mats, order, k + 1, j)
    )


def tensorinv_of(A: Tensor, ind: int) -> Tensor:
    """torch.linalg.tensorinv: the inverse of A as a square matrix of its first
    `ind` dims against the rest, reshaped to the rest's shape then the first's."""
    if ind <= 0:
        raise RuntimeError(
            f"Expected a strictly positive integer for 'ind', but got {ind}"
        )
    end, start = tuple(A.shape[ind:]), tuple(A.shape[:ind])
    rows, columns = math.prod(end), math.prod(start)
    if rows != columns:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {rows} != {columns}"
        )
    inverse = ops.linalg_inv_ex(ops.reshape(A, (rows, rows)))[0]
    return ops.reshape(inverse, end + start)


def tensorsolve_of(A: Tensor, B: Tensor, dims: Any) -> Tensor:
    """torch.linalg.tensorsolve: `dims` of A moved last, A as a square matrix
    against B flattened, linalg.solve, the result in A's remaining shape."""
    ndim = A.ndim
    if dims is not None:
        dims = list(dims)
        A = ops.movedim(A, dims, list(range(ndim - len(dims), ndim)))
    result_shape = tuple(A.shape[B.ndim :])
    size, other = math.prod(result_shape), math.prod(B.shape)
    if size != other:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
            f"== prod(self.shape[:other.ndim]), but got {size} != {other}"
        )
    solution = solve_of(ops.reshape(A, (size, size)), ops.flatten(B), True)
    return ops.reshape(solution, result_shape)


def vander_of(x: Tensor, N: int | None, increasing: bool) -> Tensor:
    """torch.vander: powers x^0 .. x^(N-1) as columns, the cumprod written into
    ones (CopySlices; PyTorch writes it into its own input, which breaks its
    backward), decreasing unless `increasing` (FlipBackward0)."""
    N = None if N is None else int_arg(N, "vander", "N", 2)
    increasing = bool_arg(increasing, "vander", "increasing", 3)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x._data.dtype if x._data.dtype.kind in "fc" else np.int64
    result = _constant(np.ones((x.shape[0], n), dtype=dtype))
    if n > 1:
        columns = ops.expand(ops.unsqueeze(x, 1), (x.shape[0], n - 1))
        if _tracing():  # Note [Writes while tracing]
            powers = ops.cumprod(columns, 1)
            result = ops.cat([ops.narrow(result, 1, 0, 1), powers], 1)
        else:
            result[:, 1:] = ops.cumprod(columns, 1)
    return result if increasing else ops.flip(result, [1])


def linalg_vander_of(x: Tensor, N: int | None) -> Tensor:
    """torch.linalg.vander: [1, x, x^2, ...] along a new last dim (CatBackward0
    over the cumulative product)."""
    kind = x._data.dtype.kind
    if kind not in "fciu" or x._data.dtype.itemsize < 4 and kind == "f":
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, "
            f"but got {scalar_type_name(x._data.dtype)}"
        )
    x_ = ops.unsqueeze(x, -1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = ops.cumprod(ops.expand(ops.unsqueeze(x_, -1), shape + [n - 1]), -1)
    ones = _constant(np.ones(tuple(shape) + (1,), dtype=powers._data.dtype))
    return ops.cat([ones, powers], -1)


def vecdot_of(x: Tensor, y: Tensor, dim: int) -> Tensor:
    """torch.linalg.vecdot: sum(x * y, dim) (SumBackward1)."""
    _check_float(x, "linalg.vecdot")
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of "
            f"type {scalar_type_name(x._data.dtype)} and y of type "
            f"{scalar_type_name(y._data.dtype)} instead"
        )
    return ops.sum(ops.mul(x, y), [dim])


def inner_of(a: Tensor, b: Tensor) -> Tensor:
    """torch.inner: a * b for a 0-d operand, else tensordot over the last dims."""
    if a.ndim == 0 or b.ndim == 0:
        return ops.mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got "
            f"shapes {list(a.shape)} and {list(b.shape)}"
        )
    return ops.tensordot(a, b, [-1], [-1])


def kron_of(a: Tensor, b: Tensor) -> Tensor:
    """torch.kron: a viewed as (a0, 1, a1, 1, ...) times b viewed as (1, b0, 1,
    b1, ...), viewed back as (a0 b0, a1 b1, ...) (UnsafeViewBackward0)."""
    ndim = max(a.ndim, b.ndim)
    sa = (1,) * (ndim - a.ndim) + tuple(a.shape)
    sb = (1,) * (ndim - b.ndim) + tuple(b.shape)
    a_shape = [s for i in range(ndim) for s in (sa[i], 1)]
    b_shape = [s for i in range(ndim) for s in (1, sb[i])]
    unsafe_view = ops.OVERLOADS["_unsafe_view"]["default"]
    product = ops.mul(unsafe_view(a, a_shape), unsafe_view(b, b_shape))
    return unsafe_view(product, [sa[i] * sb[i] for i in range(ndim)])


def cross_of(a: Tensor, b: Tensor, dim: int | None) -> Tensor:
    """torch.cross: linalg.cross along `dim`, by default the first dim of size
    3 (with PyTorch's deprecation warning)."""
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use "
            "torch.linalg.cross.\nThe default value of dim will change to agree "
            "with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=3,
        )
        sizes = list(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return ops.linalg_cross(a, b, dim=dim)
