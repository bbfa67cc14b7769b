"""Every public name is a YAML op, or is listed here with why it is not.

A differentiable op added by hand (not through derivatives.yaml) fails this test
until it gets an entry or a reason below. Also: non-contiguous inputs give the same
values and gradients as contiguous ones, for every entry's samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from yamlgrad.runtime import linalg_functional
from support import (
    DIFFERENTIABLE,
    call,
    float_outputs,
    op_id,
    sample_inputs,
    slot_array,
)
from yamlgrad.generated import VariableType
from yamlgrad.runtime import devices, facade, factories, sampling, settings
from yamlgrad.runtime import tensor_methods, torch_utilities, window_functions
from yamlgrad.runtime.nn import functional_aten, functional_cells, functional_rnn
from yamlgrad.tools.model import DifferentiabilityInfo

FACTORY = "a factory: makes a leaf, records nothing"
NOT_FROM_YAML = {
    **{name: FACTORY for name in factories.__all__},
    **{
        name: "random state, not an op"
        for name in (
            "Generator",
            "default_generator",
            "manual_seed",
            "seed",
            "initial_seed",
        )
    },
    **{
        name: "a dtype"
        for name in (
            "dtype",
            "float16",
            "float32",
            "float64",
            "half",
            "float",
            "double",
            "int8",
            "int16",
            "int32",
            "int64",
            "int",
            "long",
            "short",
            "uint8",
            "bool",
            "complex64",
            "complex128",
            "cfloat",
            "cdouble",
            "complex32",
            "chalf",
        )
    },
    **{
        name: "a memory format (a layout of strides), not an op"
        for name in (
            "memory_format",
            "contiguous_format",
            "preserve_format",
            "channels_last",
            "channels_last_3d",
        )
    },
    **{
        name: "grad mode, not an op"
        for name in (
            "no_grad",
            "enable_grad",
            "set_grad_enabled",
            "is_grad_enabled",
            "inference_mode",
            "is_inference_mode_enabled",
        )
    },
    **{name: "devices: the CPU, and no CUDA" for name in devices.__all__},
    **{
        name: "samples, constants to autograd: drawn from a Generator"
        for name in sampling.__all__
    },
    **{
        name: "anomaly mode, not an op"
        for name in (
            "is_anomaly_enabled",
            "is_anomaly_check_nan_enabled",
            "set_detect_anomaly",
        )
    },
    **{name: "random state, not an op" for name in ("get_rng_state", "set_rng_state")},
    **{
        name: "a comparison (a bool, or a mask outside any graph), or a method of "
        "Tensor's own as torch offers it as a function"
        for name in tensor_methods.__all__
    },
    "layout": "the layout type: strided is the only one",
    "strided": "the layout of every tensor",
    **{
        name: "torch.functional's Python over the YAML's _unique2, unique_dim and "
        "unique_consecutive: returns only the outputs asked for"
        for name in ("unique", "unique_consecutive")
    },
    **{
        name: "Python over the YAML's linalg ops, as torch/functional.py and "
        "torch/_lowrank.py write it (runtime/linalg_functional.py)"
        for name in linalg_functional.__all__
    },
    **{
        name: "torch.functional's Python signature (the tensors as arguments, or "
        "one sequence) over the YAML's composite of the same name"
        for name in (
            "atleast_1d",
            "atleast_2d",
            "atleast_3d",
            "broadcast_tensors",
            "cartesian_prod",
        )
    },
    "histogram": (
        "torch.histogram's bins as a count over a range, or edges, over the YAML's "
        "histogram.bins_tensor entry"
    ),
    "unravel_index": "integer arithmetic on indices, outside any graph",
    "chain_matmul": "the deprecated spelling of linalg.multi_dot, with its warning",
    **{
        name: "a factory, a type fact, or a removed function raising PyTorch's "
        "text (runtime/torch_utilities.py)"
        for name in torch_utilities.__all__
    },
    **{name: FACTORY for name in window_functions.__all__},
    "gradient": (
        "torch.gradient's spacing (a number, numbers or coordinate tensors, which "
        "no one schema spells) over recorded slices, differences and cat"
    ),
    "masked": "a namespace: torch.masked's reductions as composites of YAML ops",
    "Tensor": "the tensor type",
    "set_printoptions": "how tensors print",
    "get_default_dtype": "the default floating dtype, not an op",
    "set_default_dtype": "the default floating dtype, not an op",
    "Size": "a shape",
    "autograd": "a namespace: backward, grad, Function, gradcheck, ...",
    "ops": "a namespace of the YAML's own overloads",
    "linalg": "a namespace of YAML ops under torch.linalg's names",
    "special": "a namespace: the YAML's special_* ops under torch.special's names",
    "nn": "a namespace: nn.functional.pad is the YAML's pad",
    "viz": "a module: make_dot draws the autograd graph, records nothing",
    "optim": "a namespace: optimisers and lr_scheduler, updates under no_grad",
    "utils": "a namespace: utils.data's datasets, samplers and DataLoader",
    "save": "writes a state dict as .npz + JSON, records nothing",
    "load": "reads what save wrote, records nothing",
    "testing": "a module: finite-difference checks of a YAML file's ops",
    "func": "a namespace: vmap and the torch.func transforms over the YAML's ops",
    "distributions": "a namespace: probability distributions over the YAML's ops",
    "compile": "traces YAML ops into one generated forward and backward",
    "tensordot": (
        "torch.tensordot's Python signature (dims=2 or a pair of lists) over the "
        "YAML's tensordot entry"
    ),
    "block_diag": (
        "torch.block_diag's Python signature (the tensors as arguments) over the "
        "YAML's block_diag entry"
    ),
    "cdist": (
        "torch.cdist's Python signature (compute_mode a string) over the YAML's "
        "cdist entry"
    ),
    **{
        name: "torch's binding of nn.functional's Python function of the same name"
        for name in ("cosine_similarity", "pairwise_distance")
    },
    "ctc_loss": (
        "nn.functional's ctc_loss with the reduction as PyTorch's enum, over the "
        "YAML's _ctc_loss entry"
    ),
    "kl_div": "nn.functional's kl_div with the reduction as PyTorch's enum",
    **{
        name: "torch's binding of nn.functional's function of the same name"
        for name in facade.NN_FUNCTIONAL_BINDINGS
    },
    **{
        name: "an nn op with ATen's top-level signature over nn.functional's code "
        "(runtime/nn/functional_aten.py)"
        for name in functional_aten.__all__
    },
    **{
        name: "a recurrent cell's step over the YAML's fused cells or linears, as "
        "nn's cells take it (runtime/nn/functional_cells.py)"
        for name in functional_cells.__all__
    },
    **{
        name: "a recurrent layer over flat weights, as nn's layers run it "
        "(runtime/nn/functional_rnn.py)"
        for name in functional_rnn.__all__
    },
    "fft": (
        "a namespace: torch.fft's transforms, composites over the YAML's _fft_r2c, "
        "_fft_c2r and _fft_c2c entries"
    ),
    **{
        name: f"torch.{name}'s Python function over the YAML's _fft_* entries"
        for name in ("stft", "istft")
    },
    "from_dask": "wraps a Dask array as a tensor, lazy, records nothing",
    "compute": "evaluates lazy tensors in one pass, records nothing",
    "persist": "keeps a lazy tensor's chunks computed, records nothing",
    **{name: "a process-wide setting, not an op" for name in settings.__all__},
    **{name: "a constant" for name in ("inf", "nan", "pi", "e", "newaxis")},
    **{
        name: "dtype facts and promotion, not an op"
        for name in ("finfo", "iinfo", "promote_types", "result_type", "can_cast")
    },
    **{
        name: "mixed precision: without CUDA, a region that computes as before"
        for name in ("autocast", "is_autocast_enabled", "amp")
    },
    "vmap": "torch.func.vmap, also at the top level as in torch",
    "types": "a module of type aliases",
    "overrides": "a module: the __torch_function__ protocol's entry points",
    "install_as_torch": "the import hook: torch and torch.* as yamlgrad's modules",
}


def test_every_public_name_is_a_yaml_op_or_explained() -> None:
    unexplained = sorted(
        set(yg.__all__) - set(VariableType.__all__) - set(NOT_FROM_YAML)
    )
    assert unexplained == []
    stale = sorted(set(NOT_FROM_YAML) - set(yg.__all__))
    assert stale == []


def _contiguous(array: np.ndarray) -> np.ndarray:
    return np.array(array, order="C", copy=True)


def _non_contiguous(array: np.ndarray) -> np.ndarray:
    """The same values in memory that is not C-contiguous (every other element)."""
    if array.ndim == 0:
        return array
    spread = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), dtype=array.dtype)
    view = spread[..., ::2]
    view[...] = array
    assert array.size <= 1 or not view.flags.c_contiguous
    return view


# `_reshape_alias` and `as_strided` take strides as an argument: they address the
# input's memory, so another layout is another tensor (as in PyTorch);
# view_as_complex refuses pairs that are not adjacent in memory, as PyTorch does.
LAYOUT_BOUND = ("_reshape_alias", "as_strided", "as_strided_copy", "view_as_complex")
LAYOUT_BLIND = tuple(i for i in DIFFERENTIABLE if i.func.name not in LAYOUT_BOUND)


@pytest.mark.parametrize("info", LAYOUT_BLIND, ids=op_id)
def test_non_contiguous_inputs_give_the_same_values_and_gradients(
    info: DifferentiabilityInfo,
) -> None:
    rng = np.random.default_rng(3)
    for sample in info.samples:
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        results = []
        for layout in (_contiguous, _non_contiguous):
            leaves = {
                s: yg.from_numpy(layout(slot_array(kwargs, s).copy())).requires_grad_()
                for s in slots
            }
            outputs = float_outputs(call(info, kwargs, leaves), info)
            seeds = [yg.ones_like(o) for o in outputs]  # complex for a complex one
            yg.autograd.backward(outputs, seeds)
            results.append(
                (
                    [o.detach().numpy().copy() for o in outputs],
                    [leaves[s].grad.numpy().copy() for s in slots],
                )
            )
        (values, grads), (values_nc, grads_nc) = results
        for a, b in zip(values + grads, values_nc + grads_nc):
            np.testing.assert_allclose(
                a, b, rtol=1e-12, atol=1e-14, err_msg=str(sample.loc)
            )


@pytest.mark.parametrize(
    "dims, a_shape, b_shape",
    [
        (2, (3, 4, 5), (4, 5, 2)),
        (([1, 2], [0, 1]), (3, 4, 5), (4, 5, 2)),
        (([0], [1]), (3, 4), (2, 3)),
        (0, (2, 3), (4,)),
    ],
    ids=["2", "pairs", "one-pair", "0"],
)
def test_tensordot_matches_torch(dims: object, a_shape: tuple, b_shape: tuple) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a0, b0 = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    a, b = yg.tensor(a0, requires_grad=True), yg.tensor(b0, requires_grad=True)
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    out, ref = yg.tensordot(a, b, dims), torch.tensordot(ta, tb, dims)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    assert out.grad_fn.name() == type(ref.grad_fn).__name__
    cotangent = rng.standard_normal(tuple(ref.shape))
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


# fmt: off
KEYWORD_CALLS = [
    ("abs", lambda m, x, y: m.abs(input=x)),
    ("sum_dim", lambda m, x, y: m.sum(input=x, dim=1, keepdim=True)),
    ("add_alpha", lambda m, x, y: m.add(input=x, other=y, alpha=2)),
    ("where", lambda m, x, y: m.where(x > 0, input=x, other=y)),
    ("clamp", lambda m, x, y: m.clamp(input=x, min=-0.5)),
    ("pow_scalar", lambda m, x, y: m.pow(input=x, exponent=2)),
    ("matmul", lambda m, x, y: m.matmul(input=x, other=y.T)),
]
# fmt: on


@pytest.mark.parametrize(
    "call", [c for _, c in KEYWORD_CALLS], ids=[n for n, _ in KEYWORD_CALLS]
)
def test_input_keyword_as_torch(call: object) -> None:
    """A function's first tensor is `input` in Python (the schema's `self`), as
    PyTorch's Python signatures name it: values and gradients as torch's."""
    torch = pytest.importorskip("torch")
    _same_as_torch(torch, lambda ours: call(yg, *ours), lambda theirs: call(torch, *theirs))  # type: ignore[operator]


def _same_as_torch(torch: Any, ours_call: Any, theirs_call: Any) -> None:
    """Two (2, 3) float64 leaves each side: the output, its node's name and
    each leaf's gradient (or its absence) are torch's."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    ours = [yg.tensor(v, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    out, ref = ours_call(ours), theirs_call(theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    assert out.grad_fn.name() == type(ref.grad_fn).__name__
    out.sum().backward()
    ref.sum().backward()
    for x, t in zip(ours, theirs):
        if t.grad is None:
            assert x.grad is None
        else:
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_overload_error_lists_input_as_torch_names_it() -> None:
    with pytest.raises(TypeError) as caught:
        yg.sum(inp=yg.ones(2))
    text = str(caught.value)
    assert "(Tensor input, *, ScalarType? dtype=None)" in text
    assert "Tensor self" not in text


# fmt: off
SCHEMA_KEYWORD_CALLS = [
    ("abs", lambda ops, x, y: ops.abs.default(self=x)),
    ("sum_dim", lambda ops, x, y: ops.sum.dim_IntList(self=x, dim=[1], keepdim=True)),
    ("add_alpha", lambda ops, x, y: ops.add.Tensor(self=x, other=y, alpha=2)),
    ("mul_positional", lambda ops, x, y: ops.mul.Tensor(x, other=y)),
    ("where", lambda ops, x, y: ops.where.self(x > 0, self=x, other=y)),
]
# fmt: on


@pytest.mark.parametrize(
    "call",
    [c for _, c in SCHEMA_KEYWORD_CALLS],
    ids=[n for n, _ in SCHEMA_KEYWORD_CALLS],
)
def test_ops_overloads_take_schema_names_as_torch_ops(call: object) -> None:
    """`yg.ops.<name>.<overload>` is called by the schema's names (`self=`), as
    `torch.ops.aten` is, while `yg.<name>` takes Python's (`input=`)."""
    torch = pytest.importorskip("torch")
    _same_as_torch(
        torch,
        lambda ours: call(yg.ops, *ours),  # type: ignore[operator]
        lambda theirs: call(torch.ops.aten, *theirs),  # type: ignore[operator]
    )


def test_ops_overload_without_self_has_torchs_error() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        torch.ops.aten.abs.default(input=torch.ones(2))
    with pytest.raises(RuntimeError) as ours:
        yg.ops.abs.default(input=yg.ones(2))
    assert str(ours.value) == str(theirs.value)
