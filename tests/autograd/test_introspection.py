"""What PyTorch's autograd tutorials show of the graph, as PyTorch shows it: the
`_saved_*` attributes in dir(grad_fn), a Python number saved as its wrapped 0-d
tensor, a node called with the wrong number of gradients, detach_ on a view,
relu's backward recorded under create_graph, anomaly mode's state, the
deprecated only_inputs, gradcheck on a list, and torch.autograd's module paths."""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest

import yamlgrad as yg


def test_saved_values_are_listed_and_numbers_wrapped_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for make in (
        lambda m, x: x * 2,
        lambda m, x: 2 * x,
        lambda m, x: x * 2.5,
        lambda m, x: x / 2,
        lambda m, x: x * True,
        lambda m, x: x * x,
        lambda m, x: x**3,
        lambda m, x: x + 2,
    ):
        x = yg.ones(2, dtype=yg.float64, requires_grad=True)
        t = torch.ones(2, dtype=torch.float64, requires_grad=True)
        ours, theirs = make(yg, x).grad_fn, make(torch, t).grad_fn
        names = sorted(n for n in dir(theirs) if n.startswith("_saved_"))
        assert sorted(n for n in dir(ours) if n.startswith("_saved_")) == names
        for name in names:
            got, want = getattr(ours, name), getattr(theirs, name)
            if isinstance(want, torch.Tensor):
                assert isinstance(got, yg.Tensor), name
                assert str(got.dtype)[9:] == str(want.dtype)[6:], name
                np.testing.assert_array_equal(
                    got.detach().numpy(), want.detach().numpy()
                )
            else:
                assert got == want and type(got) is type(want), name


def test_node_called_with_the_wrong_number_of_gradients() -> None:
    torch = pytest.importorskip("torch")
    node = (yg.ones(2, requires_grad=True) * 3).sum().grad_fn
    theirs = (torch.ones(2, requires_grad=True) * 3).sum().grad_fn
    for args in ((), (yg.tensor(1.0), yg.tensor(1.0))):
        with pytest.raises(TypeError) as expected:
            theirs(*[torch.tensor(1.0)] * len(args))
        with pytest.raises(TypeError, match=str(expected.value)):
            node(*args)
    assert node(yg.tensor(1.0)).tolist() == [1.0, 1.0]


def test_detach_in_place_refuses_a_view() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as expected:
        (torch.ones(3, requires_grad=True) * 2)[:2].detach_()
    view = (yg.ones(3, requires_grad=True) * 2)[:2]
    with pytest.raises(RuntimeError) as got:
        view.detach_()
    assert str(got.value) == str(expected.value)
    assert view.grad_fn is not None  # left as it was
    y = yg.ones(3, requires_grad=True) * 2
    assert y.detach_() is y and y.grad_fn is None and not y.requires_grad


def test_relu_first_derivative_stays_connected() -> None:
    x = yg.tensor([1.0, -1.0, 2.0], requires_grad=True)
    (g,) = yg.autograd.grad(yg.relu(x).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "ThresholdBackwardBackward0"
    assert [type(f).__name__ if f else None for f, _ in g.grad_fn.next_functions] == [
        None,
        "ReluBackward0",
    ]
    (gg,) = yg.autograd.grad(g.sum(), x)
    assert gg.tolist() == [0.0, 0.0, 0.0]


def test_anomaly_state_and_only_inputs() -> None:
    assert yg.is_anomaly_enabled() is False
    assert yg.autograd.anomaly_mode.is_anomaly_enabled() is False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with yg.autograd.detect_anomaly():
            assert yg.is_anomaly_enabled() and yg.is_anomaly_check_nan_enabled()
    x = yg.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert yg.autograd.grad((x * x).sum(), x, only_inputs=True)[0].tolist() == [
            2,
            4,
        ]
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        yg.autograd.grad((x * x).sum(), x, only_inputs=False)


def test_gradcheck_takes_a_list_of_inputs() -> None:
    a = yg.tensor([0.3, -0.7], dtype=yg.float64, requires_grad=True)
    b = yg.tensor([1.1, 0.4], dtype=yg.float64, requires_grad=True)
    assert yg.autograd.gradcheck(lambda x, y: (x * y.sin()).sum(), [a, b])
    assert yg.autograd.gradgradcheck(lambda x, y: x * y.exp(), [a, b])


def test_autograd_module_paths_are_torchs() -> None:
    from yamlgrad.autograd.function import Function, once_differentiable
    from yamlgrad.autograd.gradcheck import gradcheck, gradgradcheck
    from yamlgrad.autograd.grad_mode import no_grad
    from yamlgrad.autograd.graph import saved_tensors_hooks
    from yamlgrad.autograd.anomaly_mode import detect_anomaly

    assert Function is yg.autograd.Function and no_grad is yg.no_grad
    assert gradcheck is yg.autograd.gradcheck and callable(yg.autograd.gradcheck)
    assert gradgradcheck is yg.autograd.gradgradcheck
    assert saved_tensors_hooks is yg.autograd.graph.saved_tensors_hooks
    assert detect_anomaly is yg.autograd.detect_anomaly and once_differentiable
    # One module object under both names: never a second copy.
    for name in ("function", "gradcheck", "grad_mode", "graph", "anomaly_mode"):
        public = sys.modules[f"yamlgrad.autograd.{name}"]
        assert public is sys.modules[f"yamlgrad.runtime.autograd.{name}"]
    assert importlib.import_module("yamlgrad.nn.parameter").Parameter is yg.nn.Parameter
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("yamlgrad.autograd.no_such_module")


def test_a_submodule_added_later_is_published_under_its_public_name(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module dropped into a published package (as forward_ad.py will be into
    runtime/autograd/) imports under the public path as the same object."""
    from pathlib import Path

    from yamlgrad.runtime import public_modules
    from yamlgrad.runtime.public_modules import publish

    root = Path(str(tmp_path))
    (root / "real_pkg").mkdir()
    (root / "real_pkg" / "__init__.py").write_text("")
    (root / "real_pkg" / "late.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(root))
    real = importlib.import_module("real_pkg")
    publish("public_pkg", real)
    try:
        late = importlib.import_module("public_pkg.late")
        assert late is importlib.import_module("real_pkg.late") and late.VALUE == 42
        assert late.__spec__.name == "real_pkg.late"
    finally:
        for name in ("public_pkg", "public_pkg.late", "real_pkg", "real_pkg.late"):
            sys.modules.pop(name, None)
        public_modules._FINDER.packages.pop("public_pkg")
