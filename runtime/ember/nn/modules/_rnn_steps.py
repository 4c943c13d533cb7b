"""One time step of each recurrence, and a direction of a layer run over all steps.

The input projection x W_ihᵀ (+ biases) is computed for every step at once by the caller, so
each step here only adds h W_hhᵀ and applies the gates. The state is a tuple: (h,) or (h, c).
"""

from __future__ import annotations

from collections.abc import Callable

from ember import _ops
from ember._tensor import Tensor
from ember.nn import functional as F

__all__ = ["Step", "gru_step", "lstm_step", "rnn_relu_step", "rnn_tanh_step", "run_direction"]

State = tuple[Tensor, ...]
# (projected input of this step, state, weight_hh, bias_hh or None, weight_hr or None)
Step = Callable[[Tensor, State, Tensor, Tensor | None, Tensor | None], State]


def rnn_tanh_step(
    xw: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> State:
    return (_ops.tanh(xw + F.linear(state[0], w_hh, b_hh)),)


def rnn_relu_step(
    xw: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> State:
    return (F.relu(xw + F.linear(state[0], w_hh, b_hh)),)


def lstm_step(
    xw: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> State:
    h, c = state
    gates = xw + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)  # PyTorch's gate order: input, forget, cell, output
    c = _ops.sigmoid(f) * c + _ops.sigmoid(i) * _ops.tanh(g)
    h = _ops.sigmoid(o) * _ops.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return (h, c)


def gru_step(
    xw: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> State:
    # b_hh stays out of xw here: the new-gate part of it is scaled by the reset gate.
    h = state[0]
    x_r, x_z, x_n = xw.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = _ops.sigmoid(x_r + h_r)
    z = _ops.sigmoid(x_z + h_z)
    n = _ops.tanh(x_n + r * h_n)
    return ((1 - z) * n + z * h,)


def run_direction(
    step: Step,
    inputs: list[Tensor],
    batch_sizes: list[int],
    initial: State,
    weights: tuple[Tensor, Tensor | None, Tensor | None],
    reverse: bool,
) -> tuple[list[Tensor], State]:
    """Per-step outputs h_t and the final state, over steps whose batch shrinks with t.

    Sequences are sorted longest first, so at step t only the first batch_sizes[t] rows run;
    a sequence's final state is its state at its own last step.
    """
    outputs: list[Tensor] = [inputs[0]] * len(inputs)
    if not reverse:
        state = initial
        finished: list[State] = []
        for t, xw in enumerate(inputs):
            running = batch_sizes[t]
            if running < state[0].size(0):
                finished.append(tuple(s[running:] for s in state))
                state = tuple(s[:running] for s in state)
            state = step(xw, state, *weights)
            outputs[t] = state[0]
        if finished:
            parts = [state, *reversed(finished)]
            state = tuple(_ops.cat([p[k] for p in parts], 0) for k in range(len(state)))
        return outputs, state
    # Backwards: the batch grows as shorter sequences start, each from its initial state.
    state = tuple(s[: batch_sizes[-1]] for s in initial)
    for t in reversed(range(len(inputs))):
        running, have = batch_sizes[t], state[0].size(0)
        if running > have:
            state = tuple(
                _ops.cat([s, s0[have:running]], 0) for s, s0 in zip(state, initial, strict=True)
            )
        state = step(inputs[t], state, *weights)
        outputs[t] = state[0]
    return outputs, state
