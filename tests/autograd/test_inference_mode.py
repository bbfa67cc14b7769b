"""inference_mode as PyTorch's: inference tensors and their errors, views of normal
tensors, nesting with inference_mode(False), decorators, thread-locality."""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any

import pytest

import yamlgrad as yg
from support import error_message, libraries_under_test

LIBS = pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)


@LIBS
def test_tensors_made_inside_are_inference_tensors(lib: ModuleType) -> None:
    normal = lib.ones(3)
    w = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        made = lib.ones(3)
        computed = normal * 2
        from_grad = w * 2
        view = normal[0:2]
        normal.add_(1)  # a normal tensor may change in place inside
    assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
    assert made.is_inference() and computed.is_inference()
    assert from_grad.is_inference() and not from_grad.requires_grad
    assert not view.is_inference() and not normal.is_inference()
    assert normal._version == 1


@LIBS
def test_inference_tensors_refuse_what_pytorch_refuses(lib: ModuleType) -> None:
    with lib.inference_mode():
        x = lib.ones(3)
    w = lib.ones(3, requires_grad=True)
    assert error_message(lambda: x.add_(1)).startswith(
        "Inplace update to inference tensor outside InferenceMode is not allowed."
    )
    assert error_message(lambda: x.copy_(lib.zeros(3))).startswith("Inplace update")
    assert error_message(lambda: x.__setitem__(0, 2.0)).startswith("Inplace update")
    assert error_message(lambda: (x * w).sum()).startswith(
        "Inference tensors cannot be saved for backward."
    )
    assert error_message(lambda: x.requires_grad_()) == (
        "Setting requires_grad=True on inference tensor outside InferenceMode is "
        "not allowed."
    )
    assert error_message(lambda: x._version) == (
        "Inference tensors do not track version counter."
    )
    # An op that saves nothing may use it; its result is a normal tensor.
    y = x + w
    assert type(y.grad_fn).__name__ == "AddBackward0" and not y.is_inference()
    y.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    if lib is yg:  # a refused op changed nothing (PyTorch's copy_ writes first)
        assert x.tolist() == [1.0, 1.0, 1.0]
    with lib.inference_mode():
        z = lib.ones(3)
        z.add_(1)  # fine inside
    assert z.tolist() == [2.0, 2.0, 2.0]


@LIBS
def test_a_view_of_an_inference_tensor_is_one_outside_inference_mode_too(
    lib: ModuleType,
) -> None:
    with lib.inference_mode():
        weight = lib.ones(2, 3)
        layer = lib.nn.Linear(3, 2)
    views = [weight.t(), weight[0], weight.view(6), weight.split(1)[1]]
    assert all(v.is_inference() for v in views + [layer.weight.t()])
    assert error_message(lambda: views[0].add_(1)).startswith("Inplace update")
    assert error_message(lambda: views[0].requires_grad_()).startswith("Setting")
    x = lib.ones(1, 3, requires_grad=True)
    for use in (lambda: lib.nn.functional.linear(x, weight), lambda: layer(x)):
        assert error_message(use).startswith(
            "Inference tensors cannot be saved for backward."
        )
    assert not (views[0] * 2).is_inference()


@LIBS
def test_a_view_made_in_inference_mode_is_not_modified_with_grad(
    lib: ModuleType,
) -> None:
    normal = lib.ones(3)
    w = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        view = normal[0:2]
    assert error_message(lambda: view.mul_(w)).startswith(
        "A view was created in inference mode and is being modified inplace in "
        "normal mode."
    )
    view.add_(1)  # not recorded: allowed
    assert normal.tolist() == [2.0, 2.0, 1.0]


@LIBS
def test_inference_mode_false_nests_and_decorates(lib: ModuleType) -> None:
    with lib.inference_mode():
        with lib.inference_mode(False):
            assert not lib.is_inference_mode_enabled()
            inner = lib.ones(2)
        assert lib.is_inference_mode_enabled()
    assert not inner.is_inference()

    @lib.inference_mode()
    def made() -> Any:
        return lib.ones(2)

    @lib.inference_mode
    def made_bare() -> Any:
        return lib.ones(2)

    assert made().is_inference() and made_bare().is_inference()
    assert not lib.is_inference_mode_enabled()
    with lib.no_grad():
        assert not lib.ones(2).is_inference()


def test_inference_mode_decorates_generators() -> None:
    @yg.inference_mode()
    def gen() -> Any:
        yield yg.is_inference_mode_enabled()
        yield yg.ones(1).is_inference()

    g = gen()
    assert next(g) is True
    assert not yg.is_inference_mode_enabled()
    assert next(g) is True
    with pytest.raises(StopIteration):
        next(g)


def test_inference_mode_is_thread_local() -> None:
    seen: list[bool] = []
    entered = threading.Event()
    release = threading.Event()

    def inside() -> None:
        with yg.inference_mode():
            entered.set()
            release.wait(5)

    t = threading.Thread(target=inside)
    t.start()
    entered.wait(5)
    seen.append(yg.is_inference_mode_enabled())
    seen.append(yg.ones(1).is_inference())
    release.set()
    t.join()
    assert seen == [False, False]
