"""The same user programs on every backend give numpy's numbers.

Each program below is written once, as a user would write it for numpy, and
runs with its tensors and model moved by `.to(device)` to numpy ("cpu"),
array_api_strict (the standard's reference implementation: any call outside
the standard fails), Dask and, where CuPy and a GPU are present, CuPy
("cuda"). Its results are compared with the numpy run's. On Dask a scheduler
callback counts the computes: forward, backward, double backward, hooks,
in-place ops and transforms compute nothing until `yg.compute`; an optimizer's
step computes each parameter once (it persists them, so the graph stays one
step long).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import fake_cupy
from support import compute_counter, no_gpu_reason
import yamlgrad as yg
import yamlgrad.nn.functional as F
from yamlgrad.runtime.compile import TraceError

# A comparison of array_api_strict's dtypes with numpy's (always unequal, and
# warned about) is a bug: a numpy dtype leaking into another backend's path.
pytestmark = pytest.mark.filterwarnings(
    "error:You are comparing a array_api_strict dtype:UserWarning"
)

dask = pytest.importorskip("dask")
pytest.importorskip("array_api_strict")


BACKENDS = [
    "array_api_strict",
    "dask",
    "fake_cupy",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(
            no_gpu_reason() is not None, reason=str(no_gpu_reason())
        ),
    ),
]


@pytest.fixture(params=BACKENDS)
def device(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The device a test moves its tensors to; `fake_cupy` is "cuda" with a
    stand-in for CuPy (tests/fake_cupy.py), so CuPy's code paths run here."""
    if request.param == "fake_cupy":
        fake_cupy.install(monkeypatch)
        return "cuda"
    return request.param


def _data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((16, 4)),
        "labels": rng.integers(0, 3, 16),
        "w": rng.standard_normal((4, 3)),
        "v": rng.standard_normal(3),
    }


def _mlp(device: str) -> yg.nn.Module:
    yg.manual_seed(0)
    model = yg.nn.Sequential(yg.nn.Linear(4, 8), yg.nn.ReLU(), yg.nn.Linear(8, 3))
    return model.double().to(device)


def _run(program: Callable[[str], list], device: str) -> tuple[list, int]:
    """The program's results as numpy arrays, and how many computes Dask ran
    before `yg.compute` was asked for them."""
    with compute_counter() as counter:
        tensors = program(device)
        before = counter.count
        values = yg.compute(*tensors)
    for t, v in zip(tensors, values):
        assert t is None or str(t.device).partition(":")[0] == device.partition(":")[0]
    return [None if v is None else v.detach().numpy() for v in values], before


def _same_as_numpy(program: Callable[[str], list], device: str) -> int:
    want, _ = _run(program, "cpu")
    got, computes = _run(program, device)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            assert g.dtype == w.dtype
            tol = 1e-10 if w.dtype == np.float64 else 1e-5
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    return computes


# -- the programs ----------------------------------------------------------------------


def mlp_backward(device: str) -> list:
    """A 2-layer MLP, cross-entropy, backward: the loss and every gradient."""
    d = _data()
    model = _mlp(device)
    x, labels = yg.tensor(d["x"]).to(device), yg.tensor(d["labels"]).to(device)
    loss = F.cross_entropy(F.relu(model(x)), labels)
    loss.backward()
    return [loss, *(p.grad for p in model.parameters())]


def double_backward(device: str) -> list:
    """`autograd.grad(create_graph=True)`, then a gradient of the gradient."""
    d = _data()
    x = yg.tensor(d["x"]).to(device).requires_grad_()
    w = yg.tensor(d["w"]).to(device).requires_grad_()
    (gx,) = yg.autograd.grad(((x @ w).tanh() ** 2).sum(), x, create_graph=True)
    ggx, ggw = yg.autograd.grad((gx * gx).sum(), [x, w])
    return [gx.detach(), ggx, ggw]


def hooks_and_retain_grad(device: str) -> list:
    """A tensor hook doubling a gradient, retain_grad on an intermediate, a
    hook on a leaf."""
    d = _data()
    x = yg.tensor(d["x"]).to(device).requires_grad_()
    w = yg.tensor(d["w"]).to(device).requires_grad_()
    h = x @ w
    h.retain_grad()
    h.register_hook(lambda g: g * 2)
    seen = []
    w.register_hook(lambda g: seen.append(g))
    (h.sin() * h).sum().backward()
    assert len(seen) == 1
    return [h.grad, x.grad, w.grad, seen[0]]


def grad_modes(device: str) -> list:
    """no_grad, requires_grad_, detach: what records and what does not."""
    d = _data()
    w = yg.tensor(d["w"]).to(device)
    assert not w.requires_grad
    w.requires_grad_()
    with yg.no_grad():
        frozen = w * 3
    assert not frozen.requires_grad and frozen.grad_fn is None
    cut = (w * 2).detach()
    assert cut.grad_fn is None and not cut.requires_grad
    loss = (w * cut + frozen).exp().sum()
    loss.backward()
    return [frozen, cut, w.grad]


def inplace_ops(device: str) -> list:
    """In-place ops on an intermediate (recorded) and on a leaf under no_grad
    (an optimizer's update by hand); immutable arrays take the result as
    their new array."""
    d = _data()
    w = yg.tensor(d["w"]).to(device).requires_grad_()
    x = yg.tensor(d["x"]).to(device)
    h = x @ w
    version = h._version
    h.mul_(2).add_(1.0).tanh_()
    assert h._version == version + 3
    loss = (h * h).mean()
    loss.backward()
    with yg.no_grad():
        w -= 0.1 * w.grad
    return [loss, h.detach(), w.detach()]


def transforms(device: str) -> list:
    """`yg.func.grad`, `vmap` and `jvp`, as torch.func's."""
    d = _data()
    x, v = yg.tensor(d["x"]).to(device), yg.tensor(d["v"]).to(device)
    w = yg.tensor(d["w"]).to(device)

    def f(w: yg.Tensor) -> yg.Tensor:
        return ((x @ w).sin() ** 2).sum()

    g = yg.func.grad(f)(w)
    rows = yg.func.vmap(lambda row: (row @ w * v).sum())(x)
    value, tangent = yg.func.jvp(lambda t: (t @ w).tanh(), (x,), (x * 0.5,))
    return [g, rows, value, tangent]


def mixed_dtypes(device: str) -> list:
    """PyTorch's type promotion on every backend: a float32 tensor with a
    float64 0-d tensor, a Python float, an int64 tensor divided, a bool mask."""
    d = _data()
    w = yg.tensor(d["w"], dtype=yg.float32).to(device).requires_grad_()
    x, labels = yg.tensor(d["x"]).to(device), yg.tensor(d["labels"]).to(device)
    y = x.sum() * w * 2.5 + labels[:4, None] / 2 + (w > 0)
    y.sum().backward()
    return [y, w.grad, labels * 2.5, labels + labels]


def draws_and_init(device: str) -> list:
    """Seeded draws land on the tensor's backend: nn.init, an in-place
    sampler, dropout's mask, copy_ from numpy; clip_grad_norm_ in the
    gradients' namespace."""
    d = _data()
    yg.manual_seed(1)
    w = yg.empty(4, 3, dtype=yg.float64).to(device)
    yg.nn.init.xavier_uniform_(w)
    b = yg.zeros(3, dtype=yg.float64).to(device).uniform_(-1.0, 1.0)
    n = yg.zeros(2, 3, dtype=yg.float32).to(device).normal_(2.0, 0.5)
    c = yg.zeros(3, dtype=yg.float64).to(device).copy_(yg.tensor(d["v"]))
    w.requires_grad_()
    x = yg.tensor(d["x"]).to(device)
    h = F.dropout(x @ w, 0.5) + b * c
    h.sum().backward()
    norm = yg.nn.utils.clip_grad_norm_([w], 0.5)
    return [h.detach(), b, c, n, norm, w.grad, yg.randn_like(b), yg.zeros_like(w)]


PROGRAMS = [
    mlp_backward,
    double_backward,
    hooks_and_retain_grad,
    grad_modes,
    inplace_ops,
    transforms,
    mixed_dtypes,
    draws_and_init,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_gives_numpy_numbers(program: Callable, device: str) -> None:
    computes = _same_as_numpy(program, device)
    if device == "dask":
        assert computes == 0  # nothing ran until yg.compute


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_optimizer_steps_give_numpy_numbers(optimizer: str, device: str) -> None:
    steps = 3

    def train(to: str) -> list:
        d = _data()
        model = _mlp(to)
        x, labels = yg.tensor(d["x"]).to(to), yg.tensor(d["labels"]).to(to)
        opt = getattr(yg.optim, optimizer)(model.parameters(), lr=0.1)
        for _ in range(steps):
            opt.zero_grad()
            F.cross_entropy(model(x), labels).backward()
            opt.step()
        return [p.detach() for p in model.parameters()]

    computes = _same_as_numpy(train, device)
    if device == "dask":
        # One compute per parameter and step: the step reads it and persists
        # the result (so the next step's graph starts from values).
        assert computes == steps * len(list(_mlp("cpu").parameters()))


def test_reading_values_into_python(device: str) -> None:
    """`.item()`, `.tolist()`, `bool()` and `float()` read another backend's
    values (a lazy array computed, a GPU's copied), as numpy's."""
    want = mlp_backward("cpu")[0]
    loss = mlp_backward(device)[0]
    assert loss.item() == pytest.approx(want.item(), rel=1e-12)
    assert float(loss) == pytest.approx(float(want), rel=1e-12)
    assert bool(loss > 0) is True
    w = yg.tensor(_data()["w"]).to(device)
    assert w.tolist() == yg.tensor(_data()["w"]).tolist()


class _WrongSin(yg.autograd.Function):
    """sin with a wrong backward (cos doubled): what gradcheck must catch."""

    @staticmethod
    def forward(ctx: object, t: yg.Tensor) -> yg.Tensor:
        ctx.save_for_backward(t)
        return t.sin()

    @staticmethod
    def backward(ctx: object, grad: yg.Tensor) -> yg.Tensor:
        (t,) = ctx.saved_tensors
        return grad * t.cos() * 2


def test_gradcheck_on_the_backend(device: str) -> None:
    """gradcheck and gradgradcheck perturb another backend's inputs (in host
    copies given to it anew) and seed its gradients there: they pass for the
    engine's gradients and catch a wrong one."""
    d = _data()
    x = yg.tensor(d["x"][:2]).to(device).requires_grad_()
    w = yg.tensor(d["w"]).to(device).requires_grad_()

    def f(x: yg.Tensor, w: yg.Tensor) -> yg.Tensor:
        return (x.sin() @ w).tanh()

    assert yg.autograd.gradcheck(f, (x, w))
    assert yg.autograd.gradgradcheck(f, (x, w))
    assert str(x.device).startswith(device)  # given back its own array
    assert not yg.autograd.gradcheck(_WrongSin.apply, (w,), raise_exception=False)


def test_module_moves_and_comes_back(device: str) -> None:
    model = _mlp(device)
    params = list(model.parameters())
    assert all(str(p.device).startswith(device) for p in params)
    model.cpu()
    assert list(model.parameters()) == params  # the same Parameter objects
    assert all(type(p._data) is np.ndarray for p in params)
    np.testing.assert_array_equal(
        params[0].detach().numpy(), _mlp("cpu")[0].weight.detach().numpy()
    )


def test_state_dict_loads_across_backends_and_saves(device: str, tmp_path) -> None:
    """load_state_dict copies across backends (as PyTorch's copy_ across
    devices); yg.save stores another backend's tensors as their values."""
    on_cpu = _mlp("cpu")
    model = yg.nn.Sequential(
        yg.nn.Linear(4, 8), yg.nn.ReLU(), yg.nn.Linear(8, 3)
    ).double()
    model.to(device).load_state_dict(on_cpu.state_dict())
    assert str(model[0].weight.device).startswith(device)
    yg.save(model.state_dict(), tmp_path / "model.yg")
    back = _mlp("cpu")
    with yg.no_grad():
        for p in back.parameters():
            p.zero_()
    back.load_state_dict(yg.load(tmp_path / "model.yg"))
    for p, q in zip(back.parameters(), on_cpu.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_write_into_a_view_is_refused_and_leaves_the_tensor(device: str) -> None:
    base = yg.tensor(_data()["w"]).to(device)
    before = base.numpy().copy()
    view = base[0]
    with pytest.raises(
        RuntimeError,
        match=f"a view of a {device}.* tensor cannot be modified in place: ",
    ):
        view.add_(1.0)
    np.testing.assert_array_equal(base.numpy(), before)
    np.testing.assert_array_equal(view.numpy(), before[0])


def test_compile_names_the_backend_it_cannot_trace(device: str) -> None:
    """yg.compile generates numpy code: another backend's tensor is refused
    with an error naming it, and `fallback=True` runs the function eagerly
    there."""
    w = yg.tensor(_data()["w"]).to(device).requires_grad_()

    def f(t: yg.Tensor) -> yg.Tensor:
        return (t.sin() ** 2).sum()

    with pytest.raises(TraceError, match=f"cannot trace a tensor on {device}"):
        yg.compile(f)(w)
    assert w.grad is None
    yg.compile(f, fallback=True)(w).backward()
    np.testing.assert_allclose(
        w.grad.numpy(), np.sin(2 * _data()["w"]), rtol=1e-12, atol=1e-12
    )
