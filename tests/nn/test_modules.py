"""yg.nn Modules against torch.nn: the same weights give the same outputs and
gradients; reprs, state_dict keys, load_state_dict and hooks behave as PyTorch's."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn as nn

torch = pytest.importorskip("torch")
tnn = torch.nn

RNG = np.random.default_rng(0)


def load_from_torch(module: nn.Module, reference: Any) -> None:
    """Copy the torch module's state (as numpy) into the yamlgrad module."""
    state = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    module.load_state_dict(state)


def run_pair(
    module: nn.Module, reference: Any, inputs: list[np.ndarray], grad_inputs: bool
) -> None:
    """Forward and backward through both; compare outputs, input and parameter
    gradients and buffers."""
    module.double()
    reference.double()
    load_from_torch(module, reference)
    ys = [
        yg.tensor(a, requires_grad=grad_inputs and a.dtype.kind == "f") for a in inputs
    ]
    ts = [
        torch.tensor(a, requires_grad=grad_inputs and a.dtype.kind == "f")
        for a in inputs
    ]
    out = module(*ys)
    expected = reference(*ts)
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), atol=1e-10
    )
    if not expected.requires_grad:
        return
    weights = RNG.standard_normal(tuple(expected.shape))
    (out * yg.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for y, t in zip(ys, ts):
        if t.grad is not None:
            np.testing.assert_allclose(y.grad.numpy(), t.grad.numpy(), atol=1e-9)
    params = dict(module.named_parameters())
    for name, p in reference.named_parameters():
        if p.grad is None:
            assert params[name].grad is None, name
            continue
        np.testing.assert_allclose(
            params[name].grad.numpy(), p.grad.numpy(), atol=1e-9, err_msg=name
        )
    buffers = dict(module.named_buffers())
    for name, b in reference.named_buffers():
        np.testing.assert_allclose(buffers[name].numpy(), b.numpy(), atol=1e-12)


def x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


LAYERS = [
    ("Linear", (4, 3), {}, [x(5, 4)]),
    ("Linear", (4, 3), {"bias": False}, [x(2, 7, 4)]),
    ("Bilinear", (3, 4, 2), {}, [x(5, 3), x(5, 4)]),
    ("Identity", (), {}, [x(3)]),
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1}, [x(2, 2, 9)]),
    ("Conv1d", (2, 4, 3), {"padding": "same", "dilation": 2}, [x(1, 2, 8)]),
    ("Conv2d", (2, 4, 3), {"padding": 1, "groups": 2}, [x(2, 2, 6, 6)]),
    ("Conv2d", (3, 2, (2, 3)), {"stride": (2, 1), "bias": False}, [x(1, 3, 7, 6)]),
    (
        "Conv1d",
        (2, 4, 3),
        {"stride": 2, "padding": 2, "padding_mode": "reflect"},
        [x(2, 2, 9)],
    ),
    (
        "Conv2d",
        (2, 3, 3),
        {"padding": (1, 2), "padding_mode": "reflect"},
        [x(2, 2, 5, 6)],
    ),
    (
        "Conv2d",
        (2, 4, 2),
        {"padding": "same", "dilation": (1, 2), "padding_mode": "replicate"},
        [x(1, 2, 6, 7)],
    ),
    (
        "Conv1d",
        (2, 4, 3),
        {"padding": "valid", "padding_mode": "replicate"},
        [x(1, 2, 6)],
    ),
    ("ConvTranspose2d", (2, 3, 3), {"stride": 2, "output_padding": 1}, [x(1, 2, 4, 4)]),
    ("MaxPool1d", (2,), {}, [x(2, 3, 8)]),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1}, [x(2, 2, 7, 7)]),
    ("AvgPool1d", (3,), {"stride": 2}, [x(2, 3, 9)]),
    ("AvgPool2d", (2,), {"ceil_mode": True}, [x(1, 2, 5, 5)]),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, [x(2, 2, 6, 7)]),
    ("LPPool1d", (2, 3), {"stride": 2}, [x(2, 3, 9)]),
    ("LPPool2d", (2, (2, 3)), {"ceil_mode": True}, [x(1, 2, 5, 7)]),
    ("BatchNorm1d", (3,), {}, [x(6, 3)]),
    ("BatchNorm1d", (3,), {"momentum": None}, [x(4, 3, 5)]),
    ("BatchNorm2d", (3,), {"affine": False}, [x(2, 3, 4, 4)]),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, [x(2, 3, 4, 4)]),
    ("LayerNorm", ((3, 4),), {}, [x(2, 3, 4)]),
    ("LayerNorm", (4,), {"elementwise_affine": False}, [x(5, 4)]),
    ("GroupNorm", (2, 4), {}, [x(3, 4, 5)]),
    ("Embedding", (10, 3), {"padding_idx": 0}, [np.array([[0, 2, 9], [4, 0, 1]])]),
    ("Dropout", (0.0,), {}, [x(3, 4)]),
    ("Flatten", (), {}, [x(2, 3, 4)]),
    ("Unflatten", (1, (2, 3)), {}, [x(4, 6)]),
    ("ReLU", (), {}, [x(3, 4)]),
    ("ReLU6", (), {}, [3 * x(3, 4)]),
    ("Hardtanh", (-0.5, 0.7), {}, [x(3, 4)]),
    ("GELU", (), {"approximate": "tanh"}, [x(3, 4)]),
    ("SiLU", (), {}, [x(3, 4)]),
    ("Mish", (), {}, [x(3, 4)]),
    ("Softplus", (), {"beta": 2.0, "threshold": 1.0}, [x(3, 4)]),
    ("ELU", (0.5,), {}, [x(3, 4)]),
    ("CELU", (0.7,), {}, [x(3, 4)]),
    ("SELU", (), {}, [x(3, 4)]),
    ("LeakyReLU", (0.2,), {}, [x(3, 4)]),
    ("Hardswish", (), {}, [2 * x(3, 4)]),
    ("Hardsigmoid", (), {}, [2 * x(3, 4)]),
    ("LogSigmoid", (), {}, [x(3, 4)]),
    ("Sigmoid", (), {}, [x(3, 4)]),
    ("Tanh", (), {}, [x(3, 4)]),
    ("Softmax", (1,), {}, [x(3, 4)]),
    ("LogSoftmax", (0,), {}, [x(3, 4)]),
]


@pytest.mark.parametrize(
    "name,args,kwargs,inputs", LAYERS, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAYERS)]
)
def test_layer_matches_torch(
    name: str, args: tuple, kwargs: dict, inputs: list
) -> None:
    module = getattr(nn, name)(*args, **kwargs)
    reference = getattr(tnn, name)(*args, **kwargs)
    assert repr(module) == repr(reference)
    assert [n for n, _ in module.named_parameters()] == [
        n for n, _ in reference.named_parameters()
    ]
    assert list(module.state_dict()) == list(reference.state_dict())
    for (n, p), (_, q) in zip(module.named_parameters(), reference.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), n
    run_pair(module, reference, inputs, grad_inputs=name != "Embedding")


def test_batchnorm_eval_uses_running_statistics() -> None:
    module, reference = nn.BatchNorm2d(3), tnn.BatchNorm2d(3)
    for _ in range(3):
        run_pair(module, reference, [x(4, 3, 2, 2)], grad_inputs=True)
    module.eval()
    reference.eval()
    assert not module.training
    run_pair(module, reference, [x(2, 3, 2, 2)], grad_inputs=True)
    assert module.num_batches_tracked.item() == reference.num_batches_tracked.item()


def test_dropout_follows_training_flag() -> None:
    drop = nn.Dropout(0.5)
    t = yg.ones(1000)
    kept = drop(t)
    assert 300 < int((kept == 0).sum().item()) < 700
    assert set(np.unique(kept.detach().numpy())) <= {0.0, 2.0}
    drop.eval()
    assert drop(t) is t or (drop(t) == t).all().item()


LOSSES = [
    ("MSELoss", {}, "float"),
    ("L1Loss", {"reduction": "sum"}, "float"),
    ("SmoothL1Loss", {"beta": 0.5}, "float"),
    ("HuberLoss", {"delta": 0.3}, "float"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, "class"),
    ("CrossEntropyLoss", {"ignore_index": 1, "reduction": "sum"}, "class"),
    ("NLLLoss", {}, "class"),
    ("BCELoss", {}, "prob"),
    ("BCEWithLogitsLoss", {}, "prob"),
    ("KLDivLoss", {"reduction": "batchmean"}, "float"),
    ("MSELoss", {"size_average": False}, "float"),
]


@pytest.mark.parametrize("name,kwargs,target", LOSSES)
def test_loss_module_matches_torch(name: str, kwargs: dict, target: str) -> None:
    inputs = x(6, 4)
    if name == "BCELoss":
        inputs = 1 / (1 + np.exp(-inputs))
    if target == "class":
        labels = RNG.integers(0, 4, 6)
    elif target == "prob":
        labels = RNG.random((6, 4))
    else:
        labels = x(6, 4)
    module, reference = getattr(nn, name)(**kwargs), getattr(tnn, name)(**kwargs)
    assert repr(module) == repr(reference)
    assert module.reduction == reference.reduction
    a = yg.tensor(inputs, requires_grad=True)
    b = torch.tensor(inputs, requires_grad=True)
    out, expected = module(a, yg.tensor(labels)), reference(b, torch.tensor(labels))
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), atol=1e-12
    )
    out.backward()
    expected.backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)


def test_weighted_loss_registers_its_weight_as_a_buffer() -> None:
    weight = np.array([0.2, 1.0, 3.0])
    module = nn.CrossEntropyLoss(weight=yg.tensor(weight))
    reference = tnn.CrossEntropyLoss(weight=torch.tensor(weight))
    assert list(module.state_dict()) == list(reference.state_dict()) == ["weight"]
    inputs, labels = x(5, 3), RNG.integers(0, 3, 5)
    np.testing.assert_allclose(
        module(yg.tensor(inputs), yg.tensor(labels)).item(),
        reference(torch.tensor(inputs), torch.tensor(labels)).item(),
        rtol=1e-12,
    )


def build(self: Any, lib: Any) -> None:
    """The same layers on a yamlgrad or a torch module."""
    self.features = lib.Sequential(
        lib.Conv2d(1, 4, 3, padding=1),
        lib.BatchNorm2d(4),
        lib.ReLU(),
        lib.MaxPool2d(2),
        lib.Flatten(),
    )
    self.heads = lib.ModuleDict({"a": lib.Linear(16, 3), "b": lib.Linear(16, 2)})
    self.extra = lib.ModuleList([lib.Dropout(0.1), lib.GELU()])


def forward(self: Any, inputs: Any) -> Any:
    return self.heads["a"](self.extra[1](self.features(inputs)))


class Net(nn.Module):
    def __init__(self, lib: Any) -> None:
        super().__init__()
        build(self, lib)

    forward = forward


class TorchNet(tnn.Module):
    def __init__(self, lib: Any) -> None:
        super().__init__()
        build(self, lib)

    forward = forward


def test_composite_model_matches_torch() -> None:
    model, reference = Net(nn), TorchNet(tnn)
    assert repr(model) == repr(reference).replace("TorchNet(", "Net(", 1)
    assert list(model.state_dict()) == list(reference.state_dict())
    assert [n for n, _ in model.named_modules()] == [
        n for n, _ in reference.named_modules()
    ]
    assert [n for n, _ in model.named_children()] == [
        n for n, _ in reference.named_children()
    ]
    assert [n for n, _ in model.named_buffers()] == [
        n for n, _ in reference.named_buffers()
    ]
    model.eval()
    reference.eval()
    run_pair(model, reference, [x(2, 1, 4, 4)], grad_inputs=True)


def test_containers_index_like_torch() -> None:
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[-1], nn.Linear) and seq[-1] is seq[2]
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    del seq[0]
    assert list(seq._modules) == ["0", "1"]
    seq.append(nn.Tanh())
    assert len(seq) == 3
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]
    named = nn.Sequential(OrderedDict(first=nn.ReLU(), second=nn.Tanh()))
    assert list(named._modules) == ["first", "second"]
    layers = nn.ModuleList([nn.Linear(1, 1)])
    layers.append(nn.Linear(1, 2))
    layers.insert(0, nn.ReLU())
    assert [type(m).__name__ for m in layers] == ["ReLU", "Linear", "Linear"]
    assert len(list(layers.parameters())) == 4


def test_shared_parameters_are_counted_once() -> None:
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    reference_shared = tnn.Linear(3, 3)
    reference = tnn.Sequential(reference_shared, tnn.ReLU(), reference_shared)
    assert len(list(model.parameters())) == len(list(reference.parameters())) == 2
    assert list(model.state_dict()) == list(reference.state_dict())


def test_load_state_dict_errors_and_results_match_torch() -> None:
    model, reference = nn.Linear(3, 2), tnn.Linear(3, 2)
    bad = {"weight": np.zeros((2, 3)), "extra": np.zeros(1)}
    tbad = {"weight": torch.zeros(2, 3), "extra": torch.zeros(1)}
    with pytest.raises(RuntimeError) as ours:
        model.load_state_dict(bad)
    with pytest.raises(RuntimeError) as theirs:
        reference.load_state_dict(tbad)
    assert str(ours.value) == str(theirs.value)
    result, expected = model.load_state_dict(
        bad, strict=False
    ), reference.load_state_dict(tbad, strict=False)
    assert result.missing_keys == expected.missing_keys == ["bias"]
    assert result.unexpected_keys == expected.unexpected_keys == ["extra"]
    assert repr(model.load_state_dict(model.state_dict())) == repr(
        reference.load_state_dict(reference.state_dict())
    )
    with pytest.raises(RuntimeError) as ours:
        model.load_state_dict({"weight": np.zeros((3, 3)), "bias": np.zeros(2)})
    with pytest.raises(RuntimeError) as theirs:
        reference.load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(2)})
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "yamlgrad.Size")


def test_load_state_dict_copies_in_place() -> None:
    model = nn.Linear(3, 2)
    weight = model.weight
    version = weight._version
    state = {k: np.full(tuple(v.shape), 0.5) for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    assert model.weight is weight and weight._version > version
    assert (weight == 0.5).all().item()


def test_state_dict_is_detached_unless_keep_vars() -> None:
    model = nn.Linear(2, 2)
    assert not model.state_dict()["weight"].requires_grad
    assert model.state_dict(keep_vars=True)["weight"] is model.weight


def test_forward_hooks_run_in_order_and_replace() -> None:
    for lib, ones in ((nn, yg.ones), (tnn, torch.ones)):
        layer = lib.Linear(2, 2)
        calls: list[str] = []
        pre = layer.register_forward_pre_hook(
            lambda m, args: calls.append("pre") or (args[0] * 0,)
        )
        layer.register_forward_hook(
            lambda m, args, out: calls.append("post") or out + 1
        )
        first = layer.register_forward_hook(
            lambda m, args, out: calls.append("first"), prepend=True
        )
        out = layer(ones(1, 2))
        assert calls == ["pre", "first", "post"]
        assert np.allclose(out.detach().numpy(), layer.bias.detach().numpy() + 1)
        pre.remove()
        first.remove()
        calls.clear()
        layer(ones(1, 2))
        assert calls == ["post"]


def test_assignment_rules_match_torch() -> None:
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'yamlgrad.Tensor' as parameter"):
        model.weight = yg.zeros(2, 2)
    model.bias = None
    assert model.bias is None and "bias" not in model.state_dict()
    model.note = 3
    assert model.note == 3 and "note" not in model.state_dict()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        model.nope
    holder = nn.Module()
    holder.child = nn.ReLU()
    with pytest.raises(TypeError, match="as child module 'child'"):
        holder.child = 3
    del holder.child
    assert list(holder.children()) == []

    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(yg.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_train_eval_zero_grad_apply_and_dtype() -> None:
    model = Net(nn)
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("yes")
    model(yg.randn(2, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in model.heads["a"].parameters())
    model.zero_grad(set_to_none=False)
    assert all((p.grad == 0).all().item() for p in model.heads["a"].parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    seen: list[str] = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 2
    weight = model.heads["a"].weight
    model.double()
    assert model.heads["a"].weight is weight and weight.dtype == yg.float64
    assert model.features[1].num_batches_tracked.dtype == yg.int64
    assert model.get_submodule("heads.a") is model.heads["a"]
    assert model.get_parameter("heads.a.weight") is weight


def test_parameter_is_a_leaf_tensor() -> None:
    p = nn.Parameter(yg.ones(2))
    assert isinstance(p, yg.Tensor) and p.is_leaf and p.requires_grad
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2)))
    q = p * 2
    assert type(q) is yg.Tensor and q.grad_fn is not None
    frozen = nn.Parameter(yg.ones(2), requires_grad=False)
    assert not frozen.requires_grad
    layer = nn.Linear(2, 2)
    copied = copy.copy(layer.weight)
    assert isinstance(copied, nn.Parameter)


def test_default_initialisation_bounds_match_torch() -> None:
    yg.manual_seed(0)
    for lib in (nn, tnn):
        layer = lib.Linear(400, 300)
        bound = 1 / np.sqrt(400)
        w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
        assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
        conv = lib.Conv2d(8, 16, 3)
        fan_in = 8 * 9
        assert np.abs(conv.weight.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
        emb = lib.Embedding(1000, 50, padding_idx=3)
        table = emb.weight.detach().numpy()
        assert abs(table.std() - 1) < 0.02 and (table[3] == 0).all()


def test_same_seed_same_parameters() -> None:
    yg.manual_seed(7)
    a = Net(nn).state_dict()
    yg.manual_seed(7)
    b = Net(nn).state_dict()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)


def test_constructor_errors_match_torch() -> None:
    cases = [
        ("Conv2d", (3, 4, 3), {"groups": 2}),
        ("Conv2d", (4, 3, 3), {"groups": 2}),
        ("Conv2d", (4, 4, 3), {"padding": "same", "stride": 2}),
        ("GroupNorm", (3, 4), {}),
        ("Dropout", (1.5,), {}),
    ]
    for name, args, kwargs in cases:
        with pytest.raises(ValueError) as theirs:
            getattr(tnn, name)(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            getattr(nn, name)(*args, **kwargs)
        assert str(ours.value) == str(theirs.value), name
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(yg.zeros(2, 3))
