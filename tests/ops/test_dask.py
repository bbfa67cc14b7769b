"""Every entry not marked `backends: [numpy]`, through its public op on Dask arrays.

For each YAML sample (float64), every array argument becomes a Dask array (two
chunks along its first dim where it has two or more rows) in a tensor made by
`yg.from_dask`; the entry's generated function runs on them, and a backward
with a Dask cotangent follows. A scheduler callback counts the graphs Dask
runs: the forward and the backward must run none (nothing computes until
asked). Then one `yg.compute` evaluates the outputs and every gradient, which
must agree with the same calls on numpy tensors. Random ops (their draws come
from a numpy Generator) are left out. An entry that runs another entry marked
numpy-only (a composite's body, a kernel or a backward helper calling it) gets
that entry's refusal and is skipped, naming it: it runs here once that entry is
ported. The few entries whose samples have an output shape read from the data
are expected failures, each with its cause (KERNEL_CAUSES).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
from support import INFOS, compute_counter, op_id
from yamlgrad.generated import VariableType
from yamlgrad.runtime.backend import ERR_NUMPY_ONLY
from yamlgrad.testing import (
    build_args,
    float_outputs,
    inplace_safe,
    python_names,
    random_like,
    sample_inputs,
    slot_array,
    structured,
    wrapper,
)
from yamlgrad.tools.model import DifferentiabilityInfo

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

ON_DASK = tuple(i for i in INFOS if not i.numpy_only and not i.random)
NUMPY_ONLY = {i.func.qualified_name: i.numpy_only for i in INFOS if i.numpy_only}

# Entries that pass on array_api_strict (eager) but not on Dask (lazy), each for
# a cause in its kernel or backward helper, with the error that shows it. Those
# left are limits, not causes to fix: a sample whose output shape is read from
# the data (one_hot without num_classes; repeat_interleave, whose length is the
# sum of the repeats unless output_size gives it:
# test_repeat_interleave_with_output_size_stays_lazy).
KERNEL_CAUSES = {
    "one_hot": (NotImplementedError, "num_classes=-1: the shape is read from the data"),
    "repeat_interleave_Tensor": (
        NotImplementedError,
        "a data-dependent shape: give output_size",
    ),
    "repeat_interleave_self_Tensor": (
        NotImplementedError,
        "a data-dependent shape: give output_size",
    ),
    # Complex samples: the lazy mean casts its complex sum to the real float
    # dtype, and var/std's gradient of a complex input misses the conjugate on
    # Dask's path (numpy's path matches torch).
    "mean": (RuntimeError, "complex samples: the lazy mean's result is real"),
    "mean_dim": (RuntimeError, "complex samples: the lazy mean's result is real"),
    "var_correction": (AssertionError, "complex samples: no conjugate on Dask"),
    "std_correction": (AssertionError, "complex samples: no conjugate on Dask"),
}


def _entries() -> list[Any]:
    return [
        (
            pytest.param(
                i,
                marks=pytest.mark.xfail(
                    raises=KERNEL_CAUSES[op_id(i)][0],
                    reason=KERNEL_CAUSES[op_id(i)][1],
                ),
            )
            if op_id(i) in KERNEL_CAUSES
            else i
        )
        for i in ON_DASK
    ]


def _lazy(array: np.ndarray) -> Any:
    """A Dask array over `array`: two chunks along dim 0 where it has two rows."""
    chunks = tuple(
        -(-n // 2) if d == 0 and n > 1 else max(n, 1) for d, n in enumerate(array.shape)
    )
    return da.from_array(array, chunks=chunks)


def _run(
    info: DifferentiabilityInfo,
    kwargs: dict[str, Any],
    slots: list[str],
    make: Any,
    cotangents: list[np.ndarray] | None,
) -> tuple[list[yg.Tensor], list[yg.Tensor | None]]:
    """The entry's outputs on tensors made by `make`, and the gradients of its
    differentiable inputs after a backward with `cotangents` (made alike)."""
    leaves = {s: make(slot_array(kwargs, s)).requires_grad_() for s in slots}
    args = structured(info, inplace_safe(info, build_args(kwargs, leaves, make)))
    outputs = float_outputs(wrapper(info, VariableType)(**python_names(args)), info)
    live = [i for i, o in enumerate(outputs) if o.requires_grad]
    if live and cotangents is not None:
        yg.autograd.backward(
            [outputs[i] for i in live], [make(cotangents[i]) for i in live]
        )
    return outputs, [leaves[s].grad for s in slots]


def _numpy_tensor(array: np.ndarray) -> yg.Tensor:
    return yg.tensor(array)


def _dask_tensor(array: np.ndarray) -> yg.Tensor:
    return yg.from_dask(_lazy(array))


def _skip_if_blocked(info: DifferentiabilityInfo, error: NotImplementedError) -> None:
    """An entry that runs another entry marked numpy-only (its composite
    body, a kernel or a backward helper calling it) gets that entry's refusal:
    it runs on Dask once that one is ported."""
    op = str(error).partition(":")[0]
    reason = NUMPY_ONLY.get(op)
    refusal = ERR_NUMPY_ONLY.format(
        op=op, backend="dask", backends="numpy", reason=reason
    )
    if op != info.func.qualified_name and op in NUMPY_ONLY and str(error) == refusal:
        pytest.skip(f"runs {op}, which is marked numpy-only: {NUMPY_ONLY[op]}")


@pytest.mark.parametrize("info", _entries(), ids=op_id)
def test_entry_on_dask_computes_once_and_matches_numpy(
    info: DifferentiabilityInfo,
) -> None:
    rng = np.random.default_rng(0)
    for index, sample in enumerate(info.samples):
        where = f"{info.func} sample {index}"
        kwargs, slots = sample_inputs(info, sample, rng, np.float64)
        want, want_grads = _run(info, kwargs, slots, _numpy_tensor, None)
        cotangents = [random_like(rng, o) for o in want]
        try:
            want, want_grads = _run(info, kwargs, slots, _numpy_tensor, cotangents)
        except NotImplementedError as error:
            if not str(error).startswith("the derivative for "):
                raise
            cotangents = None  # no gradient in PyTorch either (acosh_): forward only
        with compute_counter() as counter:
            try:
                got, got_grads = _run(info, kwargs, slots, _dask_tensor, cotangents)
            except NotImplementedError as error:
                _skip_if_blocked(info, error)
                raise
            assert counter.count == 0, f"{where}: the forward or backward computed"
            values = yg.compute(*got, *got_grads)
            assert counter.count <= 1, f"{where}: computed in {counter.count} passes"
        for what, g, w in zip(
            [f"output {i}" for i in range(len(want))] + [f"grad {s}" for s in slots],
            values,
            [*want, *want_grads],
        ):
            if w is None:
                assert g is None, f"{where}: {what}"
                continue
            assert g is not None, f"{where}: {what} is missing"
            np.testing.assert_allclose(
                g.detach().numpy(),
                w.detach().numpy(),
                rtol=1e-10,
                atol=1e-12,
                err_msg=f"{where}: {what}",
            )


def test_repeat_interleave_with_output_size_stays_lazy() -> None:
    """Given output_size, repeat_interleave's length is known: forward and
    backward compute nothing, and agree with numpy's."""
    values = np.arange(6.0).reshape(2, 3)
    x = yg.from_dask(_lazy(values)).requires_grad_()
    repeats = yg.from_dask(da.from_array(np.array([1, 0, 2])))
    with compute_counter() as counter:
        out = yg.repeat_interleave(x, repeats, dim=1, output_size=3)
        out.backward(yg.from_dask(_lazy(np.arange(6.0).reshape(2, 3))))
        assert counter.count == 0
        got, grad = yg.compute(out, x.grad)
    want = yg.tensor(values, requires_grad=True)
    expected = yg.repeat_interleave(want, yg.tensor([1, 0, 2]), dim=1)
    expected.backward(yg.tensor(np.arange(6.0).reshape(2, 3)))
    np.testing.assert_array_equal(got.numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(grad.numpy(), want.grad.numpy())
