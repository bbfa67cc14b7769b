"""Complex numbers: conjugation, the real and imaginary parts, the views between a
complex tensor and its pairs of reals, and the helpers formulas use at the
boundary between real and complex dtypes.

Conjugation is eager. PyTorch's `conj()` sets a lazy bit on a view and resolves it
when a kernel reads the data; numpy has no conjugate view (a strided view cannot
negate the imaginary parts), so `conj()` of a complex tensor is a new tensor
holding the conjugate (ConjBackward0), `is_conj()` is always False (no tensor holds
unresolved data) and `resolve_conj()` returns its input. On a real tensor every
one of them is the tensor itself, as in PyTorch, so a formula's `conj(grad)` costs
one dtype test on the real path.

`.real` and `.imag` are views, as PyTorch composes them: a select of
`view_as_real`, whose numpy array is a strided view of the complex memory
(twice the strides, the imaginary part one real item further), so a write into
either part reaches the complex tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from yamlgrad.runtime import backend
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.errors import scalar_type_name
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels

_ndarray = np.ndarray

KERNELS = (
    "view_as_real_kernel",
    "view_as_complex_kernel",
    "sgn_kernel",
    "angle_kernel",
    "polar_kernel",
    "complex_kernel",
    "isreal_kernel",
)
BACKWARD_HELPERS = (
    "conj",
    "conj_physical",
    "real_part",
    "imag_part",
    "contiguous",
    "view_as_real",
    "view_as_complex",
    "handle_r_to_c",
    "sgn",
    "sgn_backward",
    "angle_backward",
    "polar_backward",
    "complex_of",
)
COMPOSITE_HELPERS = (
    "conj_of",
    "conj_physical_of",
    "real_view",
    "imag_view",
)


def _complex_dtype(dtype: Any) -> bool:
    """A complex dtype: yamlgrad's, numpy's or another backend's."""
    flag = getattr(dtype, "is_complex", None)
    return flag if isinstance(flag, bool) else dtype_kind(dtype) == "c"


def _is_complex(x: Any) -> bool:
    if type(x) is _ndarray:  # the first-order path: one read
        return x.dtype.kind == "c"
    if isinstance(x, Tensor):
        x = x._data
    if isinstance(x, (int, float)):
        return False
    if isinstance(x, complex):
        return True
    return dtype_kind(x.dtype) == "c"


def _conj_array(x: Any) -> Any:
    """The conjugate of an array (or number); a real one as it is."""
    if not _is_complex(x):
        return x
    return backend.namespace_of(x).conj(x)


def _real_array(x: Any) -> Any:
    """The real part of an array: a view of a complex one, a real one itself."""
    if not _is_complex(x):
        return x
    if type(x) is np.ndarray:
        return x.real
    return backend.namespace_of(x).real(x)


def _imag_array(x: Any) -> Any:
    if type(x) is np.ndarray:
        return x.imag
    return backend.namespace_of(x).imag(x)


def _contiguous_array(x: Any) -> Any:
    if type(x) is np.ndarray and not x.flags.c_contiguous:
        return np.ascontiguousarray(x)
    return x


# --- Backward helpers: one function for ndarrays and for recorded Tensors --------


def conj(x: Any) -> Any:
    """`x.conj()` in a formula: x itself unless it is complex (a recorded
    ConjBackward0 on a complex Tensor)."""
    if type(x) is _ndarray and x.dtype.kind != "c":  # the real first-order path
        return x
    if not _is_complex(x):
        return x
    return array_namespace(x).conj(x)


def conj_physical(x: Any) -> Any:
    """`x.conj_physical()` in a formula (ConjPhysicalBackward0 on a Tensor)."""
    if not _is_complex(x):
        return x
    return array_namespace(x).conj_physical(x)


def real_part(x: Any) -> Any:
    """`at::real(x)`: the real part (x itself when it is real)."""
    if not _is_complex(x):
        return x
    return array_namespace(x).real(x)


def imag_part(x: Any) -> Any:
    """`at::imag(x)`: the imaginary part of a complex x."""
    return array_namespace(x).imag(x)


def contiguous(x: Any) -> Any:
    """`x.contiguous()`: row-major, copied only when it is not."""
    return array_namespace(x).contiguous(x)


def view_as_real(x: Any) -> Any:
    return array_namespace(x).view_as_real(x)


def view_as_complex(x: Any) -> Any:
    return array_namespace(x).view_as_complex(x)


def handle_r_to_c(self_dtype: Any, grad: Any) -> Any:
    """The gradient of a real input from a complex gradient: its real part, as
    PyTorch's helper of the same name (the imaginary part is the derivative
    along a direction the real input cannot move in). A no-op for a complex
    input or a real gradient."""
    if type(grad) is _ndarray and grad.dtype.kind != "c":  # the real path
        return grad
    if not _is_complex(grad) or _complex_dtype(self_dtype):
        return grad
    return real_part(grad)


def _safe_abs(x: Any) -> tuple[Any, Any]:
    """|x| and where it is zero, with the zeros replaced by ones: a divisor that
    gives no nan, in the values or in a recorded gradient."""
    xp = array_namespace(x)
    r = xp.abs(x)
    zero = r == 0
    return xp.where(zero, 1.0, r), zero


def sgn(x: Any) -> Any:
    """`x.sgn()`: x / |x| (0 at 0) for a complex x, the sign of a real one."""
    xp = array_namespace(x)
    if not _is_complex(x):
        return xp.sign(x)
    r, zero = _safe_abs(x)
    return xp.where(zero, 0.0, x / r)


def zeros_like(x: Any) -> Any:
    """elementwise's zeros_like, read at the call: elementwise's formula helpers
    conjugate with this module's conj, so this module cannot import it first."""
    from yamlgrad.runtime.ops import elementwise

    return elementwise.zeros_like(x)


def sgn_backward(self: Any, grad: Any, result: Any) -> Any:
    """The gradient of s = z / |z|: (g - s Re(g conj(s))) / |z| (0 at z = 0); the
    same map is its JVP (it is self-adjoint). A real sign has none."""
    xp = array_namespace(self, grad, result)
    if not _is_complex(self):
        return zeros_like(grad)
    r, zero = _safe_abs(self)
    return xp.where(zero, 0.0, (grad - result * real_part(grad * conj(result))) / r)


def angle_backward(grad: Any, self: Any) -> Any:
    """The gradient of angle(z) = atan2(Im z, Re z): i z / |z|^2 times the real
    gradient (0 at z = 0); zero for a real input, whose angle is 0 or pi."""
    xp = array_namespace(grad, self)
    if not _is_complex(self):
        return zeros_like(self)
    r, zero = _safe_abs(self)
    return xp.where(zero, 0.0, grad * (self * 1j) / (r * r))


def polar_backward(grad: Any, result: Any) -> tuple[Any, Any]:
    """The gradients of abs and angle in result = abs e^(i angle): the real parts
    of conj(g) times d result / d abs (its phase, sgn(result)) and times
    d result / d angle (i result)."""
    g = conj(grad)
    return real_part(g * sgn(result)), real_part(g * (result * 1j))


def complex_of(real_part: Any, imag_part: Any) -> Any:
    """`at::complex(re, im)` in a formula (ComplexBackward0 on Tensors)."""
    return array_namespace(real_part, imag_part).complex(real_part, imag_part)


# --- Kernels ----------------------------------------------------------------------


def view_as_real_kernel(x: Any) -> Any:
    """A complex array as its pairs of reals (a last dim of 2), over the same
    memory: the real parts' view with one more axis, one real item apart."""
    if not _is_complex(x):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if type(x) is not np.ndarray:
        xp = backend.namespace_of(x)
        return xp.stack((xp.real(x), xp.imag(x)), axis=-1)
    parts = x.real
    return np.lib.stride_tricks.as_strided(
        parts,
        shape=x.shape + (2,),
        strides=x.strides + (parts.itemsize,),
        writeable=x.flags.writeable,
    )


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def view_as_complex_kernel(x: Any) -> Any:
    """Pairs of reals (a last dim of 2, stride 1) as a complex array over the
    same memory; PyTorch's checks and texts."""
    complex_type = (
        _COMPLEX_OF.get(np.dtype(x.dtype)) if dtype_kind(x.dtype) == "f" else None
    )
    if complex_type is None:
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, "
            f"but got a tensor of scalar type: {scalar_type_name(x.dtype)}"
        )
    if x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if type(x) is not np.ndarray:
        xp = backend.namespace_of(x)
        return x[..., 0] + 1j * x[..., 1]
    item = x.itemsize
    if x.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s, n in zip(x.strides[:-1], x.shape[:-1]) if n > 1):
        raise RuntimeError(
            "Tensor must have a stride divisible by 2 for all but last dimension"
        )
    if x.size == 0:
        return np.zeros(x.shape[:-1], dtype=complex_type)
    # The first pair as one complex item, strided as x's pairs are.
    first = x[(0,) * (x.ndim - 1)].view(complex_type)
    return np.lib.stride_tricks.as_strided(
        first, shape=x.shape[:-1], strides=x.strides[:-1], writeable=x.flags.writeable
    )


def sgn_kernel(x: Any) -> Any:
    """x / |x| (0 at 0) for a complex array, the sign of a real one."""
    if not _is_complex(x):
        return backend.namespace_of(x).sign(x)
    if type(x) is np.ndarray:
        return np.sign(x)  # numpy's complex sign is x / |x|
    xp = backend.namespace_of(x)
    r = xp.abs(x)
    return xp.where(r == 0, xp.zeros_like(x), x / xp.where(r == 0, 1.0, r))


def angle_kernel(x: Any) -> Any:
    """The argument of each element, in (-pi, pi]: 0 or pi for a real one (nan
    for nan), in the real dtype of x's precision."""
    xp = backend.namespace_of(x)
    if xp is np:
        return np.angle(x)
    if _is_complex(x):
        return xp.atan2(xp.imag(x), xp.real(x))
    return xp.where(x < 0, xp.asarray(np.pi, dtype=x.dtype), xp.zeros_like(x) * x)


def _real_pair(op: str, a: Any, b: Any) -> Any:
    """PyTorch's checks of complex() and polar(): two float tensors of one dtype."""
    kinds = (dtype_kind(a.dtype), dtype_kind(b.dtype))
    if kinds != ("f", "f"):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(a.dtype)} but got "
            f"scalar type {scalar_type_name(b.dtype)} for second argument"
        )
    return backend.namespace_of(a, b)


def complex_kernel(re: Any, im: Any) -> Any:
    """re + i im, broadcast, in the complex dtype of their precision."""
    xp = _real_pair("complex", re, im)
    if xp is np:
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), _COMPLEX_OF[re.dtype])
        out.real, out.imag = re, im
        return out
    return re + 1j * im


def polar_kernel(abs: Any, angle: Any) -> Any:
    """abs e^(i angle) = abs cos(angle) + i abs sin(angle)."""
    xp = _real_pair("polar", abs, angle)
    return complex_kernel(abs * xp.cos(angle), abs * xp.sin(angle))


def isreal_kernel(x: Any) -> Any:
    """True where the imaginary part is zero: everywhere for a real array."""
    xp = backend.namespace_of(x)
    if not _is_complex(x):
        return xp.ones(x.shape, dtype=xp.bool)
    return xp.imag(x) == 0


# --- Composites: PyTorch's decompositions -----------------------------------------


def _tensor(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(type(x).__name__)
    return x


def conj_of(self: Tensor) -> Tensor:
    """`conj`: a real tensor itself; a complex one's conjugate (_conj)."""
    if not _tensor(self, "conj").is_complex():
        return self
    return ops._conj(self)


def conj_physical_of(self: Tensor) -> Tensor:
    """`conj_physical`: a real tensor itself; a complex one's conjugate."""
    if not _tensor(self, "conj_physical").is_complex():
        return self
    return ops._conj_physical(self)


def real_view(self: Tensor) -> Tensor:
    """`torch.real`: a real tensor itself; a complex one's real parts, a view
    (select of view_as_real, so SelectBackward0)."""
    if not _tensor(self, "real").is_complex():
        return self
    return ops.select(ops.view_as_real(self), -1, 0)


def imag_view(self: Tensor) -> Tensor:
    """`torch.imag`: a complex tensor's imaginary parts, a view."""
    if not _tensor(self, "imag").is_complex():
        raise RuntimeError(
            "imag is not implemented for tensors with non-complex dtypes."
        )
    return ops.select(ops.view_as_real(self), -1, 1)


register_numpy_kernels(
    complex=complex_kernel,
    conj=_conj_array,
    conj_physical=_conj_array,
    real=_real_array,
    imag=_imag_array,
    contiguous=_contiguous_array,
    view_as_real=view_as_real_kernel,
    view_as_complex=view_as_complex_kernel,
)
