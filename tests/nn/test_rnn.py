"""RNN, LSTM, GRU and their cells against PyTorch's with the same weights: outputs, hidden
states, gradients of inputs and parameters, parameter names, initialisation, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import rnn as rnn_utils

from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

LAYERS = {
    "rnn-tanh": ("RNN", {}),
    "rnn-relu-2": ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    "lstm": ("LSTM", {}),
    "lstm-bi-2-proj": ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}),
    "lstm-batch-first-nobias": ("LSTM", {"batch_first": True, "bias": False}),
    "gru": ("GRU", {}),
    "gru-bi-2-batch-first": ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
}
INPUT, HIDDEN, STEPS, BATCH = 3, 4, 5, 3


def _pair_layer(kind: str, options: dict[str, Any], device: str = "cpu") -> tuple[Any, Any]:
    ours = getattr(nn, kind)(INPUT, HIDDEN, **options).to(device)
    theirs = getattr(torch.nn, kind)(INPUT, HIDDEN, **options)
    copy_into_torch(ours, theirs)
    return ours, theirs


def _initial_states(
    kind: str, options: dict[str, Any], rng: Any, batch: int | None, device: str = "cpu"
) -> tuple[Any, Any]:
    directions = 2 if options.get("bidirectional") else 1
    rows = options.get("num_layers", 1) * directions
    out = options.get("proj_size") or HIDDEN
    lead = (rows,) if batch is None else (rows, batch)
    h, th = pair(rng.standard_normal((*lead, out)), device, grad=True)
    if kind != "LSTM":
        return h, th
    c, tc = pair(rng.standard_normal((*lead, HIDDEN)), device, grad=True)
    return (h, c), (th, tc)


def _backward_both(ours: Any, theirs: Any, rng: Any, device: str = "cpu") -> None:
    """Backpropagate the same random weighting of every output (tuples flattened)."""

    def flat(x: Any) -> list[Any]:
        if isinstance(x, (rnn_utils.PackedSequence, torch.nn.utils.rnn.PackedSequence)):
            return [x.data]
        if isinstance(x, tuple):
            return [t for item in x for t in flat(item)]
        return [x]

    total_ours, total_theirs = 0, 0
    for a, b in zip(flat(ours), flat(theirs), strict=True):
        g = rng.standard_normal(tuple(b.shape)).astype(np.float32)
        total_ours = total_ours + (a * ember.tensor(g, device=device)).sum()
        total_theirs = total_theirs + (b * torch.tensor(g)).sum()
    total_ours.backward()  # type: ignore[union-attr]
    total_theirs.backward()  # type: ignore[union-attr]


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("with_state", [False, True])
def test_layer_matches_torch(name: str, with_state: bool, rng: Any) -> None:
    kind, options = LAYERS[name]
    ours, theirs = _pair_layer(kind, options)
    shape = (BATCH, STEPS, INPUT) if options.get("batch_first") else (STEPS, BATCH, INPUT)
    x, tx = pair(rng.standard_normal(shape), "cpu", grad=True)
    args, targs = ((x,), (tx,))
    if with_state:
        hx, thx = _initial_states(kind, options, rng, BATCH)
        args, targs = (x, hx), (tx, thx)
    out, expected = ours(*args), theirs(*targs)
    assert_same_outputs(out, expected, atol=1e-5)
    _backward_both(out, expected, rng)
    assert_same_outputs(x.grad, tx.grad, atol=1e-5)
    if with_state:
        ours_states = args[1] if kind == "LSTM" else (args[1],)
        torch_states = targs[1] if kind == "LSTM" else (targs[1],)
        for a, b in zip(ours_states, torch_states, strict=True):
            assert_same_outputs(a.grad, b.grad, atol=1e-5)
    assert_same_gradients(ours, theirs, atol=1e-4)


@pytest.mark.parametrize("name", ["rnn-tanh", "lstm-bi-2-proj", "gru"])
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_input(name: str, with_state: bool, rng: Any) -> None:
    kind, options = LAYERS[name]
    ours, theirs = _pair_layer(kind, options)
    x, tx = pair(rng.standard_normal((STEPS, INPUT)), "cpu", grad=True)
    args, targs = ((x,), (tx,))
    if with_state:
        hx, thx = _initial_states(kind, options, rng, None)
        args, targs = (x, hx), (tx, thx)
    out, expected = ours(*args), theirs(*targs)
    assert_same_outputs(out, expected, atol=1e-5)
    _backward_both(out, expected, rng)
    assert_same_outputs(x.grad, tx.grad, atol=1e-5)
    assert_same_gradients(ours, theirs, atol=1e-4)


@pytest.mark.parametrize("name", ["rnn-relu-2", "lstm-bi-2-proj", "gru-bi-2-batch-first"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence_input(name: str, enforce_sorted: bool, rng: Any) -> None:
    kind, options = LAYERS[name]
    ours, theirs = _pair_layer(kind, options)
    lengths = [5, 3, 3, 1] if enforce_sorted else [2, 5, 1, 3]
    batch_first = bool(options.get("batch_first"))
    shape = (4, STEPS, INPUT) if batch_first else (STEPS, 4, INPUT)
    x, tx = pair(rng.standard_normal(shape), "cpu", grad=True)
    packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    hx, thx = _initial_states(kind, options, rng, 4)
    out, expected = ours(packed, hx), theirs(tpacked, thx)
    assert isinstance(out[0], rnn_utils.PackedSequence)
    assert_same_outputs(out[0].data, expected[0].data, atol=1e-5)
    assert out[0].batch_sizes.tolist() == expected[0].batch_sizes.tolist()
    assert_same_outputs(out[1], expected[1], atol=1e-5)
    padded, out_lengths = rnn_utils.pad_packed_sequence(out[0], batch_first)
    tpadded, t_lengths = torch.nn.utils.rnn.pad_packed_sequence(expected[0], batch_first)
    assert_same_outputs(padded, tpadded, atol=1e-5)
    assert out_lengths.tolist() == t_lengths.tolist()
    _backward_both(out, expected, rng)
    assert_same_outputs(x.grad, tx.grad, atol=1e-5)
    for a, b in zip(
        hx if kind == "LSTM" else (hx,), thx if kind == "LSTM" else (thx,), strict=True
    ):
        assert_same_outputs(a.grad, b.grad, atol=1e-5)
    assert_same_gradients(ours, theirs, atol=1e-4)


def test_dropout_between_layers_only_in_training(rng: Any) -> None:
    ours = nn.LSTM(INPUT, HIDDEN, num_layers=3, dropout=0.5)
    theirs = torch.nn.LSTM(INPUT, HIDDEN, num_layers=3, dropout=0.5)
    copy_into_torch(ours, theirs)
    x, tx = pair(rng.standard_normal((STEPS, BATCH, INPUT)), "cpu")
    first, second = ours(x)[0], ours(x)[0]
    assert not np.allclose(first.numpy(force=True), second.numpy(force=True))
    ours.eval()
    theirs.eval()
    assert_same_outputs(ours(x), theirs(tx), atol=1e-5)
    with pytest.warns(UserWarning, match="dropout"):
        nn.GRU(INPUT, HIDDEN, dropout=0.2)


@pytest.mark.parametrize("name", LAYERS)
def test_parameters_follow_torch(name: str) -> None:
    kind, options = LAYERS[name]
    ours = getattr(nn, kind)(INPUT, HIDDEN, **options)
    theirs = getattr(torch.nn, kind)(INPUT, HIDDEN, **options)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert repr(ours) == repr(theirs)
    ours.load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    )
    ours.flatten_parameters()
    # uniform in ±1/sqrt(hidden_size) = ±0.25 for every parameter
    values = np.concatenate([p.numpy(force=True).ravel() for p in nn.GRU(6, 16).parameters()])
    assert np.abs(values).max() <= 0.25 and np.abs(values).max() > 0.24
    assert abs(values.mean()) < 0.02


def test_constructor_and_input_errors() -> None:
    with pytest.raises(ValueError, match="proj_size"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=1.5)
    layer = nn.LSTM(3, 4, 2)
    with pytest.raises(RuntimeError, match="input_size"):
        layer(ember.zeros(5, 2, 6))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 4\)"):
        layer(ember.zeros(5, 2, 3), (ember.zeros(1, 2, 4), ember.zeros(1, 2, 4)))
    with pytest.raises(ValueError, match="2D or 3D"):
        layer(ember.zeros(5, 2, 3, 1))
    assert nn.RNN(3, 4, 2, "relu").nonlinearity == "relu"  # PyTorch's positional order


CELLS = {"RNNCell": {}, "RNNCell-relu": {"nonlinearity": "relu"}, "LSTMCell": {}, "GRUCell": {}}


@pytest.mark.parametrize("name", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_cell_matches_torch(name: str, batched: bool, with_state: bool, rng: Any) -> None:
    kind = name.split("-")[0]
    ours = getattr(nn, kind)(INPUT, HIDDEN, **CELLS[name])
    theirs = getattr(torch.nn, kind)(INPUT, HIDDEN, **CELLS[name])
    copy_into_torch(ours, theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    lead = (BATCH,) if batched else ()
    x, tx = pair(rng.standard_normal((*lead, INPUT)), "cpu", grad=True)
    args: tuple[Any, ...] = (x,)
    targs: tuple[Any, ...] = (tx,)
    if with_state:
        h, th = pair(rng.standard_normal((*lead, HIDDEN)), "cpu", grad=True)
        if kind == "LSTMCell":
            c, tc = pair(rng.standard_normal((*lead, HIDDEN)), "cpu", grad=True)
            args, targs = (x, (h, c)), (tx, (th, tc))
        else:
            args, targs = (x, h), (tx, th)
    out, expected = ours(*args), theirs(*targs)
    assert_same_outputs(out, expected, atol=1e-5)
    _backward_both(out, expected, rng)
    assert_same_outputs(x.grad, tx.grad, atol=1e-5)
    assert_same_gradients(ours, theirs, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_gradcheck_float64(kind: str, rng: Any) -> None:
    layer = getattr(nn, kind)(2, 3, num_layers=2, bidirectional=True, dtype=ember.float64)
    x = ember.tensor(rng.standard_normal((3, 2, 2)), dtype=ember.float64, requires_grad=True)
    weights = list(layer.parameters())[:4]

    def first_output(input: Any, *params: Any) -> Any:
        return layer(input)[0]

    assert ember.autograd.gradcheck(first_output, (x, *weights))


def test_layer_runs_on_every_device(device: str, rng: Any) -> None:
    ours, theirs = _pair_layer("LSTM", {"num_layers": 2, "bidirectional": True}, device)
    x, tx = pair(rng.standard_normal((STEPS, BATCH, INPUT)), device, grad=True)
    out, expected = ours(x), theirs(tx)
    assert_same_outputs(out, expected, atol=1e-5)
    _backward_both(out, expected, rng, device)
    assert_same_outputs(x.grad, tx.grad, atol=1e-5)
