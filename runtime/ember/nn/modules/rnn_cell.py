"""Single-step recurrent cells RNNCell, LSTMCell and GRUCell (PyTorch's parameters)."""

from __future__ import annotations

import math
from typing import Any

from ember import _ops
from ember._ops import creation
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules._rnn_steps import gru_step, lstm_step, rnn_relu_step, rnn_tanh_step
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["GRUCell", "LSTMCell", "RNNCell", "RNNCellBase"]


class RNNCellBase(Module):
    """weight_ih (G·H, H_in), weight_hh (G·H, H), bias_ih and bias_hh (G·H,), G gates."""

    bias_ih: Parameter | None
    bias_hh: Parameter | None

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias

        def empty(*shape: int) -> Parameter:
            return Parameter(creation.empty(shape, device=device, dtype=dtype))

        self.weight_ih = empty(num_chunks * hidden_size, input_size)
        self.weight_hh = empty(num_chunks * hidden_size, hidden_size)
        if bias:
            self.bias_ih = empty(num_chunks * hidden_size)
            self.bias_hh = empty(num_chunks * hidden_size)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in ±1/sqrt(hidden_size), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _batched(self, input: Tensor) -> bool:
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead"
            )
        if input.size(-1) != self.input_size:
            raise RuntimeError(
                f"{type(self).__name__}: input has inconsistent input_size: got "
                f"{input.size(-1)} expected {self.input_size}"
            )
        return input.dim() == 2

    def _state(self, hx: Tensor | None, input: Tensor, batched: bool) -> Tensor:
        if hx is None:
            rows = input.size(0) if batched else 1
            return _ops.zeros((rows, self.hidden_size), dtype=input.dtype, device=input.device)
        if hx.dim() != input.dim():
            raise RuntimeError(
                f"{type(self).__name__}: Expected hidden to be {input.dim()}D, got {hx.dim()}D"
            )
        return hx if batched else hx.unsqueeze(0)

    def _run(self, input: Tensor, states: tuple[Tensor, ...], step: Any) -> tuple[Tensor, ...]:
        projected = F.linear(input, self.weight_ih, self.bias_ih)
        return step(projected, states, self.weight_hh, self.bias_hh, None)


class RNNCell(RNNCellBase):
    """h' = tanh or relu(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = self._batched(input)
        x = input if batched else input.unsqueeze(0)
        step = rnn_tanh_step if self.nonlinearity == "tanh" else rnn_relu_step
        (h,) = self._run(x, (self._state(hx, input, batched),), step)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        batched = self._batched(input)
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            h = c = self._state(None, input, batched)
        else:
            h, c = (self._state(s, input, batched) for s in hx)
        h, c = self._run(x, (h, c), lstm_step)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n in PyTorch's order)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = self._batched(input)
        x = input if batched else input.unsqueeze(0)
        (h,) = self._run(x, (self._state(hx, input, batched),), gru_step)
        return h if batched else h.squeeze(0)
