"""`yg.utils.checkpoint`: trade compute for memory by rerunning a forward in backward.

`checkpoint(fn, *args, use_reentrant=...)` runs `fn` without keeping the values
its ops save for backward, and reruns it when backward needs them. The two
variants are PyTorch's:

* **reentrant** (`use_reentrant=True`, still the default when None is passed,
  with PyTorch's warning): `fn` runs under no_grad inside one autograd Function
  (`CheckpointFunctionBackward`); its backward reruns `fn` with grad mode on and
  calls `autograd.backward` on the rerun's outputs (a backward inside the
  backward, hence the name). It works with `.backward()` only: `autograd.grad`
  and `backward(inputs=...)` cannot see the inner backward's gradients.
* **non-reentrant** (`use_reentrant=False`): `fn` runs with grad mode on under
  `saved_tensors_hooks` whose pack hook keeps a placeholder (`_Holder`) instead of
  each saved tensor. The graph is the ordinary one. The first unpack in a graph
  task reruns `fn` under a second pair of hooks that files each recomputed saved
  tensor under its placeholder (stopping the rerun once the last one is filed,
  with `early_stop`), and checks that the shapes, dtypes and devices match the
  forward's.

Both restore the default generator's state for the rerun (`preserve_rng_state`),
so dropout draws the same mask twice, and put the surrounding state back after.
"""

from __future__ import annotations

import contextlib
import uuid
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from yamlgrad.runtime import factories
from yamlgrad.runtime.autograd import backward as autograd_backward
from yamlgrad.runtime.autograd.function import Function
from yamlgrad.runtime.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from yamlgrad.runtime.autograd.graph import saved_tensors_hooks
from yamlgrad.runtime.autograd.node import task_state
from yamlgrad.runtime.autograd.saved_variable import SavedVariable
from yamlgrad.runtime.autograd.tensor import Tensor

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
]


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Detached copies of the tensors in `inputs`, keeping their requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None",
            stacklevel=2,
        )


@contextlib.contextmanager
def _fork_rng(state: Tensor | None) -> Iterator[None]:
    """Run the block from generator state `state` (None: as is), then restore."""
    if state is None:
        yield
        return
    surrounding = factories.get_rng_state()
    factories.set_rng_state(state)
    try:
        yield
    finally:
        factories.set_rng_state(surrounding)


def _is_checkpoint_valid() -> bool:
    """False inside a graph task that computes only some gradients (autograd.grad)."""
    return task_state.should_execute is None


class CheckpointFunction(Function):
    """The reentrant variant: forward under no_grad, a rerun and backward in backward."""

    @staticmethod
    def forward(
        ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, *args: Any
    ) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.fwd_cpu_state = factories.get_rng_state() if preserve_rng_state else None
        # Non-tensor inputs stay in ctx; tensors are saved (checked for in-place
        # changes) and put back in their places in backward.
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with _fork_rng(ctx.fwd_cpu_state):
            detached_inputs = detach_variable(tuple(inputs))
            # As the inputs did in forward (a tensor an enclosing checkpoint
            # gives back comes detached).
            for inp, needed in zip(detached_inputs, ctx.needs_input_grad[2:]):
                if isinstance(inp, Tensor) and needed and not inp.requires_grad:
                    inp.requires_grad = True
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for output, grad in zip(outputs, args):
            if isinstance(output, Tensor) and output.requires_grad:
                outputs_with_grad.append(output)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError(
                "none of output has requires_grad=True,"
                " this checkpoint() is not necessary"
            )
        autograd_backward(outputs_with_grad, args_with_grad)
        grads = tuple(
            inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs
        )
        return (None, None) + grads


def noop_context_fn() -> tuple[contextlib.AbstractContextManager[Any], ...]:
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved."""


_enable_checkpoint_early_stop: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Override `early_stop` of every non-reentrant checkpoint run inside the block."""
    global _enable_checkpoint_early_stop
    previous = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = previous


def _default_meta_extractor(x: Tensor) -> dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns: dict[str, Callable[[Tensor], Any]] = {
    "default": _default_meta_extractor,
    "none": lambda _: None,
}


class _Handle:
    """The key a recomputed tensor is filed under, one per holder and graph task."""


class _Holder:
    """What the forward's pack hook keeps in place of a saved tensor."""

    def __init__(self) -> None:
        self.handles: dict[int, _Handle | None] = {}


class _StopRecomputationError(Exception):
    """Raised by the recomputation's pack hook once every holder is filled."""


class _CheckpointFrame:
    """One non-reentrant checkpoint call: its inputs, holders and recomputations."""

    def __init__(
        self,
        recompute_fn: Callable[..., None],
        early_stop: bool,
        metadata_fn: Callable[[Tensor], Any],
    ) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args: list[Any] = []
        self.holder_refs: list[weakref.ref[_Holder]] = []
        self.forward_metadata: list[Any] = []
        self.recomputed: defaultdict[int, weakref.WeakKeyDictionary[_Handle, Tensor]]
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.refilled: defaultdict[int, int] = defaultdict(int)
        self.refill_done: defaultdict[int, bool] = defaultdict(bool)
        self.forward_done = False
        self.skip_refill_checks = False

    def get_inputs(self) -> list[Any]:
        return [
            _unpack_input(arg) if isinstance(arg, tuple) else arg
            for arg in self.saved_args
        ]

    def check_refill_matches(self, gid: int) -> None:
        if self.skip_refill_checks:
            return
        if len(self.holder_refs) != self.refilled[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holder_refs)}\n"
                "Number of tensors saved during recomputation: "
                f"{self.refilled[gid]}.\n"
                f"{_DEBUG_TIP}"
            )
        mismatched = ""
        for idx, weak_holder in enumerate(self.holder_refs):
            holder = weak_holder()
            if holder is None:
                continue
            recomputed = self.recomputed[gid][holder.handles[gid]]  # type: ignore[index]
            first_meta, rerun_meta = self.forward_metadata[idx], self.metadata_fn(
                recomputed
            )
            if first_meta != rerun_meta:
                mismatched += (
                    f"tensor at position {idx}:\n"
                    f"saved metadata: {first_meta}\n"
                    f"recomputed metadata: {rerun_meta}\n"
                )
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched}.\n"
                f"{_DEBUG_TIP}"
            )


def _unpack_input(saved: tuple[SavedVariable, bool]) -> Tensor:
    """A saved input for the rerun, requiring grad as the input did: an enclosing
    checkpoint's unpack gives back a detached recomputed value, and the ops of
    the rerun must record (and save) as they did in the forward."""
    variable, requires_grad = saved
    tensor = variable.unpack()
    if requires_grad and not tensor.requires_grad:
        tensor = tensor.detach().requires_grad_(True)
    return tensor


_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.
"""


class _RefillHooks(saved_tensors_hooks):
    """During the rerun: file each saved tensor under the next holder's handle."""

    def __init__(self, frame_ref: weakref.ref[_CheckpointFrame], gid: int) -> None:
        def pack_hook(x: Tensor) -> Tensor:
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            assert frame is not None, "Internal error: target_frame reference is None"
            index = frame.refilled[gid]
            frame.refilled[gid] += 1
            if index >= len(frame.holder_refs):
                if not frame.forward_done:
                    # A backward inside the checkpointed function, without early stop.
                    frame.skip_refill_checks = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n"
                    f"{_DEBUG_TIP}"
                )
            holder = frame.holder_refs[index]()
            if holder is not None:  # None: a partial backward already freed it
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.refilled[gid] == len(frame.holder_refs):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _HolderHooks(saved_tensors_hooks):
    """During the forward: a holder per saved tensor; its first unpack reruns."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x: Tensor) -> _Holder:
            holder = _Holder()
            frame.holder_refs.append(weakref.ref(holder))
            with no_grad():
                frame.forward_metadata.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder: _Holder) -> Tensor:
            gid = task_state.graph_task_id
            if gid == -1:  # unpacked outside backward
                gid = uuid.uuid4().int
            if not frame.refill_done[gid]:
                # The inputs first: unpacking one may rerun an enclosing checkpoint.
                args = frame.get_inputs()
                try:
                    with _RefillHooks(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.refill_done[gid] = True
                frame.check_refill_matches(gid)
            if holder.handles.get(gid) is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor "
                    "that was already unpacked once. If you are calling "
                    "ctx.saved_tensors in backward, make sure to do so only once. "
                    "Otherwise please open an issue with details on your use case."
                )
            ret = frame.recomputed[gid][holder.handles[gid]]  # type: ignore[index]
            holder.handles[gid] = None
            return ret

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(
    function: Callable[..., Any],
    preserve_rng_state: bool,
    context_fn: Callable[[], tuple[Any, Any]],
    determinism_check: str,
    early_stop: bool,
    *args: Any,
    **kwargs: Any,
) -> Any:
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(
            "determinism_check should be one of "
            f"{list(_allowed_determinism_checks_to_fns.keys())}, "
            f"but got {determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = factories.get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs: Any) -> None:
        with _fork_rng(fwd_cpu_state), recompute_context:
            function(*inputs, **kwargs)

    if not is_grad_enabled():
        return function(*args, **kwargs)
    stop = _enable_checkpoint_early_stop
    frame = _CheckpointFrame(
        recompute_fn,
        early_stop if stop is None else stop,
        _allowed_determinism_checks_to_fns[determinism_check],
    )
    # Tensor inputs are saved as a node saves them: an in-place change before
    # backward fails the recomputation with autograd's error.
    frame.saved_args = [
        (
            (SavedVariable(arg, is_output=False), arg.requires_grad)
            if isinstance(arg, Tensor)
            else arg
        )
        for arg in args
    ]
    suppressed = True
    with _HolderHooks(frame), forward_context:
        ret = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by "
            "context_fn suppressed an exception raised during the "
            "checkpointed forward. This is not supported because checkpoint "
            "cannot return a value for a failed forward."
        )
    frame.forward_done = True
    return ret


_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be "
    "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
    "without use_reentrant will raise an exception. use_reentrant=False is "
    "recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args, **kwargs)`, its saved values recomputed in backward.

    `preserve_rng_state=True` (a keyword) reruns from the forward's generator
    state. Keyword arguments for `function` need `use_reentrant=False`.
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
    reentrant = use_reentrant is not False
    keep_rng = _take_preserve_rng_state(kwargs, refuse_others=reentrant)
    if reentrant:
        if debug is not False or context_fn is not noop_context_fn:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when "
                "use_reentrant=False."
            )
        return CheckpointFunction.apply(function, keep_rng, *args)
    if debug:
        # PyTorch's debug mode logs the operators of both runs through its
        # dispatcher; yamlgrad has no such log, so it cannot offer the mode.
        raise NotImplementedError(
            "checkpoint(debug=True) needs an operator log yamlgrad does not keep"
        )
    return _checkpoint_without_reentrant(
        function, keep_rng, context_fn, determinism_check, early_stop, *args, **kwargs
    )


def _take_preserve_rng_state(kwargs: dict[str, Any], refuse_others: bool) -> bool:
    """Remove `preserve_rng_state` (default True) from `kwargs` and return it;
    if `refuse_others`, any keyword left is an error."""
    preserve = bool(kwargs.pop("preserve_rng_state", True))
    if refuse_others and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return preserve


_SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
    "parameter should be passed explicitly. "
    "In version 2.9 we will raise an exception if use_reentrant "
    "is not passed. use_reentrant=False is "
    "recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)


def _chain(stages: list[Any]) -> Callable[[Any], Any]:
    """One function applying `stages` in order."""

    def run(value: Any) -> Any:
        for stage in stages:
            value = stage(value)
        return value

    return run


def checkpoint_sequential(
    functions: Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run `functions` in order, in `segments` runs of len // segments of them
    (the last run takes the rest); every run but the last is checkpointed, the
    last one's activations being needed by backward at once anyway."""
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_WARNING, stacklevel=2)
    preserve = _take_preserve_rng_state(kwargs, refuse_others=True)
    from yamlgrad.runtime.nn.module import Sequential

    stages = list(
        functions.children() if isinstance(functions, Sequential) else functions
    )
    size = len(stages) // segments
    cut = size * (segments - 1)  # where the plain run starts
    value = input
    for first in range(0, cut, size):  # size 0: range's ValueError, as torch
        value = checkpoint(
            _chain(stages[first : first + size]),
            value,
            use_reentrant=use_reentrant is not False,
            preserve_rng_state=preserve,
        )
    return _chain(stages[cut:])(value)
