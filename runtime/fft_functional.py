"""torch.fft, and torch.stft and torch.istft, written in Python over the three
transforms of derivatives.yaml (_fft_r2c, _fft_c2r, _fft_c2c), as PyTorch
composes its spectral functions.

Each public function does the same four things, in PyTorch's order:

1. read `n`/`s` and `dim` (every dim, the last len(s), or the ones given) and
   refuse what PyTorch refuses, with its texts;
2. promote the input: an integer or bool tensor becomes the default float dtype
   (float16 is refused, as PyTorch's CPU transforms refuse Half), and a
   transform that needs a complex input gets one (a recorded _to_copy);
3. trim (slice) or zero-pad (constant_pad_nd) each transformed dim to its
   number of points, so the gradient flows back through those ops too;
4. call the transform with the norm mode as PyTorch's fft_norm_mode: the
   "backward" default scales the inverse by 1/n, "forward" the forward
   transform, "ortho" both by 1/sqrt(n).

A transform that runs the other way than its primitive conjugates: ifft of a
real input is the conjugate of its forward transform, hfft transforms the
conjugate of its input, and ihfft is the conjugate of a forward transform.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from yamlgrad.runtime import dtypes
from yamlgrad.runtime.autograd.tensor import Tensor
from yamlgrad.runtime.dispatch import ops
from yamlgrad.runtime.ops.common import _dim

__all__ = ["stft", "istft"]

# fft_norm_mode: how a transform is scaled.
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm: str | None, forward: bool) -> int:
    """The fft_norm_mode of a transform in the direction `forward`."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool) -> Tensor:
    """The dtype the transform runs in: integers and bool as the default float
    dtype, and the complex dtype of that precision when `require_complex`."""
    dtype = x.dtype
    if dtype is dtypes.float16:
        raise RuntimeError("Unsupported dtype Half")
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = dtypes.get_default_dtype()
    if require_complex:
        dtype = dtype.to_complex()
    return x if dtype is x.dtype else ops._to_copy(x, dtype=dtype)


def _check_real(x: Tensor, name: str) -> None:
    """PyTorch's refusal of a complex input to a transform of a real signal:
    rfft's and ihfft's text, rfftn's, or (ihfftn's) that of _fft_r2c itself."""
    if not x.dtype.is_complex:
        return
    found = dtypes.CPP_NAMES[x.dtype.name]
    if name == "ihfftn":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {found}")
    kind = "a real-valued" if name == "rfftn" else "a real"
    raise RuntimeError(f"{name} expects {kind} input tensor, but got {found}")


def _points(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _shape_and_dims(
    x: Tensor, s: Sequence[int] | None, dim: Sequence[int] | int | None
) -> tuple[list[int], list[int]]:
    """The number of points and the dim of each transformed dim, as PyTorch's
    canonicalize_fft_shape_and_dim_args: `s` alone names the last len(s) dims,
    -1 in `s` keeps a dim's size, and neither means every dim."""
    ndim = x.ndim
    if isinstance(dim, int):
        dim = [dim]
    dims: list[int] | None = None
    if dim is not None:
        dims = [_dim(d, ndim, "fft") for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError(
                "When given, dim and shape arguments must have the same length"
            )
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has "
                f"{ndim} dimensions."
            )
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if n == -1 else n for n, d in zip(s, dims)]
    else:
        dims = list(range(ndim)) if dims is None else dims
        sizes = [x.shape[d] for d in dims]
    for n in sizes:
        _points(n)
    return sizes, dims


def _resized(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """`x` with `sizes[i]` points along `dims[i]`: longer dims sliced, then the
    shorter ones zero-padded at their end, all in one constant_pad_nd."""
    pad = [0] * (2 * x.ndim)
    padded = False
    for d, n in zip(dims, sizes):
        if x.shape[d] > n:
            x = ops.slice_Tensor(x, d, 0, n, 1)
        elif x.shape[d] < n:
            pad[2 * (x.ndim - 1 - d) + 1] = n - x.shape[d]
            padded = True
    return ops.constant_pad_nd(x, pad) if padded else x


def _one_dim(x: Tensor, n: int | None, dim: int) -> tuple[list[int], list[int]]:
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _dim(dim, x.ndim, "fft")
    return [x.shape[d] if n is None else _points(n)], [d]


def _c2c(
    x: Tensor, sizes: list[int], dims: list[int], norm: Any, forward: bool
) -> Tensor:
    x = _resized(_promote(x, True), dims, sizes)
    return ops._fft_c2c(x, dims, _norm_mode(norm, forward), forward)


def _forward_or_inverse(
    x: Tensor, sizes: list[int], dims: list[int], norm: Any, forward: bool
) -> Tensor:
    """fft and ifft: a complex input's c2c; a real input's two-sided r2c,
    conjugated for the inverse."""
    if x.dtype.is_complex:
        return _c2c(x, sizes, dims, norm, forward)
    x = _resized(_promote(x, False), dims, sizes)
    result = ops._fft_r2c(x, dims, _norm_mode(norm, forward), False)
    return result if forward else ops.conj(result)


def fft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The 1-D discrete Fourier transform of `input` along `dim`.

    >>> yg.fft.fft(yg.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _forward_or_inverse(input, *_one_dim(input, n, dim), norm, True)


def ifft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The 1-D inverse discrete Fourier transform of `input` along `dim`."""
    return _forward_or_inverse(input, *_one_dim(input, n, dim), norm, False)


def fftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The N-D discrete Fourier transform over `dim` (every dim by default)."""
    return _c2c(input, *_shape_and_dims(input, s, dim), norm, True)


def ifftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The N-D inverse discrete Fourier transform over `dim`."""
    return _c2c(input, *_shape_and_dims(input, s, dim), norm, False)


def _over_last_two(transform: Any) -> Any:
    """The 2-D form of an N-D transform: the same, with `dim` the last two dims
    by default (fft2 is fftn over (-2, -1))."""

    def over_last_two(
        input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None
    ) -> Tensor:
        return transform(input, s, dim, norm)

    name = transform.__name__.removesuffix("n") + "2"
    over_last_two.__name__ = over_last_two.__qualname__ = name
    over_last_two.__doc__ = f"{transform.__name__} over the last two dims."
    return over_last_two


def _r2c(
    name: str, x: Tensor, sizes: list[int], dims: list[int], norm: Any, forward: bool
) -> Tensor:
    """rfftn and ihfftn: the onesided r2c over every dim; ihfftn's conjugate of
    the last one's transform, then the inverse c2c over the others."""
    _check_real(x, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resized(_promote(x, False), dims, sizes)
    mode = _norm_mode(norm, forward)
    if forward:
        return ops._fft_r2c(x, dims, mode, True)
    # The conjugate of the last dim's half spectrum, then the inverse over the
    # others.
    half = ops.conj(ops._fft_r2c(x, dims[-1:], mode, True))
    return ops._fft_c2c(half, dims[:-1], mode, False) if len(dims) > 1 else half


def rfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The 1-D transform of a real `input`: the n // 2 + 1 non-negative
    frequencies."""
    return _r2c("rfft", input, *_one_dim(input, n, dim), norm, True)


def ihfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The inverse of hfft: the n // 2 + 1 non-negative frequencies of the
    inverse transform of a real `input`."""
    return _r2c("ihfft", input, *_one_dim(input, n, dim), norm, False)


def rfftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The N-D transform of a real `input`, onesided in the last of `dim`."""
    return _r2c("rfftn", input, *_shape_and_dims(input, s, dim), norm, True)


def ihfftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The N-D inverse of hfftn."""
    return _r2c("ihfftn", input, *_shape_and_dims(input, s, dim), norm, False)


def _c2r(name: str, x: Tensor, s: Any, dim: Any, norm: Any, forward: bool) -> Tensor:
    """irfftn and hfftn: `s`'s last entry (or 2 * (m - 1) for m entries) is the
    real signal's length, and the half spectrum keeps its n // 2 + 1 entries."""
    sizes, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    given = s is not None and list(s)[-1] != -1
    last = sizes[-1] if given else 2 * (x.shape[dims[-1]] - 1)
    sizes[-1] = _points(last) // 2 + 1
    x = _resized(_promote(x, True), dims, sizes)
    mode = _norm_mode(norm, forward)
    if not forward:
        return ops._fft_c2r(x, dims, mode, last)
    # hfftn: the forward transform over the other dims, then c2r of the
    # conjugate over the last.
    if len(dims) > 1:
        x = ops._fft_c2c(x, dims[:-1], mode, True)
    return ops._fft_c2r(ops.conj(x), dims[-1:], mode, last)


def _c2r_one_dim(n: int | None, dim: int) -> tuple[Any, list[int]]:
    return (None if n is None else [n]), [dim]


def irfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The inverse of rfft: a real signal of `n` points (2 * (m - 1) for m
    input entries) from its non-negative frequencies."""
    return _c2r("irfft", input, *_c2r_one_dim(n, dim), norm, False)


def hfft(
    input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its first half: a
    real spectrum of `n` points."""
    return _c2r("hfft", input, *_c2r_one_dim(n, dim), norm, True)


def irfftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The N-D inverse of rfftn."""
    return _c2r("irfftn", input, s, dim, norm, False)


def hfftn(
    input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None
) -> Tensor:
    """The N-D transform of a Hermitian-symmetric signal given by its half."""
    return _c2r("hfftn", input, s, dim, norm, True)


def _fft_steps(n: int) -> np.ndarray:
    steps = np.arange(n)
    steps[(n + 1) // 2 :] -= n
    return steps


def _rfft_steps(n: int) -> np.ndarray:
    return np.arange(n // 2 + 1)


def _sample_frequencies(steps_of: Any, name: str, doc: str) -> Any:
    """A torch.fft.*freq factory: `steps_of(n) / (d * n)` in `dtype` (the
    default float dtype), as PyTorch computes it, the steps in that dtype times
    the reciprocal."""

    def frequencies(
        n: int,
        d: float = 1.0,
        *,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        requires_grad: bool = False,
    ) -> Tensor:
        from yamlgrad.runtime import factories

        dtype = dtypes.get_default_dtype() if dtype is None else dtype
        scale = dtype.np.type(1.0 / (n * d))
        values = np.asarray(steps_of(n), dtype=dtype.np) * scale
        return factories.tensor(values, dtype=dtype, requires_grad=requires_grad)

    frequencies.__name__ = frequencies.__qualname__ = name
    frequencies.__doc__ = doc
    return frequencies


fftfreq = _sample_frequencies(
    _fft_steps,
    "fftfreq",
    """The sample frequencies of an n-point fft: [0, 1, ..., -(n // 2), ..., -1]
    / (d * n).

    >>> yg.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """,
)
rfftfreq = _sample_frequencies(
    _rfft_steps,
    "rfftfreq",
    "The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d * n).",
)


def _shifted(x: Tensor, dim: Any, inverse: bool) -> Tensor:
    dims = (
        list(range(x.ndim))
        if dim is None
        else [dim] if isinstance(dim, int) else list(dim)
    )
    shifts = [(x.shape[d] + inverse) // 2 for d in dims]
    return ops.roll(x, shifts, dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The zero frequency moved to the middle of each of `dim` (every dim)."""
    return _shifted(input, dim, False)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of fftshift."""
    return _shifted(input, dim, True)


def _described(t: Tensor | None, brackets: bool) -> str:
    """A tensor as PyTorch's stft and istft describe their arguments in their
    errors: `torch.FloatTensor[2, 14]` (a window in braces), and
    `CPUComplexDoubleType[4, 6]` for a complex one."""
    if t is None:
        return "None"
    name = dtypes.CPP_NAMES[t.dtype.name]
    kind = f"CPU{name}Type" if t.dtype.is_complex else f"torch.{name}Tensor"
    sizes = "[" + ", ".join(str(n) for n in t.shape) + "]"
    return f"{kind}{{{sizes}}}" if brackets else f"{kind}{sizes}"


def _flag(value: bool | None) -> str:
    return "None" if value is None else str(int(value))


def _ones_window(n: int, like: Tensor) -> Tensor:
    from yamlgrad.runtime import factories

    return factories.ones(n, dtype=like.dtype.to_real())


def _padded_window(window: Tensor, win_length: int, n_fft: int) -> Tensor:
    """A window of win_length points centred in n_fft points of zeros."""
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    return ops.constant_pad_nd(window, [left, n_fft - win_length - left])


_REAL_PAIRS_WARNING = (
    "stft with return_complex=False is deprecated. In a future pytorch release, "
    "stft will return complex tensors for all inputs, and return_complex=False "
    "will raise an error.\nNote: you can still call torch.view_as_real on the "
    "complex output to recover the old return format."
)
_NO_WINDOW_WARNING = (
    "A window was not provided. A rectangular window will be applied,which is "
    "known to cause spectral leakage. Other windows such as torch.hann_window or "
    "torch.hamming_window are recommended to reduce spectral leakage.To suppress "
    "this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`."
)


def _centred(x: Tensor, pad: int, pad_mode: str) -> Tensor:
    """The signal padded by `pad` on both sides, as a 3-D input to pad."""
    signal_dim = x.ndim
    extended = ops.view(x, [1] * (3 - signal_dim) + list(x.shape))
    padded = ops.pad(extended, [pad, pad], pad_mode)
    return ops.view(padded, list(padded.shape[3 - signal_dim :]))


def _check_return_complex(
    x: Tensor, window: Tensor | None, return_complex: bool | None
) -> None:
    complex_window = window is not None and window.dtype.is_complex
    if return_complex is None and not (x.dtype.is_complex or complex_window):
        raise RuntimeError(
            "stft requires the return_complex parameter be given for real "
            "inputs, and will further require that return_complex=True in a "
            "future PyTorch release."
        )
    if return_complex is False:
        warnings.warn(_REAL_PAIRS_WARNING, UserWarning, stacklevel=3)


def _check_stft(
    where: str,
    x: Tensor,
    n_fft: int,
    hop_length: int,
    win_length: int,
    window: Tensor | None,
) -> None:
    """stft's checks of its arguments, in PyTorch's order and words."""
    if x.ndim not in (1, 2):
        raise RuntimeError(f"{where}expected a 1D or 2D tensor")
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(
            f"{where}expected 0 < n_fft < {length}, but got n_fft={n_fft}"
        )
    if hop_length <= 0:
        raise RuntimeError(
            f"{where}expected hop_length > 0, but got hop_length={hop_length}"
        )
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(
            f"{where}expected 0 < win_length <= n_fft, but got win_length={win_length}"
        )
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(
            f"{where}expected a 1D window tensor of size equal to "
            f"win_length={win_length}, but got window with size "
            f"[{', '.join(str(n) for n in window.shape)}]"
        )


def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform: the spectrum (onesided, for a real
    signal and window) of each windowed frame of n_fft points, every
    `hop_length` points, as [batch,] n_freq x n_frames. `center` pads the signal
    by n_fft // 2 on both sides (`pad_mode`) so that frame t is centred on
    t * hop_length.

    >>> w = yg.ones(16)
    >>> yg.stft(yg.randn(64), 16, window=w, return_complex=True).shape
    yamlgrad.Size([9, 17])
    """
    if center and align_to_window is not None:
        raise RuntimeError(
            "stft align_to_window should only be set when center = false"
        )
    if align_to_window:
        raise NotImplementedError("stft(align_to_window=True) is not supported yet")
    if center:
        input = _centred(input, n_fft // 2, pad_mode)
    if window is None:
        warnings.warn(_NO_WINDOW_WARNING, UserWarning, stacklevel=2)
    _check_return_complex(input, window, return_complex)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    where = (
        f"stft({_described(input, False)}, n_fft={n_fft}, hop_length={hop_length}, "
        f"win_length={win_length}, window={_described(window, True)}, "
        f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
        f"return_complex={_flag(return_complex is not False)}, "
        f"align_to_window={_flag(align_to_window)}) : "
    )
    _check_stft(where, input, n_fft, hop_length, win_length, window)
    batched = input if input.ndim == 2 else ops.unsqueeze(input, 0)
    if window is None and win_length < n_fft:
        window = _ones_window(win_length, input)
    frames = ops.unfold(batched, 1, n_fft, hop_length)
    if window is not None:
        frames = ops.mul(frames, _padded_window(window, win_length, n_fft))
    mode = _BY_ROOT_N if normalized else _NONE
    if frames.dtype.is_complex:
        if onesided:
            raise RuntimeError(
                "Cannot have onesided output if window or input is complex"
            )
        spectrum = ops._fft_c2c(frames, [2], mode, True)
    else:
        frames = _promote(frames, False)
        spectrum = ops._fft_r2c(frames, [2], mode, onesided is not False)
    spectrum = ops.transpose(spectrum, 1, 2)
    if input.ndim == 1:
        spectrum = ops.squeeze(spectrum, 0)
    return ops.view_as_real(spectrum) if return_complex is False else spectrum


def _check_istft(
    where: str,
    x: Tensor,
    n_fft: int,
    hop_length: int,
    win_length: int,
    window: Tensor | None,
    onesided: bool | None,
) -> bool:
    """istft's checks of its arguments, in PyTorch's order and words; whether
    the spectrum is onesided."""
    # PyTorch counts the dims of the real pairs (view_as_real's), one more.
    if x.ndim < 2:
        _dim(-3, x.ndim + 1, "istft")
    if x.ndim > 3:
        raise RuntimeError(
            f"{where} : expected a tensor with 3 or 4 dimensions, but got {x.ndim + 1}"
        )
    n_freq = x.shape[-2]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != n_freq:
        raise RuntimeError(
            f"{where} : expected the frequency dimension (3rd to the last) of the "
            f"input tensor to match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
        )
    if not onesided and n_fft != n_freq:
        raise RuntimeError(
            f"{where} : expected the frequency dimension (3rd to the last) of the "
            f"input tensor to match n_fft when onesided=False, but got {n_freq}"
        )
    if not 0 < hop_length <= win_length:
        raise RuntimeError(f"{where} : expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{where} : expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(
            f"{where} : Invalid window shape. window has to be 1D and length of "
            "`win_length`"
        )
    return onesided


def _overlap_added(
    where: str,
    frames: Tensor,
    window: Tensor,
    hop_length: int,
    center: bool,
    length: int | None,
) -> tuple[Tensor, int, int]:
    """The windowed frames [batch, n_frames, n_fft] added where they overlap and
    divided by the overlap-added squared window, trimmed to the signal (the
    centring padding off, or `length` points); with the trim's end and the
    overlap-added length."""
    batch, n_frames, n_fft = frames.shape
    signal_length = n_fft + hop_length * (n_frames - 1)
    overlap_add = [batch, signal_length], 1, n_fft, hop_length
    y = ops.unfold_backward(ops.mul(frames, window), *overlap_add)
    squared = ops.expand(ops.pow(window, 2), [1, n_frames, n_fft])
    envelope = ops.unfold_backward(squared, [1, signal_length], 1, n_fft, hop_length)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else signal_length
    y = ops.slice_Tensor(y, 1, start, end, 1)
    envelope = ops.slice_Tensor(envelope, 1, start, end, 1)
    if float(np.min(np.abs(envelope.detach().numpy()))) < 1e-11:
        # PyTorch prints the failed check's bool tensor after its text.
        raise RuntimeError(f"{where} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    return ops.div(y, envelope), end, signal_length


def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of stft: each frame's inverse transform, windowed again and
    overlap-added, divided by the overlap-added squared window.

    >>> x, w = yg.randn(64), yg.ones(16)
    >>> spec = yg.stft(x, 16, window=w, return_complex=True)
    >>> yg.istft(spec, 16, window=w, length=64).shape
    yamlgrad.Size([64])
    """
    if not input.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output "
            "from stft with return_complex=True."
        )
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    where = (
        f"istft({_described(input, False)}, n_fft={n_fft}, hop_length={hop_length}, "
        f"win_length={win_length}, window={_described(window, True)}, "
        f"center={_flag(center)}, normalized={_flag(normalized)}, "
        f"onesided={_flag(onesided)}, length={length}, "
        f"return_complex={_flag(return_complex)})"
    )
    onesided = _check_istft(
        where, input, n_fft, hop_length, win_length, window, onesided
    )
    batched = input if input.ndim == 3 else ops.unsqueeze(input, 0)
    window = _ones_window(win_length, input) if window is None else window
    window = _padded_window(window, win_length, n_fft)
    frames = ops.transpose(batched, 1, 2)
    mode = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if onesided:
            raise RuntimeError(
                "Cannot have onesided output if window or input is complex"
            )
        frames = ops._fft_c2c(frames, [2], mode, False)
    else:
        if window.dtype.is_complex:
            raise RuntimeError(
                "Complex windows are incompatible with return_complex=False"
            )
        if not onesided:
            frames = ops.slice_Tensor(frames, 2, 0, n_fft // 2 + 1, 1)
        frames = ops._fft_c2r(frames, [2], mode, n_fft)
    y, end, signal_length = _overlap_added(
        where, frames, window, hop_length, center, length
    )
    if input.ndim == 2:
        y = ops.squeeze(y, 0)
    if end > signal_length:
        y = ops.constant_pad_nd(y, [0, end - signal_length])
    return y


fft2, ifft2 = _over_last_two(fftn), _over_last_two(ifftn)
rfft2, ihfft2 = _over_last_two(rfftn), _over_last_two(ihfftn)
irfft2, hfft2 = _over_last_two(irfftn), _over_last_two(hfftn)

# torch.fft's names: every public function above but stft and istft, which are
# torch's own (yg.fft is made of these; the facade reads this).
FFT = tuple(
    name
    for name, value in list(globals().items())
    if inspect.isfunction(value)
    and value.__module__ == __name__
    and not name.startswith("_")
    and name not in __all__
)
