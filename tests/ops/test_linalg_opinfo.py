"""torch.linalg and PyTorch's older linear algebra against PyTorch's own OpInfo
samples (torch.testing._internal's op_db), in float64 and float32.

For every sample, as PyTorch's gradient tests take it (its gradcheck_wrapper
around the op, its output_process_fn_grad on the outputs, which makes
singular vectors and eigenvectors sign-free, drops pivots and so on), four
checks against torch: the forward values, the backward with a random
cotangent, forward AD (yamlgrad.autograd.forward_ad) with a random tangent,
and the gradient of the backward (gradgrad). An op without autograd in its
OpInfo (matrix_rank) is compared forward only.

Run as a script (`python tests/ops/test_linalg_opinfo.py`), it prints how many
samples of each op pass each check.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.autograd.forward_ad as fwad

# OpInfo's full names (name.variant) for the ops of torch.linalg and the older
# top-level linear algebra.
OPS = (
    "linalg.cond",
    "linalg.det",
    "linalg.eig",
    "linalg.eigh",
    "linalg.eigvals",
    "linalg.eigvalsh",
    "linalg.inv",
    "linalg.inv_ex",
    "linalg.lu",
    "linalg.lu_factor",
    "linalg.lu_factor_ex",
    "linalg.lu_solve",
    "linalg.matrix_norm",
    "linalg.matrix_power",
    "linalg.matrix_rank",
    "linalg.matrix_rank.hermitian",
    "linalg.multi_dot",
    "linalg.norm",
    "linalg.norm.subgradients_at_zero",
    "linalg.pinv",
    "linalg.pinv.hermitian",
    "linalg.pinv.singular",
    "linalg.qr",
    "linalg.slogdet",
    "linalg.solve",
    "linalg.solve_ex",
    "linalg.solve_triangular",
    "linalg.svd",
    "linalg.svdvals",
    "linalg.tensorinv",
    "linalg.tensorsolve",
    "linalg.vander",
    "linalg.vecdot",
    "linalg.vector_norm",
    "svd",
    "qr",
    "lu",
    "lu_solve",
    "lu_unpack",
    "logdet",
    "pinverse",
    "cross",
    "linalg.cross",
    "inner",
    "kron",
    "svd_lowrank",
    "pca_lowrank",
    "norm",
    "norm.fro",
    "norm.nuc",
    "norm.inf",
    "mT",
    "mH",
    "H",
)
# Ops whose results PyTorch returns complex for a real input: yamlgrad has no
# complex dtype and refuses them, naming it (runtime/linalg_functional.py).
COMPLEX_RESULTS = ("linalg.eig", "linalg.eigvals")
CHECKS = ("forward", "backward", "forward_ad", "gradgrad")


def _lowrank_of_full_rank(sample: Any) -> bool:
    """A sample whose A - M has a rank above q: the approximation depends on the
    random start, and yamlgrad's generator does not draw torch's numbers."""
    return sample.kwargs.get("M") is not None


def _zero_norm_of_odd_order(sample: Any) -> bool:
    """A vector p-norm (p not 1, 2, inf) of zeros or of nothing."""
    ord = sample.args[0] if sample.args else sample.kwargs.get("ord")
    if isinstance(ord, str) or ord is None or float(ord) in (0.0, 1.0, 2.0):
        return False
    return not bool(sample.input.detach().abs().sum() > 0) and abs(ord) != float("inf")


# (op, check or None for all, the samples it concerns, why): known differences:
# a failure of such a sample is reported as known, not as a failure.
KNOWN_DIFFERENCES = (
    ("svd_lowrank", None, _lowrank_of_full_rank, "random start: not torch's draws"),
    (
        "linalg.norm",
        "forward_ad",
        _zero_norm_of_odd_order,
        "linalg_vector_norm's JVP is derived from its backward, which masks 0/0 "
        "with where: nan at a zero vector, where PyTorch's norm_jvp gives 0",
    ),
    (
        "linalg.norm.subgradients_at_zero",
        "forward_ad",
        _zero_norm_of_odd_order,
        "as linalg.norm",
    ),
)


def _known(name: str, check: str, sample: Any) -> str | None:
    for op, which, concerns, why in KNOWN_DIFFERENCES:
        if op == name and which in (None, check) and concerns(sample):
            return why
    return None


TOLERANCES = {"float64": (1e-7, 1e-9), "float32": (2e-3, 2e-4)}


def _op_db() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {
        op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""): op
        for op in op_db
    }


# OpInfos whose `op` is a lambda over the public function: the same lambda
# over yamlgrad's (the low-rank SVDs of a product a @ b^T, of rank at most
# b's columns, so exact for q at least that).
LAMBDAS: dict[str, Callable[..., Any]] = {
    "svd_lowrank": lambda a, b, **kwargs: yg.svd_lowrank(a @ b.mT, **kwargs),
    "pca_lowrank": lambda a, b, **kwargs: yg.pca_lowrank(a @ b.mT, **kwargs),
    "linalg.pinv.singular": lambda a, b: yg.linalg.pinv(a @ b.mT),
    "mT": lambda x: x.mT,
    "mH": lambda x: x.mH,
    "H": lambda x: x.H,
}


def _yamlgrad_op(name: str) -> Callable[..., Any]:
    """The yamlgrad function an OpInfo's name reaches (`linalg.svd` is
    yg.linalg.svd, `norm.nuc` yg.norm), or its lambda's counterpart."""
    if name in LAMBDAS:
        return LAMBDAS[name]
    target: Any = yg
    for part in name.split("."):
        if not hasattr(target, part) and target is not yg:
            break  # a variant_test_name
        target = getattr(target, part)
    return target


# -- the sample in both libraries ----------------------------------------------------


def _to_yamlgrad(value: Any, leaves: list[Any]) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        data = value.detach().numpy()
        out = yg.tensor(data.copy(), requires_grad=value.requires_grad)
        if value.requires_grad:
            leaves.append(out)
        return out
    if isinstance(value, torch.dtype):
        return getattr(yg, str(value).removeprefix("torch."))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_yamlgrad(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _to_yamlgrad(v, leaves) for k, v in value.items()}
    return value


def _torch_leaves(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _torch_leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _torch_leaves(v)]
    return []


def _outputs(result: Any) -> list[Any]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _floats(outputs: list[Any]) -> list[Any]:
    return [o for o in outputs if o is not None and o.dtype.is_floating_point]


def _array(x: Any) -> np.ndarray:
    if isinstance(x, yg.Tensor):
        return x.detach().numpy()
    return x.detach().numpy(force=True) if x is not None else None


def _close(ours: Any, theirs: Any, dtype: str, what: str) -> None:
    rtol, atol = TOLERANCES[dtype]
    got, want = _array(ours), _array(theirs)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(
        got, want, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=what
    )


class Sample:
    """One OpInfo sample as a call of either library."""

    def __init__(self, opinfo: Any, sample: Any) -> None:
        self.opinfo, self.sample = opinfo, sample
        self.torch_leaves = _torch_leaves([sample.input, sample.args, sample.kwargs])
        self.yg_leaves: list[Any] = []
        self.yg_input = _to_yamlgrad(sample.input, self.yg_leaves)
        self.yg_args = _to_yamlgrad(sample.args, self.yg_leaves)
        self.yg_kwargs = _to_yamlgrad(sample.kwargs, self.yg_leaves)

    def torch_call(self, input: Any = None) -> list[Any]:
        s = self.sample
        input = s.input if input is None else input
        out = self.opinfo.gradcheck_wrapper(self.opinfo.op, input, *s.args, **s.kwargs)
        return _outputs(s.output_process_fn_grad(out))

    def yg_call(self, op: Callable[..., Any], input: Any = None) -> list[Any]:
        input = self.yg_input if input is None else input
        wrapper = self.opinfo.gradcheck_wrapper
        out = wrapper(op, input, *self.yg_args, **self.yg_kwargs)
        return _outputs(self.sample.output_process_fn_grad(out))


# -- the four checks -----------------------------------------------------------------


def _check_forward(case: Sample, op: Callable[..., Any], dtype: str) -> None:
    theirs, ours = case.torch_call(), case.yg_call(op)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if t is None or not hasattr(t, "dtype"):
            assert o == t
            continue
        assert str(o.dtype).rpartition(".")[2] == str(t.dtype).rpartition(".")[2]
        _close(o, t, dtype, "forward")


def _differentiable(outputs: list[Any]) -> list[Any]:
    return [o for o in _floats(outputs) if o.requires_grad]


def _check_backward(case: Sample, op: Callable[..., Any], dtype: str) -> None:
    import torch

    rng = np.random.default_rng(0)
    theirs = _differentiable(case.torch_call())
    ours = _differentiable(case.yg_call(op))
    assert len(ours) == len(theirs)
    if not theirs:
        return
    cotangents = [rng.standard_normal(tuple(t.shape)) for t in theirs]
    want = torch.autograd.grad(
        theirs,
        case.torch_leaves,
        [torch.tensor(c, dtype=t.dtype) for c, t in zip(cotangents, theirs)],
        allow_unused=True,
    )
    got = yg.autograd.grad(
        ours,
        case.yg_leaves,
        [yg.tensor(c).to(o.dtype) for c, o in zip(cotangents, ours)],
        allow_unused=True,
    )
    for g, w, leaf in zip(got, want, case.torch_leaves):
        w = torch.zeros_like(leaf) if w is None else w
        g = yg.zeros(*leaf.shape) if g is None else g
        _close(g, w, dtype, "backward")


def _check_forward_ad(case: Sample, op: Callable[..., Any], dtype: str) -> None:
    import torch
    import torch.autograd.forward_ad as torch_fwad

    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(tuple(t.shape)) for t in case.torch_leaves]
    with torch_fwad.dual_level():
        duals = {
            id(t): torch_fwad.make_dual(t.detach(), torch.tensor(v, dtype=t.dtype))
            for t, v in zip(case.torch_leaves, tangents)
        }
        input, args, kwargs = _replace(
            [case.sample.input, case.sample.args, case.sample.kwargs], duals
        )
        out = case.opinfo.gradcheck_wrapper(case.opinfo.op, input, *args, **kwargs)
        theirs = _floats(_outputs(case.sample.output_process_fn_grad(out)))
        want = [torch_fwad.unpack_dual(o).tangent for o in theirs]
    with fwad.dual_level():
        duals = {
            id(x): fwad.make_dual(x.detach(), yg.tensor(v).to(x.dtype))
            for x, v in zip(case.yg_leaves, tangents)
        }
        input, args, kwargs = _replace(
            [case.yg_input, case.yg_args, case.yg_kwargs], duals
        )
        out = case.opinfo.gradcheck_wrapper(op, input, *args, **kwargs)
        ours = _floats(_outputs(case.sample.output_process_fn_grad(out)))
        got = [fwad.unpack_dual(o).tangent for o in ours]
    assert len(got) == len(want)
    for g, w, o in zip(got, want, theirs):
        w = torch.zeros_like(o) if w is None else w
        g = yg.zeros(*o.shape) if g is None else g
        _close(g, w, dtype, "forward AD")


def _replace(value: Any, by_id: dict[int, Any]) -> Any:
    if id(value) in by_id:
        return by_id[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_replace(v, by_id) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, by_id) for k, v in value.items()}
    return value


def _check_gradgrad(case: Sample, op: Callable[..., Any], dtype: str) -> None:
    import torch

    rng = np.random.default_rng(2)
    theirs = _differentiable(case.torch_call())
    ours = _differentiable(case.yg_call(op))
    if not theirs:
        return
    cotangents = [rng.standard_normal(tuple(t.shape)) for t in theirs]
    directions = [rng.standard_normal(tuple(t.shape)) for t in case.torch_leaves]
    first_t = torch.autograd.grad(
        theirs,
        case.torch_leaves,
        [torch.tensor(c, dtype=t.dtype) for c, t in zip(cotangents, theirs)],
        create_graph=True,
        allow_unused=True,
    )
    first_y = yg.autograd.grad(
        ours,
        case.yg_leaves,
        [yg.tensor(c).to(o.dtype) for c, o in zip(cotangents, ours)],
        create_graph=True,
        allow_unused=True,
    )
    want = _second(torch, first_t, case.torch_leaves, directions)
    got = _second(yg, first_y, case.yg_leaves, directions)
    for g, w, leaf in zip(got, want, case.torch_leaves):
        w = torch.zeros_like(leaf) if w is None else w
        g = yg.zeros(*leaf.shape) if g is None else g
        _close(g, w, dtype, "gradgrad")


def _second(lib: Any, grads: Any, leaves: list[Any], directions: list[Any]) -> Any:
    total = None
    for g, d in zip(grads, directions):
        if g is None or not g.requires_grad:
            continue
        term = (g * lib.tensor(d).to(g.dtype)).sum()
        total = term if total is None else total + term
    if total is None:
        return (None,) * len(leaves)
    return lib.autograd.grad(total, leaves, allow_unused=True)


CHECK_FUNCTIONS = {
    "forward": _check_forward,
    "backward": _check_backward,
    "forward_ad": _check_forward_ad,
    "gradgrad": _check_gradgrad,
}


def _checks_of(opinfo: Any) -> tuple[str, ...]:
    if not opinfo.supports_autograd:
        return ("forward",)
    checks = ["forward", "backward"]
    if opinfo.supports_forward_ad:
        checks.append("forward_ad")
    if opinfo.supports_gradgrad:
        checks.append("gradgrad")
    return tuple(checks)


def _cases(opinfo: Any, dtype: str) -> Iterator[Sample]:
    import torch

    torch_dtype = getattr(torch, dtype)
    requires_grad = opinfo.supports_autograd
    for sample in opinfo.sample_inputs("cpu", torch_dtype, requires_grad=requires_grad):
        yield Sample(opinfo, sample)


def run(name: str, dtype: str) -> dict[str, list[Any]]:
    """Each check's outcomes over the op's samples: True, or the failure."""
    import warnings

    opinfo = _op_db()[name]
    op = _yamlgrad_op(name)
    results: dict[str, list[Any]] = {c: [] for c in _checks_of(opinfo)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in _cases(opinfo, dtype):
            for check in results:
                try:
                    CHECK_FUNCTIONS[check](case, op, dtype)
                except Exception as failure:  # noqa: BLE001 - reported per sample
                    why = _known(name, check, case.sample)
                    results[check].append(failure if why is None else f"known: {why}")
                else:
                    results[check].append(True)
    return results


# -- the tests -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", [n for n in OPS if n not in COMPLEX_RESULTS])
def test_opinfo_samples_match_torch(name: str, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("expecttest")
    # svd_lowrank's random start: the same draws whatever ran before
    yg.manual_seed(0)
    torch.manual_seed(0)
    results = run(name, dtype)
    failures = [
        f"{check} #{i}: {type(r).__name__}: {str(r).splitlines()[0] if str(r) else ''}"
        for check, outcomes in results.items()
        for i, r in enumerate(outcomes)
        if r is not True and not isinstance(r, str)
    ]
    assert results["forward"], f"{name}: no samples"
    assert not failures, f"{name} ({dtype}):\n" + "\n".join(failures[:10])


@pytest.mark.parametrize("name", COMPLEX_RESULTS)
def test_ops_with_complex_results_are_refused_naming_the_dtype(name: str) -> None:
    """linalg.eig and eigvals: PyTorch's results are complex for a real input;
    yamlgrad refuses every OpInfo sample, naming the complex dtype."""
    pytest.importorskip("torch")
    pytest.importorskip("expecttest")
    opinfo = _op_db()[name]
    op = _yamlgrad_op(name)
    for dtype, complex_name in (("float64", "complex128"), ("float32", "complex64")):
        for case in _cases(opinfo, dtype):
            with pytest.raises(NotImplementedError, match=f"torch.{complex_name}"):
                case.yg_call(op)


def main() -> None:
    """Print each op's passing samples per check, float64 and float32."""
    rows = []
    for name in OPS:
        if name in COMPLEX_RESULTS:
            rows.append(f"| {name} | refused: complex results | |")
            continue
        cells = []
        for dtype in ("float64", "float32"):
            results = run(name, dtype)
            cells.append(
                ", ".join(
                    f"{check} {sum(r is True for r in rs)}/{len(rs)}"
                    + (
                        f" ({skipped} known)"
                        if (skipped := sum(isinstance(r, str) for r in rs))
                        else ""
                    )
                    for check, rs in results.items()
                )
            )
        rows.append(f"| {name} | {cells[0]} | {cells[1]} |")
    print("| op | float64 | float32 |\n|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    sys.exit(main())
