"""`yg.nn.init`: fill a tensor in place with values drawn as PyTorch's `nn.init` does.

Every function writes into the tensor's data outside the graph (as under
`no_grad`), bumps its version and returns it; random draws come from yamlgrad's
seeded default generator, or `generator=`.

>>> w = yg.empty(3, 5)
>>> kaiming_uniform_(w, a=math.sqrt(5)) is w
True
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.factories import Generator, _rng
from yamlgrad.runtime.sampling import draw_dtype
from yamlgrad.runtime.wrappers.variable_type_utils import write_inplace
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
]

_LINEAR_FNS = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity, as PyTorch's table gives it."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Store `values` in `tensor`'s data, in place, as an in-place op under
    no_grad (another backend's tensor takes them as its new array)."""
    if backend.is_foreign(tensor._data):
        write_inplace(tensor, np.asarray(values, dtype=tensor.dtype.np))
        return tensor
    tensor._data[...] = values
    tensor.version_counter.bump()
    return tensor


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Values drawn uniformly from [a, b)."""
    draw = _rng(generator).random(tensor.shape, dtype=draw_dtype(tensor))
    return _write(tensor, a + (b - a) * draw)


def normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    generator: Generator | None = None,
) -> Tensor:
    """Values drawn from N(mean, std**2)."""
    draw = _rng(generator).standard_normal(tensor.shape, dtype=draw_dtype(tensor))
    return _write(tensor, mean + std * draw)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """N(mean, std**2) restricted to [a, b]: draws outside are drawn again."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    rng = _rng(generator)
    values = mean + std * rng.standard_normal(tensor.shape)
    for _ in range(_TRUNC_NORMAL_ROUNDS):
        outside = (values < a) | (values > b)
        if not outside.any():
            break
        values[outside] = mean + std * rng.standard_normal(int(outside.sum()))
    return _write(tensor, np.clip(values, a, b))


# Rejection rounds before the few draws still outside [a, b] are clipped: with
# a 2-std window a value survives 100 rounds with probability 0.05**100.
_TRUNC_NORMAL_ROUNDS = 100


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Every element set to `val`."""
    return _write(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _write(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return _write(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (a 2-D tensor only)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """Inputs and outputs per unit: dims 1 and 0 times the receptive field."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 "
            "dimensions"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def _is_empty(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan) (He et al.)."""
    if _is_empty(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(
    tensor: Tensor, gain: float = 1, generator: Generator | None = None
) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal draw,
    trailing dimensions flattened."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, gain * q.reshape(tensor.shape))
