"""What the generated wrappers in VariableType.py call (PyTorch's VariableTypeUtils.h).

Argument unpacking with PyTorch's error texts, `compute_requires_grad`,
`collect_next_edges` and `set_history`. A Python number given for a `Tensor`
argument (`x * 2`) stays a Python number all the way into the numpy kernel, so it
does not up-cast a float32 tensor (PyTorch's "wrapped number" rule); its edge is
`Edge(None, 0)`, as PyTorch shows in `next_functions`.
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple
from typing import Any

import numpy as np

from yamlgrad.runtime.backend import dtype_kind
from yamlgrad.runtime import backend, dtypes
from yamlgrad.runtime.autograd.accumulate_grad import grad_accumulator, gradient_edge
from yamlgrad.runtime.autograd.copy_slices import (
    rebase_view_history,
    regenerate_views,
    register_view,
)
from yamlgrad.runtime.errors import (
    ERR_INFERENCE_INPLACE,
    ERR_INFERENCE_VIEW_INPLACE,
    ERR_IMMUTABLE_VIEW_INPLACE,
    ERR_INPLACE_OVERLAP,
    ERR_LEAF_INPLACE,
    ERR_NO_GRAD_VIEW_INPLACE,
    ERR_VIEW_OF_LEAF_INPLACE,
    argument_type,
    multi_output_view_inplace,
)
from yamlgrad.runtime.autograd.grad_mode import _state as _grad_mode
from yamlgrad.runtime.autograd.grad_mode import (
    disabled_threads as grad_disabled_threads,
)
from yamlgrad.runtime.autograd.node import (
    INVALID_EDGE,
    METADATA_CACHE,
    Edge,
    Node,
    output_metadata,
)
from yamlgrad.runtime.autograd.tensor import InferenceTensor, Tensor, plain_class
from yamlgrad.runtime.generator import Generator, default_generator
from yamlgrad.runtime.wrappers.forward_grad import (
    any_has_forward_grad,
    derived_jvp,
    forward_ad_state,
    formula_mode,
    index_tensors,
    no_forward_derivative,
    set_fw_grad,
    set_fw_grad_inplace,
    set_fw_grads,
    tangent_of,
    tangents_of,
)
from yamlgrad.runtime.wrappers.interposition import interpose, interposed, interposition

# What the generated wrappers call: VariableType.py imports exactly these names, and
# the generator refuses an op or argument that would hide one.
__all__ = [
    "interposition",
    "interposed",
    "interpose",
    "forward_ad_state",
    "any_has_forward_grad",
    "tangent_of",
    "tangents_of",
    "formula_mode",
    "set_fw_grad",
    "set_fw_grads",
    "set_fw_grad_inplace",
    "derived_jvp",
    "no_forward_derivative",
    "index_tensors",
    "tensor_arg",
    "tensor_list_arg",
    "tensor_optional_list_arg",
    "optional_tensor_arg",
    "scalar_arg",
    "int_arg",
    "float_arg",
    "bool_arg",
    "str_arg",
    "int_list_arg",
    "scalar_type_arg",
    "memory_format_arg",
    "optional_int_list_arg",
    "optional_scalar_arg",
    "optional_int_arg",
    "optional_float_arg",
    "optional_scalar_type_arg",
    "optional_bool_arg",
    "optional_str_arg",
    "optional_memory_format_arg",
    "generator_arg",
    "optional_generator_arg",
    "layout_arg",
    "optional_layout_arg",
    "device_arg",
    "optional_device_arg",
    "sizes_of",
    "argsize_of",
    "ndim_of",
    "dtype_of",
    "args_sizes_of",
    "return_type",
    "promote_operands",
    "compute_requires_grad",
    "collect_next_edges",
    "set_history",
    "set_history_inplace_view",
    "set_history_outputs",
    "make_view",
    "make_views",
    "check_no_requires_grad",
    "check_inplace",
    "original_value",
    "write_inplace",
    "rebase_history",
]


class _Absent:
    """No argument given (None is an argument: an optional tensor left out)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()
_NUMBERS = (int, float, bool, np.integer, np.floating, np.bool_, complex)
_NUMBERS += (np.complexfloating,)
# numpy's module has a `__getattr__`, which keeps CPython from specializing a read
# of `np.ndarray`; a global of our own is read at full speed, on every operand.
_ndarray = np.ndarray


def tensor_arg(value: Any, op: str, name: str, position: int) -> Any:
    """A `Tensor` argument's raw value: its ndarray, or a Python number as is.
    A numpy-only overload (`op` is then its name with the overload, `max.dim`)
    refuses another backend's array."""
    kind = type(value)
    if kind is Tensor:
        data = value._data
        if type(data) is not _ndarray and op in backend.NUMPY_ONLY_REASONS:
            backend.numpy_only(op, data)
        return data
    if kind is float or kind is int:
        return value
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, _NUMBERS):
        return value.item() if isinstance(value, np.generic) else value
    raise TypeError(argument_type(op, name, position, "Tensor", value))


def tensor_list_arg(value: Any, op: str, name: str, position: int) -> list[Any]:
    """A `Tensor[]` argument: a list or tuple of Tensors, as their raw values."""
    if not isinstance(value, (list, tuple)):
        expected = "tuple of Tensors"
        raise TypeError(argument_type(op, name, position, expected, value))
    return [tensor_arg(v, op, name, position) for v in value]


def tensor_optional_list_arg(
    value: Any, op: str, name: str, position: int
) -> list[Any]:
    """A `Tensor?[]` argument (index.Tensor's indices): a list or tuple of Tensors
    or None, as ndarrays or None. They are never differentiated."""
    if not isinstance(value, (list, tuple)):
        expected = "tuple of Tensors"
        raise TypeError(argument_type(op, name, position, expected, value))
    return [
        None if v is None else np.asarray(tensor_arg(v, op, name, position))
        for v in value
    ]


def optional_tensor_arg(value: Any, op: str, name: str, position: int) -> Any:
    return None if value is None else tensor_arg(value, op, name, position)


def scalar_arg(value: Any, op: str, name: str, position: int) -> int | float | bool:
    kind = type(value)
    if kind is int or kind is float:
        return value
    if isinstance(value, _NUMBERS):
        return value.item() if isinstance(value, np.generic) else value
    if isinstance(value, Tensor) and value._data.size == 1:
        return value._data.reshape(()).item()
    raise TypeError(argument_type(op, name, position, "Number", value))


def int_arg(value: Any, op: str, name: str, position: int) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool) or isinstance(value, Tensor) and value._data.ndim:
        raise TypeError(argument_type(op, name, position, "int", value))
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(argument_type(op, name, position, "int", value)) from None


def float_arg(value: Any, op: str, name: str, position: int) -> float:
    if isinstance(value, _NUMBERS) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    raise TypeError(argument_type(op, name, position, "float", value))


def bool_arg(value: Any, op: str, name: str, position: int) -> bool:
    if type(value) is bool:
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(argument_type(op, name, position, "bool", value))


def str_arg(value: Any, op: str, name: str, position: int) -> str:
    if isinstance(value, str):
        return value
    raise TypeError(argument_type(op, name, position, "str", value))


def int_list_arg(
    value: Any, op: str, name: str, position: int, size: int = 1
) -> tuple[int, ...]:
    """`int[]` and `int[N]`: a sequence of ints. A lone int is accepted, as PyTorch
    does, and stands for `size` copies of itself (`kernel_size=2` of an `int[2]` is
    `(2, 2)`), so kernels and formulas always get a tuple."""
    if type(value) is tuple:
        for v in value:
            if type(v) is not int:
                break
        else:
            return value
    if isinstance(value, (list, tuple)):
        return tuple(int_arg(v, op, name, position) for v in value)
    if isinstance(value, Tensor):
        return tuple(int(v) for v in value._data.reshape(-1))
    try:
        return (int_arg(value, op, name, position),) * size
    except TypeError:
        expected = "tuple of ints"
        raise TypeError(argument_type(op, name, position, expected, value)) from None


def scalar_type_arg(value: Any, op: str, name: str, position: int) -> np.dtype:
    try:
        return dtypes.to_numpy(value)
    except TypeError:
        raise TypeError(argument_type(op, name, position, "dtype", value)) from None


def memory_format_arg(
    value: Any, op: str, name: str, position: int
) -> dtypes.memory_format:
    """`MemoryFormat`: yamlgrad's memory formats (or the 0 of the schemas'
    defaults, contiguous_format); the kernels lay their copies out by it."""
    found = dtypes.memory_format_of(value)
    if found is not None and not isinstance(value, bool):
        return found
    raise TypeError(argument_type(op, name, position, "memory_format", value))


def generator_arg(value: Any, op: str, name: str, position: int) -> Generator:
    """`Generator`: the kernel draws from it."""
    if isinstance(value, Generator):
        return value
    raise TypeError(argument_type(op, name, position, "torch.Generator", value))


def optional_generator_arg(value: Any, op: str, name: str, position: int) -> Generator:
    """`Generator?`: None is the default generator (PyTorch's
    get_generator_or_default), so a kernel always gets a Generator."""
    if value is None:
        return default_generator
    return generator_arg(value, op, name, position)


def layout_arg(value: Any, op: str, name: str, position: int) -> dtypes.layout:
    """`Layout`: yamlgrad's tensors are dense; only `strided` is accepted."""
    if value is dtypes.strided:
        return value
    if isinstance(value, dtypes.layout):
        raise RuntimeError(f"{op}(): yamlgrad has no layout {value!r}; only strided")
    raise TypeError(argument_type(op, name, position, "torch.layout", value))


def device_arg(value: Any, op: str, name: str, position: int) -> str:
    """`Device`: a device string or object (anything with a `.type`), which must
    be the CPU; the kernel gets "cpu"."""
    kind = value if isinstance(value, str) else getattr(value, "type", None)
    if not isinstance(kind, str):
        raise TypeError(argument_type(op, name, position, "torch.device", value))
    if kind.split(":")[0] != "cpu":
        raise RuntimeError(f"{op}(): yamlgrad has no device {value!r}; only 'cpu'")
    return "cpu"


def optional(convert: Any) -> Any:
    """`T?`: None passes through, anything else is converted as `T`."""

    def convert_optional(value: Any, op: str, name: str, position: int) -> Any:
        return None if value is None else convert(value, op, name, position)

    return convert_optional


def optional_int_list_arg(
    value: Any, op: str, name: str, position: int, size: int = 1
) -> tuple[int, ...] | None:
    return None if value is None else int_list_arg(value, op, name, position, size)


optional_scalar_arg = optional(scalar_arg)
optional_int_arg = optional(int_arg)
optional_float_arg = optional(float_arg)
optional_scalar_type_arg = optional(scalar_type_arg)
optional_bool_arg = optional(bool_arg)
optional_str_arg = optional(str_arg)
optional_memory_format_arg = optional(memory_format_arg)
optional_layout_arg = optional(layout_arg)
optional_device_arg = optional(device_arg)


def sizes_of(value: Any) -> tuple[int, ...]:
    return value.shape if type(value) is np.ndarray else np.shape(value)


def argsize_of(value: Any, dim: int) -> int:
    """One size, `x.size(dim)`, with PyTorch's IndexError for a dim the value does
    not have: a formula that reads `x.shape[k]` saves only that size, read before
    the kernel runs, as PyTorch's `x_sym_argsize_k`."""
    n = ndim_of(value)
    if n == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {dim})"
        )
    return int(sizes_of(value)[dim])


def ndim_of(value: Any) -> int:
    return value.ndim if type(value) is np.ndarray else np.ndim(value)


def dtype_of(value: Any) -> np.dtype:
    """An array's dtype (a lazy one's without computing it), a Tensor's array's,
    a number's numpy's. A formula's `x.dtype` reads the argument as given, before
    type promotion, as PyTorch's `x.scalar_type()` does (handle_r_to_c asks
    whether the input itself is real)."""
    if isinstance(value, Tensor):
        return value._data.dtype
    number = _NUMBER_DTYPES.get(type(value))
    if number is not None:  # a wrapped number: no array made, no attribute miss
        return number
    if type(value) is np.ndarray or hasattr(value, "dtype"):
        return value.dtype
    return np.asarray(value).dtype


_NUMBER_DTYPES = {t: np.asarray(t(1)).dtype for t in (bool, int, float, complex)}


def args_sizes_of(values: list[Any]) -> list[tuple[int, ...]]:
    """Each tensor's shape in a `Tensor[]` argument (PyTorch's to_args_sizes)."""
    return [sizes_of(v) for v in values]


_RETURN_TYPES: dict[tuple[str, tuple[str, ...]], type] = {}


def return_type(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple an op with named returns gives (`torch.return_types.max`)."""
    key = (name, fields)
    cls = _RETURN_TYPES.get(key)
    if cls is None:
        cls = namedtuple(name, fields)  # type: ignore[misc]
        cls.__module__ = "yamlgrad.return_types"
        _RETURN_TYPES[key] = cls
    return cls


_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)
_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _promote(a: np.dtype | None, b: np.dtype) -> np.dtype:
    """PyTorch's promote_types: a float wins over any int or bool, a complex over
    any real."""
    if a is None or a == b:
        return b
    return dtypes.promote_numpy(a, b)


def _category(dtype: np.dtype | None) -> int:
    return -1 if dtype is None else {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[dtype.kind]


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """c10's combine_categories: a lower-priority operand only raises the category.
    A complex one keeps a float operand's precision: a float64 tensor times 1j is
    complex128, a float32 one complex64."""
    if higher is None:
        return lower
    if lower is None or _category(higher) >= _category(lower):
        return higher
    if lower.kind == "c":
        return (
            dtypes.from_numpy(higher).to_complex().np if higher.kind == "f" else lower
        )
    return (
        _promote(higher, lower) if higher.kind == "b" or lower.kind == "f" else higher
    )


def result_type(*values: Any) -> np.dtype:
    """PyTorch's result type of element-wise operands (raw values: ndarrays or the
    Python numbers given for tensors). Dimensioned tensors decide first, then 0-d
    tensors, then Python numbers, each only when it is of a higher category: a
    float32 tensor times a float64 0-d tensor or a Python float stays float32, an
    int64 tensor times 2.5 is float32 (the default float dtype, get_default_dtype)."""
    dim = zero = wrapped = None
    for v in values:
        if type(v) is np.ndarray:
            if v.ndim:
                dim = _promote(dim, v.dtype)
            else:
                zero = _promote(zero, v.dtype)
        elif isinstance(v, (bool, np.bool_)):
            wrapped = _promote(wrapped, _BOOL)
        elif isinstance(v, (int, np.integer)):
            wrapped = _promote(wrapped, _INT64)
        elif type(v) is not float and backend.is_foreign(v):
            # Another backend's array: by its dtype as numpy names it.
            dtype = v.dtype
            if not isinstance(dtype, np.dtype):
                dtype = dtypes.from_numpy(dtype).np
            if v.ndim:
                dim = _promote(dim, dtype)
            else:
                zero = _promote(zero, dtype)
        elif isinstance(v, complex):
            wrapped = _promote(wrapped, dtypes.default_complex().np)
        elif v is not None:
            wrapped = _promote(wrapped, dtypes.DEFAULT_FLOAT.np)
    result = _combine(dim, _combine(zero, wrapped))
    return dtypes.DEFAULT_FLOAT.np if result is None else result


def promote_operands(
    a: Any, b: Any = ABSENT, c: Any = ABSENT, int_to_float: bool = False
) -> tuple[Any, ...]:
    """The operands (one to three) cast to their common dtype (Python numbers stay
    Python numbers, which numpy treats as weak). `int_to_float`: an integer or bool
    result type becomes the default float dtype (float32), as PyTorch's true division and float-only ops do.
    """
    if type(a) is _ndarray:
        dtype = a.dtype
        if dtype is _FLOAT64 or dtype is _FLOAT32:
            # The common case, decided without result_type: a float tensor with
            # Python numbers (weak) and tensors of its own dtype keeps its dtype.
            # numpy's builtin dtypes are singletons, so `is` decides it without
            # the cost of `==` or `.kind`; anything else (another float dtype, a
            # bool, None) takes the general path, which is right for every case.
            if b is ABSENT:
                return (a,)
            kind = type(b)
            if kind is float or kind is int or kind is _ndarray and b.dtype is dtype:
                if c is ABSENT:
                    return (a, b)
                kind = type(c)
                if (
                    kind is float
                    or kind is int
                    or kind is _ndarray
                    and c.dtype is dtype
                ):
                    return (a, b, c)
    values = tuple(v for v in (a, b, c) if v is not ABSENT)
    dtype = result_type(*values)
    if int_to_float and dtype.kind in "biu":
        dtype = dtypes.DEFAULT_FLOAT.np
    return tuple(
        (
            (v.astype(dtype) if v.dtype != dtype else v)
            if type(v) is np.ndarray
            else _cast_foreign(v, dtype) if backend.is_foreign(v) else v
        )
        for v in values
    )


def _cast_foreign(array: Any, dtype: np.dtype) -> Any:
    """Another backend's operand in the common dtype, in its own namespace."""
    xp = backend.namespace_of(array)
    target = backend.dtype_in(xp, dtype)
    return array if array.dtype == target else xp.astype(array, target)


def compute_requires_grad(*args: Any) -> bool:
    """Grad mode is on, inference mode off, and some tensor argument requires grad."""
    if grad_disabled_threads[0] and (not _grad_mode.enabled or _grad_mode.inference):
        return False
    for a in args:
        kind = type(a)
        if kind is Tensor:
            if a._requires_grad:
                return True
        elif kind is not float and kind is not int and isinstance(a, Tensor):
            if a._requires_grad:
                return True
    return False


def next_edge(a: Any) -> tuple[Node | None, int]:
    """Where a gradient for argument `a` goes, as a `(node, input_nr)` pair
    (nowhere for a Python number)."""
    if type(a) is not Tensor and not isinstance(a, Tensor):
        return INVALID_EDGE
    grad_fn = a.grad_fn
    if grad_fn is not None:
        return (grad_fn, a.output_nr)
    if a._requires_grad:
        return (grad_accumulator(a), 0)
    return INVALID_EDGE


def collect_next_edges(*args: Any) -> tuple[Any, ...]:
    """The arguments' edges in a node's flat form: node, input_nr, node, ...
    (what `Node.set_next_edges` takes)."""
    edges: tuple[Any, ...] = ()
    for a in args:
        kind = type(a)
        if kind is Tensor and a.grad_fn is not None:
            edges += (a.grad_fn, a.output_nr)
        elif kind is float or kind is int:
            edges += INVALID_EDGE
        else:
            edges += next_edge(a)
    return edges


def set_history(result: Tensor, grad_fn: Node) -> None:
    """Make `result` the output of `grad_fn` (PyTorch's set_history). The node is
    a generated one, whose input metadata is a plain tuple (Node's own
    add_input_metadata, done here without the call)."""
    data = result._data
    dtype = data.dtype
    # (`is` first: the builtin float dtypes are singletons, and `.kind` costs more.)
    shared = True
    if dtype is not _FLOAT64 and dtype is not _FLOAT32:
        if dtype_kind(dtype) not in "fc":
            return  # integer and bool results never require grad
        shared = isinstance(dtype, np.dtype)  # (see output_metadata)
    metadata = grad_fn._input_metadata
    if metadata:
        result.output_nr = len(metadata)
        grad_fn._input_metadata = (*metadata, (data.shape, dtype))
    else:  # the common first output: its metadata tuple is shared
        key = (data.shape, dtype)
        grad_fn._input_metadata = (
            shared and METADATA_CACHE.get(key) or output_metadata(data)
        )
        result.output_nr = 0
    result.grad_fn = grad_fn
    result._requires_grad = True


def set_history_inplace_view(self: Tensor, grad_fn: Node) -> None:
    """An in-place view op changes only `self`'s shape: on a view it is PyTorch's
    set_history (no CopySlices), else rebase_history."""
    if self._base is None:
        rebase_history(self, grad_fn)
    else:
        set_history(self, grad_fn)


def set_history_outputs(
    outputs: list[Tensor],
    grad_fn: Node,
    differentiable: tuple[bool, ...] | None = None,
) -> None:
    """set_history for every output of a multi-output op, in order.

    Every output gets an input slot on the node (so `output_nr` is its position);
    only floating outputs (not `indices`) get the node as their grad_fn, and of
    those only the `differentiable` ones when given (native_layer_norm's mean and
    rstd are not, as in PyTorch).
    """
    for i, out in enumerate(outputs):
        index = grad_fn.add_input_metadata(out)
        if differentiable is not None and not differentiable[i]:
            continue
        if dtype_kind(out._data.dtype) in "fc":
            out.output_nr = index
            out.grad_fn = grad_fn
            out._requires_grad = True


def make_views(outputs: list[Tensor], base: Tensor, op: str) -> None:
    """make_view for each output of an op returning several views (`split`)."""
    for i, output in enumerate(outputs):
        make_view(output, base, op, i)


def make_view(
    view: Tensor, base: Tensor, multi_output_op: str | None = None, output_nr: int = 0
) -> None:
    """Mark a view op's result as a view of `base` when numpy returned a view.

    It shares the base's version counter, so an in-place change through either is
    seen by every saved value (PyTorch's views share one), and is registered on it,
    so an in-place change to the base or another view regenerates its grad_fn. How
    it was made decides whether an in-place op may write through it later
    (PyTorch's CreationMeta): not if made under no_grad or by an op returning
    several views (`multi_output_op`, e.g. "Split").
    """
    if not isinstance(base, Tensor) or not _is_numpy_view(view._data, base._data):
        return
    root = base._base if base._base is not None else base
    view._base = root
    view._version_counter = root.version_counter
    if type(root) is not Tensor and isinstance(root, InferenceTensor):
        view.__class__ = InferenceTensor  # outside inference mode too (PyTorch)
        view._creation_meta = None
    elif _grad_mode.inference:
        # A view of a normal tensor stays a normal tensor (PyTorch), marked.
        view.__class__ = plain_class(type(view))
        view._creation_meta = CREATED_IN_INFERENCE
    elif not _grad_mode.enabled:
        view._creation_meta = CREATED_IN_NO_GRAD
    elif multi_output_op is not None:
        view._creation_meta = (multi_output_op, output_nr)
    else:
        view._creation_meta = None
    register_view(view, root)


def _is_numpy_view(view: np.ndarray, base: np.ndarray) -> bool:
    """Whether numpy made `view` from `base`'s memory: they overlap, or (for
    size-0 arrays, which overlap nothing) they have the same owning array.
    A view op's result over another backend's array is taken as a view (that
    backend's arrays are immutable, or their memory is not numpy's to check)."""
    if type(view) is not np.ndarray and backend.is_foreign(view):
        return True
    if np.may_share_memory(view, base):
        return True
    if view.size and base.size:
        return False
    return _owner(view) is _owner(base)


def _owner(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


CREATED_IN_NO_GRAD = "no_grad"
CREATED_IN_INFERENCE = "inference_mode"


def check_no_requires_grad(value: Any, name: str, op: str) -> None:
    """PyTorch's check_no_requires_grad, for a tensor input the YAML gives no key:
    in grad mode it may not require grad (a list input: none of its tensors)."""
    if not _grad_mode.enabled:
        return
    values = value if isinstance(value, (list, tuple)) else (value,)
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            raise RuntimeError(
                f"The function '{op}' is not differentiable with respect to argument "
                f"'{name}'. This input cannot have requires_grad True."
            )


def check_inplace(self: Tensor) -> None:
    """PyTorch's check_inplace, when an input of an in-place op requires grad."""
    if self.grad_fn is None and self._requires_grad:
        raise RuntimeError(ERR_LEAF_INPLACE)
    base = self._base
    if base is not None:
        if base.grad_fn is None and base._requires_grad:
            raise RuntimeError(ERR_VIEW_OF_LEAF_INPLACE)
        meta = getattr(self, "_creation_meta", None)
        if meta == CREATED_IN_NO_GRAD:
            raise RuntimeError(ERR_NO_GRAD_VIEW_INPLACE)
        if meta == CREATED_IN_INFERENCE:
            raise RuntimeError(ERR_INFERENCE_VIEW_INPLACE)
        if meta is not None:
            raise RuntimeError(multi_output_view_inplace(meta[1], meta[0]))


def original_value(self: Tensor) -> Tensor:
    """`self` before an in-place op changes it, for formulas that read it: a copy
    recorded as an op (PyTorch's `original_self = self.clone()`)."""
    from yamlgrad.runtime import dispatch

    return dispatch.ops._to_copy(self)


def write_inplace(self: Tensor, value: Any) -> None:
    """Write an in-place op's result into `self` and bump its version."""
    if (
        type(self) is not Tensor  # a plain Tensor: one identity test
        and isinstance(self, InferenceTensor)  # an inference Parameter too
        and not _grad_mode.inference
    ):
        raise RuntimeError(ERR_INFERENCE_INPLACE)
    data = self._data
    if type(data) is not np.ndarray and backend.is_foreign(data):
        _rebind(self, value)
        return
    if np.shape(value) != data.shape and np.size(value) == data.size:
        # A metadata-only op (squeeze_): `self` takes the new view of its memory.
        if not np.may_share_memory(value, data):
            value = np.reshape(data, np.shape(value))
        self._data = value
        self.version_counter.bump()
        return
    try:
        np.copyto(data, value, casting="same_kind")
    except TypeError:
        result = dtypes.from_numpy(np.result_type(value))
        raise RuntimeError(
            f"result type {_type_word(result)} can't be cast to the desired output "
            f"type {_type_word(dtypes.from_numpy(data.dtype))}"
        ) from None
    except ValueError as e:
        if not data.flags.writeable:
            raise RuntimeError(ERR_INPLACE_OVERLAP) from None
        raise RuntimeError(
            f"output with shape {list(data.shape)} doesn't match the broadcast shape "
            f"{list(np.shape(value))}"
        ) from e
    self.version_counter.bump()


def _rebind(self: Tensor, value: Any) -> None:
    """An in-place op on another backend's array (Dask's are immutable): `self`
    takes the result as its new array. A view's would not reach its base."""
    if self._base is not None:
        raise RuntimeError(
            ERR_IMMUTABLE_VIEW_INPLACE.format(backend.device_name(self._data))
        )
    data = self._data
    if not backend.is_foreign(value):  # numpy's values (a draw, a fill): moved
        value = backend.like(np.broadcast_to(value, tuple(data.shape)), data)
    xp = backend.namespace_of(data, value)
    value = xp.asarray(value, dtype=data.dtype)
    if value.shape != data.shape and math.prod(value.shape) == math.prod(data.shape):
        self._data = value  # a metadata-only op (squeeze_): the new shape
    else:
        self._data = xp.broadcast_to(value, tuple(data.shape))
    self.version_counter.bump()


def _type_word(dtype: dtypes.dtype) -> str:
    return {
        "float32": "Float",
        "float64": "Double",
        "int64": "Long",
        "bool": "Bool",
    }.get(dtype.name, dtype.name.capitalize())


def rebase_history(self: Tensor, grad_fn: Node) -> None:
    """An in-place op's node becomes `self`'s grad_fn (its old one is an edge).

    When `self` is a view, the base's history is rewritten instead (CopySlices
    around `grad_fn`, runtime/autograd/copy_slices.py); either way the views of the changed
    memory get a new grad_fn, as PyTorch regenerates stale views.
    """
    if self._base is not None:
        rebase_view_history(self, grad_fn)
        return
    self.output_nr = grad_fn.add_input_metadata(self)
    self.grad_fn = grad_fn
    self._requires_grad = True
    regenerate_views(self)
