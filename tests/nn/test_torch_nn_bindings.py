"""The nn ops at the top level (`yg.conv1d`, `yg.dropout`, `yg.batch_norm`,
`yg.lstm_cell`, ...) with PyTorch's top-level signatures and defaults, against
torch: values, node names and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg

torch = pytest.importorskip("torch")


def test_the_same_functions_as_nn_functional_where_pytorchs_are() -> None:
    for name in yg.runtime.facade.NN_FUNCTIONAL_BINDINGS:
        assert getattr(torch, name) is getattr(torch.nn.functional, name), name
        assert getattr(yg, name) is getattr(yg.nn.functional, name), name


def _leaves(m: Any, arrays: list[np.ndarray]) -> list[Any]:
    return [
        m.tensor(a, requires_grad=a.dtype.kind == "f") if a is not None else None
        for a in arrays
    ]


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _check(
    call: Callable[..., Any], arrays: list[np.ndarray], node: bool = True
) -> None:
    """`call(module, *tensors)` in both libraries: outputs, the first output's
    node name (unless not `node`) and the gradients of the float inputs."""
    ours_in, theirs_in = _leaves(yg, arrays), _leaves(torch, arrays)
    ours, theirs = _outputs(call(yg, *ours_in)), _outputs(call(torch, *theirs_in))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(
            o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12
        )
    if theirs[0].grad_fn is not None:
        if node:
            assert ours[0].grad_fn.name() == type(theirs[0].grad_fn).__name__
        rng = np.random.default_rng(1)
        seed = rng.standard_normal(tuple(theirs[0].shape))
        ours[0].backward(yg.tensor(seed))
        theirs[0].backward(torch.tensor(seed))
        for o, t in zip(ours_in, theirs_in):
            if t is None or t.grad is None:
                assert o is None or o.grad is None
            else:
                np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9)


R = np.random.default_rng(0)


def _randn(*shape: int) -> np.ndarray:
    return R.standard_normal(shape)


def _labels(*shape: int) -> np.ndarray:
    return np.where(R.random(shape) < 0.5, -1.0, 1.0)


# fmt: off
CASES: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "conv1d": (lambda m, x, w: m.conv1d(x, w, None, 1, 1), [_randn(2, 3, 7), _randn(4, 3, 3)]),
    "conv_transpose2d": (lambda m, x, w: m.conv_transpose2d(x, w, stride=2), [_randn(1, 2, 3, 3), _randn(2, 3, 2, 2)]),
    "layer_norm": (lambda m, x, w, b: m.layer_norm(x, [4], w, b, 1e-5, False), [_randn(3, 4), _randn(4), _randn(4)]),
    "batch_norm": (lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False), [_randn(4, 3, 2), _randn(3), _randn(3)]),
    "batch_norm_eval": (lambda m, x, w, b: m.batch_norm(x, w, b, m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64), False, 0.1, 1e-5, True), [_randn(4, 3), _randn(3), _randn(3)]),
    "group_norm": (lambda m, x, w, b: m.group_norm(x, 2, w, b), [_randn(2, 4, 3), _randn(4), _randn(4)]),
    "embedding_bag_sum": (lambda m, w, i, o: m.embedding_bag(w, i, o, False, 0), [_randn(5, 3), np.array([0, 2, 4, 1]), np.array([0, 2])]),
    "embedding_bag_max": (lambda m, w, i, o: m.embedding_bag(w, i, o, False, 2), [_randn(5, 3), np.array([0, 2, 4, 1]), np.array([0, 1])]),
    "kl_div": (lambda m, x, y: m.kl_div(x, y), [_randn(3, 4), R.random((3, 4))]),
    "kl_div_mean": (lambda m, x, y: m.kl_div(x, y, 1), [_randn(3, 4), R.random((3, 4))]),
    "kl_div_log_target": (lambda m, x, y: m.kl_div(x, y, 2, log_target=True), [_randn(3, 4), _randn(3, 4)]),
    "bce_with_logits": (lambda m, x, y: m.binary_cross_entropy_with_logits(x, y), [_randn(3, 4), R.random((3, 4))]),
    "bce_with_logits_sum": (lambda m, x, y, w: m.binary_cross_entropy_with_logits(x, y, w.detach(), None, 2), [_randn(3, 4), R.random((3, 4)), R.random(4)]),
    "cosine_embedding_loss": (lambda m, x, y, t: m.cosine_embedding_loss(x, y, t), [_randn(3, 4), _randn(3, 4), _labels(3)]),
    "hinge_embedding_loss": (lambda m, x, t: m.hinge_embedding_loss(x, t, 1.0, 1), [_randn(3, 4), _labels(3, 4)]),
    "margin_ranking_loss": (lambda m, x, y, t: m.margin_ranking_loss(x, y, t), [_randn(5), _randn(5), _labels(5)]),
    "triplet_margin_loss": (lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, False, 2), [_randn(3, 4), _randn(3, 4), _randn(3, 4)]),
    "avg_pool1d": (lambda m, x: m.avg_pool1d(x, 2), [_randn(2, 3, 6)]),
    "max_pool1d": (lambda m, x: m.max_pool1d(x, 2), [_randn(2, 3, 6)]),
    "max_pool1d_with_indices": (lambda m, x: m.max_pool1d_with_indices(x, 3, 2, 1), [_randn(2, 3, 7)]),
    "max_pool3d": (lambda m, x: m.max_pool3d(x, 2, [1, 1, 1]), [_randn(1, 2, 3, 3, 3)]),
    "adaptive_avg_pool1d": (lambda m, x: m.adaptive_avg_pool1d(x, 3), [_randn(2, 3, 7)]),
    "adaptive_max_pool1d": (lambda m, x: m.adaptive_max_pool1d(x, 3), [_randn(2, 3, 7)]),
    "rrelu_eval": (lambda m, x: m.rrelu(x), [_randn(3, 4)]),
    "grid_sampler": (lambda m, x, g: m.grid_sampler(x, g, 0, 1, False), [_randn(1, 2, 4, 4), R.uniform(-0.9, 0.9, (1, 3, 3, 2))]),
    "grid_sampler_3d": (lambda m, x, g: m.grid_sampler(x, g, 1, 0, True), [_randn(1, 1, 3, 3, 3), R.uniform(-0.9, 0.9, (1, 2, 2, 2, 3))]),
    "nuclear_norm": (lambda m, x: m.nuclear_norm(x), [_randn(3, 4)]),
    "nuclear_norm_dim": (lambda m, x: m.nuclear_norm(x, [0, 2], True), [_randn(3, 2, 4)]),
    "norm_except_dim": (lambda m, x: m.norm_except_dim(x, 2, 1), [_randn(3, 4, 2)]),
    "norm_except_all": (lambda m, x: m.norm_except_dim(x, 3, -1), [_randn(3, 4)]),
    "lstm_cell": (lambda m, x, h, c, wi, wh, bi, bh: m.lstm_cell(x, (h, c), wi, wh, bi, bh), [_randn(2, 3), _randn(2, 4), _randn(2, 4), _randn(16, 3), _randn(16, 4), _randn(16), _randn(16)]),
    "gru_cell": (lambda m, x, h, wi, wh, bi, bh: m.gru_cell(x, h, wi, wh, bi, bh), [_randn(2, 3), _randn(2, 4), _randn(12, 3), _randn(12, 4), _randn(12), _randn(12)]),
    "gru_cell_no_bias": (lambda m, x, h, wi, wh: m.gru_cell(x, h, wi, wh), [_randn(2, 3), _randn(2, 4), _randn(12, 3), _randn(12, 4)]),
    "rnn_tanh_cell": (lambda m, x, h, wi, wh, bi, bh: m.rnn_tanh_cell(x, h, wi, wh, bi, bh), [_randn(2, 3), _randn(2, 4), _randn(4, 3), _randn(4, 4), _randn(4), _randn(4)]),
    "rnn_relu_cell": (lambda m, x, h, wi, wh: m.rnn_relu_cell(x, h, wi, wh), [_randn(2, 3), _randn(2, 4), _randn(4, 3), _randn(4, 4)]),
    "selu_": (lambda m, x: m.selu_(x * 1), [_randn(3, 4)]),
    "celu_": (lambda m, x: m.celu_(x * 1, 0.5), [_randn(3, 4)]),
    "channel_shuffle": (lambda m, x: m.native_channel_shuffle(x.detach(), 2), [_randn(2, 4, 3)]),
}
# fmt: on


# Same values and gradients, another last node: the cells are one fused node here
# (nn.LSTMCell's and GRUCell's too), a composite of linears and gates in PyTorch's
# CPU code; norm_except_dim is one vector norm here, a transpose, view and norm
# there.
OTHER_NODE = (
    "lstm_cell",
    "gru_cell",
    "gru_cell_no_bias",
    "norm_except_dim",
    "norm_except_all",
)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name: str) -> None:
    call, arrays = CASES[name]
    _check(call, arrays, node=name not in OTHER_NODE)


def test_frobenius_norm_warns_as_torch_and_is_the_vector_norm() -> None:
    x = _randn(3, 4, 2)
    with pytest.warns(UserWarning, match="at::frobenius_norm is deprecated"):
        ours = yg.frobenius_norm(yg.tensor(x), [0, 2])
    theirs = torch.frobenius_norm(torch.tensor(x), [0, 2])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    ours = yg.frobenius_norm(yg.tensor(x), 1, True)
    assert tuple(ours.shape) == tuple(
        torch.frobenius_norm(torch.tensor(x), 1, True).shape
    )


@pytest.mark.parametrize(
    "name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"]
)
def test_dropouts_take_input_p_train(name: str) -> None:
    x = yg.randn(4, 5, 3, dtype=yg.float64, requires_grad=True)
    assert getattr(yg, name)(x, 0.5, False) is x
    assert getattr(yg, name)(x, 0.0, True) is x
    out = getattr(yg, name)(x, 0.5, True)
    theirs = getattr(torch, name)(torch.ones(4, 5, 3, requires_grad=True), 0.5, True)
    assert out.grad_fn.name() == type(theirs.grad_fn).__name__
    if name == "feature_dropout":  # whole channels: equal along the last dim
        kept = out.detach().numpy() / x.detach().numpy()
        np.testing.assert_allclose(kept, kept[..., :1].repeat(3, axis=-1))
    inplace = getattr(yg, name + "_")
    y = yg.ones(4, 5, 3)
    assert inplace(y, 0.5, True) is y
    for module in (yg, torch):
        with pytest.raises(
            RuntimeError, match="has to be between 0 and 1, but got 1.5"
        ):
            getattr(module, name)(module.ones(2, 2), 1.5, False)
    if name.startswith("feature"):
        with pytest.raises(RuntimeError, match="requires at least 2 dimensions"):
            getattr(yg, name)(yg.ones(3), 0.5, True)


def test_rrelu_in_training_draws_slopes_in_its_bounds() -> None:
    x = -yg.ones(1000, dtype=yg.float64)
    slopes = -yg.rrelu(x, 0.1, 0.3, True, yg.Generator().manual_seed(0)).numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03


def _flat(module: Any) -> list[Any]:
    return list(module._flat_weights)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layers_over_flat_weights_as_torch(
    mode: str, bidirectional: bool
) -> None:
    kind = {"lstm": "LSTM", "gru": "GRU"}.get(mode, "RNN")
    options = {} if kind != "RNN" else {"nonlinearity": mode.removeprefix("rnn_")}
    torch.manual_seed(0)
    theirs_module = getattr(torch.nn, kind)(
        3, 4, 2, bidirectional=bidirectional, dtype=torch.float64, **options
    )
    weights = [w.detach().numpy() for w in theirs_module._flat_weights]
    directions = 2 if bidirectional else 1
    x = _randn(2, 5, 3)  # batch first
    states = [_randn(2 * directions, 2, 4) for _ in range(2 if mode == "lstm" else 1)]

    def call(m: Any, *tensors: Any) -> Any:
        x, *rest = tensors
        hx, params = rest[: len(states)], rest[len(states) :]
        hx = list(hx) if mode == "lstm" else hx[0]
        return getattr(m, mode)(x, hx, params, True, 2, 0.0, False, bidirectional, True)

    # PyTorch transposes a batch-first output back in place (TransposeBackward1);
    # here by a transpose (TransposeBackward0).
    _check(call, [x, *states, *weights], node=False)


def test_recurrent_layer_over_packed_data_as_torch() -> None:
    torch.manual_seed(1)
    module = torch.nn.GRU(3, 4, dtype=torch.float64)
    weights = [w.detach().numpy() for w in module._flat_weights]
    data, sizes = _randn(5, 3), np.array([2, 2, 1])

    def call(m: Any, data: Any, batch_sizes: Any, hx: Any, *params: Any) -> Any:
        return m.gru(data, batch_sizes, hx, list(params), True, 1, 0.0, False, False)

    _check(call, [data, sizes, _randn(1, 2, 4), *weights])
