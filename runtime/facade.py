"""The public API: what `import yamlgrad as yg` offers, in PyTorch's spelling.

(The generated ops are star-imported here, so inside this module `sum`, `max`,
`min`, `abs` and `range` are yamlgrad's, not the builtins.)

With runtime/nn/functional.py, this is a runtime module that imports generated/:
it re-exports the generated ops (`yg.exp`, `yg.pow`, ...), installs them as Tensor
methods and operators (as PyTorch's `_tensor.py` and `python_variable_methods.cpp`
do), binds the Tensor side of the formula helpers, and re-exports the factories
(runtime/factories.py).
"""

from __future__ import annotations

import builtins
import functools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime.errors import warn_at_caller
from yamlgrad.runtime.errors import _LinAlgError
from yamlgrad.generated import VariableType
from yamlgrad.generated.VariableType import *  # noqa: F403 - the generated ops
from yamlgrad.runtime import autograd
from yamlgrad.runtime import dispatch, nn, optim, utils, testing, viz, dtypes, factories
from yamlgrad.runtime import func, masked
from yamlgrad.runtime.func import autograd_functional

# torch.autograd.functional lives above the autograd core (it needs vmap), so the
# facade attaches it: `yg.autograd.functional`.
autograd.functional = autograd_functional
autograd.__all__.append("functional")
from yamlgrad.runtime import devices, sampling, tensor_memory, tensor_methods
from yamlgrad.runtime.devices import (
    accelerator,
    backends,
    cuda,
    device,
    get_default_device,
    set_default_device,
)
from yamlgrad.runtime.sampling import normal
from yamlgrad.runtime import amp as _amp, settings, overrides, types
from yamlgrad.runtime.amp import autocast, is_autocast_enabled
from yamlgrad.runtime.settings import *  # noqa: F403 - set_num_threads, ...
from yamlgrad.runtime.dtypes import can_cast, finfo, iinfo, promote_types
from yamlgrad.runtime.func import vmap
from yamlgrad.runtime.wrappers import variable_type_utils as _vtu
from yamlgrad.runtime.tensor_methods import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    is_tensor,
    meshgrid,
    broadcast_shapes,
    broadcast_tensors,
    allclose,
    detach,
    detach_,
    equal,
    get_device,
    is_complex,
    is_conj,
    is_neg,
    is_floating_point,
    is_inference,
    is_distributed,
    is_nonzero,
    is_same_size,
    is_signed,
    resize_as_,
    isclose,
    numel,
)
from yamlgrad.runtime.autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from yamlgrad.runtime.wrappers import inplace_ops, indexing
from yamlgrad.runtime.dtypes import (
    bool_,
    channels_last,
    channels_last_3d,
    contiguous_format,
    cdouble,
    cfloat,
    chalf,
    complex32,
    complex64,
    complex128,
    double,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    layout,
    long,
    memory_format,
    preserve_format,
    set_default_dtype,
    short,
    strided,
    uint8,
)
from yamlgrad.runtime.factories import *  # noqa: F403 - tensor, zeros, ...
from yamlgrad.runtime import linalg_functional
from yamlgrad.runtime.linalg_functional import lu, norm, pca_lowrank, svd_lowrank
from yamlgrad.runtime import functional
from yamlgrad.runtime import fft_functional
from yamlgrad.runtime.fft_functional import istft, stft
from yamlgrad.runtime.functional import *  # noqa: F403 - unique, atleast_1d, ...
from yamlgrad.runtime import torch_utilities, window_functions
from yamlgrad.runtime.torch_utilities import *  # noqa: F403 - tril_indices, ...
from yamlgrad.runtime.window_functions import *  # noqa: F403 - hann_window, ...

# torch.pairwise_distance, torch.cosine_similarity and torch.ctc_loss (which
# takes the reduction as PyTorch's enum) are nn.functional's.
from yamlgrad.runtime.nn.functional_losses import (
    cosine_similarity,
    pairwise_distance,
)
from yamlgrad.runtime.nn.functional_losses import ctc_loss_reduced as ctc_loss
from yamlgrad.runtime.nn.functional_losses import kl_div_reduced as kl_div

# torch.conv1d and the others PyTorch binds to nn.functional's own functions are
# those functions; the rest have ATen's signatures (runtime/nn/functional_aten.py).
NN_FUNCTIONAL_BINDINGS = (
    "adaptive_avg_pool1d",
    "avg_pool1d",
    "celu_",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "native_channel_shuffle",
    "rrelu_",
    "selu_",
)
globals().update(
    {name: getattr(nn.functional, name) for name in NN_FUNCTIONAL_BINDINGS}
)
from yamlgrad.runtime.nn import functional_aten, functional_cells, functional_rnn
from yamlgrad.runtime.nn.functional_aten import *  # noqa: F403
from yamlgrad.runtime.nn.functional_cells import *  # noqa: F403
from yamlgrad.runtime.nn.functional_rnn import *  # noqa: F403
from yamlgrad.runtime.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from yamlgrad.runtime.serialization import load, save
from yamlgrad.runtime.compile import compile  # noqa: A004 - PyTorch's name
from yamlgrad.runtime.autograd.tensor import Size, Tensor
from yamlgrad.runtime.autograd.tensor_repr import set_printoptions
from yamlgrad.runtime import array_backends
from yamlgrad.runtime.array_backends import compute, from_dask, persist

dispatch.bind_ops(VariableType)

__all__ = [
    *VariableType.__all__,
    *factories.__all__,
    *devices.__all__,
    *sampling.__all__,
    *tensor_methods.__all__,
    *array_backends.__all__,
    *settings.__all__,
    "inf",
    "nan",
    "pi",
    "e",
    "newaxis",
    "finfo",
    "iinfo",
    "promote_types",
    "result_type",
    "can_cast",
    "autocast",
    "is_autocast_enabled",
    "amp",
    "vmap",
    "types",
    "overrides",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_detect_anomaly",
    "tensordot",
    "block_diag",
    *functional.__all__,
    *torch_utilities.__all__,
    *window_functions.__all__,
    "cosine_similarity",
    "ctc_loss",
    "kl_div",
    "pairwise_distance",
    *NN_FUNCTIONAL_BINDINGS,
    *functional_aten.__all__,
    *functional_cells.__all__,
    *functional_rnn.__all__,
    *linalg_functional.__all__,
    *fft_functional.__all__,
    "Tensor",
    "Size",
    "set_printoptions",
    "autograd",
    "func",
    "masked",
    "linalg",
    "special",
    "fft",
    "nn",
    "distributions",
    "optim",
    "utils",
    "save",
    "load",
    "testing",
    "viz",
    "ops",
    "compile",
    "dtype",
    "get_default_dtype",
    "set_default_dtype",
    "float16",
    "float32",
    "float64",
    "half",
    "double",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "complex32",
    "chalf",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "short",
    "uint8",
    "layout",
    "strided",
    "memory_format",
    "contiguous_format",
    "preserve_format",
    "channels_last",
    "channels_last_3d",
    "no_grad",
    "enable_grad",
    "inference_mode",
    "is_inference_mode_enabled",
    "set_grad_enabled",
    "is_grad_enabled",
]


# PyTorch's constants (`torch.inf`, `x[:, torch.newaxis]`).
inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None

amp = _amp.amp
cuda.amp = _amp.cuda_amp  # type: ignore[attr-defined] - `torch.cuda.amp.autocast`


def result_type(tensor: Any, other: Any) -> dtype:
    """The dtype `tensor op other` computes in (PyTorch's promotion: dimensioned
    tensors first, then 0-d tensors, then Python numbers)."""
    values = [v._data if isinstance(v, Tensor) else v for v in (tensor, other)]
    return dtypes.from_numpy(_vtu.result_type(*values))


# -- Tensor methods and operators ----------------------------------------------------


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """`torch.tensordot`: contract the last `dims` dims of `a` with the first of
    `b`, or the dims given as `([dims of a], [dims of b])`."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a = list(builtins.range(a.ndim - dims, a.ndim))
        dims_b = list(builtins.range(dims))
    else:
        first, second = dims
        dims_a = [first] if isinstance(first, int) else list(first)
        dims_b = [second] if isinstance(second, int) else list(second)
    return VariableType.tensordot(a, b, dims_a, dims_b)


def block_diag(*tensors: Tensor) -> Tensor:
    """`torch.block_diag(*tensors)`: the tensors (at most 2-d) along the diagonal
    of one matrix, e.g. `block_diag(a, b)` is [[a, 0], [0, b]]."""
    return VariableType.block_diag(list(tensors))


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    # PyTorch computes `2 / x` as `reciprocal(x) * 2` (MulBackward0).
    return VariableType.mul(VariableType.reciprocal(self), other)


def _rsub(self: Tensor, other: Any) -> Tensor:
    return VariableType.rsub(self, other)


def _rpow(self: Tensor, other: Any) -> Tensor:
    return VariableType.pow(other, self)


def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return VariableType.matmul(other, self)


def _rmod(self: Tensor, other: Any) -> Tensor:
    """`2 % x`: remainder.Tensor with the number wrapped (RemainderBackward1).

    PyTorch routes it to remainder.Scalar_Tensor, which has no derivative (its node
    is NotImplemented); here the gradient w.r.t. x is -grad * floor(2 / x).
    """
    return VariableType.remainder(other, self)


def _rfloordiv(self: Tensor, other: Any) -> Tensor:
    """`7 // x`: floor_divide with the number wrapped as its first operand."""
    return VariableType.floor_divide(other, self)


def _invert(self: Tensor) -> Tensor:
    """`~x`: bitwise_not, for bool and integer tensors only (as PyTorch)."""
    if dtype_kind(self._data.dtype) not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type "
            "tensors"
        )
    return VariableType.bitwise_not(self)


def _comparable(other: Any) -> bool:
    # (builtins.complex: the op torch.complex takes the name here)
    number = (int, float, builtins.complex)
    return isinstance(other, (Tensor, *number, np.ndarray, np.generic))


def _eq(self: Tensor, other: Any) -> Any:
    """`x == y`; with None, a string, a list or any other object it is Python's
    identity comparison (False), as in PyTorch: `x == None`, `x in [None]`."""
    if not _comparable(other):
        return NotImplemented
    return VariableType.eq(self, other)


def _ne(self: Tensor, other: Any) -> Any:
    if not _comparable(other):
        return NotImplemented
    return VariableType.ne(self, other)


def _transposed(self: Tensor) -> Tensor:
    """`x.T`: the dims reversed (PermuteBackward0, as in PyTorch)."""
    return VariableType.permute(self, tuple(builtins.range(self.ndim - 1, -1, -1)))


def _matrix_transposed(name: str, batches: bool) -> Any:
    """`x.mT`, `x.mH` (batches of matrices) and `x.H` (a matrix): the last two
    dims swapped (TransposeBackward0), and conjugated for mH and H (a real
    tensor is its own conjugate)."""

    def transposed(self: Tensor) -> Tensor:
        if self.ndim < 2 or (not batches and self.ndim != 2):
            what = (
                "matrices or batches of matrices"
                if batches
                else "matrices (2-D tensors)"
            )
            hint = (
                "."
                if batches or self.ndim < 2
                else ". For batches of matrices, consider using tensor.mH"
            )
            raise RuntimeError(
                f"tensor.{name} is only supported on {what}. Got {self.ndim}-D "
                f"tensor{hint}"
            )
        swapped = VariableType.transpose(self, -2, -1)
        return swapped if name == "mT" else VariableType.conj(swapped)

    return property(transposed)


_OPERATORS = {
    "__add__": VariableType.add,
    "__radd__": VariableType.add,
    "__sub__": VariableType.sub,
    "__rsub__": _rsub,
    "__mul__": VariableType.mul,
    "__rmul__": VariableType.mul,
    "__truediv__": VariableType.div,
    "__rtruediv__": _rtruediv,
    "__rdiv__": _rtruediv,
    "__mod__": VariableType.remainder,
    "__rmod__": _rmod,
    "__pow__": VariableType.pow,
    "__rpow__": _rpow,
    "__matmul__": VariableType.matmul,
    "__rmatmul__": _rmatmul,
    "__floordiv__": VariableType.floor_divide,
    "__rfloordiv__": _rfloordiv,
    "__and__": VariableType.bitwise_and,
    "__rand__": VariableType.bitwise_and,
    "__or__": VariableType.bitwise_or,
    "__ror__": VariableType.bitwise_or,
    "__xor__": VariableType.bitwise_xor,
    "__rxor__": VariableType.bitwise_xor,
    "__invert__": _invert,
    "__neg__": VariableType.neg,
    "__abs__": VariableType.abs,
    "__iadd__": VariableType.add_,
    "__isub__": VariableType.sub_,
    "__imul__": VariableType.mul_,
    "__itruediv__": VariableType.div_,
    "__ipow__": VariableType.pow_,
    "__eq__": _eq,
    "__ne__": _ne,
    "__lt__": VariableType.lt,
    "__le__": VariableType.le,
    "__gt__": VariableType.gt,
    "__ge__": VariableType.ge,
}


def _install_tensor_methods() -> None:
    for name, fn in VariableType.METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    for name, fn in tensor_methods.METHODS.items():
        setattr(Tensor, name, fn)
    for name, getter in tensor_methods.PROPERTIES.items():
        setattr(Tensor, name, property(getter))
    for name, fn in tensor_memory.METHODS.items():
        setattr(Tensor, name, fn)
    for name, getter in tensor_memory.PROPERTIES.items():
        setattr(Tensor, name, property(getter))
    for name, part in tensor_methods.PARTS.items():
        setattr(Tensor, name, part)
    for name, fn in sampling.METHODS.items():
        setattr(Tensor, name, fn)
    Tensor.norm = norm  # type: ignore[attr-defined]
    Tensor.lu = lu  # type: ignore[attr-defined]
    Tensor.mT = _matrix_transposed("mT", True)  # type: ignore[attr-defined]
    Tensor.mH = _matrix_transposed("mH", True)  # type: ignore[attr-defined]
    Tensor.H = _matrix_transposed("H", False)  # type: ignore[attr-defined]
    Tensor.unique = unique  # type: ignore[attr-defined]
    Tensor.histogram = histogram  # type: ignore[attr-defined]
    for name, fn in torch_utilities.METHODS.items():
        setattr(Tensor, name, fn)
    Tensor.unique_consecutive = unique_consecutive  # type: ignore[attr-defined]
    Tensor.__getitem__ = indexing.getitem  # type: ignore[method-assign]
    Tensor.__setitem__ = inplace_ops.setitem  # type: ignore[method-assign]
    Tensor.copy_ = inplace_ops.copy_  # type: ignore[attr-defined]
    Tensor.T = property(_transposed)  # type: ignore[attr-defined]
    for name, target in (
        ("float", dtypes.float32),
        ("double", dtypes.float64),
        ("half", dtypes.float16),
        ("long", dtypes.int64),
        ("int", dtypes.int32),
        ("short", dtypes.int16),
        ("char", dtypes.int8),
        ("byte", dtypes.uint8),
        ("bool", dtypes.bool_),
        ("cfloat", dtypes.complex64),
        ("cdouble", dtypes.complex128),
    ):
        setattr(Tensor, name, tensor_methods.to_dtype_method(target))


_install_tensor_methods()


def _accept_numpy_keywords() -> None:
    """`x.amax(axis=0, keepdims=True)`: the reductions of one overload take
    numpy's keywords too (the dispatchers of several do it in `dispatch`)."""
    public = globals()
    for name in VariableType.__all__:
        fn = public[name]
        if tensor_methods.takes_keepdim(fn):
            public[name] = tensor_methods.with_numpy_keywords(fn)
    for name, fn in VariableType.METHODS.items():
        if tensor_methods.takes_keepdim(fn):
            setattr(Tensor, name, tensor_methods.with_numpy_keywords(fn))


_accept_numpy_keywords()


def _deprecated_overloads() -> None:
    """PyTorch's deprecated overloads with the number first, as old code calls
    them (`p.data.add_(-lr, p.grad.data)`, `addcmul_(value, t1, t2)`): each
    warns once, as PyTorch does, and calls the current signature."""
    public = globals()
    for name, keyword, arity in (
        ("add", "alpha", 1),
        ("sub", "alpha", 1),
        ("addcmul", "value", 2),
        ("addcdiv", "value", 2),
    ):
        for variant in (name, name + "_"):
            method = getattr(Tensor, variant, None)
            if method is not None:
                setattr(Tensor, variant, _number_first(variant, method, keyword, arity))
        if name in public:
            public[name] = _number_first(name, public[name], keyword, arity, 1)


def _number_first(
    name: str, fn: Any, keyword: str, arity: int, leading: int = 1
) -> Any:
    tensors = ", ".join(
        ["Tensor other"] if arity == 1 else ["Tensor tensor1", "Tensor tensor2"]
    )
    number = "Number alpha" if keyword == "alpha" else "Number value"
    current = f"{name}({tensors}, *, {number} = 1)"
    message = (
        f"This overload of {name} is deprecated:\n\t{name}({number}, {tensors})\n"
        f"Consider using one of the following signatures instead:\n\t{current}"
    )
    warned = [False]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        head, rest = args[:leading], args[leading:]
        if (
            len(rest) == arity + 1
            and isinstance(rest[0], (int, float))
            and not isinstance(rest[0], bool)
            and builtins.all(isinstance(t, Tensor) for t in rest[1:])
        ):
            if not warned[0]:
                warned[0] = True
                warn_at_caller(message)
            return fn(*head, *rest[1:], **{keyword: rest[0]}, **kwargs)
        return fn(*args, **kwargs)

    return call


_deprecated_overloads()

# PyTorch's Python-level signatures over the generated ops: einsum's operands as
# varargs, the `unbiased` of std, var, std_mean and var_mean.
einsum = tensor_methods.einsum
std = tensor_methods.with_unbiased(std)  # noqa: F405
var = tensor_methods.with_unbiased(var)  # noqa: F405
std_mean = tensor_methods.with_unbiased(std_mean)  # noqa: F405
var_mean = tensor_methods.with_unbiased(var_mean)  # noqa: F405
Tensor.std = std  # type: ignore[attr-defined]
Tensor.var = var  # type: ignore[attr-defined]


# -- yg.ops.<name>.<overload> ------------------------------------------------------

ops = SimpleNamespace(
    **{name: SimpleNamespace(**group) for name, group in VariableType.OVERLOADS.items()}
)
ops.aten = ops  # PyTorch's spelling, torch.ops.aten.<name>.<overload>


# -- yg.special --------------------------------------------------------------------

special = SimpleNamespace(
    **{
        name.removeprefix("special_"): group["default"]
        for name, group in VariableType.OVERLOADS.items()
        if name.startswith("special_")
    }
)
"""`torch.special`'s spelling: every `special_*` op of derivatives.yaml without its
prefix (`yg.special.erfcx(x)` is `special_erfcx`, SpecialErfcxBackward0;
`yg.special.expit(x)` records SigmoidBackward0, as torch.special.expit does)."""
# torch.special.gammainc and gammaincc are composites of igamma and igammac
# (IgammaBackward0); their own entries' samples could not leave the first
# argument, which has no gradient, undifferentiated.
special.gammainc = VariableType.igamma
special.gammaincc = VariableType.igammac


# -- yg.linalg ---------------------------------------------------------------------

linalg = SimpleNamespace(
    **{
        name.removeprefix("linalg_"): getattr(VariableType, name)
        for name in VariableType.OVERLOADS
        if name.startswith("linalg_") and hasattr(VariableType, name)
    },
    **{name: getattr(linalg_functional, name) for name in linalg_functional.LINALG},
    matmul=matmul,  # noqa: F405
    LinAlgError=_LinAlgError,
)
"""`torch.linalg`'s spelling: every `linalg_*` op of derivatives.yaml without its
prefix (`yg.linalg.vector_norm(x, 2, dim=1)` is `linalg_vector_norm`,
LinalgVectorNormBackward0; `yg.linalg.qr`, `yg.linalg.svd`, `yg.linalg.inv`), the
Python-level ones of runtime/linalg_functional.py (matrix_rank, eig, eigvals),
`linalg.matmul`, which is `matmul`, and `linalg.LinAlgError`, the RuntimeError
of a singular input."""

# -- yg.fft ------------------------------------------------------------------------

fft = SimpleNamespace(
    **{name: getattr(fft_functional, name) for name in fft_functional.FFT}
)
"""`torch.fft`'s spelling: the transforms of runtime/fft_functional.py, composites
over _fft_r2c, _fft_c2r and _fft_c2c (`yg.fft.rfft(x)` records FftR2CBackward0),
and the frequency and shift helpers."""
Tensor.stft = stft  # type: ignore[attr-defined]
Tensor.istft = istft  # type: ignore[attr-defined]

# The distributions are a library over the ops above (as torch.distributions is
# over torch): imported last, they find every op they use.
from yamlgrad.runtime import distributions  # noqa: E402
