"""`gradcheck` and `gradgradcheck`, with torch.autograd's signatures.

gradcheck compares two Jacobians of `func` at `inputs`: a numerical one (central
differences, one input element at a time) and the analytical one autograd gives
(one backward per output element). gradgradcheck does the same for the function
`(inputs, grad_outputs) -> vjp`, computed with `create_graph=True`, so it checks
that every backward formula is itself differentiable. Use float64 inputs, as with
PyTorch's: in float32 the numerical Jacobian is too coarse to compare.

Complex inputs and outputs are pairs of reals, as PyTorch's gradcheck takes them:
a complex input element is perturbed along its real and its imaginary part (two
columns), a complex output element gives two rows (its real and imaginary parts),
and the analytical row of a part is the backward of seed 1 (the real part) or 1j
(the imaginary part), whose complex gradient dL/d(real) + i dL/d(imag), PyTorch's
conjugate Wirtinger convention, fills the input's two columns. Both Jacobians are
then real matrices, compared as for real functions.
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
    """The floating and complex tensors among `func`'s outputs."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [
        t
        for t in items
        if isinstance(t, Tensor) and dtype_kind(t._data.dtype) in ("f", "c")
    ]


def _host_flat(t: Tensor) -> np.ndarray:
    """A tensor's values, flat, in a numpy array of their own (another
    backend's computed or copied to host memory); a complex one's as its real
    and imaginary parts, interleaved."""
    return _as_reals(np.array(backend.to_numpy(t._data), copy=True).reshape(-1))


def _as_reals(flat: np.ndarray) -> np.ndarray:
    """A flat complex array as (real, imag) pairs, flat; a real one as it is."""
    return flat.view(flat.real.dtype) if flat.dtype.kind == "c" else flat


def _parts(t: Tensor) -> tuple[complex, ...]:
    """The directions of one element of `t`: its real part, and its imaginary
    part when it is complex."""
    return (1.0, 1j) if dtype_kind(t._data.dtype) == "c" else (1.0,)


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
        for part in _parts(tensor):
            up = outputs_at(saved + eps * part)
            down = outputs_at(saved - eps * part)
            flat[j] = saved
            columns.append([(u - d) / (2 * eps) for u, d in zip(up, down)])
    tensor._data = original
    outputs = _float_outputs(func(*inputs))
    return [
        (
            np.stack([c[o] for c in columns], axis=1)
            if columns
            else np.zeros((_real_size(outputs[o]), 0))
        )
        for o in range(len(outputs))
    ]


def _real_size(t: Tensor) -> int:
    """How many reals `t` holds (two per complex element)."""
    return t._data.size * len(_parts(t))


def _analytical_jacobians(
    outputs: list[Tensor], inputs: list[Tensor]
) -> list[list[np.ndarray]]:
    """[output][input] -> (reals out, reals in), one backward per real of each
    output (per element, and per part of a complex one)."""
    result = []
    for out in outputs:
        rows: list[list[np.ndarray]] = [[] for _ in inputs]
        if not out.requires_grad:  # constant in the inputs: a zero Jacobian
            result.append([np.zeros((_real_size(out), _real_size(t))) for t in inputs])
            continue
        for k in range(out._data.size):
            for part in _parts(out):
                seed = np.zeros(out._data.size, dtype=type(part))
                seed[k] = part
                seed = _beside(seed.reshape(out._data.shape), out)
                grads = autograd.grad(
                    out,
                    inputs,
                    Tensor._make(seed),
                    retain_graph=True,
                    allow_unused=True,
                )
                for i, g in enumerate(grads):
                    size = _real_size(inputs[i])
                    rows[i].append(np.zeros(size) if g is None else _host_flat(g))
        result.append(
            [
                np.stack(r) if r else np.zeros((0, _real_size(inputs[i])))
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
        if inputs[i].dtype.np not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point or complex. This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
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


def _random(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    """Standard normal values of t's shape, complex (both parts) for a complex t."""
    shape = t._data.shape
    values = rng.standard_normal(shape)
    return values + 1j * rng.standard_normal(shape) if len(_parts(t)) == 2 else values


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
            Tensor._make(_beside(_random(rng, o), o)).requires_grad_() for o in outputs
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
