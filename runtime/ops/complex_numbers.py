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

KERNELS = (
    "view_as_real_kernel",
    "view_as_complex_kernel",
)
BACKWARD_HELPERS = (
    "conj",
    "conj_physical",
    "real",
    "imag",
    "contiguous",
    "view_as_real",
    "view_as_complex",
    "handle_r_to_c",
)
COMPOSITE_HELPERS = (
    "conj_of",
    "conj_physical_of",
    "real_part",
    "imag_part",
)


def _is_complex(x: Any) -> bool:
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
    if not _is_complex(x):
        return x
    return array_namespace(x).conj(x)


def conj_physical(x: Any) -> Any:
    """`x.conj_physical()` in a formula (ConjPhysicalBackward0 on a Tensor)."""
    if not _is_complex(x):
        return x
    return array_namespace(x).conj_physical(x)


def real(x: Any) -> Any:
    """`at::real(x)`: the real part (x itself when it is real)."""
    if not _is_complex(x):
        return x
    return array_namespace(x).real(x)


def imag(x: Any) -> Any:
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
    if dtype_kind(self_dtype) == "c" or not _is_complex(grad):
        return grad
    return real(grad)


# --- Kernels ----------------------------------------------------------------------


def view_as_real_kernel(x: Any) -> Any:
    """A complex array as its pairs of reals (a last dim of 2), over the same
    memory: the real parts' view with one more axis, one real item apart."""
    if not _is_complex(x):
        raise RuntimeError(
            "view_as_real is only supported for complex tensors, but got a tensor "
            f"of scalar type: {scalar_type_name(x.dtype)}"
        )
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
            "view_as_complex is only supported for float and double tensors, but "
            f"got a tensor of scalar type: {scalar_type_name(x.dtype)}"
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


def real_part(self: Tensor) -> Tensor:
    """`torch.real`: a real tensor itself; a complex one's real parts, a view
    (select of view_as_real, so SelectBackward0)."""
    if not _tensor(self, "real").is_complex():
        return self
    return ops.select(ops.view_as_real(self), -1, 0)


def imag_part(self: Tensor) -> Tensor:
    """`torch.imag`: a complex tensor's imaginary parts, a view."""
    if not _tensor(self, "imag").is_complex():
        raise RuntimeError(
            "imag is not implemented for tensors with non-complex dtypes."
        )
    return ops.select(ops.view_as_real(self), -1, 1)


register_numpy_kernels(
    conj=_conj_array,
    conj_physical=_conj_array,
    real=_real_array,
    imag=_imag_array,
    contiguous=_contiguous_array,
    view_as_real=view_as_real_kernel,
    view_as_complex=view_as_complex_kernel,
)
