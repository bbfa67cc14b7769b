"""Householder products: torch.linalg.householder_product and ormqr, by
LAPACK's orgqr and ormqr (imported on first use), each beside its backward
helper. The backward applies the reflectors one by one through
`array_namespace`, so it is recorded under `create_graph=True`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime.errors import scalar_type_name

from yamlgrad.runtime.ops.common import _lapack
from yamlgrad.runtime.ops.linalg_decompositions import (
    _constant,
    _each_matrix,
    _mT,
    lapack_layout,
)
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels

KERNELS = ("householder_product_kernel", "ormqr_kernel")
BACKWARD_HELPERS = ("householder_product_backward", "ormqr_backward")


def _unit_columns(V: Any, k: int) -> Any:
    """v_1 .. v_k as the columns of an m x k matrix: V's first k columns below the
    diagonal, with a 1 on it (LAPACK's Householder form)."""
    m, dtype = V.shape[-2], _values(V).dtype
    below = _constant(V, np.tril(np.ones((m, k), dtype=dtype), -1))
    return V[..., :, :k] * below + _constant(V, np.eye(m, k, dtype=dtype))


def _values(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.detach().numpy()


def _check_householder(V: Any, tau: Any, op: str) -> None:
    if np.ndim(V) < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if np.ndim(tau) < 1:
        raise RuntimeError(f"{op}: tau must have at least 1 dimension.")
    if tau.shape[-1] > V.shape[-1]:
        raise RuntimeError(
            f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if tau.dtype != V.dtype:
        ours, theirs = scalar_type_name(V.dtype), scalar_type_name(tau.dtype)
        if op == "torch.ormqr":  # PyTorch's text, its missing space included
            raise RuntimeError(
                f"{op}: Expected input and tau to have the same dtype, but input "
                f"has dtype{ours} and tau has dtype {theirs}"
            )
        raise RuntimeError(
            f"{op}: tau dtype {theirs} does not match input dtype {ours}"
        )


def _orgqr(V: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_1 ... H_k, by LAPACK's orgqr (ungqr if complex)."""
    m, n, k = V.shape[-2], V.shape[-1], tau.shape[-1]
    if k == 0 or n == 0:
        return np.broadcast_to(np.eye(m, n, dtype=V.dtype), V.shape).copy()
    orgqr = _lapack("ungqr" if V.dtype.kind == "c" else "orgqr", V)

    def one(v: np.ndarray, t: np.ndarray) -> np.ndarray:
        padded = np.zeros(n, dtype=V.dtype)
        padded[:k] = t  # tau_i = 0 beyond k: H_i = I
        return orgqr(v, padded, lwork=max(1, 64 * n))[0]

    return _each_matrix(one, V, np.broadcast_to(tau, V.shape[:-2] + (k,)))


def householder_product_kernel(V: Any, tau: Any) -> Any:
    """The first n columns of H_1 ... H_k: torch.linalg.householder_product."""
    op = "torch.linalg.householder_product"
    _check_householder(V, tau, op)
    if V.shape[-2] < V.shape[-1]:
        raise RuntimeError(
            f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    return lapack_layout(_orgqr(np.asarray(V), np.asarray(tau)))


def _reflect(Y: Any, tau: Any, j: int, X: Any, columns: slice) -> Any:
    """H_j X on the `columns` of X, the others as they are: X - tau_j v_j (v_j^T X),
    O(m k) for an m x k X. An ndarray X (one the caller made) is updated in place."""
    v = Y[..., :, j : j + 1]
    if isinstance(X, np.ndarray):
        part = X[..., :, columns]
        part -= (tau[..., j : j + 1, None] * v) @ (np.swapaxes(v, -1, -2) @ part)
        return X
    chosen = np.zeros(X.shape[-1], dtype=_values(X).dtype)
    chosen[columns] = 1
    w = _mT(v) @ X * _constant(X, chosen)
    return X - (tau[..., j : j + 1, None] * v) @ w


def _householder_grads(G: Any, V: Any, tau: Any) -> tuple[Any, Any]:
    """The gradients of <G, H_1 ... H_k> with respect to V and tau.

    With K_i = (H_1..H_{i-1})^T G (H_{i+1}..H_k)^T, tau_i's is -v_i^T K_i v_i and
    v_i's is -tau_i (K_i + K_i^T) v_i, kept below the diagonal. K_i is never
    formed: (real) reflectors are symmetric, so K_i v_i = H_{i-1}..H_1 G u_i with
    u_i = H_k..H_{i+1} v_i, and K_i^T v_i = H_{i+1}..H_k G^T H_1..H_{i-1} v_i;
    each chain is built for every i at once, one reflector at a time over an
    m x k matrix of columns (O(m k^2) with two products by G, where the
    products of m x m reflectors cost O(k^2 m^3))."""
    xp = array_namespace(G, V, tau)
    m, n, k = V.shape[-2], V.shape[-1], tau.shape[-1]
    Y = _unit_columns(V, k)
    U, P = Y * 1, Y * 1
    for j in range(k):
        U = _reflect(Y, tau, j, U, slice(0, j))  # u_i = H_k..H_{i+1} v_i
        P = _reflect(Y, tau, k - 1 - j, P, slice(k - j, k))  # H_1..H_{i-1} v_i
    C, R = G @ U, _mT(G) @ P
    for j in range(k):
        C = _reflect(Y, tau, j, C, slice(j + 1, k))  # K_i v_i
        R = _reflect(Y, tau, k - 1 - j, R, slice(0, k - 1 - j))  # K_i^T v_i
    below = _constant(V, np.tril(np.ones((m, k), dtype=_values(V).dtype), -1))
    g_tau = -xp.sum(Y * C, -2)
    g_V = -tau[..., None, :] * (C + R) * below
    if n > k:
        g_V = xp.concatenate([g_V, V[..., :, k:] * 0], -1)
    return g_V, g_tau


def householder_product_backward(
    grad: Any, result: Any, V: Any, tau: Any, grad_input_mask: tuple[bool, ...]
) -> tuple[Any, Any]:
    """Through the full product: grad padded with zero columns to m x m."""
    xp = array_namespace(grad, V, tau)
    m, n = V.shape[-2], V.shape[-1]
    if n == 0:  # no reflectors (an empty input): nothing to differentiate
        zeros = (V * 0, tau * 0)
        return tuple(z if keep else None for z, keep in zip(zeros, grad_input_mask))
    pad = xp.concatenate([grad] + [V[..., :, :1] * 0] * (m - n), -1)
    gV, gtau = _householder_grads(pad, V, tau)
    return gV if grad_input_mask[0] else None, gtau if grad_input_mask[1] else None


def ormqr_kernel(V: Any, tau: Any, other: Any, left: bool, transpose: bool) -> Any:
    """op(Q) C (left) or C op(Q), Q = H_1 ... H_k, op(Q) = Q^T with `transpose`:
    LAPACK's ormqr (unmqr if complex), which applies the reflectors in place."""
    op = "torch.ormqr"
    _check_householder(V, tau, op)
    m = V.shape[-2]
    if np.ndim(other) < 2 or (other.shape[-2] if left else other.shape[-1]) != m:
        raise RuntimeError(
            f"{op}: other.shape[{-2 if left else -1}] must be equal to "
            "input.shape[-2]"
        )
    side = -2 if left else -1
    if tau.shape[-1] != min(other.shape[side], V.shape[-1]):
        raise RuntimeError(
            f"{op}: tau.shape[-1] must be equal to min(other.shape[{side}], "
            "input.shape[-1])"
        )
    V, tau, other = np.asarray(V), np.asarray(tau), np.asarray(other)
    k = tau.shape[-1]
    batch = np.broadcast_shapes(V.shape[:-2], tau.shape[:-1], other.shape[:-2])
    if k == 0 or other.size == 0:
        return np.ascontiguousarray(np.broadcast_to(other, batch + other.shape[-2:]))
    complex_ = np.result_type(V, other).kind == "c"
    ormqr = _lapack("unmqr" if complex_ else "ormqr", V, other)
    side, trans = "L" if left else "R", ("C" if complex_ else "T") if transpose else "N"

    def one(v: np.ndarray, t: np.ndarray, c: np.ndarray) -> np.ndarray:
        lwork = ormqr(side, trans, v, t, c, lwork=-1)[1][0]  # a workspace query
        return ormqr(side, trans, v, t, c, lwork=max(1, int(lwork.real)))[0]

    dtype = np.result_type(V, other)
    return _each_matrix(
        one,
        np.broadcast_to(V[..., :, :k], batch + (m, k)).astype(dtype),
        np.broadcast_to(tau, batch + (k,)).astype(dtype),
        np.broadcast_to(other, batch + other.shape[-2:]).astype(dtype),
    )


def ormqr_backward(
    grad: Any,
    V: Any,
    tau: Any,
    other: Any,
    left: bool,
    transpose: bool,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    """C's gradient is op(Q)^T grad (grad op(Q)^T on the right), an ormqr with
    the other `transpose`; Q's, from grad and C, goes to the reflectors as
    householder_product's does."""
    xp = array_namespace(grad, V, tau, other)
    g_other = None
    if grad_input_mask[2]:
        g_other = xp.ormqr(V, tau, grad, left, not transpose)
    gV, gtau = None, None
    if grad_input_mask[0] or grad_input_mask[1]:
        g_op = grad @ _mT(other) if left else _mT(other) @ grad
        gV, gtau = _householder_grads(_mT(g_op) if transpose else g_op, V, tau)
    return (
        gV if grad_input_mask[0] else None,
        gtau if grad_input_mask[1] else None,
        g_other,
    )


register_numpy_kernels(ormqr=ormqr_kernel)
