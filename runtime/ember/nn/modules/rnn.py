"""Recurrent layers RNN, LSTM and GRU (PyTorch's parameters, state_dict and semantics).

Each layer and direction is a composite: one matmul projects the whole input sequence through
weight_ih, then a loop over time applies the recurrence (see _rnn_steps). Inputs are padded
(T, N, H_in) / (N, T, H_in) tensors, unbatched (T, H_in) tensors or PackedSequences.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ember import _ops
from ember._ops import creation
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules._rnn_steps import (
    Step,
    gru_step,
    lstm_step,
    rnn_relu_step,
    rnn_tanh_step,
    run_direction,
)
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence

__all__ = ["GRU", "LSTM", "RNN", "RNNBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_STEPS: dict[str, Step] = {
    "RNN_TANH": rnn_tanh_step,
    "RNN_RELU": rnn_relu_step,
    "LSTM": lstm_step,
    "GRU": gru_step,
}


class RNNBase(Module):
    """The shared machinery: parameters weight_ih_l{k}{_reverse} etc., hidden-state checks."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= float(dropout) <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        output_size = proj_size if proj_size > 0 else hidden_size
        gate_size = _GATES[mode] * hidden_size

        def empty(*shape: int) -> Parameter:
            return Parameter(creation.empty(shape, device=device, dtype=dtype))

        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else output_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes: dict[str, tuple[int, ...]] = {
                    "weight_ih": (gate_size, layer_input),
                    "weight_hh": (gate_size, output_size),
                }
                if bias:
                    shapes["bias_ih"] = (gate_size,)
                    shapes["bias_hh"] = (gate_size,)
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    setattr(self, kind + suffix, empty(*shape))
                    names.append(kind + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ±1/sqrt(hidden_size), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """A no-op kept for ported code: PyTorch packs the weights into one buffer for cuDNN;
        Ember's layers are composites of ordinary ops over the named parameters, so there is
        no fused kernel whose layout the weights must match."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _layer_weights(self, layer: int, direction: int) -> dict[str, Tensor | None]:
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return {
            kind: getattr(self, kind + suffix, None)
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
        }

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _state_shapes(self, batch: int) -> list[tuple[int, int, int]]:
        directions = 2 if self.bidirectional else 1
        output_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(self.num_layers * directions, batch, output_size)]
        if self.mode == "LSTM":
            shapes.append((self.num_layers * directions, batch, self.hidden_size))
        return shapes

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        """(output, h_n), or (output, (h_n, c_n)) for LSTM, in PyTorch's layouts."""
        packed = isinstance(input, PackedSequence)
        if packed:
            data = input.data
            batch_sizes = [int(b) for b in input.batch_sizes.tolist()]
            batch = batch_sizes[0]
            batched = True
        else:
            data = input
            if input.dim() not in (2, 3):
                raise ValueError(
                    f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D "
                    "tensor instead"
                )
            batched = input.dim() == 3
            if not batched:
                data = input.unsqueeze(1)
            elif self.batch_first:
                data = input.transpose(0, 1)
            batch = data.size(1)
            batch_sizes = [batch] * data.size(0)
        if data.size(-1) != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{data.size(-1)}"
            )
        states = self._initial_states(hx, data, batch, batched, input if packed else None)
        output, finals = self._run_layers(data, batch_sizes, states, packed)
        if packed:
            if input.unsorted_indices is not None:
                finals = [_ops.index_select(f, 1, input.unsorted_indices) for f in finals]
            out: Any = PackedSequence(
                output, input.batch_sizes, input.sorted_indices, input.unsorted_indices
            )
        else:
            if not batched:
                output = output.squeeze(1)
                finals = [f.squeeze(1) for f in finals]
            elif self.batch_first:
                output = output.transpose(0, 1)
            out = output
        hidden: Any = tuple(finals) if self.mode == "LSTM" else finals[0]
        return out, hidden

    def _initial_states(
        self,
        hx: Any,
        data: Tensor,
        batch: int,
        batched: bool,
        packed: PackedSequence | None,
    ) -> list[Tensor]:
        shapes = self._state_shapes(batch)
        if hx is None:
            return [_ops.zeros(s, dtype=data.dtype, device=data.device) for s in shapes]
        given = list(hx) if self.mode == "LSTM" else [hx]
        if self.mode == "LSTM" and (not isinstance(hx, tuple) or len(given) != 2):
            raise RuntimeError("LSTM: Expected hx to be a tuple (h_0, c_0)")
        if not isinstance(given[0], Tensor):
            raise RuntimeError(f"{type(self).__name__}: Expected hx to be a Tensor")
        expected_dim = 3 if batched else 2
        states = []
        for k, (state, shape) in enumerate(zip(given, shapes, strict=True)):
            if state.dim() != expected_dim:
                raise RuntimeError(
                    f"For {'batched' if batched else 'unbatched'} {expected_dim}-D "
                    f"input, hx should also be {expected_dim}-D but got {state.dim()}-D tensor"
                )
            if not batched:
                state = state.unsqueeze(1)
            if tuple(state.shape) != shape:
                which = f"hidden[{k}]" if self.mode == "LSTM" else "hidden"
                raise RuntimeError(f"Expected {which} size {shape}, got {list(state.shape)}")
            if packed is not None and packed.sorted_indices is not None:
                state = _ops.index_select(state, 1, packed.sorted_indices)
            states.append(state)
        return states

    def _run_layers(
        self, data: Tensor, batch_sizes: list[int], states: list[Tensor], packed: bool
    ) -> tuple[Tensor, list[Tensor]]:
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        finals: list[list[Tensor]] = [[] for _ in states]
        layer_input = data
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                layer_input = F.dropout(layer_input, self.dropout, True)
            outputs = []
            for direction in range(directions):
                w = self._layer_weights(layer, direction)
                bias = w["bias_ih"]
                if bias is not None and self.mode != "GRU":  # fold b_hh into the projection
                    bias = bias + w["bias_hh"]
                hh_bias = w["bias_hh"] if self.mode == "GRU" else None
                assert w["weight_ih"] is not None and w["weight_hh"] is not None
                projected = F.linear(layer_input, w["weight_ih"], bias)  # all steps at once
                steps = (
                    list(_ops.split(projected, batch_sizes, 0))
                    if packed
                    else list(projected.unbind(0))
                )
                index = layer * directions + direction
                initial = tuple(s[index] for s in states)
                per_step, final = run_direction(
                    step, steps, batch_sizes, initial,
                    (w["weight_hh"], hh_bias, w["weight_hr"]), reverse=direction == 1,
                )  # fmt: skip
                outputs.append(_ops.cat(per_step, 0) if packed else _ops.stack(per_step, 0))
                for k, f in enumerate(final):
                    finals[k].append(f)
            layer_input = outputs[0] if directions == 1 else _ops.cat(outputs, -1)
        return layer_input, [_ops.stack(f, 0) for f in finals]


class RNN(RNNBase):
    """Elman RNN: h_t = tanh or relu(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # PyTorch's positional order puts nonlinearity fourth
            kwargs["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, with an optional projection of h (proj_size)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)
