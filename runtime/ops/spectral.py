"""Discrete Fourier transforms: the three primitives torch.fft is built on,
_fft_r2c, _fft_c2r and _fft_c2c, each kernel beside its backward helper.

`normalization` is PyTorch's fft_norm_mode: 0 scales by nothing, 1 by
1/sqrt(n), 2 by 1/n, where n is the number of points of the signal (the input's
sizes along `dim` for r2c and c2c, the output's for c2r). The kernels are the
array namespace's `fft` module (numpy.fft, or the array API's on Dask and
CuPy), whose `norm` names where the scale goes rather than how much it is; the
transform's direction decides which of its names is ours.

The real transforms keep half a spectrum (the last of `dim` holds n // 2 + 1
entries), which is why their backwards are not each other:

* r2c's adjoint takes the kept half as the whole spectrum with zeros in the
  dropped half, runs the inverse complex transform and keeps the real part
  (the input was real);
* c2r reads its input as the half of a Hermitian-symmetric spectrum, so every
  entry except the first (and the middle one, for an even n) stands for two:
  the adjoint is r2c with those entries doubled.
"""

from __future__ import annotations

from typing import Any

from yamlgrad.runtime import backend
from yamlgrad.runtime.ops.namespace import array_namespace, register_numpy_kernels

KERNELS = ("fft_r2c_kernel", "fft_c2r_kernel", "fft_c2c_kernel")
BACKWARD_HELPERS = ("_fft_c2c", "fft_r2c_backward", "fft_c2r_backward")

# fft_norm_mode -> numpy.fft's `norm` for a transform in the forward (e^{-i})
# and in the backward (e^{+i}) direction: the scale is put on the named side.
_FORWARD_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_BACKWARD_NORM = {0: "forward", 1: "ortho", 2: "backward"}


def _axes(dim: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    return tuple(d % ndim for d in dim) if ndim else ()


def _whole_along(x: Any, axes: tuple[int, ...]) -> Any:
    """`x` with each of `axes` in one chunk, for Dask, whose FFTs transform
    only such axes (the other axes stay chunked, so batches stay parallel)."""
    if backend.is_lazy(x) and axes:
        return x.rechunk({a: -1 for a in axes})
    return x


def _as_complex(xp: Any, x: Any) -> Any:
    """`x` in the complex dtype of its precision: the array API's complex
    transforms take complex input only (a real cotangent reaches them)."""
    if xp.isdtype(x.dtype, "complex floating"):
        return x
    return xp.astype(x, xp.result_type(x.dtype, xp.complex64))


def fft_c2c_kernel(
    x: Any, dim: tuple[int, ...], normalization: int, forward: bool
) -> Any:
    """The complex transform of `x` over `dim`, with e^{-i} when `forward`."""
    xp = backend.array_namespace(x)
    axes = _axes(dim, x.ndim)
    x = _whole_along(_as_complex(xp, x), axes)
    if not axes:
        return xp.asarray(x, copy=True)
    fft = xp.fft
    if forward:
        return fft.fftn(x, axes=axes, norm=_FORWARD_NORM[normalization])
    return fft.ifftn(x, axes=axes, norm=_BACKWARD_NORM[normalization])


def fft_r2c_kernel(
    x: Any, dim: tuple[int, ...], normalization: int, onesided: bool
) -> Any:
    """The forward transform of a real `x` over `dim`; `onesided` keeps the
    n // 2 + 1 entries of the last of `dim` that Hermitian symmetry does not
    repeat."""
    xp = backend.array_namespace(x)
    axes = _axes(dim, x.ndim)
    norm = _FORWARD_NORM[normalization]
    x = _whole_along(x, axes)
    if onesided:
        return xp.fft.rfftn(x, axes=axes, norm=norm)
    return xp.fft.fftn(_as_complex(xp, x), axes=axes, norm=norm)


def fft_c2r_kernel(
    x: Any, dim: tuple[int, ...], normalization: int, last_dim_size: int
) -> Any:
    """The backward transform of the half spectrum `x` over `dim` to a real
    signal with `last_dim_size` points along the last of `dim`."""
    xp = backend.array_namespace(x)
    axes = _axes(dim, x.ndim)
    sizes = tuple(x.shape[a] for a in axes[:-1]) + (last_dim_size,)
    x = _whole_along(_as_complex(xp, x), axes)
    return xp.fft.irfftn(x, s=sizes, axes=axes, norm=_BACKWARD_NORM[normalization])


def _fft_c2c(x: Any, dim: tuple[int, ...], normalization: int, forward: bool) -> Any:
    """The recorded _fft_c2c (its own backward is the transform the other way)."""
    return array_namespace(x)._fft_c2c(x, dim, normalization, forward)


def fft_r2c_backward(
    grad: Any,
    dim: tuple[int, ...],
    normalization: int,
    onesided: bool,
    self_sizes: tuple[int, ...],
) -> Any:
    """_fft_r2c's adjoint: the kept half spectrum padded with zeros to the
    input's size, transformed back, and its real part."""
    xp = array_namespace(grad)
    if onesided:
        last = dim[-1] % len(self_sizes)
        missing = self_sizes[last] - grad.shape[last]
        if missing > 0:
            pad = [0] * (2 * len(self_sizes))
            pad[2 * (len(self_sizes) - 1 - last) + 1] = missing
            grad = xp.constant_pad_nd(grad, tuple(pad), 0)
    return xp.real(_fft_c2c(grad, dim, normalization, False))


def fft_c2r_backward(grad: Any, dim: tuple[int, ...], normalization: int) -> Any:
    """_fft_c2r's adjoint: the half spectrum of `grad`, with the entries that
    Hermitian symmetry counted twice doubled (1 .. n - (n // 2 + 1) along the
    last of `dim`)."""
    xp = array_namespace(grad)
    half = xp._fft_r2c(grad, dim, normalization, True)
    last = dim[-1] % grad.ndim
    doubled = grad.shape[last] - half.shape[last]
    if doubled <= 0:
        return half
    head = xp.slice_Tensor(half, last, 0, 1, 1)
    twice = xp.slice_Tensor(half, last, 1, 1 + doubled, 1) * 2
    tail = xp.slice_Tensor(half, last, 1 + doubled, None, 1)
    return xp.concatenate([head, twice, tail], axis=last)


register_numpy_kernels(
    _fft_c2c=fft_c2c_kernel, _fft_r2c=fft_r2c_kernel, _fft_c2r=fft_c2r_kernel
)
