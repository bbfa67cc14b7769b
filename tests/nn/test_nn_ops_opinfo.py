"""The nn ops added with EmbeddingBag, cdist, the composite losses and norms, the
1-d/3-d pools and convolutions, prelu, igamma & co., against PyTorch's own
OpInfo samples (torch.testing._internal's op_db): forward values in float64 and
float32, the backward with a random cotangent, forward AD and a double backward,
each against torch on the same sample. The random ops (dropouts, rrelu in
training, gumbel_softmax) draw other numbers than torch, so their distributions
and their masks' gradients are checked instead; modules are checked with torch's
state_dict copied in.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn.functional as F

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

# OpInfo name -> how yamlgrad is called for it.
OPS: dict[str, Callable[..., Any]] = {
    "nn.functional.embedding_bag": F.embedding_bag,
    "cdist": yg.cdist,
    "nn.functional.pdist": yg.pdist,
    "nn.functional.cosine_embedding_loss": F.cosine_embedding_loss,
    "nn.functional.hinge_embedding_loss": F.hinge_embedding_loss,
    "nn.functional.margin_ranking_loss": F.margin_ranking_loss,
    "nn.functional.triplet_margin_loss": F.triplet_margin_loss,
    "nn.functional.triplet_margin_with_distance_loss": (
        F.triplet_margin_with_distance_loss
    ),
    "nn.functional.poisson_nll_loss": F.poisson_nll_loss,
    "nn.functional.gaussian_nll_loss": F.gaussian_nll_loss,
    "nn.functional.multilabel_soft_margin_loss": F.multilabel_soft_margin_loss,
    "nn.functional.conv3d": F.conv3d,
    "nn.functional.conv_transpose1d": F.conv_transpose1d,
    "nn.functional.conv_transpose3d": F.conv_transpose3d,
    "nn.functional.instance_norm": F.instance_norm,
    "nn.functional.rms_norm": F.rms_norm,
    "nn.functional.local_response_norm": F.local_response_norm,
    "nn.functional.adaptive_avg_pool1d": F.adaptive_avg_pool1d,
    "nn.functional.adaptive_avg_pool3d": F.adaptive_avg_pool3d,
    "nn.functional.adaptive_max_pool1d": F.adaptive_max_pool1d,
    "nn.functional.max_unpool1d": F.max_unpool1d,
    "nn.functional.prelu": F.prelu,
    "nn.functional.softmin": F.softmin,
    "nn.functional.tanhshrink": F.tanhshrink,
    "nn.functional.upsample_bilinear": F.upsample_bilinear,
    "nn.functional.upsample_nearest": F.upsample_nearest,
    "igamma": yg.igamma,
    "igammac": yg.igammac,
    "special.zeta": yg.special.zeta,
}


@pytest.fixture(scope="module")
def op_db() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db as ops

    found = {}
    for op in ops:
        if op.name in OPS and op.variant_test_name in ("", "with_train"):
            found.setdefault(op.name, op)
    return found


def _to_yg(value: Any, leaves: list[Any]) -> Any:
    """A torch argument as yamlgrad's: tensors by value (float ones that require
    grad become leaves, in order), dtypes by name, containers element-wise."""
    if isinstance(value, torch.Tensor):
        array = value.detach().numpy().copy()
        if value.requires_grad:
            leaf = yg.tensor(array, requires_grad=True)
            leaves.append(leaf)
            return leaf
        return yg.tensor(array)
    if isinstance(value, torch.dtype):
        return getattr(yg, str(value).removeprefix("torch."))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_yg(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _to_yg(v, leaves) for k, v in value.items()}
    if isinstance(value, torch.nn.PairwiseDistance):  # a distance_function
        return yg.nn.PairwiseDistance(value.norm, value.eps, value.keepdim)
    return value


def _torch_leaves(value: Any, leaves: list[Any]) -> None:
    if isinstance(value, torch.Tensor) and value.requires_grad:
        leaves.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _torch_leaves(v, leaves)
    elif isinstance(value, dict):
        for v in value.values():
            _torch_leaves(v, leaves)


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, (tuple, list)) else out


def _cases(op: Any, dtype: Any) -> list[tuple[Any, list, dict, Any, list, dict]]:
    """(torch input, args, kwargs, ours...) per sample that requires a gradient."""
    cases = []
    for sample in op.sample_inputs("cpu", dtype, requires_grad=True):
        ours: list[Any] = []
        theirs: list[Any] = []
        for part in (sample.input, sample.args, sample.kwargs):
            _torch_leaves(part, theirs)
        args = _to_yg((sample.input, *sample.args), ours)
        kwargs = _to_yg(dict(sample.kwargs), ours)
        cases.append((sample, args, kwargs, ours, theirs))
    return cases


# Ops with no gradient for their first argument and no forward AD in torch 2.13
# (its not_implemented formulas): both libraries refuse.
NO_FORWARD_AD = ("igamma", "igammac", "special.zeta")


def _close(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    np.testing.assert_allclose(
        np.asarray(got), want.detach().numpy(), rtol=rtol, atol=atol, err_msg=what
    )


# Samples PyTorch's OpInfo gives that reach arguments outside these ops' reach
# here, each with its reason.
def _skip(name: str, sample: Any) -> str | None:
    if name == "nn.functional.embedding_bag" and sample.kwargs.get("sparse"):
        return "sparse gradients: yamlgrad has no sparse tensors"
    if name.startswith("nn.functional.conv") and isinstance(
        sample.kwargs.get("padding"), str
    ):
        if name.startswith("nn.functional.conv_transpose"):
            return None
    return None


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
def test_forward_and_backward_match_torch_on_opinfo_samples(
    op_db: dict[str, Any], name: str, dtype_name: str
) -> None:
    if name not in op_db:
        pytest.skip(f"torch 2.13's op_db has no {name}")
    op = op_db[name]
    dtype = getattr(torch, dtype_name)
    if dtype not in op.supported_dtypes("cpu"):
        pytest.skip(f"{name} does not support {dtype_name}")
    rtol, atol = (1e-7, 1e-9) if dtype_name == "float64" else (2e-4, 2e-5)
    rng = np.random.default_rng(0)
    checked = 0
    for sample, args, kwargs, ours, theirs in _cases(op, dtype):
        if _skip(name, sample):
            continue
        where = f"{name} {sample}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = _first(op.op(sample.input, *sample.args, **sample.kwargs))
            out = _first(OPS[name](*args, **kwargs))
        _close(out.detach().numpy(), ref, rtol, atol, where)
        assert out.grad_fn is None or type(ref.grad_fn).__name__ == out.grad_fn.name()
        if not ref.requires_grad:
            continue
        cotangent = rng.standard_normal(tuple(ref.shape))
        if name in NO_FORWARD_AD:  # no gradient for the first argument, in both
            with pytest.raises(NotImplementedError, match="is not implemented"):
                yg.autograd.grad(out, ours[0], yg.tensor(cotangent), retain_graph=True)
            ours, theirs = ours[1:], theirs[1:]
        got = yg.autograd.grad(
            out, ours, yg.tensor(cotangent).to(out.dtype), allow_unused=True
        )
        want = torch.autograd.grad(
            ref, theirs, torch.tensor(cotangent).to(ref.dtype), allow_unused=True
        )
        for g, w, leaf in zip(got, want, ours):
            if w is None:
                continue
            assert g is not None, where
            _close(g.numpy(), w, rtol * 10, atol * 10, f"{where}: grad")
        checked += 1
    assert checked, f"no sample of {name} was compared"


def _swapped(value: Any, table: dict[int, Any]) -> Any:
    """value with every tensor whose id is in `table` replaced, through lists,
    tuples and dicts."""
    if id(value) in table:
        return table[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_swapped(v, table) for v in value)
    if isinstance(value, dict):
        return {k: _swapped(v, table) for k, v in value.items()}
    return value


def _check_forward_ad(
    name: str,
    op: Any,
    sample: Any,
    args: Any,
    kwargs: Any,
    ours: Any,
    theirs: Any,
    tangents: list[np.ndarray],
    where: str,
) -> None:
    import torch.autograd.forward_ad as fwad

    with fwad.dual_level():
        duals = {
            id(t): fwad.make_dual(t.detach(), torch.tensor(v))
            for t, v in zip(theirs, tangents)
        }
        ref = _first(
            op.op(
                _swapped(sample.input, duals),
                *_swapped(sample.args, duals),
                **_swapped(sample.kwargs, duals),
            )
        )
        want = fwad.unpack_dual(ref).tangent
    forward_ad = yg.autograd.forward_ad
    with forward_ad.dual_level():
        swap = {
            id(leaf): forward_ad.make_dual(leaf.detach(), yg.tensor(v))
            for leaf, v in zip(ours, tangents)
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _first(OPS[name](*_swapped(args, swap), **_swapped(kwargs, swap)))
        got = forward_ad.unpack_dual(out).tangent
    if want is not None:
        assert got is not None, where
        _close(got.numpy(), want, 1e-7, 1e-9, f"{where}: tangent")


def _check_forward_ad_refused(name: str, args: Any, kwargs: Any, ours: Any) -> None:
    forward_ad = yg.autograd.forward_ad
    with forward_ad.dual_level():
        dual_args = [
            (
                forward_ad.make_dual(a.detach(), yg.ones_like(a))
                if any(a is leaf for leaf in ours)
                else a
            )
            for a in args
        ]
        with pytest.raises(NotImplementedError, match="Trying to use forward AD"):
            OPS[name](*dual_args, **kwargs)


def _check_double_backward(
    name: str,
    op: Any,
    sample: Any,
    args: Any,
    kwargs: Any,
    ours: Any,
    theirs: Any,
    tangents: list[np.ndarray],
    rng: np.random.Generator,
    where: str,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _first(op.op(sample.input, *sample.args, **sample.kwargs))
        out = _first(OPS[name](*args, **kwargs))
    if not ref.requires_grad:
        return
    cotangent = rng.standard_normal(tuple(ref.shape))
    first_ref = torch.autograd.grad(
        ref, theirs, torch.tensor(cotangent), create_graph=True, allow_unused=True
    )
    first = yg.autograd.grad(
        out, ours, yg.tensor(cotangent), create_graph=True, allow_unused=True
    )
    pairs = [
        (f, r, v)
        for f, r, v in zip(first, first_ref, tangents)
        if r is not None and r.requires_grad
    ]
    if not pairs:
        return
    total_ref = sum((r * torch.tensor(v)).sum() for _, r, v in pairs)
    second_ref = torch.autograd.grad(total_ref, theirs, allow_unused=True)
    live = [(f, v) for f, _, v in pairs if f is not None and f.requires_grad]
    if live:  # a gradient of a linear op is constant: its derivative is zero
        total = sum((f * yg.tensor(v)).sum() for f, v in live)
        second = yg.autograd.grad(total, ours, allow_unused=True)
    else:
        second = [None] * len(ours)
    for g, w in zip(second, second_ref):
        if w is None:
            continue
        got = np.zeros(tuple(w.shape)) if g is None else g.numpy()
        _close(got, w, 1e-6, 1e-8, f"{where}: double backward")


@pytest.mark.parametrize("name", sorted(OPS))
def test_forward_ad_and_double_backward_match_torch(
    op_db: dict[str, Any], name: str
) -> None:
    if name not in op_db:
        pytest.skip(f"torch 2.13's op_db has no {name}")
    op = op_db[name]
    rng = np.random.default_rng(1)
    for sample, args, kwargs, ours, theirs in _cases(op, torch.float64)[:4]:
        if _skip(name, sample) or not theirs:
            continue
        where = f"{name} {sample}"
        tangents = [rng.standard_normal(tuple(t.shape)) for t in theirs]
        if op.supports_forward_ad and name not in NO_FORWARD_AD:
            _check_forward_ad(
                name, op, sample, args, kwargs, ours, theirs, tangents, where
            )
        elif name in NO_FORWARD_AD:
            _check_forward_ad_refused(name, args, kwargs, ours)
        if op.supports_gradgrad:
            _check_double_backward(
                name, op, sample, args, kwargs, ours, theirs, tangents, rng, where
            )


# -- random ops: distributions and the masks' gradients ------------------------------


@pytest.mark.parametrize(
    "dropout, shape, per_channel",
    [
        (F.dropout1d, (64, 32, 5), True),
        (F.dropout2d, (64, 32, 3, 3), True),
        (F.dropout3d, (32, 32, 2, 2, 2), True),
        (F.alpha_dropout, (200, 100), False),
        (F.feature_alpha_dropout, (64, 32, 4), True),
    ],
)
def test_dropout_masks_are_bernoulli_and_are_the_gradient(
    dropout: Callable[..., Any], shape: tuple[int, ...], per_channel: bool
) -> None:
    yg.manual_seed(0)
    p = 0.3
    x = yg.randn(*shape, requires_grad=True)
    out = dropout(x, p, True)
    out.sum().backward()
    grad = x.grad.numpy()
    alpha = dropout in (F.alpha_dropout, F.feature_alpha_dropout)
    kept = grad != 0
    assert abs(kept.mean() - (1 - p)) < 0.02
    if per_channel:  # one draw per (sample, channel): constant over the rest
        flat = kept.reshape(shape[0], shape[1], -1)
        assert (flat == flat[..., :1]).all()
    if alpha:  # mean and variance kept for a standard normal input
        assert abs(float(out.mean())) < 0.05 and abs(float(out.std()) - 1) < 0.05
    else:
        np.testing.assert_allclose(grad[kept], 1 / (1 - p), rtol=1e-6)
        np.testing.assert_allclose(
            out.detach().numpy()[kept], x.detach().numpy()[kept] / (1 - p), rtol=1e-5
        )
    assert out.grad_fn.name() == ("AddBackward0" if alpha else "MulBackward0")
    same = dropout(x, p, False)
    assert same is x


def test_rrelu_slopes_are_uniform_and_are_the_gradient() -> None:
    yg.manual_seed(0)
    x = yg.tensor(-np.ones(20000), requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    out.sum().backward()
    slopes = -out.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.var() - 0.2**2 / 12) < 5e-4
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    assert out.grad_fn.name() == "RreluWithNoiseBackward0"
    # Evaluation: the mean slope, as torch's.
    values = np.linspace(-2, 2, 9)
    ours = F.rrelu(yg.tensor(values), 0.1, 0.3).numpy()
    theirs = torch.nn.functional.rrelu(torch.tensor(values), 0.1, 0.3).numpy()
    np.testing.assert_allclose(ours, theirs)


def test_gumbel_softmax_samples_and_straight_through_gradient() -> None:
    yg.manual_seed(0)
    logits = yg.tensor(np.log([[0.2, 0.5, 0.3]] * 4000), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-6)
    hard = F.gumbel_softmax(logits, hard=True)
    counts = hard.detach().numpy().mean(0)
    np.testing.assert_allclose(counts, [0.2, 0.5, 0.3], atol=0.03)
    assert hard.grad_fn.name() == "AddBackward0"
    # The straight-through gradient is the soft sample's: for a cotangent of
    # ones per row it is zero (softmax's rows sum to one).
    hard.sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), 0.0, atol=1e-9)


# -- modules: torch's state_dict in, the same outputs and gradients out -------------

MODULES = [
    ("Conv3d", (2, 3, 2), {"stride": 1, "padding": 1}, (2, 2, 4, 4, 4)),
    ("ConvTranspose1d", (2, 3, 3), {"stride": 2}, (2, 2, 5)),
    ("ConvTranspose3d", (2, 3, 2), {"stride": 2}, (1, 2, 3, 3, 3)),
    ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 5)),
    (
        "InstanceNorm2d",
        (3,),
        {"affine": True, "track_running_stats": True},
        (2, 3, 4, 4),
    ),
    ("InstanceNorm3d", (2,), {}, (2, 2, 3, 3, 3)),
    ("RMSNorm", ((4,),), {}, (2, 3, 4)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4, 4)),
    ("PReLU", (3,), {}, (2, 3, 4)),
    ("Softmin", (1,), {}, (2, 3, 4)),
    ("Tanhshrink", (), {}, (2, 3)),
    ("Softsign", (), {}, (2, 3)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveAvgPool3d", ((2, 3, 2),), {}, (2, 3, 5, 6, 4)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 7)),
    ("EmbeddingBag", (6, 3), {"mode": "sum", "padding_idx": 2}, None),
    ("EmbeddingBag", (6, 3), {"mode": "max"}, None),
]


@pytest.mark.parametrize(
    "name, args, kwargs, shape", MODULES, ids=[m[0] for m in MODULES]
)
def test_module_with_torch_state_matches_torch(
    name: str, args: tuple, kwargs: dict, shape: tuple[int, ...] | None
) -> None:
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(yg.nn, name)(*args, **kwargs).double()
    ours.load_state_dict(
        {k: yg.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    )
    rng = np.random.default_rng(0)
    if shape is None:
        x = np.array([[0, 2, 4, 5], [1, 2, 3, 3]])
        t_in, y_in = torch.tensor(x), yg.tensor(x)
    else:
        x = rng.standard_normal(shape)
        t_in, y_in = torch.tensor(x, requires_grad=True), yg.tensor(
            x, requires_grad=True
        )
    ref, out = theirs(t_in), ours(y_in)
    np.testing.assert_allclose(
        out.detach().numpy(), ref.detach().numpy(), rtol=1e-7, atol=1e-9
    )
    cotangent = rng.standard_normal(tuple(ref.shape))
    ref.backward(torch.tensor(cotangent))
    out.backward(yg.tensor(cotangent))
    if shape is not None:
        np.testing.assert_allclose(
            y_in.grad.numpy(), t_in.grad.numpy(), rtol=1e-6, atol=1e-9
        )
    for (key, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(
            p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-9, err_msg=key
        )
    for (key, b), (_, c) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(
            b.numpy(), c.numpy(), rtol=1e-6, atol=1e-9, err_msg=key
        )


def test_loss_modules_match_torch() -> None:
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((4, 5)) for _ in range(3))
    sign = np.sign(rng.standard_normal((4, 5)))
    cases = [
        ("CosineEmbeddingLoss", {"margin": 0.2}, (a, b, np.array([1, -1, 1, -1]))),
        ("HingeEmbeddingLoss", {"margin": 0.5}, (a, sign)),
        ("MarginRankingLoss", {"margin": 0.1}, (a, b, sign)),
        ("TripletMarginLoss", {"swap": True}, (a, b, c)),
        ("TripletMarginWithDistanceLoss", {"margin": 2.0}, (a, b, c)),
        ("PoissonNLLLoss", {"full": True}, (a, np.abs(b) * 3)),
        ("GaussianNLLLoss", {}, (a, b, np.abs(c) + 0.1)),
        ("MultiLabelSoftMarginLoss", {}, (a, (sign > 0) * 1.0)),
    ]
    for name, kwargs, arrays in cases:
        t_args = [torch.tensor(x, requires_grad=x.dtype == np.float64) for x in arrays]
        y_args = [yg.tensor(x, requires_grad=x.dtype == np.float64) for x in arrays]
        ref = getattr(torch.nn, name)(**kwargs)(*t_args)
        out = getattr(yg.nn, name)(**kwargs)(*y_args)
        np.testing.assert_allclose(
            out.detach().numpy(), ref.detach().numpy(), rtol=1e-7, err_msg=name
        )
        ref.backward()
        out.backward()
        for y, t in zip(y_args, t_args):
            if t.grad is not None:
                np.testing.assert_allclose(
                    y.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-10, err_msg=name
                )


def test_embedding_bag_from_pretrained_and_per_sample_weights_match_torch() -> None:
    rng = np.random.default_rng(0)
    table = rng.standard_normal((6, 3))
    ours = yg.nn.EmbeddingBag.from_pretrained(
        yg.tensor(table), freeze=False, mode="sum"
    )
    theirs = torch.nn.EmbeddingBag.from_pretrained(
        torch.tensor(table), freeze=False, mode="sum"
    )
    idx, offsets, weights = [0, 2, 4, 5, 4, 3], [0, 2, 2], rng.random(6)
    y_w = yg.tensor(weights, requires_grad=True)
    t_w = torch.tensor(weights, requires_grad=True)
    out = ours(yg.tensor(idx), yg.tensor(offsets), per_sample_weights=y_w)
    ref = theirs(torch.tensor(idx), torch.tensor(offsets), per_sample_weights=t_w)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(y_w.grad.numpy(), t_w.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12
    )
    frozen = yg.nn.EmbeddingBag.from_pretrained(yg.tensor(table))
    assert not frozen.weight.requires_grad


def test_errors_match_torch() -> None:
    def message(f: Callable[[], Any]) -> str:
        with pytest.raises(Exception) as info:
            f()
        return f"{type(info.value).__name__}: {info.value}"

    cases = [
        lambda lib, F_: F_.embedding_bag(
            lib.tensor([[0, 1]]), lib.ones(3, 2), lib.tensor([0])
        ),
        lambda lib, F_: F_.embedding_bag(
            lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([1, 2])
        ),
        lambda lib, F_: F_.embedding_bag(
            lib.tensor([0, 1]),
            lib.ones(3, 2),
            lib.tensor([0]),
            mode="max",
            per_sample_weights=lib.ones(2),
        ),
        lambda lib, F_: lib.cdist(lib.ones(3, 2), lib.ones(3, 4)),
        lambda lib, F_: lib.cdist(lib.ones(3), lib.ones(3, 4)),
        lambda lib, F_: lib.pdist(lib.ones(3, 2, 2)),
        lambda lib, F_: F_.prelu(lib.ones(2, 3), lib.ones(2)),
        lambda lib, F_: F_.rrelu(lib.ones(2), 0.5, 0.2, True),
        lambda lib, F_: F_.local_response_norm(lib.ones(2, 3), 2),
        lambda lib, F_: F_.adaptive_avg_pool1d(lib.ones(2, 3, 4, 5), 2),
        lambda lib, F_: F_.rms_norm(lib.ones(2, 3), (4,)),
        lambda lib, F_: F_.triplet_margin_loss(
            lib.ones(2, 3), lib.ones(2, 3), lib.ones(3), margin=1.0
        ),
        lambda lib, F_: F_.cosine_embedding_loss(
            lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 1)
        ),
    ]
    for case in cases:
        assert message(lambda: case(yg, F)) == message(
            lambda: case(torch, torch.nn.functional)
        ).replace("torch.Tensor", "yamlgrad.runtime.autograd.tensor.Tensor")


def test_masked_and_safe_softmax_match_torch() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 3, 3))
    cases = [
        (rng.random((2, 2, 3, 3)) < 0.4, 3, 2),
        (rng.random((2, 3)) < 0.4, 3, 1),  # key padding, (B, L)
        (rng.random((3, 3)) < 0.4, 3, 0),  # one (L, L) mask for every batch
        (np.ones((2, 2, 3, 3), dtype=bool), 3, None),  # fully masked: NaN
    ]
    for mask, dim, mask_type in cases:
        ours = yg._masked_softmax(yg.tensor(x), yg.tensor(mask), dim, mask_type)
        theirs = torch._masked_softmax(
            torch.tensor(x), torch.tensor(mask), dim, mask_type
        )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    rows = np.array([[-np.inf, -np.inf, -np.inf], [0.5, -np.inf, 1.0]])
    t = torch.tensor(rows, requires_grad=True)
    y = yg.tensor(rows, requires_grad=True)
    ref = torch.ops.aten._safe_softmax.default(t, 1)
    out = yg.ops._safe_softmax.default(y, 1)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    assert out.grad_fn.name() == "SafeSoftmaxBackward0"
    cotangent = rng.standard_normal((2, 3))
    ref.backward(torch.tensor(cotangent))
    out.backward(yg.tensor(cotangent))
    np.testing.assert_allclose(y.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 5), {"size": 7}),
        ((2, 3, 5), {"size": 3}),
        ((1, 2, 3, 4), {"scale_factor": 1.7}),
        ((1, 2, 3, 4), {"size": (5, 9)}),
        ((1, 1, 2, 3, 4), {"scale_factor": 2.3}),
    ],
)
def test_interpolate_nearest_exact_matches_torch(shape: tuple, kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    ours, theirs = yg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.interpolate(ours, mode="nearest-exact", **kwargs)
    ref = torch.nn.functional.interpolate(theirs, mode="nearest-exact", **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    assert out.grad_fn.name() == type(ref.grad_fn).__name__
    cotangent = rng.standard_normal(tuple(ref.shape))
    out.backward(yg.tensor(cotangent))
    ref.backward(torch.tensor(cotangent))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
