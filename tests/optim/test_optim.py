"""yg.optim and yg.optim.lr_scheduler against torch: the same problem, the same
parameter trajectories and learning rates."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.optim as optim
from yamlgrad.optim import lr_scheduler

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
INIT = [
    RNG.standard_normal((4, 3)),
    RNG.standard_normal(3),
    RNG.standard_normal((3, 2)),
]
X = RNG.standard_normal((8, 4))
Y = RNG.standard_normal((8, 2))


def loss_of(lib: Any, params: list[Any], x: Any, y: Any) -> Any:
    w1, b1, w2 = params
    hidden = (x @ w1 + b1).tanh()
    return ((hidden @ w2 - y) ** 2).mean()


def trajectory(lib: str, name: str, options: dict, steps: int, dtype: str) -> list:
    """Parameters after each of `steps` steps; the second group has its own lr,
    and the last parameter gets no gradient on odd steps (skipped, as PyTorch)."""
    if lib == "yg":
        make = lambda a: yg.tensor(a.astype(dtype), requires_grad=True)  # noqa: E731
        x, y, module = yg.tensor(X.astype(dtype)), yg.tensor(Y.astype(dtype)), optim
    else:
        make = lambda a: torch.tensor(a.astype(dtype), requires_grad=True)  # noqa: E731
        x, y, module = (
            torch.tensor(X.astype(dtype)),
            torch.tensor(Y.astype(dtype)),
            torch.optim,
        )
    params = [make(a) for a in INIT]
    groups = [{"params": params[:2]}, {"params": params[2:], "lr": 0.03}]
    opt = getattr(module, name)(groups, **options)
    history = []
    for step in range(steps):
        opt.zero_grad()
        loss_of(lib, params, x, y).backward()
        if step % 2:
            params[2].grad = None
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "maximize": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "eps": 1e-6}),
]


@pytest.mark.parametrize(
    "name,options", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_float64_trajectory_matches_torch(name: str, options: dict) -> None:
    ours = trajectory("yg", name, options, 30, "float64")
    theirs = trajectory("torch", name, options, 30, "float64")
    for step, (a, b) in enumerate(zip(ours, theirs)):
        for p, q in zip(a, b):
            np.testing.assert_allclose(
                p, q, rtol=1e-9, atol=1e-10, err_msg=f"step {step}"
            )


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_float32_trajectory_matches_torch(name: str) -> None:
    options = {"lr": 0.01, "momentum": 0.9} if name == "SGD" else {"lr": 0.01}
    ours = trajectory("yg", name, options, 20, "float32")
    theirs = trajectory("torch", name, options, 20, "float32")
    assert ours[-1][0].dtype == np.float32
    for p, q in zip(ours[-1], theirs[-1]):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "name,options",
    [
        ("SGD", {"lr": 0.1, "momentum": 0.9}),
        ("Adam", {"lr": 0.01, "amsgrad": True}),
        ("RMSprop", {"centered": True}),
        ("Adagrad", {}),
    ],
)
def test_state_dict_round_trip_continues_identically(
    name: str, options: dict, tmp_path: Any
) -> None:
    def setup() -> tuple[list, Any]:
        params = [yg.tensor(a, requires_grad=True) for a in INIT]
        return params, getattr(optim, name)(params, **options)

    def run(params: list, opt: Any, steps: int) -> None:
        for _ in range(steps):
            opt.zero_grad()
            loss_of("yg", params, yg.tensor(X), yg.tensor(Y)).backward()
            opt.step()

    params, opt = setup()
    run(params, opt, 5)
    yg.save({"optimizer": opt.state_dict(), "params": params}, tmp_path / "ckpt.npz")
    run(params, opt, 5)
    restored, opt2 = setup()
    checkpoint = yg.load(tmp_path / "ckpt.npz")
    with yg.no_grad():
        for p, saved in zip(restored, checkpoint["params"]):
            p.copy_(saved)
    opt2.load_state_dict(checkpoint["optimizer"])
    run(restored, opt2, 5)
    for p, q in zip(params, restored):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_state_dict_layout_matches_torch() -> None:
    ours = [yg.tensor(a, requires_grad=True) for a in INIT]
    theirs = [torch.tensor(a, requires_grad=True) for a in INIT]
    a = optim.Adam([{"params": ours[:2]}, {"params": ours[2:], "lr": 0.1}])
    b = torch.optim.Adam([{"params": theirs[:2]}, {"params": theirs[2:], "lr": 0.1}])
    for opt, params, lib in ((a, ours, yg), (b, theirs, torch)):
        sum((p**2).sum() for p in params).backward()
        opt.step()
    sa, sb = a.state_dict(), b.state_dict()
    assert [g["params"] for g in sa["param_groups"]] == [
        g["params"] for g in sb["param_groups"]
    ]
    assert sorted(sa["state"]) == sorted(sb["state"])
    for key in sb["state"]:
        assert set(sa["state"][key]) == set(sb["state"][key])
        np.testing.assert_allclose(
            sa["state"][key]["exp_avg"].numpy(), sb["state"][key]["exp_avg"].numpy()
        )
    for ga, gb in zip(sa["param_groups"], sb["param_groups"]):
        for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"):
            assert ga[key] == gb[key]


def test_step_is_in_place_outside_the_graph_and_bumps_the_version() -> None:
    p = yg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.5)
    (p * p).sum().backward()
    data, version = p.detach().numpy(), p._version
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p._version == version + 1
    np.testing.assert_allclose(data, [0.0, 0.0])


def test_closure_is_run_with_grad_and_returned() -> None:
    p = yg.tensor([3.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)

    def closure() -> Any:
        opt.zero_grad()
        loss = (p**2).sum()
        loss.backward()
        return loss

    with yg.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0 and abs(p.item() - 2.4) < 1e-6


def test_zero_grad_matches_torch() -> None:
    p = yg.tensor([1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.item() == 0.0
    opt.zero_grad()
    assert p.grad is None


ERRORS = [
    ("SGD", {"lr": -1.0}),
    ("SGD", {"lr": 0.1, "momentum": -0.5}),
    ("SGD", {"lr": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "weight_decay": -1}),
    ("Adam", {"betas": (1.0, 0.9)}),
    ("Adam", {"betas": (0.9, -0.1)}),
    ("Adam", {"eps": -1.0}),
    ("RMSprop", {"alpha": -1.0}),
    ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"initial_accumulator_value": -1.0}),
]


@pytest.mark.parametrize("name,options", ERRORS)
def test_validation_errors_match_torch(name: str, options: dict) -> None:
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **options)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([yg.zeros(1, requires_grad=True)], **options)
    assert str(ours.value) == str(theirs.value)


def test_parameter_errors_match_torch() -> None:
    leaf = [yg.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)]
    for lib, p in ((optim, leaf[0]), (torch.optim, leaf[1])):
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.SGD([p * 2], lr=0.1)
        with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
            lib.SGD([], lr=0.1)
        with pytest.raises(TypeError, match="ordered collections"):
            lib.SGD([p], lr=0.1).add_param_group({"params": {p * 1}})
        with pytest.raises(ValueError, match="more than one parameter group"):
            lib.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def test_works_with_modules() -> None:
    yg.manual_seed(0)
    model = yg.nn.Sequential(yg.nn.Linear(4, 8), yg.nn.ReLU(), yg.nn.Linear(8, 1))
    opt = optim.Adam(model.parameters(), lr=0.05)
    x, y = yg.randn(32, 4), yg.randn(32, 1)
    first = None
    for _ in range(50):
        opt.zero_grad()
        loss = yg.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.5 * first


SCHEDULERS = [
    ("StepLR", {"step_size": 7, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [3, 10, 10, 30], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 12, "eta_min": 0.001}),
    ("CosineAnnealingLR", {"T_max": 1}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 0.9, "total_iters": 8}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.95**epoch + 0.01 * (epoch % 3)}),
]


@pytest.mark.parametrize("name,options", SCHEDULERS, ids=[c[0] for c in SCHEDULERS])
def test_scheduler_rates_match_torch(name: str, options: dict) -> None:
    ours_p = [yg.zeros(1, requires_grad=True), yg.zeros(1, requires_grad=True)]
    theirs_p = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
    a = optim.SGD([{"params": ours_p[:1]}, {"params": ours_p[1:], "lr": 0.2}], lr=0.1)
    b = torch.optim.SGD(
        [{"params": theirs_p[:1]}, {"params": theirs_p[1:], "lr": 0.2}], lr=0.1
    )
    sa = getattr(lr_scheduler, name)(a, **options)
    sb = getattr(torch.optim.lr_scheduler, name)(b, **options)
    for _ in range(50):
        assert sa.get_last_lr() == pytest.approx(sb.get_last_lr(), rel=1e-12, abs=1e-15)
        assert [g["lr"] for g in a.param_groups] == pytest.approx(
            [g["lr"] for g in b.param_groups], rel=1e-12, abs=1e-15
        )
        a.step()
        b.step()
        sa.step()
        sb.step()


def test_scheduler_state_dict_resumes() -> None:
    p = yg.zeros(1, requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        sched.step()
    state = sched.state_dict()
    expected = [sched.step() or sched.get_last_lr()[0] for _ in range(3)]
    opt2 = optim.SGD([yg.zeros(1, requires_grad=True)], lr=1.0)
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
    sched2.load_state_dict(state)
    opt2.param_groups[0]["lr"] = state["_last_lr"][0]
    got = [sched2.step() or sched2.get_last_lr()[0] for _ in range(3)]
    assert got == pytest.approx(expected, rel=1e-15)
    assert math.isclose(
        expected[-1], 0.5 * (1 + math.cos(math.pi * 7 / 10)), rel_tol=1e-12
    )
