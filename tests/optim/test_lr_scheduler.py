"""Every yg.optim.lr_scheduler class against torch's: the same rates (and
momentums) at every step, bit for bit, the same state dicts, warnings and errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import yamlgrad as yg
from yamlgrad.optim import lr_scheduler

torch = pytest.importorskip("torch")


def optimizers(kind: str = "SGD") -> tuple[Any, Any]:
    """The same two-group optimiser in both libraries."""
    made = []
    for lib in (yg, torch):
        params = [lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)]
        groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.2}]
        if kind == "SGD":
            made.append(lib.optim.SGD(groups, lr=0.1, momentum=0.9))
        else:
            made.append(lib.optim.Adam(groups, lr=0.1))
    return made[0], made[1]


def state(opt: Any) -> list[tuple[Any, ...]]:
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def run(
    make: Callable[[Any, Any], Any],
    steps: int = 40,
    kind: str = "SGD",
    metric: Callable[[int], float] | None = None,
) -> None:
    a, b = optimizers(kind)
    sa, sb = make(lr_scheduler, a), make(torch.optim.lr_scheduler, b)
    for i in range(steps):
        assert sa.get_last_lr() == sb.get_last_lr(), i
        assert state(a) == state(b), i
        a.step()
        b.step()
        if metric is None:
            sa.step()
            sb.step()
        else:
            sa.step(metric(i))
            sb.step(metric(i))


CASES: dict[str, Callable[[Any, Any], Any]] = {
    "LambdaLR": lambda m, o: m.LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 / (1 + e)]),
    "StepLR": lambda m, o: m.StepLR(o, step_size=4, gamma=0.7),
    "LinearLR": lambda m, o: m.LinearLR(o, 0.2, 0.9, total_iters=12),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, 0.93),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9 + 0.01 * e),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0),
    "CyclicLR": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5),
    "CyclicLR_triangular2": lambda m, o: m.CyclicLR(
        o, [0.01, 0.02], 0.1, step_size_up=4, step_size_down=3, mode="triangular2"
    ),
    "CyclicLR_exp_range": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.95
    ),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001
    ),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, 1.0, total_steps=41),
    "OneCycleLR_linear_3phase": lambda m, o: m.OneCycleLR(
        o,
        [1.0, 2.0],
        epochs=5,
        steps_per_epoch=9,
        anneal_strategy="linear",
        three_phase=True,
    ),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o,
        [m.LinearLR(o, 0.1, total_iters=5), m.ExponentialLR(o, 0.9), m.StepLR(o, 3)],
        milestones=[5, 12],
    ),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, 0.1, total_iters=4), m.ExponentialLR(o, 0.9)]
    ),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, [3, 6, 6, 20], gamma=0.5),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rates_match_torch(name: str) -> None:
    run(CASES[name])


def test_adam_betas_cycle_as_torch() -> None:
    run(CASES["OneCycleLR"], kind="Adam")
    run(CASES["CyclicLR"], kind="Adam")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"mode": "max", "threshold_mode": "abs", "patience": 2, "cooldown": 2},
        {"patience": 1, "min_lr": [0.05, 0.0], "factor": 0.5},
    ],
)
def test_reduce_lr_on_plateau(options: dict[str, Any]) -> None:
    run(
        lambda m, o: m.ReduceLROnPlateau(o, **options),
        steps=60,
        metric=lambda i: 1.0 / (1 + min(i, 10)) + 0.001 * (i % 4),
    )


CLOSED = [
    "LambdaLR",
    "MultiplicativeLR",
    "CyclicLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "PolynomialLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
]
CLOSED_OPTIONS: dict[str, dict[str, Any]] = {
    "LambdaLR": {"lr_lambda": lambda e: 0.9**e},
    "MultiplicativeLR": {"lr_lambda": lambda e: 0.9},
    "CyclicLR": {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3},
    "StepLR": {"step_size": 3},
    "MultiStepLR": {"milestones": [2, 5]},
    "ConstantLR": {"total_iters": 4},
    "LinearLR": {"total_iters": 6},
    "ExponentialLR": {"gamma": 0.8},
    "PolynomialLR": {"total_iters": 8},
    "CosineAnnealingLR": {"T_max": 7},
    "CosineAnnealingWarmRestarts": {"T_0": 3, "T_mult": 2},
}


@pytest.mark.parametrize("name", CLOSED)
def test_step_with_epoch_uses_the_closed_form_and_warns(name: str) -> None:
    a, b = optimizers()
    sa = getattr(lr_scheduler, name)(a, **CLOSED_OPTIONS[name])
    sb = getattr(torch.optim.lr_scheduler, name)(b, **CLOSED_OPTIONS[name])
    for epoch in [4, 1, 9, 2.5 if name == "CosineAnnealingWarmRestarts" else 3, 15]:
        with warnings.catch_warnings(record=True) as mine:
            warnings.simplefilter("always")
            a.step()
            sa.step(epoch)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            b.step()
            sb.step(epoch)
        assert [str(w.message) for w in mine] == [str(w.message) for w in theirs]
        assert sa.get_last_lr() == sb.get_last_lr()


def messages(lib: Any) -> list[str]:
    params = [lib.zeros(1, requires_grad=True)]
    opt = lib.optim.SGD(params, lr=0.1)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step()  # before optimizer.step()
        sched.get_lr()
    return [str(w.message) for w in caught]


def test_warnings_match_torch() -> None:
    mine = messages(yg)
    assert mine == messages(torch)
    assert len(mine) == 2


def errors(m: Any, lib: Any) -> list[str]:
    texts = []
    sgd = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
    adagrad = lib.optim.Adagrad([lib.zeros(1, requires_grad=True)], lr=0.1)
    calls = [
        lambda: m.ConstantLR(sgd, factor=2.0),
        lambda: m.ReduceLROnPlateau(sgd, factor=1.0),
        lambda: m.ReduceLROnPlateau(sgd, mode="up"),
        lambda: m.ReduceLROnPlateau(sgd, min_lr=[0.1, 0.2]),
        lambda: m.CyclicLR(sgd, 0.1, 1.0, mode="x"),
        lambda: m.CyclicLR(adagrad, 0.1, 1.0),
        lambda: m.CyclicLR(sgd, [0.1, 0.2], 1.0, cycle_momentum=False),
        lambda: m.CosineAnnealingWarmRestarts(sgd, T_0=0),
        lambda: m.CosineAnnealingWarmRestarts(sgd, T_0=2, T_mult=1.5),
        lambda: m.OneCycleLR(sgd, 1.0),
        lambda: m.OneCycleLR(sgd, 1.0, total_steps=-1),
        lambda: m.OneCycleLR(sgd, 1.0, total_steps=10, pct_start=2.0),
        lambda: m.OneCycleLR(sgd, 1.0, total_steps=10, anneal_strategy="x"),
        lambda: m.SequentialLR(sgd, [], []),
        lambda: m.SequentialLR(sgd, [m.StepLR(sgd, 2)], [3]),
        lambda: m.SequentialLR(sgd, [m.ReduceLROnPlateau(sgd)], []),
        lambda: m.ChainedScheduler([]),
        lambda: m.MultiplicativeLR(sgd, 3),
        lambda: m.LambdaLR(sgd, [lambda e: 1.0] * 2),
        lambda: m.StepLR(
            lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1), 2, last_epoch=3
        ),
    ]
    for call in calls:
        with pytest.raises((ValueError, TypeError, KeyError)) as info:
            call()
        texts.append(f"{type(info.value).__name__}: {info.value}")
    one_cycle = m.OneCycleLR(lib.optim.SGD([lib.zeros(1)], lr=0.1), 1.0, total_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_cycle.step()
        one_cycle.step()
    with pytest.raises(ValueError) as info:
        one_cycle.step()
    texts.append(str(info.value))
    return texts


def test_errors_match_torch() -> None:
    assert errors(lr_scheduler, yg) == errors(torch.optim.lr_scheduler, torch)


@pytest.mark.parametrize(
    "name",
    [
        "OneCycleLR",
        "CyclicLR",
        "SequentialLR",
        "ChainedScheduler",
        "MultiplicativeLR",
        "CosineAnnealingWarmRestarts",
    ],
)
def test_state_dict_resumes_and_has_torchs_keys(name: str) -> None:
    a, b = optimizers()
    sa, sb = CASES[name](lr_scheduler, a), CASES[name](torch.optim.lr_scheduler, b)
    for _ in range(7):
        a.step()
        sa.step()
        b.step()
        sb.step()
    mine, theirs = sa.state_dict(), sb.state_dict()
    assert sorted(mine) == sorted(theirs)
    expected = []
    for _ in range(5):
        a.step()
        sa.step()
        expected.append(sa.get_last_lr())
    a2, _ = optimizers()
    resumed = CASES[name](lr_scheduler, a2)
    resumed.load_state_dict(mine)
    for group, lr in zip(a2.param_groups, mine["_last_lr"]):
        group["lr"] = lr
    got = []
    for _ in range(5):
        a2.step()
        resumed.step()
        got.append(resumed.get_last_lr())
    # Chainable rates build on the group's lr, restored above from _last_lr.
    assert got == expected


def test_plateau_state_dict_keys() -> None:
    a, b = optimizers()
    sa = lr_scheduler.ReduceLROnPlateau(a)
    sb = torch.optim.lr_scheduler.ReduceLROnPlateau(b)
    sa.step(1.0)
    sb.step(1.0)
    assert sorted(sa.state_dict()) == sorted(sb.state_dict())
    assert sa.state_dict()["best"] == sb.state_dict()["best"] == 1.0
    assert math.isinf(lr_scheduler.ReduceLROnPlateau(a, mode="max").best)


@pytest.mark.parametrize("name", list(CASES))
def test_torchs_state_dict_resumes_a_yamlgrad_scheduler(name: str) -> None:
    """Seven steps in torch, its state dict loaded into a fresh yamlgrad
    scheduler, then thirty more steps in both: the same rates throughout."""
    a, b = optimizers()
    sb = CASES[name](torch.optim.lr_scheduler, b)
    for _ in range(7):
        b.step()
        sb.step()
    sa = CASES[name](lr_scheduler, a)
    sa.load_state_dict(sb.state_dict())
    for mine, theirs in zip(a.param_groups, b.param_groups):
        mine.update({k: v for k, v in theirs.items() if k != "params"})
    assert sa.get_last_lr() == sb.get_last_lr()
    for i in range(30):
        a.step()
        b.step()
        sa.step()
        sb.step()
        assert sa.get_last_lr() == sb.get_last_lr(), i
        assert state(a) == state(b), i


def test_plateau_resumes_from_torchs_state_dict() -> None:
    a, b = optimizers()
    sb = torch.optim.lr_scheduler.ReduceLROnPlateau(b, patience=1, factor=0.5)
    metric = [1.0, 0.9, 0.95, 0.97, 0.96, 0.99, 0.5]
    for value in metric:
        sb.step(value)
    sa = lr_scheduler.ReduceLROnPlateau(a)
    sa.load_state_dict(sb.state_dict())
    for mine, theirs in zip(a.param_groups, b.param_groups):
        mine["lr"] = theirs["lr"]
    for i in range(30):
        value = 0.5 + 0.01 * (i % 5)
        sa.step(value)
        sb.step(value)
        assert sa.get_last_lr() == sb.get_last_lr(), i
