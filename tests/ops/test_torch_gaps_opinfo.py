"""PyTorch's own OpInfo samples for the composites, view copies and torch.masked.

For each OpInfo below, every sample of `op_db` in float64 and float32 is converted
to yamlgrad and run through the same public call (`yg.<name>`, `Tensor.<name>`,
`yg.masked.<name>`), then compared with torch: values, dtypes and shapes; the
backward of a random cotangent; forward AD (`yg.autograd.forward_ad`) where the
OpInfo supports it; and gradgrad, each through the sample's
`output_process_fn_grad` and the OpInfo's gradcheck wrapper, as PyTorch's
test_ops_gradients.py does.

torch (and expecttest, which op_db needs) are imported inside the tests, so
without them this file is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

OPINFO_NAMES = (
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_tensors",
    "cartesian_prod",
    "column_stack",
    "combinations",
    "corrcoef",
    "cov",
    "cumulative_trapezoid",
    "diagflat",
    "diff",
    "dsplit",
    "dstack",
    "fliplr",
    "flipud",
    "float_power",
    "gradient",
    "hsplit",
    "vsplit",
    "tensor_split",
    "nanmean",
    "nanquantile",
    "quantile",
    "positive",
    "ravel",
    "sum_to_size",
    "trapezoid",
    "trapz",
    "unsafe_chunk",
    "__rdiv__",
    "alias_copy",
    "diagonal_copy",
    "expand_copy",
    "permute_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_copy",
    "as_strided",
    "as_strided_copy",
    "as_strided_scatter",
    "slice",
    "resolve_neg",
    "resolve_conj",
    "masked.amax",
    "masked.amin",
    "masked.cumprod",
    "masked.cumsum",
    "masked.log_softmax",
    "masked.logaddexp",
    "masked.logsumexp",
    "masked.mean",
    "masked.median",
    "masked.norm",
    "masked.normalize",
    "masked.prod",
    "masked.softmax",
    "masked.softmin",
    "masked.std",
    "masked.sum",
    "masked.var",
)

DTYPES = ("float64", "float32")
TOLERANCE = {"float64": (1e-7, 1e-9), "float32": (2e-4, 1e-4)}


def _opinfos() -> dict[str, Any]:
    pytest.importorskip("torch")
    pytest.importorskip("expecttest")
    from torch.testing._internal.common_methods_invocations import op_db

    return {(o.name, o.variant_test_name): o for o in op_db if o.name in OPINFO_NAMES}


# -- conversions ------------------------------------------------------------------


def to_yg(value: Any) -> Any:
    """A torch sample argument as yamlgrad's: tensors copied, containers mapped."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.is_contiguous() and value.storage_offset() == 0:
            array = value.detach().numpy().copy()
            return yg.tensor(array, requires_grad=value.requires_grad)
        # A view into a larger storage (a noncontiguous sample): the same storage
        # and the same strides, so that as_strided reads what torch reads.
        size = value.untyped_storage().nbytes() // value.element_size()
        storage = torch.as_strided(value.detach(), (size,), (1,), 0).numpy().copy()
        view = yg.tensor(storage).as_strided(
            tuple(value.shape), value.stride(), value.storage_offset()
        )
        return view.detach().requires_grad_(value.requires_grad)
    if isinstance(value, torch.dtype):
        return getattr(yg, str(value).removeprefix("torch."))
    if isinstance(value, (list, tuple)):
        return type(value)(to_yg(v) for v in value)
    if isinstance(value, dict):
        return {k: to_yg(v) for k, v in value.items()}
    return value


def tensors_in(value: Any) -> Iterator[Any]:
    """The tensors in a (nested) value, in order."""
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)
    elif hasattr(value, "requires_grad") and hasattr(value, "shape"):
        yield value


def yamlgrad_op(opinfo: Any) -> Callable[..., Any]:
    """The public yamlgrad callable PyTorch's OpInfo calls."""
    name = opinfo.name
    if name == "__rdiv__":
        return lambda x, *a, **k: x.__rdiv__(*a, **k)
    if name == "slice":
        return yg.ops.slice.Tensor
    if name.startswith("masked."):
        return getattr(yg.masked, name.removeprefix("masked."))
    if not hasattr(yg, name):  # a method only (sum_to_size)
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    return getattr(yg, name)


def yamlgrad_method(opinfo: Any) -> Callable[..., Any] | None:
    if opinfo.method_variant is None or not hasattr(yg, opinfo.name):
        return None
    return lambda x, *a, **k: getattr(x, opinfo.name)(*a, **k)


def output_mask_wrapper(opinfo: Any, sample: Any, ours: Callable[..., Any]) -> Any:
    """The OpInfo's gradcheck wrapper on yamlgrad's side: the masked ops' outputs
    zeroed where torch.masked's output mask is False."""
    import torch

    wrapper = opinfo.gradcheck_wrapper.__name__
    if wrapper == "gradcheck_wrapper_masked_operation":
        mask = sample.kwargs.get("mask")
        if mask is None:
            return ours
        output_mask = torch.masked._output_mask(
            opinfo.op, sample.input, *sample.args, **sample.kwargs
        )
    elif wrapper == "gradcheck_wrapper_masked_pointwise_operation":
        input_mask = sample.kwargs.get("input_mask")
        other_mask = sample.kwargs.get("other_mask")
        if input_mask is None or other_mask is None:
            return ours
        combined = torch.logical_and(input_mask, other_mask)
        output_mask = torch.masked._input_mask(
            sample.input, *sample.args, **dict(mask=combined, **sample.kwargs)
        )
    else:
        return ours
    keep = yg.tensor(output_mask.numpy())

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = ours(*args, **kwargs)
        return yg.where(keep, out, yg.zeros((), dtype=out.dtype))

    return wrapped


# -- checks -----------------------------------------------------------------------


def assert_close(ours: Any, theirs: Any, dtype: str, what: str) -> None:
    import torch

    if isinstance(theirs, torch.Tensor):
        assert tuple(ours.shape) == tuple(theirs.shape), what
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (
            what,
            ours.dtype,
            theirs.dtype,
        )
        rtol, atol = TOLERANCE.get(
            str(theirs.dtype).removeprefix("torch."), TOLERANCE[dtype]
        )
        np.testing.assert_allclose(
            ours.detach().numpy(),
            theirs.detach().numpy(force=True),  # a ZeroTensor tangent too
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=what,
        )
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), what
        for o, t in zip(ours, theirs):
            assert_close(o, t, dtype, what)
    else:
        assert ours == theirs, what


def rebuild(value: Any, leaves: Iterator[Any]) -> Any:
    """`value` with each tensor that requires grad replaced by the next leaf."""
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(rebuild(v, leaves) for v in value)
    if isinstance(value, list):
        return [rebuild(v, leaves) for v in value]
    if isinstance(value, dict):
        return {k: rebuild(v, leaves) for k, v in value.items()}
    if hasattr(value, "requires_grad") and hasattr(value, "shape"):
        return next(leaves) if value.requires_grad else value
    return value


def float_outputs(value: Any, differentiable: bool = True) -> list[Any]:
    """The floating tensors of an output (those that require grad, unless not
    `differentiable`)."""
    return [
        t
        for t in tensors_in(value)
        if str(t.dtype).split(".")[-1] in ("float64", "float32")
        and (t.requires_grad or not differentiable)
    ]


def backward(
    lib: Any,
    f: Callable[[list[Any]], Any],
    inputs: list[Any],
    cotangents: list[np.ndarray],
    create_graph: bool = False,
) -> list[Any]:
    outs = float_outputs(f(inputs))
    return list(
        lib.autograd.grad(
            outs,
            inputs,
            [lib.tensor(c) for c in cotangents],
            allow_unused=True,
            create_graph=create_graph,
        )
    )


def jvp(
    lib: Any,
    f: Callable[[list[Any]], Any],
    inputs: list[Any],
    tangents: list[np.ndarray],
) -> list[Any]:
    fwAD = lib.autograd.forward_ad
    with fwAD.dual_level():
        duals = [
            fwAD.make_dual(x.detach(), lib.tensor(t)) for x, t in zip(inputs, tangents)
        ]
        outs = float_outputs(f(duals), differentiable=False)
        return [fwAD.unpack_dual(o).tangent for o in outs]


def gradgrad(
    lib: Any,
    f: Callable[[list[Any]], Any],
    inputs: list[Any],
    cotangents: list[np.ndarray],
) -> list[Any]:
    """The gradient of <d<f, u>/dx, v> with respect to the inputs x."""
    grads = backward(lib, f, inputs, cotangents, create_graph=True)
    total = None
    for i, g in enumerate(grads):
        if g is None or not g.requires_grad:
            continue
        v = np.random.default_rng(7 + i).standard_normal(tuple(g.shape))
        term = (g * lib.tensor(v).to(g.dtype)).sum()
        total = term if total is None else total + term
    if total is None:
        return [None] * len(inputs)
    return list(lib.autograd.grad(total, inputs, allow_unused=True))


def assert_grads(ours: list[Any], theirs: list[Any], dtype: str, what: str) -> None:
    assert len(ours) == len(theirs), what
    for o, t in zip(ours, theirs):
        if t is None:
            assert o is None or not o.detach().numpy().any(), what
        elif o is None:
            assert not t.detach().numpy(force=True).any(), what
        else:
            assert_close(o, t, dtype, what)


def skipped(opinfo: Any, cls_name: str, test_name: str, dtype: str) -> bool:
    """Whether the OpInfo skips (or expects to fail) that test of PyTorch's on
    the CPU in `dtype`: those checks of torch's own results are left out."""
    import torch

    for d in opinfo.decorators:
        if getattr(d, "cls_name", None) != cls_name:
            continue
        if getattr(d, "test_name", None) != test_name:
            continue
        if getattr(d, "device_type", None) not in (None, "cpu"):
            continue
        dtypes = getattr(d, "dtypes", None)
        if dtypes is None or getattr(torch, dtype) in dtypes:
            return True
    return False


def check_sample(opinfo: Any, sample: Any, dtype: str, method: bool) -> None:
    import torch

    rng = np.random.default_rng(0)
    theirs_op = opinfo.method_variant if method else opinfo.op
    ours_op = yamlgrad_method(opinfo) if method else yamlgrad_op(opinfo)
    t_args = (sample.input, sample.args, sample.kwargs)
    y_args = to_yg(t_args)
    what = f"{opinfo.name}{' (method)' if method else ''} {dtype} {sample}"
    if any(str(t.dtype) == "torch.float32" for t in tensors_in(t_args)):
        dtype = "float32"  # a float32 operand: float32's tolerance

    # Forward: values, dtypes, shapes.
    with torch.no_grad():
        expected = theirs_op(sample.input, *sample.args, **sample.kwargs)
    with yg.no_grad():
        got = ours_op(y_args[0], *y_args[1], **y_args[2])
    assert_close(got, expected, dtype, "forward " + what)
    t_inputs = [t for t in tensors_in(t_args) if t.requires_grad]
    y_inputs = [t for t in tensors_in(y_args) if t.requires_grad]
    if not opinfo.supports_autograd or not t_inputs:
        return

    if skipped(opinfo, "TestBwdGradients", "test_fn_grad", dtype):
        return  # PyTorch's own gradient fails gradcheck (as_strided_scatter)
    process = sample.output_process_fn_grad
    wrapper = opinfo.gradcheck_wrapper
    ours_wrapped = output_mask_wrapper(opinfo, sample, ours_op)

    def theirs(leaves: list[Any]) -> Any:
        x, args, kwargs = rebuild(t_args, iter(leaves))
        return process(wrapper(theirs_op, x, *args, **kwargs))

    def ours(leaves: list[Any]) -> Any:
        x, args, kwargs = rebuild(y_args, iter(leaves))
        return process(ours_wrapped(x, *args, **kwargs))

    t_outs = float_outputs(theirs(t_inputs))
    y_outs = float_outputs(ours(y_inputs))
    assert len(t_outs) == len(y_outs), "outputs " + what
    for o, t in zip(y_outs, t_outs):
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__, (
            "grad_fn " + what,
            o.grad_fn,
            t.grad_fn,
        )
    if not t_outs:
        return

    np_dtype = np.dtype(dtype)
    cotangents = [rng.standard_normal(tuple(t.shape)).astype(np_dtype) for t in t_outs]
    assert_grads(
        backward(yg, ours, y_inputs, cotangents),
        backward(torch, theirs, t_inputs, cotangents),
        dtype,
        "backward " + what,
    )
    if opinfo.supports_forward_ad and not skipped(
        opinfo, "TestFwdGradients", "test_forward_mode_AD", dtype
    ):
        tangents = [
            rng.standard_normal(tuple(t.shape)).astype(np_dtype) for t in t_inputs
        ]
        assert_grads(
            jvp(yg, ours, y_inputs, tangents),
            jvp(torch, theirs, t_inputs, tangents),
            dtype,
            "forward AD " + what,
        )
    if (
        opinfo.supports_gradgrad
        and dtype == "float64"
        and not skipped(opinfo, "TestBwdGradients", "test_fn_gradgrad", dtype)
    ):
        assert_grads(
            gradgrad(yg, ours, y_inputs, cotangents),
            gradgrad(torch, theirs, t_inputs, cotangents),
            dtype,
            "gradgrad " + what,
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", OPINFO_NAMES)
def test_opinfo_samples(name: str, dtype: str) -> None:
    import torch

    opinfos = [o for (n, _), o in _opinfos().items() if n == name]
    assert opinfos, f"no OpInfo named {name}"
    checked = 0
    for opinfo in opinfos:
        for method in (False, True):
            if method and yamlgrad_method(opinfo) is None:
                continue
            samples = opinfo.sample_inputs(
                "cpu", getattr(torch, dtype), requires_grad=opinfo.supports_autograd
            )
            for sample in samples:
                check_sample(opinfo, sample, dtype, method)
                checked += 1
    assert checked
