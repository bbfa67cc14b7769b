"""`gradcheck` and `gradgradcheck`, with torch.autograd's signatures.

gradcheck compares two Jacobians of `func` at `inputs`: a numerical one (central
differences, one input element at a time) and the analytical one autograd gives
(one backward per output element). gradgradcheck does the same for the function
`(inputs, grad_outputs) -> vjp`, computed with `create_graph=True`, so it checks
that every backward formula is itself differentiable. Use float64 inputs, as with
PyTorch's: in float32 the numerical Jacobian is too coarse to compare.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime import autograd
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A Jacobian mismatch found by gradcheck or gradgradcheck."""


def _as_tuple(value: Any) -> tuple[Any, ...]:
    """Inputs as a tuple: a tuple or a list of them, or one (PyTorch's rule)."""
    if isinstance(value, tuple):
        return value
    return tuple(value) if isinstance(value, list) else (value,)


def _float_outputs(value: Any) -> list[Tensor]:
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [
        t for t in items if isinstance(t, Tensor) and dtype_kind(t._data.dtype) == "f"
    ]


def _host_flat(t: Tensor) -> np.ndarray:
    """A tensor's values, flat, in a numpy array of their own (another
    backend's computed or copied to host memory)."""
    return np.array(backend.to_numpy(t._data), copy=True).reshape(-1)


def _beside(values: np.ndarray, t: Tensor) -> Any:
    """numpy `values` in `t`'s dtype, on `t`'s backend: a seed for its gradient."""
    values = values.astype(t.dtype.np)
    return backend.like(values, t._data) if backend.is_foreign(t._data) else values


def _numerical_jacobians(
    func: Callable[..., Any], inputs: tuple[Any, ...], index: int, eps: float
) -> list[np.ndarray]:
    """d(output o)/d(inputs[index]) per output, as (numel out, numel in) matrices."""
    tensor = inputs[index]
    original = tensor._data
    foreign = backend.is_foreign(original)
    # Another backend's input is perturbed in a host copy, given to it anew.
    x = np.array(backend.to_numpy(original), copy=True) if foreign else original
    flat = x.reshape(-1)  # a view: the perturbation writes into the input itself
    if not np.shares_memory(flat, x):
        raise GradcheckError(f"input #{index} must be contiguous for gradcheck")

    def outputs_at(value: float) -> list[np.ndarray]:
        flat[j] = value
        if foreign:
            tensor._data = backend.like(x.copy(), original)
        return [_host_flat(o) for o in _float_outputs(func(*inputs))]

    columns: list[list[np.ndarray]] = []
    # Grad mode stays as it is: gradgradcheck's function runs a backward itself.
    for j in range(flat.size):
        saved = flat[j]
        up, down = outputs_at(saved + eps), outputs_at(saved - eps)
        flat[j] = saved
        columns.append([(u - d) / (2 * eps) for u, d in zip(up, down)])
    tensor._data = original
    outputs = _float_outputs(func(*inputs))
    return [
        (
            np.stack([c[o] for c in columns], axis=1)
            if columns
            else np.zeros((outputs[o]._data.size, 0))
        )
        for o in range(len(outputs))
    ]


def _analytical_jacobians(
    outputs: list[Tensor], inputs: list[Tensor]
) -> list[list[np.ndarray]]:
    """[output][input] -> (numel out, numel in), one backward per output element."""
    result = []
    for out in outputs:
        rows: list[list[np.ndarray]] = [[] for _ in inputs]
        if not out.requires_grad:  # constant in the inputs: a zero Jacobian
            result.append([np.zeros((out._data.size, t._data.size)) for t in inputs])
            continue
        for k in range(out._data.size):
            seed = np.zeros(out._data.size)
            seed[k] = 1.0
            seed = _beside(seed.reshape(out._data.shape), out)
            grads = autograd.grad(
                out, inputs, Tensor._make(seed), retain_graph=True, allow_unused=True
            )
            for i, g in enumerate(grads):
                size = inputs[i]._data.size
                rows[i].append(np.zeros(size) if g is None else _host_flat(g))
        result.append(
            [
                np.stack(r) if r else np.zeros((0, inputs[i]._data.size))
                for i, r in enumerate(rows)
            ]
        )
    return result


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    **unused: Any,
) -> bool:
    """Check autograd's gradients of `func` at `inputs` against finite differences.

    >>> x = yg.tensor([1.0, 2.0], dtype=yg.float64, requires_grad=True)
    >>> yg.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    positions = [
        i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad
    ]
    if not positions:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but "
            "none of the them have requires_grad=True."
        )
    for i in positions:
        if inputs[i].dtype.np != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point. This check will likely fail if all the inputs are not of "
                "double precision floating point. ",
                UserWarning,
                stacklevel=2,
            )
    outputs = _float_outputs(func(*inputs))
    diff_inputs = [inputs[i] for i in positions]
    analytical = _analytical_jacobians(outputs, diff_inputs)
    for n, i in enumerate(positions):
        numerical = _numerical_jacobians(func, inputs, i, eps)
        for o, num in enumerate(numerical):
            ana = analytical[o][n]
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                message = (
                    f"Jacobian mismatch for output {o} with respect to input {i},\n"
                    f"numerical:{num}\nanalytical:{ana}\n"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Sequence[Tensor] | Tensor | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
    **unused: Any,
) -> bool:
    """gradcheck of the vector-Jacobian product of `func`: second derivatives.

    Without `grad_outputs`, random ones (seeded) are used and checked too.
    """
    inputs = _as_tuple(inputs)
    outputs = _float_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(
            Tensor._make(
                _beside(rng.standard_normal(o._data.shape), o)
            ).requires_grad_()
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    positions = [
        i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad
    ]
    count = len(inputs)

    def vjp(*values: Any) -> tuple[Tensor, ...]:
        outs = _float_outputs(func(*values[:count]))
        grads = autograd.grad(
            outs,
            [values[i] for i in positions],
            list(values[count:]),
            create_graph=True,
            allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        vjp,
        inputs + tuple(grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
