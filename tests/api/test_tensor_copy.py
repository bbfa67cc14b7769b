"""copy.deepcopy, copy.copy and pickle of tensors, run as one program in yamlgrad
and torch: a copy is a new leaf with its own data, gradient and autograd
bookkeeping (AccumulateGrad, version counter, hooks), a non-leaf refuses a deep
copy, and pickling keeps the data, dtype, requires_grad and the user's
attributes but not `.grad` nor the hooks."""

from __future__ import annotations

import copy
import pickle
import warnings
from types import ModuleType

import numpy as np
import pytest

import yamlgrad as yg
from support import compute_counter, dtype_name, error_message, libraries_under_test

LIBS = pytest.mark.parametrize("lib", libraries_under_test(), ids=lambda m: m.__name__)

DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
    "protocol at the moment.  If you were attempting to deepcopy a module, this may "
    "be because of a torch.nn.utils.weight_norm usage, see "
    "https://github.com/pytorch/pytorch/pull/103001"
)


def _values(t: object) -> list:
    return t.detach().numpy().tolist()  # type: ignore[attr-defined]


def _round_trip(t: object) -> object:
    return pickle.loads(pickle.dumps(t))


@LIBS
def test_a_deep_copied_leaf_gets_its_own_gradients(lib: ModuleType) -> None:
    t = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (t * 2).sum()  # keeps t's AccumulateGrad alive
    c = copy.deepcopy(t)
    (c * 3).sum().backward()
    assert _values(c.grad) == [3.0, 3.0]
    assert t.grad is None
    y.backward()
    assert _values(t.grad) == [2.0, 2.0]
    assert _values(c.grad) == [3.0, 3.0]


@LIBS
def test_deepcopy_of_a_non_leaf_raises(lib: ModuleType) -> None:
    t = lib.tensor([1.0, 2.0], requires_grad=True)
    assert error_message(lambda: copy.deepcopy(t * 2)) == DEEPCOPY_NON_LEAF
    # A leaf whose gradient is itself a non-leaf (create_graph=True) neither.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (t * t).sum().backward(create_graph=True)
    assert t.grad.grad_fn is not None
    assert error_message(lambda: copy.deepcopy(t)) == DEEPCOPY_NON_LEAF
    # Inside vmap a tensor has no storage of its own to copy.
    with pytest.raises(RuntimeError):
        lib.func.vmap(copy.deepcopy)(lib.ones(3, 2))


@LIBS
def test_deepcopy_copies_the_data_the_grad_and_the_users_attributes(
    lib: ModuleType,
) -> None:
    t = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = (t * 2).sum()  # keeps t's AccumulateGrad alive
    y.backward(retain_graph=True)
    shared = lib.ones(2)
    t.note = {"step": [1]}
    t.first = t.second = shared
    c, shared_copy = copy.deepcopy((t, shared))
    assert (c.is_leaf, c.requires_grad, dtype_name(c.dtype)) == (True, True, "float64")
    assert _values(c) == [1.0, 2.0] and _values(c.grad) == [2.0, 2.0]
    assert c.note == t.note and c.note is not t.note
    assert c.first is shared_copy and c.second is shared_copy
    with lib.no_grad():
        c.add_(10.0)
        c.grad.add_(10.0)
    assert _values(t) == [1.0, 2.0] and _values(t.grad) == [2.0, 2.0]
    assert t._version == 0
    (c * 3).sum().backward()
    assert _values(t.grad) == [2.0, 2.0] and _values(c.grad) == [15.0, 15.0]
    pair = copy.deepcopy([t, t])
    assert pair[0] is pair[1]


@LIBS
def test_deepcopy_does_not_copy_hooks_or_tangents(lib: ModuleType) -> None:
    t = lib.ones(2, requires_grad=True)
    calls = []
    t.register_hook(lambda g: g * 100)
    t.register_post_accumulate_grad_hook(lambda p: calls.append(p))
    c = copy.deepcopy(t)
    (c * 1).sum().backward()
    assert _values(c.grad) == [1.0, 1.0] and calls == []
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(lib.ones(2), lib.full((2,), 5.0))
        assert fw.unpack_dual(copy.deepcopy(dual)).tangent is None


@LIBS
def test_deepcopy_of_a_view_is_a_leaf_of_its_own(lib: ModuleType) -> None:
    base = lib.arange(4.0)
    view = base[1:]
    assert view._base is base
    c = copy.deepcopy(view)
    assert c._base is None and _values(c) == [1.0, 2.0, 3.0]
    with lib.no_grad():
        c.mul_(2.0)
    assert _values(base) == [0.0, 1.0, 2.0, 3.0] and view._version == 0


@LIBS
def test_a_parameters_copy_is_a_parameter(lib: ModuleType) -> None:
    frozen = lib.nn.Parameter(lib.ones(2), requires_grad=False)
    for c in (copy.deepcopy(frozen), _round_trip(frozen), copy.copy(frozen)):
        assert type(c) is lib.nn.Parameter and not c.requires_grad
    p = lib.nn.Parameter(lib.ones(2))
    (p * 2).sum().backward()
    p.note = [1]
    p.register_hook(lambda g: g)  # a Parameter pickles without a warning for it
    # A Parameter's deep copy has neither the gradient nor the attributes.
    c = copy.deepcopy(p)
    assert type(c) is lib.nn.Parameter and c.requires_grad
    assert c.grad is None and not hasattr(c, "note")
    with lib.no_grad():
        c.add_(1.0)
    pair = copy.deepcopy([p, p])
    assert _values(p) == [1.0, 1.0] and pair[0] is pair[1] and pair[0] is not p
    assert _pickle_warnings(p) == []
    u = _round_trip(p)
    assert type(u) is lib.nn.Parameter and u.grad is None and u.note == [1]


@LIBS
def test_an_inference_tensors_copy_is_one_only_in_inference_mode(
    lib: ModuleType,
) -> None:
    with lib.inference_mode():
        made_inside = lib.ones(2)
    assert made_inside.is_inference()
    assert not copy.deepcopy(made_inside).is_inference()
    assert not _round_trip(made_inside).is_inference()
    with lib.inference_mode():
        assert copy.deepcopy(made_inside).is_inference()
        assert copy.deepcopy(lib.ones(2)).is_inference()


@LIBS
def test_pickle_keeps_the_data_and_attributes_but_not_the_grad(
    lib: ModuleType,
) -> None:
    t = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    (t * 2).sum().backward()  # t's AccumulateGrad was made
    t.note = {"step": 3}
    u = _round_trip(t)
    assert (u.is_leaf, u.requires_grad, dtype_name(u.dtype)) == (True, True, "float64")
    assert _values(u) == [1.0, 2.0] and u.grad is None and u.note == {"step": 3}
    (u * 5).sum().backward()
    assert _values(u.grad) == [5.0, 5.0] and _values(t.grad) == [2.0, 2.0]
    ints = _round_trip(lib.tensor([[1, 2]]))
    assert dtype_name(ints.dtype) == "int64" and _values(ints) == [[1, 2]]


def test_an_attribute_that_refers_back_to_its_tensor_refers_to_the_copy() -> None:
    # (torch's deep copy makes a second copy for it, and its pickle loses it.)
    t = yg.ones(2, requires_grad=True)
    y = (t * 2).sum()  # keeps t's AccumulateGrad alive
    t.me = t
    c, u = copy.deepcopy(t), _round_trip(t)
    assert c.me is c and u.me is u
    assert y.requires_grad


@LIBS
def test_a_pickled_non_leaf_comes_back_as_a_leaf(lib: ModuleType) -> None:
    t = lib.tensor([1.0, 2.0], requires_grad=True)
    u = _round_trip(t * 2)
    assert (u.is_leaf, u.requires_grad, _values(u)) == (True, True, [2.0, 4.0])


def _pickle_warnings(t: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pickle.dumps(t)
    return [str(w.message) for w in caught if w.category is UserWarning]


@LIBS
def test_pickling_a_tensor_with_hooks_warns_per_unmarked_hook(lib: ModuleType) -> None:
    def double(grad: object) -> object:
        return grad * 2

    name = f"@{lib.__name__}.utils.hooks.unserializable_hook"
    expected = (
        f"backward hook {double!r} on tensor will not be serialized.  If this is "
        f"expected, you can decorate the function with {name} to suppress this warning"
    )
    leaf = lib.ones(2, requires_grad=True)
    handle = leaf.register_hook(double)
    leaf.register_hook(lib.utils.hooks.unserializable_hook(lambda g: g))
    leaf.register_post_accumulate_grad_hook(lambda p: None)
    assert _pickle_warnings(leaf) == [expected]
    non_leaf = leaf * 1
    non_leaf.register_hook(double)
    assert _pickle_warnings(non_leaf) == [expected]
    handle.remove()
    assert _pickle_warnings(leaf) == []
    with pytest.warns(UserWarning, match="will not be serialized"):
        u = _round_trip(non_leaf)
    u.sum().backward()
    assert _values(u.grad) == [1.0, 1.0]


@LIBS
def test_copy_copy_shares_the_data_but_no_autograd_state(lib: ModuleType) -> None:
    t = lib.ones(2, requires_grad=True)
    (t * 2).sum().backward()
    t.note = [1]
    c = copy.copy(t)
    assert c is not t and c.note is t.note and c.grad is None
    assert (c.is_leaf, c.requires_grad) == (True, True)
    before = t._version
    with lib.no_grad():
        c.add_(1.0)
    assert _values(t) == [2.0, 2.0] and t._version == before
    (c * 3).sum().backward()
    assert _values(c.grad) == [3.0, 3.0] and _values(t.grad) == [2.0, 2.0]
    shallow = copy.copy(t * 2)
    assert (shallow.is_leaf, shallow.requires_grad) == (True, True)


@LIBS
def test_a_deep_copied_module_trains_on_its_own(lib: ModuleType) -> None:
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    x = lib.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3), dtype=lib.float32)
    loss = model(x).pow(2).sum()
    loss.backward(retain_graph=True)  # the graph and its AccumulateGrads alive
    weights = [p.detach().clone() for p in model.parameters()]
    grads = [p.grad.clone() for p in model.parameters()]
    twin = copy.deepcopy(model)
    optimizer = lib.optim.SGD(twin.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        twin(x).pow(2).sum().backward()
        optimizer.step()
    for p, w, g, q in zip(model.parameters(), weights, grads, twin.parameters()):
        assert type(q) is lib.nn.Parameter and q.grad is not None
        np.testing.assert_array_equal(p.detach().numpy(), w.numpy())
        np.testing.assert_array_equal(p.grad.numpy(), g.numpy())
        assert not np.array_equal(q.detach().numpy(), w.numpy())
    loss.backward()  # the original's graph still runs into the original
    for p, g in zip(model.parameters(), grads):
        np.testing.assert_allclose(p.grad.numpy(), 2 * g.numpy(), rtol=1e-6)


def test_a_hook_marked_by_torch_is_recognized() -> None:
    torch = pytest.importorskip("torch")
    t = yg.ones(2, requires_grad=True)
    t.register_hook(torch.utils.hooks.unserializable_hook(lambda g: g))
    assert _pickle_warnings(t) == []


def test_a_dask_tensors_copies_stay_lazy() -> None:
    da = pytest.importorskip("dask.array")
    t = yg.from_dask(da.from_array(np.arange(4.0), chunks=2)).requires_grad_()
    y = (t * 2).sum()  # keeps t's AccumulateGrad alive
    y.backward(retain_graph=True)
    with compute_counter() as counter:
        copies = [copy.deepcopy(t), _round_trip(t), copy.copy(t)]
        assert counter.count == 0
    for c in copies:
        assert c.device == t.device and c.requires_grad and c.is_leaf
        np.testing.assert_array_equal(c.detach().cpu().numpy(), np.arange(4.0))


@LIBS
def test_a_base_and_its_views_copied_together_share_memory(lib: ModuleType) -> None:
    base = lib.arange(6.0)
    grid = base.view(2, 3)
    copies = copy.deepcopy([grid.t(), base, base[1:], grid])
    with lib.no_grad():
        copies[2].mul_(10.0)  # through the copied view...
        copies[0][0, 1] = -1.0  # ...and through a copied transpose
    # ...seen in the copied base and its other views; the originals untouched.
    assert _values(copies[1]) == [0.0, 10.0, 20.0, -1.0, 40.0, 50.0]
    assert _values(copies[3]) == [[0.0, 10.0, 20.0], [-1.0, 40.0, 50.0]]
    assert [c._base is None for c in copies] == [True] * 4
    assert _values(base) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # A view of overlapping windows too.
    signal = lib.arange(7.0)
    signal_copy, windows_copy = copy.deepcopy([signal, signal.unfold(0, 3, 2)])
    with lib.no_grad():
        windows_copy[1].fill_(-1.0)
    assert _values(signal_copy) == [0.0, 1.0, -1.0, -1.0, -1.0, 5.0, 6.0]
    # A module holding a buffer and a view of it: its copy does too.
    module = lib.nn.Module()
    module.register_buffer("table", lib.zeros(4))
    module.register_buffer("head", module.table[:2])
    twin = copy.deepcopy(module)
    twin.head.fill_(7.0)
    assert _values(twin.table) == [7.0, 7.0, 0.0, 0.0]
    assert _values(module.table) == [0.0, 0.0, 0.0, 0.0]
    # Copied apart, or pickled, they do not share.
    apart = copy.deepcopy(base), copy.deepcopy(base[1:])
    pickled = _round_trip([base, base[1:]])
    for whole, view in (apart, pickled):
        with lib.no_grad():
            view.mul_(0.0)
        assert _values(whole) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@LIBS
def test_a_copys_version_is_pytorchs(lib: ModuleType) -> None:
    # A Tensor's copies are rebuilt on their storage (version 1). A Parameter's
    # deep copy is a clone (0), its pickle wraps a rebuilt tensor (1) and its
    # shallow copy wraps `p.data` (0).
    t = lib.ones(2)
    with lib.no_grad():
        t.add_(1.0)
        t.add_(1.0)
    copies = copy.deepcopy(t), _round_trip(t), copy.copy(t), copy.deepcopy(t[1:])
    assert [c._version for c in copies] == [1, 1, 1, 1] and t._version == 2
    p = lib.nn.Parameter(lib.ones(2))
    with lib.no_grad():
        p.add_(1.0)
    copies = copy.deepcopy(p), _round_trip(p), copy.copy(p)
    assert [c._version for c in copies] == [0, 1, 0] and p._version == 1


@LIBS
def test_a_parameter_made_or_copied_in_inference_mode_is_an_inference_parameter(
    lib: ModuleType,
) -> None:
    lib.manual_seed(0)
    model = lib.nn.Linear(2, 2)
    with lib.inference_mode():
        made = lib.nn.Linear(2, 2)
        copies = [copy.deepcopy(model), _round_trip(model)]
    for m in [made] + copies:
        params = list(m.parameters())
        assert len(params) == 2
        for p in params:
            assert isinstance(p, lib.nn.Parameter) and p.is_inference()
            assert p.requires_grad and p.is_leaf
    assert repr(copies[0].bias).startswith("Parameter containing:\n")
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        made.weight * lib.ones(2, 2, requires_grad=True)
    # A Parameter of a normal tensor, or its shallow copy, is normal inside too.
    with lib.inference_mode():
        normal = [lib.nn.Parameter(lib.zeros(2))]
    with lib.inference_mode():
        normal += [copy.copy(model.bias), lib.nn.Parameter(model.bias.detach())]
    assert [p.is_inference() for p in normal] == [True, False, False]
    # Copied again outside inference mode, a normal Parameter.
    again = copy.deepcopy(copies[0].weight)
    assert not again.is_inference() and isinstance(again, lib.nn.Parameter)
    # An inference tensor cannot become a Parameter requiring grad outside it.
    with lib.inference_mode():
        data = lib.ones(2)
    message = (
        "Setting requires_grad=True on inference tensor outside InferenceMode is not "
        "allowed."
    )
    assert error_message(lambda: lib.nn.Parameter(data)) == message
    frozen = lib.nn.Parameter(data, requires_grad=False)
    assert frozen.is_inference() and isinstance(frozen, lib.nn.Parameter)


class _Tagged(yg.Tensor):
    __slots__ = ("tag", "__private")


class _TaggedParameter(yg.nn.Parameter):
    __slots__ = ("tag",)


def test_a_subclass_with_slots_copies_and_pickles_with_its_slots() -> None:
    # (torch's deep copy refuses a Tensor subclass made with as_subclass, and
    # its pickle turns a Parameter subclass into a Parameter.)
    t = _Tagged(np.arange(3.0))
    t.tag, t.note = [1], "n"
    t._Tagged__private = {"k": 2}
    for c in (copy.deepcopy(t), _round_trip(t), copy.copy(t)):
        assert type(c) is _Tagged and _values(c) == [0.0, 1.0, 2.0]
        assert (c.tag, c.note, c._Tagged__private) == ([1], "n", {"k": 2})
    assert copy.deepcopy(t).tag is not t.tag and copy.copy(t).tag is t.tag
    t.requires_grad_()
    pair = copy.deepcopy([t, t.tag])
    assert pair[0].tag is pair[1] and pair[0].requires_grad
    p = _TaggedParameter(yg.ones(2))
    p.tag = "kept by pickle, not by a deep copy (as a Parameter's attributes)"
    deep = copy.deepcopy(p)
    assert type(deep) is _TaggedParameter and not hasattr(deep, "tag")
    u = _round_trip(p)
    assert type(u) is _TaggedParameter and u.tag == p.tag and u.requires_grad
    with yg.inference_mode():
        inside = copy.deepcopy(t)
    assert isinstance(inside, _Tagged) and inside.is_inference()
    assert inside.tag == [1] and type(_round_trip(inside)) is _Tagged


def test_a_parameter_on_a_dask_tensor_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    t = yg.from_dask(da.from_array(np.arange(4.0), chunks=2))
    with compute_counter() as counter:
        p = yg.nn.Parameter(t)
        copies = [copy.deepcopy(p), _round_trip(p), copy.copy(p)]
        assert counter.count == 0
    assert type(p) is yg.nn.Parameter and p.requires_grad and p.device == t.device
    assert p._version_counter is t._version_counter
    for c in copies:
        assert type(c) is yg.nn.Parameter and c.requires_grad and c.device == t.device
    (p * 2).sum().backward()
    np.testing.assert_array_equal(p.grad.cpu().numpy(), [2.0] * 4)
