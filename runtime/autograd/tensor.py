"""Tensor: a numpy ndarray plus PyTorch's autograd metadata.

The metadata is PyTorch's AutogradMeta, flattened into slots: `requires_grad`,
`grad`, `grad_fn`, `output_nr`, the version counter, and a weak reference to the
leaf's AccumulateGrad node (created on first use and shared by every op that reads
the leaf, as PyTorch's `grad_accumulator` is).

Decisions:

* A tensor is a leaf when it has no `grad_fn`; every tensor that does not require
  grad is a leaf.
* The version counter is created lazily: most tensors are never saved for backward,
  and an object per tensor is not free. `detach()` shares it, as in PyTorch.
* The operators and most methods (`x * y`, `x.sum()`) are generated wrappers that
  the package facade installs on this class; this module never imports generated/.
"""

from __future__ import annotations

import copy
import copyreg
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from yamlgrad.runtime import backend, dtypes
from yamlgrad.runtime.autograd.grad_mode import _state as _grad_mode
from yamlgrad.runtime.autograd.grad_mode import inference_threads as _inference_threads
from yamlgrad.runtime.autograd.tensor_repr import format_tensor
from yamlgrad.runtime.errors import (
    ERR_HOOK_NO_GRAD,
    ERR_INFERENCE_REQUIRES_GRAD,
    ERR_INFERENCE_VERSION,
    ERR_POST_ACCUMULATE_NON_LEAF,
    ERR_RETAIN_GRAD_NO_GRAD,
    ERR_BOOL_AMBIGUOUS,
    ERR_BOOL_EMPTY,
    ERR_DEEPCOPY_NON_LEAF,
    ERR_DETACH_VIEW_INPLACE,
    ERR_GRAD_SIZE,
    ERR_GRAD_TYPE,
    ERR_ITEM_NUMEL,
    ERR_NUMPY_REQUIRES_GRAD,
    ERR_REQUIRES_GRAD_DTYPE,
    ERR_REQUIRES_GRAD_NON_LEAF,
    WARN_HOOK_NOT_SERIALIZED,
    WARN_NON_LEAF_GRAD,
    assigned_grad_dtype,
)

if TYPE_CHECKING:
    from yamlgrad.runtime.autograd.node import Node


class Size(tuple):
    """A tensor's shape: a tuple that prints as `yamlgrad.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"yamlgrad.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    # A Size joined with a Size or a tuple is a Size, as torch.Size's is.
    def __add__(self, other: tuple) -> Size:  # type: ignore[override]
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: tuple) -> Size:
        return Size(tuple.__add__(other, self))

    def __mul__(self, n: int) -> Size:  # type: ignore[override]
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


_bump_lock = threading.Lock()
_new = object.__new__

# While a thread traces a function for yg.compile: the tracing state (runtime/
# wrappers/interposition.py's `tracing`, which sets it), whose checks raise if
# the calling thread records. A tensor's value read into Python would become a
# constant of the compiled graph, whatever the tensor holds on later calls
# (`data_dependent`), and a backward has no place in the graph (`unsupported`).
# None the rest of the time.
active_tracing: list[Any] = [None]

# numpy's module has a `__getattr__`, which keeps CPython from specializing a read
# of `np.ndarray`; a global of our own is read at full speed, on every new tensor.
_ndarray = np.ndarray
_asarray = np.asarray
_NUMPY_SCALARS = backend.NUMPY_SCALARS
_bump_acquire = _bump_lock.acquire
_bump_release = _bump_lock.release


class VersionCounter:
    """How many times a tensor's data was modified in place (`t._version`).

    A base and its views share one counter, which also keeps weak references to
    the views (`views`, None until the first): an in-place change to any of them
    regenerates the others' grad_fn, as PyTorch does for stale views.
    """

    __slots__ = ("value", "views")

    def __init__(self) -> None:
        self.value = 0
        self.views: list[weakref.ref] | None = None

    def bump(self) -> None:
        # `value += 1` is a read, an add and a store: two threads bumping one
        # counter (views of one base, modified in place from two threads) could
        # both read n and both store n + 1. One lock for every counter keeps the
        # counters themselves small; reads of `value` need no lock.
        _bump_acquire()
        try:
            self.value += 1
        finally:
            _bump_release()


def _legacy_data(args: tuple[Any, ...]) -> np.ndarray:
    """`torch.Tensor(...)`'s data: sizes (ints or one Size) or one sequence."""
    float32 = dtypes.DEFAULT_FLOAT.np
    if not args:
        return np.empty(0, float32)
    if len(args) == 1 and isinstance(args[0], (Size, np.generic, Tensor)):
        if isinstance(args[0], Size):
            return np.empty(tuple(args[0]), float32)
        value = args[0]._data if isinstance(args[0], Tensor) else args[0]
        return np.asarray(value)
    is_size = all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args
    )
    if is_size:
        return np.empty(tuple(int(a) for a in args), float32)
    if len(args) != 1 or not isinstance(args[0], (list, tuple)):
        names = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"new(): data must be a sequence (got {names})"
            if len(args) == 1
            else f"new() received an invalid combination of arguments - got ({names})"
        )
    return np.array(args[0], dtype=float32)


class Tensor:
    """An n-dimensional array that can record the operations applied to it."""

    # What every op reads and sets is a slot. The rest of the metadata is rarely
    # set (a leaf's grad, hooks, a view's base): a class attribute gives its
    # default, and the instance `__dict__` is created only for a tensor that sets
    # one, so making a tensor costs four stores (generated wrappers inline them).
    # As in PyTorch, a user may also set attributes of their own on a tensor.
    __slots__ = (
        "_data",
        "_requires_grad",
        "grad_fn",
        "output_nr",
        "__dict__",
        "__weakref__",
    )

    _version_counter: VersionCounter | None = None
    _grad: Tensor | None = None
    _grad_accumulator: weakref.ref | None = None
    _retains_grad = False
    _hooks: dict | None = None
    _post_accumulate_hooks: dict | None = None
    _base: Tensor | None = None
    _creation_meta: Any = None
    # The tangent of forward-mode AD at the active dual level (runtime/autograd/
    # forward_ad.py sets and clears it); PyTorch's ForwardGrad.
    _fw_grad: Tensor | None = None

    def __init__(self, *data: Any, requires_grad: bool = False) -> None:
        """`Tensor(array)` wraps the array (of any backend); otherwise PyTorch's legacy
        constructor: `Tensor([1, 2])` copies data as float32, `Tensor(2, 3)` is
        uninitialized of that size, `Tensor()` is empty."""
        if len(data) == 1 and (
            type(data[0]) is np.ndarray or backend.is_foreign(data[0])
        ):
            self._data = data[0]
        else:
            self._data = _legacy_data(data)
        self._requires_grad = False
        self.grad_fn: Node | None = None
        self.output_nr = 0
        if _inference_threads[0] and _grad_mode.inference:
            self.__class__ = inference_class(type(self))
        if requires_grad:
            self.requires_grad = True

    @staticmethod
    def _make(value: Any) -> Tensor:
        """A new leaf around a kernel's result (which may be a numpy scalar: a
        ufunc's result on 0-d operands, made a 0-d array here, without a call).
        (A staticmethod: CPython calls it without binding a class first.)"""
        t = _new(Tensor)
        if type(value) is _ndarray:
            t._data = value
        elif type(value) in _NUMPY_SCALARS:
            t._data = _asarray(value)
        else:
            t._data = backend.adopt(value)
        t._requires_grad = False
        t.grad_fn = None
        t.output_nr = 0
        if _inference_threads[0] and _grad_mode.inference:
            t.__class__ = InferenceTensor
        return t

    # -- autograd metadata -------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError(ERR_REQUIRES_GRAD_NON_LEAF)
        if value and backend.dtype_kind(self._data.dtype) not in "fc":
            raise RuntimeError(ERR_REQUIRES_GRAD_DTYPE)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def is_inference(self) -> bool:
        """Whether this tensor was made inside `inference_mode`."""
        return False

    @property
    def grad(self) -> Tensor | None:
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(WARN_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                type_name = type(value).__name__
                raise TypeError(ERR_GRAD_TYPE.format(type_name=type_name))
            if value._data.dtype != self._data.dtype:
                names = value._data.dtype.name, self._data.dtype.name
                raise RuntimeError(assigned_grad_dtype(*names))
            if value.shape != self.shape:
                sizes = {"grad_size": list(value.shape), "size": list(self.shape)}
                raise RuntimeError(ERR_GRAD_SIZE.format(**sizes))
        self._grad = value

    @property
    def version_counter(self) -> VersionCounter:
        if self._version_counter is None:
            self._version_counter = VersionCounter()
        return self._version_counter

    @property
    def _version(self) -> int:
        return 0 if self._version_counter is None else self._version_counter.value

    # -- hooks (runtime/autograd/hooks.py) ----------------------------------------------------

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """Call `hook(grad)` when this tensor's gradient is computed; a returned
        tensor replaces the gradient. Returns a handle with `.remove()`.

        >>> y = x * 2
        >>> handle = y.register_hook(lambda g: g * 10)
        """
        from yamlgrad.runtime.autograd import hooks

        if not self._requires_grad:
            raise RuntimeError(ERR_HOOK_NO_GRAD)
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self.output_nr, hook)
        if self._hooks is None:
            with hooks.TABLE_LOCK:
                if self._hooks is None:
                    self._hooks = hooks.HookDict()
        return hooks.add_hook(self._hooks, hook)

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in `.grad` (a no-op on a leaf)."""
        from yamlgrad.runtime.autograd import hooks

        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError(ERR_RETAIN_GRAD_NO_GRAD)
            return
        if self._retains_grad:
            return
        node_hooks = self.grad_fn._node_hooks()
        node_hooks.retains_grad_hooks[self.output_nr] = hooks.retains_grad_hook(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> Any:
        """Call `hook(tensor)` after this leaf's `.grad` was updated."""
        from yamlgrad.runtime.autograd import hooks

        if self.grad_fn is not None:
            raise RuntimeError(ERR_POST_ACCUMULATE_NON_LEAF)
        if not self._requires_grad:
            raise RuntimeError(ERR_HOOK_NO_GRAD)
        if self._post_accumulate_hooks is None:
            with hooks.TABLE_LOCK:
                if self._post_accumulate_hooks is None:
                    self._post_accumulate_hooks = hooks.HookDict()
        return hooks.add_hook(self._post_accumulate_hooks, hook)

    @property
    def is_view(self) -> bool:
        """Whether this tensor is a view of another (`_base`), sharing its memory."""
        return self._base is not None

    def detach(self) -> Tensor:
        """A tensor on the same data and version counter, outside the graph."""
        out = _alias(self)
        out._version_counter = self.version_counter
        return out

    def detach_(self) -> Tensor:
        """Detach in place; a view cannot be (its base would still see it)."""
        if self._base is not None:
            raise RuntimeError(ERR_DETACH_VIEW_INPLACE)
        self.grad_fn = None
        self.output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history (and its own version counter)."""
        return _alias(self)

    @data.setter
    def data(self, value: Tensor) -> None:
        """`x.data = y`: x now holds y's storage; its autograd metadata stays."""
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(value).__name__}"
            )
        self._set_data(value._data)

    def _set_data(self, array: Any) -> None:
        """Hold `array`. A leaf's AccumulateGrad, which conforms gradients to
        the array's shape and dtype, is made afresh when they (or the backend)
        change, as PyTorch's set_data resets the grad accumulator."""
        old = self._data
        self._data = array
        if (
            type(array) is not type(old)
            or array.dtype != old.dtype
            or array.shape != old.shape
        ):
            self._grad_accumulator = None

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
        from yamlgrad.runtime import autograd

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- copy and pickle ----------------------------------------------------------

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A new leaf with copies of the data, `.grad` and the user's attributes
        and slots (`memo` kept: what two references shared, their copies share,
        and a base and its view copied together share their memory, as
        PyTorch's copies share a storage). Hooks, the version counter and the
        AccumulateGrad stay the original's."""
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("copy.deepcopy()")
        if self.grad_fn is not None:
            raise RuntimeError(ERR_DEEPCOPY_NON_LEAF)
        if id(self) in memo:
            return memo[id(self)]
        data = _deepcopy_data(self._data, memo)
        new = rebuild_tensor(type(self), data, self._requires_grad)
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        attributes, slots = _user_state(self)
        for name, value in copy.deepcopy(slots, memo).items():
            setattr(new, name, value)
        if attributes:
            new.__dict__.update(copy.deepcopy(attributes, memo))
        return new

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        """Pickle (and `copy.copy`) as a leaf of the same class: the data,
        `requires_grad` and the user's attributes, not `.grad` nor the hooks (a
        warning names each hook not marked `yg.utils.hooks.unserializable_hook`)."""
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("copy.copy() or pickling")
        for hook in _backward_hooks(self):
            if not hasattr(hook, "__torch_unserializable__"):
                message = WARN_HOOK_NOT_SERIALIZED.format(hook=hook)
                warnings.warn(message, UserWarning, stacklevel=2)
        return reduce_tensor(self)

    # -- array facts -------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[dim]

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel
    ndimension = dim

    def is_floating_point(self) -> bool:
        return backend.dtype_kind(self._data.dtype) == "f"

    def is_complex(self) -> bool:
        return backend.dtype_kind(self._data.dtype) == "c"

    def numpy(self) -> np.ndarray:
        """The ndarray itself (shared memory), as `torch.Tensor.numpy`; another
        backend's array is transferred (a lazy one computed, a GPU one copied)."""
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent(".numpy()")
        if self._requires_grad:
            raise RuntimeError(ERR_NUMPY_REQUIRES_GRAD)
        return backend.to_numpy(self._data)

    def item(self) -> int | float | bool:
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent(".item()")
        if self._data.size != 1:
            raise RuntimeError(ERR_ITEM_NUMEL.format(numel=self._data.size))
        return self._host().reshape(()).item()

    def tolist(self) -> Any:
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent(".tolist()")
        return self._host().tolist()

    def _host(self) -> np.ndarray:
        """The values as a numpy array: another backend's computed (a lazy
        array) or copied to host memory (a GPU's), to be read in Python."""
        data = self._data
        return data if type(data) is np.ndarray else backend.to_numpy(data)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("bool()")
        if self._data.size != 1:
            empty = self._data.size == 0
            raise RuntimeError(ERR_BOOL_EMPTY if empty else ERR_BOOL_AMBIGUOUS)
        return bool(self._host().reshape(()))

    def __float__(self) -> float:
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("float()")
        return float(self.item())

    def __int__(self) -> int:
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("int()")
        return int(self.item())

    def __index__(self) -> int:
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("use as an index")
        if backend.dtype_kind(self._data.dtype) not in "iu" or self._data.size != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self.item())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """`np.asarray(x)` shares the data, `np.array(x)` copies it (numpy 2's
        `copy` protocol); refused for a tensor that requires grad, as numpy()."""
        if active_tracing[0] is not None:
            active_tracing[0].data_dependent("conversion to a numpy array")
        if self._requires_grad:
            raise RuntimeError(ERR_NUMPY_REQUIRES_GRAD)
        if copy is False and dtype is not None and np.dtype(dtype) != self._data.dtype:
            raise ValueError(
                "Unable to avoid copy while creating an array as requested."
            )
        array = self._data if dtype is None else self._data.astype(dtype, copy=False)
        return array.copy() if copy else array

    def __format__(self, format_spec: str) -> str:
        """A 0-d tensor formats as its number (`f"{loss:.4f}"`); others as text."""
        if self._data.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __array_wrap__(
        self, array: np.ndarray, context: Any = None, return_scalar: bool = False
    ) -> Tensor:
        """A numpy ufunc of a tensor is a tensor, as in PyTorch (`np.exp(x)`:
        computed by numpy on the data, without autograd history)."""
        return Tensor._make(np.asarray(array))

    __hash__ = object.__hash__
    # numpy defers to the Tensor's reflected operators (`array * x` is
    # `x.__rmul__(array)`) instead of making an object array of Tensors, as it
    # does for PyTorch's tensors, by this priority.
    __array_priority__ = 1000

    def __repr__(self) -> str:
        return format_tensor(self)


# The autograd metadata kept in a tensor's `__dict__`: the class defaults above.
# Whatever else is there the user set, and is copied and pickled with the tensor.
_AUTOGRAD_METADATA = frozenset(
    name
    for name, value in vars(Tensor).items()
    if name[0] == "_" and name[:2] != "__" and not hasattr(value, "__get__")
)


def _user_attributes(t: Tensor) -> dict[str, Any]:
    return {k: v for k, v in t.__dict__.items() if k not in _AUTOGRAD_METADATA}


def _user_state(t: Tensor) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the user set on `t`: its attributes, and the values of the slots
    its class (a subclass of Tensor) declares."""
    names = copyreg._slotnames(type(t))  # type: ignore[attr-defined]
    slots = {n: getattr(t, n) for n in names if n not in _SLOTS and hasattr(t, n)}
    return _user_attributes(t), slots


_SLOTS = frozenset(Tensor.__slots__)


def _deepcopy_data(data: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of `data` through `memo`. An ndarray that views another's
    memory is rebuilt, at its own offset and strides, on the copy of the
    array that owns the memory (made once per `memo`), so copies of a base
    and its views share memory as the originals do."""
    if type(data) is not np.ndarray or data.base is None:
        return copy.deepcopy(data, memo)
    root, node = data, data.base
    while node is not None:  # (as_strided's views hold their array through a
        if isinstance(node, np.ndarray):  # non-array that has a `base` too)
            root = node
        node = getattr(node, "base", None)
    contiguous = root.flags.c_contiguous or root.flags.f_contiguous
    if root is data or not contiguous or root.dtype.hasobject:
        return copy.deepcopy(data, memo)
    memory = copy.deepcopy(root, memo).reshape(-1, order="A")
    offset = data.ctypes.data - root.ctypes.data
    view = np.ndarray(data.shape, data.dtype, memory, offset, data.strides)
    view.flags.writeable = data.flags.writeable
    return view


def _backward_hooks(t: Tensor) -> list[Callable[..., Any]]:
    """The hooks `register_hook` put on `t` (a non-leaf's live on its grad_fn)."""
    if t.grad_fn is None:
        return list((t._hooks or {}).values())
    node_hooks = t.grad_fn._hooks
    if node_hooks is None:
        return []
    return list(node_hooks.tensor_pre_hooks.get(t.output_nr, {}).values())


def reduce_tensor(t: Tensor) -> tuple[Any, ...]:
    """`t` for pickle and `copy.copy`: `rebuild_tensor`'s arguments (the class
    outside inference mode), then `pickle_state(t)`."""
    args = (plain_class(type(t)), t._data, t._requires_grad)
    return rebuild_tensor, args, pickle_state(t)


def pickle_state(t: Tensor) -> Any:
    """The user's attributes and slots of `t`, as pickle's state (restored after
    the tensor is rebuilt, so one may refer back to it)."""
    attributes, slots = _user_state(t)
    if slots:
        return attributes or None, slots
    return attributes or None


def _alias(t: Tensor) -> Tensor:
    """A new leaf on `t`'s data, an inference tensor if and only if `t` is one
    (an alias made in inference mode of a normal tensor is normal, as PyTorch's)."""
    out = _new(InferenceTensor if isinstance(t, InferenceTensor) else Tensor)
    out._data = t._data
    out._requires_grad = False
    out.grad_fn = None
    out.output_nr = 0
    return out


def rebuild_tensor(
    cls: type[Tensor], data: Any, requires_grad: bool, version: int = 1
) -> Tensor:
    """A leaf of class `cls` holding `data` (what pickle and copy call), at
    `version` (PyTorch's rebuilt tensors are at 1: their storage was set once).
    Inside inference mode it is an inference tensor, as any new tensor."""
    inference = _inference_threads[0] and _grad_mode.inference
    t = _new(inference_class(cls) if inference else plain_class(cls))
    t._data = data if type(data) is _ndarray else backend.adopt(data)
    t._requires_grad = False
    t.grad_fn = None
    t.output_nr = 0
    if version and not inference:
        t._version_counter = VersionCounter()
        t._version_counter.value = version
    if requires_grad:
        t.requires_grad = True
    return t


def plain_class(cls: type[Tensor]) -> type[Tensor]:
    """The class of a tensor made outside inference mode that inference mode
    would have given `cls` (Tensor for InferenceTensor)."""
    return cls.__bases__[0] if issubclass(cls, InferenceTensor) else cls


_INFERENCE_CLASSES: dict[type, type] = {}


def inference_class(cls: type[Tensor]) -> type[Tensor]:
    """The class of a tensor of class `cls` made inside inference mode:
    InferenceTensor for a Tensor; for a subclass (a Parameter), a class of both,
    made once, so it stays a Parameter and is an inference tensor."""
    if issubclass(cls, InferenceTensor):
        return cls
    if cls is Tensor:
        return InferenceTensor
    made = _INFERENCE_CLASSES.get(cls)
    if made is None:
        namespace = {"__slots__": (), "__qualname__": cls.__qualname__}
        namespace["__module__"] = cls.__module__
        made = _INFERENCE_CLASSES.setdefault(
            cls, type(cls.__name__, (cls, InferenceTensor), namespace)
        )
    return made


class InferenceTensor(Tensor):
    """A tensor made inside `inference_mode` (PyTorch's inference tensors).

    It never requires grad outside inference mode, keeps no version (reading
    `_version` raises), cannot be saved for backward (runtime/autograd/saved_variable.py)
    and cannot be changed in place outside inference mode
    (variable_type_utils.write_inplace). Only the class differs from Tensor, so
    making one costs nothing extra.
    """

    __slots__ = ()

    def is_inference(self) -> bool:
        return True

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and not _grad_mode.inference:
            raise RuntimeError(ERR_INFERENCE_REQUIRES_GRAD)
        Tensor.requires_grad.fset(self, value)  # type: ignore[attr-defined]

    @property
    def _version(self) -> int:
        raise RuntimeError(ERR_INFERENCE_VERSION)
