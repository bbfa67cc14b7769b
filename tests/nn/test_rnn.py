"""nn.RNN, nn.LSTM, nn.GRU, their cells and nn.utils.rnn against torch.

Each module is built in both libraries with torch's weights copied into
yamlgrad's (load_state_dict of numpy arrays); outputs, final states and the
gradients of a random cotangent with respect to the input, the initial states
and every parameter are compared, over the options' combinations, in float64
(tight) and float32. Parameter names, shapes, reprs and error texts are
PyTorch's too.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import yamlgrad as yg
import yamlgrad.nn as nn
from yamlgrad.nn.utils import rnn as R

torch = pytest.importorskip("torch")
tnn = torch.nn
TR = torch.nn.utils.rnn

TOLERANCE = {
    "float64": {"rtol": 1e-10, "atol": 1e-12},
    "float32": {"rtol": 2e-5, "atol": 2e-6},
}
MODES = {
    "RNN_TANH": (nn.RNN, tnn.RNN, {"nonlinearity": "tanh"}),
    "RNN_RELU": (nn.RNN, tnn.RNN, {"nonlinearity": "relu"}),
    "LSTM": (nn.LSTM, tnn.LSTM, {}),
    "GRU": (nn.GRU, tnn.GRU, {}),
}
INPUT, HIDDEN, STEPS, BATCH = 3, 4, 5, 3


def _pair(mode: str, dtype: str = "float64", **options: Any) -> tuple[Any, Any]:
    ours_cls, theirs_cls, extra = MODES[mode]
    torch.manual_seed(0)
    theirs = theirs_cls(INPUT, HIDDEN, **extra, **options).to(getattr(torch, dtype))
    ours = ours_cls(INPUT, HIDDEN, **extra, **options).to(getattr(yg, dtype))
    ours.load_state_dict(
        {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    )
    return ours, theirs


def _leaf(lib: Any, array: np.ndarray) -> Any:
    return lib.tensor(array, requires_grad=True)


def _flat(result: Any) -> list[Any]:
    """(output, h_n) or (output, (h_n, c_n)) as a flat list; a PackedSequence's data."""
    output, hidden = result
    if isinstance(output, (R.PackedSequence, TR.PackedSequence)):
        output = output.data
    return [output, *(hidden if isinstance(hidden, tuple) else (hidden,))]


def _compare(
    ours: Any, theirs: Any, run: Callable[[Any, Any, list], Any], arrays: list, dtype
) -> None:
    """Run both, compare every output, then backward a random cotangent and
    compare the gradients of the leaves and of every parameter."""
    tolerance = TOLERANCE[dtype]
    our_leaves = [_leaf(yg, a) for a in arrays]
    their_leaves = [_leaf(torch, a) for a in arrays]
    outs = _flat(run(yg, ours, our_leaves))
    refs = _flat(run(torch, theirs, their_leaves))
    assert len(outs) == len(refs)
    rng = np.random.default_rng(1)
    cotangents = []
    for o, r in zip(outs, refs):
        assert tuple(o.shape) == tuple(r.shape)
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), **tolerance)
        cotangents.append(rng.standard_normal(tuple(r.shape)).astype(dtype))
    yg.autograd.backward(outs, [yg.tensor(c) for c in cotangents])
    torch.autograd.backward(refs, [torch.tensor(c) for c in cotangents])
    for index, (x, t) in enumerate(zip(our_leaves, their_leaves)):
        np.testing.assert_allclose(
            x.grad.numpy(), t.grad.numpy(), **tolerance, err_msg=f"leaf {index}"
        )
    params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(
            params[name].grad.numpy(), p.grad.numpy(), **tolerance, err_msg=name
        )


def _states(mode: str, layers: int, directions: int, proj: int, dtype: str) -> list:
    rng = np.random.default_rng(2)
    h = rng.standard_normal((layers * directions, BATCH, proj or HIDDEN))
    if mode != "LSTM":
        return [h.astype(dtype)]
    c = rng.standard_normal((layers * directions, BATCH, HIDDEN))
    return [h.astype(dtype), c.astype(dtype)]


def _hx(lib: Any, mode: str, leaves: list) -> Any:
    return tuple(leaves) if mode == "LSTM" else leaves[0]


CASES = [
    (mode, layers, bidirectional, batch_first, bias, proj)
    for mode in MODES
    for layers, bidirectional, batch_first, bias in itertools.product(
        (1, 2), (False, True), (False, True), (True, False)
    )
    for proj in ((0, 2) if mode == "LSTM" else (0,))
]


def _case_id(case: tuple) -> str:
    mode, layers, bidirectional, batch_first, bias, proj = case
    return (
        f"{mode}-l{layers}{'-bi' if bidirectional else ''}"
        f"{'-bf' if batch_first else ''}{'' if bias else '-nobias'}"
        f"{f'-proj{proj}' if proj else ''}"
    )


@pytest.mark.parametrize("case", CASES, ids=_case_id)
@pytest.mark.parametrize("given_state", [False, True], ids=["zeros", "hx"])
def test_module_matches_torch_float64(case: tuple, given_state: bool) -> None:
    mode, layers, bidirectional, batch_first, bias, proj = case
    options = dict(
        num_layers=layers, bidirectional=bidirectional, batch_first=batch_first
    )
    options["bias"] = bias
    if proj:
        options["proj_size"] = proj
    ours, theirs = _pair(mode, **options)
    shape = (BATCH, STEPS, INPUT) if batch_first else (STEPS, BATCH, INPUT)
    arrays = [np.random.default_rng(3).standard_normal(shape)]
    if given_state:
        arrays += _states(mode, layers, 2 if bidirectional else 1, proj, "float64")

    def run(lib: Any, module: Any, leaves: list) -> Any:
        if len(leaves) == 1:
            return module(leaves[0])
        return module(leaves[0], _hx(lib, mode, leaves[1:]))

    _compare(ours, theirs, run, arrays, "float64")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_module_matches_torch_float32(mode: str, bidirectional: bool) -> None:
    ours, theirs = _pair(mode, "float32", num_layers=2, bidirectional=bidirectional)
    arrays = [np.random.default_rng(4).standard_normal((STEPS, BATCH, INPUT))]
    arrays += _states(mode, 2, 2 if bidirectional else 1, 0, "float32")
    arrays = [a.astype(np.float32) for a in arrays]

    def run(lib: Any, module: Any, leaves: list) -> Any:
        return module(leaves[0], _hx(lib, mode, leaves[1:]))

    _compare(ours, theirs, run, arrays, "float32")
    out, _ = ours(yg.tensor(arrays[0]))
    assert out.dtype == yg.float32


PACKED_CASES = [
    (mode, bidirectional, proj)
    for mode in MODES
    for bidirectional in (False, True)
    for proj in ((0, 2) if mode == "LSTM" else (0,))
]


@pytest.mark.parametrize(
    "case", PACKED_CASES, ids=lambda c: f"{c[0]}{'-bi' if c[1] else ''}-p{c[2]}"
)
@pytest.mark.parametrize("given_state", [False, True], ids=["zeros", "hx"])
def test_packed_input_matches_torch(case: tuple, given_state: bool) -> None:
    """Unsorted lengths (enforce_sorted=False): a PackedSequence comes out, its
    data, h_n (and c_n) and every gradient as torch's, the padded input's too."""
    mode, bidirectional, proj = case
    options: dict[str, Any] = dict(num_layers=2, bidirectional=bidirectional)
    if proj:
        options["proj_size"] = proj
    ours, theirs = _pair(mode, **options)
    lengths = [3, 5, 1]
    arrays = [np.random.default_rng(5).standard_normal((STEPS, BATCH, INPUT))]
    if given_state:
        arrays += _states(mode, 2, 2 if bidirectional else 1, proj, "float64")

    def run(lib: Any, module: Any, leaves: list) -> Any:
        utils = R if lib is yg else TR
        packed = utils.pack_padded_sequence(leaves[0], lengths, enforce_sorted=False)
        if len(leaves) == 1:
            result = module(packed)
        else:
            result = module(packed, _hx(lib, mode, leaves[1:]))
        assert isinstance(result[0], utils.PackedSequence)
        assert result[0].batch_sizes.tolist() == [3, 2, 2, 1, 1]
        return result

    _compare(ours, theirs, run, arrays, "float64")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [False, True], ids=["tb", "bf"])
def test_unbatched_input_matches_torch(mode: str, batch_first: bool) -> None:
    ours, theirs = _pair(mode, num_layers=2, batch_first=batch_first)
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((STEPS, INPUT))]
    arrays += [s[:, 0] for s in _states(mode, 2, 1, 0, "float64")]

    def run(lib: Any, module: Any, leaves: list) -> Any:
        result = module(leaves[0], _hx(lib, mode, leaves[1:]))
        assert result[0].dim() == 2
        return result

    _compare(ours, theirs, run, arrays, "float64")
    output, hidden = ours(yg.tensor(arrays[0]))
    assert tuple(output.shape) == (STEPS, HIDDEN)
    first = hidden[0] if mode == "LSTM" else hidden
    assert tuple(first.shape) == (2, HIDDEN)


CELLS = {
    "RNNCell-tanh": (nn.RNNCell, tnn.RNNCell, {"nonlinearity": "tanh"}, 1),
    "RNNCell-relu": (nn.RNNCell, tnn.RNNCell, {"nonlinearity": "relu"}, 1),
    "LSTMCell": (nn.LSTMCell, tnn.LSTMCell, {}, 2),
    "GRUCell": (nn.GRUCell, tnn.GRUCell, {}, 1),
}


@pytest.mark.parametrize("name", CELLS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cell_matches_torch(name: str, bias: bool, batched: bool, dtype: str) -> None:
    ours_cls, theirs_cls, extra, states = CELLS[name]
    torch.manual_seed(0)
    theirs = theirs_cls(INPUT, HIDDEN, bias=bias, **extra).to(getattr(torch, dtype))
    ours = ours_cls(INPUT, HIDDEN, bias=bias, **extra).to(getattr(yg, dtype))
    ours.load_state_dict(
        {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    )
    rng = np.random.default_rng(7)
    lead = (BATCH,) if batched else ()
    arrays = [rng.standard_normal((*lead, INPUT)).astype(dtype)]
    arrays += [
        rng.standard_normal((*lead, HIDDEN)).astype(dtype) for _ in range(states)
    ]

    def run(lib: Any, module: Any, leaves: list) -> Any:
        hx = tuple(leaves[1:]) if states == 2 else leaves[1]
        out = module(leaves[0], hx)
        return (out[0], out[1]) if states == 2 else (out, ())

    _compare(ours, theirs, run, arrays, dtype)
    # No state given: zeros.
    x = rng.standard_normal((*lead, INPUT)).astype(dtype)
    got = ours(yg.tensor(x))
    want = theirs(torch.tensor(x))
    for g, w in zip(*(r if states == 2 else (r,) for r in (got, want))):
        np.testing.assert_allclose(
            g.detach().numpy(), w.detach().numpy(), **TOLERANCE[dtype]
        )


def test_fused_cells_record_one_node_per_step() -> None:
    """A cell step is one ThnnFused*Backward0 node (the fused entries), and a
    layer's input half is one matmul for all time steps."""
    lstm = nn.LSTM(INPUT, HIDDEN)
    output, (h, c) = lstm(yg.randn(STEPS, BATCH, INPUT))
    names = _node_names(output.sum() + h.sum() + c.sum())
    assert names.count("ThnnFusedLstmCellBackward0") == STEPS
    assert names.count("UnbindBackward0") == 1  # the input half, split into steps
    gru = nn.GRU(INPUT, HIDDEN)
    output, h = gru(yg.randn(STEPS, BATCH, INPUT))
    assert _node_names(output.sum()).count("ThnnFusedGruCellBackward0") == STEPS
    h, c = nn.LSTMCell(INPUT, HIDDEN)(yg.randn(BATCH, INPUT))
    assert type(h.grad_fn).__name__ == "ThnnFusedLstmCellBackward0"


def _node_names(root: yg.Tensor) -> list[str]:
    seen, stack, names = set(), [root.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return names


def test_double_backward_through_an_lstm() -> None:
    """create_graph=True: the recorded backward of the fused cells (gates
    recomputed from the inputs) differentiates again, as torch's does."""
    ours, theirs = _pair("LSTM", num_layers=1)
    x = np.random.default_rng(8).standard_normal((3, 2, INPUT))
    v = np.random.default_rng(9).standard_normal((3, 2, INPUT))
    results = []
    for lib, module in ((yg, ours), (torch, theirs)):
        leaf = _leaf(lib, x)
        output, _ = module(leaf)
        (g,) = lib.autograd.grad((output**2).sum(), leaf, create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(v)).sum(), leaf)
        results.append((g.detach().numpy(), gg.numpy()))
    for ours_value, theirs_value in zip(*results):
        np.testing.assert_allclose(ours_value, theirs_value, rtol=1e-9, atol=1e-11)


# -- structure: parameters, repr, init -------------------------------------------


@pytest.mark.parametrize("case", CASES[::3], ids=_case_id)
def test_parameters_names_shapes_and_repr_are_torchs(case: tuple) -> None:
    mode, layers, bidirectional, batch_first, bias, proj = case
    options: dict[str, Any] = dict(
        num_layers=layers, bidirectional=bidirectional, batch_first=batch_first
    )
    options.update(bias=bias, dropout=0.25 if layers > 1 else 0.0)
    if proj:
        options["proj_size"] = proj
    ours, theirs = _pair(mode, **options)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == [
        [tuple(w.shape) for w in ws] for ws in theirs.all_weights
    ]
    assert [id(w) for w in ours._flat_weights] == [id(p) for p in ours.parameters()]
    assert repr(ours) == repr(theirs)


def test_cell_reprs_are_torchs() -> None:
    for args in [(3, 4), (3, 4, False)]:
        for ours_cls, theirs_cls in (
            (nn.LSTMCell, tnn.LSTMCell),
            (nn.GRUCell, tnn.GRUCell),
            (nn.RNNCell, tnn.RNNCell),
        ):
            assert repr(ours_cls(*args)) == repr(theirs_cls(*args))
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == repr(
        tnn.RNNCell(3, 4, nonlinearity="relu")
    )
    assert repr(nn.RNN(3, 4, 2, "relu")) == repr(tnn.RNN(3, 4, 2, "relu"))


def test_initialisation_is_uniform_from_the_seeded_generator() -> None:
    yg.manual_seed(3)
    first = nn.LSTM(3, 16, num_layers=2, proj_size=4)
    yg.manual_seed(3)
    second = nn.LSTM(3, 16, num_layers=2, proj_size=4)
    bound = 1 / np.sqrt(16)
    for (name, p), q in zip(first.named_parameters(), second.parameters()):
        values = p.detach().numpy()
        assert np.array_equal(values, q.detach().numpy()), name
        assert values.min() >= -bound and values.max() < bound, name
        assert values.dtype == np.float32
    cell = nn.GRUCell(3, 25)
    assert np.abs(cell.weight_hh.detach().numpy()).max() <= 0.2


def test_flat_weights_follow_assignment_and_dtype_changes() -> None:
    lstm = nn.LSTM(3, 4)
    lstm.flatten_parameters()  # exists, as PyTorch's, and does nothing here
    replacement = nn.Parameter(yg.zeros(16, 3))
    lstm.weight_ih_l0 = replacement
    assert lstm._flat_weights[0] is replacement
    lstm.double()
    assert lstm._flat_weights[0].dtype == yg.float64
    output, _ = lstm(yg.randn(2, 1, 3, dtype=yg.float64))
    assert output.dtype == yg.float64


def test_dropout_between_layers() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.LSTM(3, 4, dropout=0.5)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        tnn.LSTM(3, 4, dropout=0.5)
    assert [str(w.message) for w in caught] == [str(w.message) for w in theirs]
    assert caught[0].category is UserWarning
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = yg.randn(5, 2, 3)
    lstm.eval()
    plain, _ = lstm(x)
    lstm.train()
    yg.manual_seed(0)
    dropped, _ = lstm(x)
    yg.manual_seed(0)
    again, _ = lstm(x)
    assert not np.allclose(plain.detach().numpy(), dropped.detach().numpy())
    assert np.array_equal(dropped.detach().numpy(), again.detach().numpy())
    lstm.dropout = 0.0
    same, _ = lstm(x)
    np.testing.assert_allclose(same.detach().numpy(), plain.detach().numpy())


# -- errors: PyTorch's texts ------------------------------------------------------


def _errors(lib: Any) -> list[Callable[[], Any]]:
    n = lib.nn
    lstm = n.LSTM(4, 20, 2)
    rnn = n.RNN(4, 20)
    gru = n.GRU(4, 5)
    cell = n.LSTMCell(4, 5)
    gru_cell = n.GRUCell(4, 5)
    relu_cell = n.RNNCell(4, 5, nonlinearity="relu")
    bad_cell = n.RNNCell(4, 5)
    bad_cell.nonlinearity = "foo"
    r = lib.randn
    return [
        lambda: n.RNN(4, 5, nonlinearity="sigmoid"),
        lambda: n.GRU(4, 5, proj_size=2),
        lambda: n.RNN(4, 5, proj_size=2),
        lambda: n.LSTM(4, 5, proj_size=5),
        lambda: n.LSTM(4, 5, proj_size=-1),
        lambda: n.LSTM(4, 5, dropout=1.5),
        lambda: n.LSTM(4, 5, dropout=True),
        lambda: n.LSTM(4, 0),
        lambda: n.LSTM(0, 5),
        lambda: n.LSTM(4, 5, num_layers=0),
        lambda: n.LSTM(4, 5, bias=1),
        lambda: n.LSTM(4, 5, batch_first=0),
        lambda: n.LSTM(4.0, 5),
        lambda: n.LSTM(4, 5.0),
        lambda: lstm(r(5, 3, 3)),
        lambda: lstm(r(5, 3, 4), (r(1, 3, 20), r(2, 3, 20))),
        lambda: lstm(r(5, 3, 4), (r(2, 3, 20), r(2, 3, 21))),
        lambda: lstm(r(5, 3, 4), (r(2, 3, 20), r(2, 20))),
        lambda: lstm(r(5, 4), (r(2, 3, 20), r(2, 20))),
        lambda: lstm(r(5, 3, 4, 1)),
        lambda: rnn(r(5, 3, 4), r(2, 3, 20)),
        lambda: rnn(r(5, 3, 4), r(1, 2, 20)),
        lambda: rnn(r(5, 3, 4), r(3, 20)),
        lambda: rnn(r(5, 4), r(1, 3, 20)),
        lambda: rnn(r(5, 3, 4, 1)),
        lambda: gru(r(5, 3, 4, 1)),
        lambda: gru(r(5, 3, 4), r(1, 3, 6)),
        lambda: cell(r(3, 3)),
        lambda: cell(r(3, 4), (r(2, 5), r(3, 5))),
        lambda: cell(r(3, 4), (r(3, 6), r(3, 5))),
        lambda: cell(r(3, 4), (r(3, 5), r(3, 6))),
        lambda: cell(r(3, 4), (r(3, 5), r(2, 5))),
        lambda: cell(r(3, 4, 1)),
        lambda: cell(r(3, 4), (r(3, 5, 1), r(3, 5))),
        lambda: gru_cell(r(3, 3)),
        lambda: gru_cell(r(3, 4), r(2, 5)),
        lambda: gru_cell(r(3, 4), r(3, 6)),
        lambda: gru_cell(r(4), r(3, 5)),
        lambda: gru_cell(r(3, 4), r(3, 5, 1)),
        lambda: relu_cell(r(3, 3)),
        lambda: bad_cell(r(3, 4)),
    ]


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        text = str(error).split("\nException raised from")[0]
        return type(error).__name__, text
    return "no error", ""


@pytest.mark.parametrize("index", range(len(_errors(yg))))
def test_errors_are_torchs(index: int) -> None:
    assert _outcome(_errors(yg)[index]) == _outcome(_errors(torch)[index])


def test_dtype_mismatch_error_names_both_dtypes() -> None:
    ours = _outcome(lambda: nn.LSTM(4, 5)(yg.randn(2, 1, 4, dtype=yg.float64)))
    theirs = _outcome(lambda: tnn.LSTM(4, 5)(torch.randn(2, 1, 4).double()))
    assert ours == (theirs[0], theirs[1].replace("torch.", "yamlgrad."))


# -- nn.utils.rnn -----------------------------------------------------------------


def _both(fn: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
    return fn(yg, R), fn(torch, TR)


def _same(ours: Any, theirs: Any) -> None:
    if theirs is None:
        assert ours is None
        return
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


@pytest.mark.parametrize("batch_first", [False, True], ids=["tb", "bf"])
@pytest.mark.parametrize(
    "lengths, enforce_sorted",
    [([5, 3, 1], True), ([3, 5, 1], False), ([2, 2, 5], False), ([5, 5, 5], True)],
)
def test_pack_and_pad_match_torch(
    batch_first: bool, lengths: list[int], enforce_sorted: bool
) -> None:
    shape = (BATCH, STEPS, 2) if batch_first else (STEPS, BATCH, 2)
    array = np.random.default_rng(10).standard_normal(shape)
    cotangent = np.random.default_rng(11).standard_normal((sum(lengths), 2))

    def run(lib: Any, utils: Any) -> Any:
        x = _leaf(lib, array)
        packed = utils.pack_padded_sequence(
            x, lib.tensor(lengths), batch_first, enforce_sorted
        )
        padded, out_lengths = utils.pad_packed_sequence(
            packed, batch_first, padding_value=-1.5, total_length=STEPS + 1
        )
        (packed.data * lib.tensor(cotangent)).sum().backward()
        return packed, padded, out_lengths, x.grad

    (packed, padded, lengths_out, grad), theirs = _both(run)
    for ours_value, theirs_value in zip(packed, theirs[0]):
        _same(ours_value, theirs_value)
    for ours_value, theirs_value in zip((padded, lengths_out, grad), theirs[1:]):
        _same(ours_value, theirs_value)
    assert type(packed.data.grad_fn).__name__ == type(theirs[0].data.grad_fn).__name__


@pytest.mark.parametrize("batch_first", [False, True], ids=["tb", "bf"])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first: bool, padding_side: str) -> None:
    rng = np.random.default_rng(12)
    arrays = [rng.standard_normal((n, 2, 3)) for n in (2, 4, 1)]
    cotangent = rng.standard_normal((3, 4, 2, 3) if batch_first else (4, 3, 2, 3))

    def run(lib: Any, utils: Any) -> Any:
        xs = [_leaf(lib, a) for a in arrays]
        out = utils.pad_sequence(xs, batch_first, 0.5, padding_side)
        (out * lib.tensor(cotangent)).sum().backward()
        return [out, *(x.grad for x in xs)]

    for ours_value, theirs_value in zip(*_both(run)):
        _same(ours_value, theirs_value)


def test_pack_sequence_unpack_and_unpad_match_torch() -> None:
    rng = np.random.default_rng(13)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 5, 2)]

    def run(lib: Any, utils: Any) -> Any:
        xs = [lib.tensor(a) for a in arrays]
        packed = utils.pack_sequence(xs, enforce_sorted=False)
        unpacked = utils.unpack_sequence(packed)
        padded = utils.pad_sequence(xs)
        unpadded = utils.unpad_sequence(padded, lib.tensor([3, 5, 2]))
        return [*packed, *unpacked, *unpadded]

    for ours_value, theirs_value in zip(*_both(run)):
        _same(ours_value, theirs_value)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        R.pack_sequence([yg.tensor(a) for a in arrays])


def test_packed_sequence_is_torchs_named_tuple() -> None:
    packed = R.pack_sequence([yg.tensor([1.0, 2.0, 3.0]), yg.tensor([4.0, 5.0])])
    theirs = TR.pack_sequence([torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0])])
    assert repr(packed) == repr(theirs)
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert packed._fields == theirs._fields
    assert sorted_indices is None and unsorted_indices is None
    double = packed.to(yg.float64)
    assert double.data.dtype == yg.float64 and double.batch_sizes is batch_sizes
    assert packed.to(yg.float32) is packed
    assert packed.double().data.dtype == yg.float64
    rebuilt = R.PackedSequence(data, batch_sizes)
    assert rebuilt.data is data
    indices = yg.tensor([1, 0])
    assert R.PackedSequence(data, batch_sizes, indices).unsorted_indices.tolist() == [
        1,
        0,
    ]
    assert R.invert_permutation(yg.tensor([1, 2, 0])).tolist() == [2, 0, 1]


def _utils_errors(lib: Any, utils: Any) -> list[Callable[[], Any]]:
    x = lib.randn(4, 3, 2)
    packed = utils.pack_padded_sequence(x, [4, 3, 2])
    return [
        lambda: utils.pack_padded_sequence(x, [2, 4, 3]),
        lambda: utils.pack_padded_sequence(x, [2, 0, 3], enforce_sorted=False),
        lambda: utils.pack_padded_sequence(x, [2, 3]),
        lambda: utils.pack_padded_sequence(x, lib.tensor([[4, 3, 2]])),
        lambda: utils.pad_packed_sequence(packed, total_length=2),
        lambda: utils.pad_sequence([lib.randn(3, 2), lib.randn(1, 3)]),
        lambda: utils.pad_sequence([]),
        lambda: utils.pad_sequence([lib.randn(3, 2)], padding_side="middle"),
        lambda: utils.pad_sequence(5),
        lambda: utils.pack_sequence([]),
    ]


@pytest.mark.parametrize("index", range(len(_utils_errors(yg, R))))
def test_utils_errors_are_torchs(index: int) -> None:
    ours = _outcome(_utils_errors(yg, R)[index])
    theirs = _outcome(_utils_errors(torch, TR)[index])
    assert ours == theirs


def test_lengths_longer_than_the_input_are_refused() -> None:
    # PyTorch reads past the input here; yamlgrad refuses.
    with pytest.raises(RuntimeError, match="at most the sequence length 4"):
        R.pack_padded_sequence(yg.randn(4, 3, 2), [5, 3, 2])


def test_public_module_paths() -> None:
    import yamlgrad.nn.utils.rnn as public

    assert public is R and yg.nn.utils.rnn is R
    assert public.PackedSequence is R.PackedSequence
    assert set(public.__all__) == set(TR.__all__)
    assert {"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"} <= set(nn.__all__)


@pytest.mark.parametrize("mode", MODES)
def test_compiled_step_matches_eager(mode: str) -> None:
    """yg.compile of a forward and loss through the layer: one compiled graph
    with the fused cells inside, the same gradients as the eager run."""
    ours, _ = _pair(mode, num_layers=2, bidirectional=True, batch_first=True)
    x = yg.tensor(np.random.default_rng(14).standard_normal((2, STEPS, INPUT)))

    def loss(x: yg.Tensor) -> yg.Tensor:
        output, hidden = ours(x)
        h_n = hidden[0] if isinstance(hidden, tuple) else hidden
        return (output**2).sum() + h_n.sum()

    grads = []
    for fn in (loss, yg.compile(loss)):
        ours.zero_grad()
        result = fn(x)
        result.backward()
        grads.append([p.grad.numpy().copy() for p in ours.parameters()])
    assert type(result.grad_fn).__name__ == "CompiledFunctionBackward"
    for eager, compiled in zip(*grads):
        np.testing.assert_allclose(compiled, eager, rtol=1e-12, atol=1e-14)
