"""The language-model training benchmarks: a small GPT and a 2-layer LSTM, one step each.

Ember and PyTorch only. Each model is written once against the library's `nn` (so the two
sides run the same program), and both load the same initial weights: a state dict drawn
once with NumPy under PyTorch's parameter names, the init each model's reference uses
(nanoGPT's normal(0, 0.02) with zero biases and unit LayerNorm scales; the
word_language_model example's uniform(-0.1, 0.1) embedding and decoder and PyTorch's
default LSTM init, uniform(±1/sqrt(hidden))), loaded through `load_state_dict`. Before
anything is timed, `check` runs two steps and returns both losses with one parameter
after them, compared with PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

import numpy as np

from benchmarks.bench_core import Case, Target

__all__ = ["TRANSFORMER_CASES"]

_BOTH: Final = ("ember", "torch")
# Two float32 steps through ~40 reductions and GEMMs of different summation orders; Adam's
# first step divides by |grad|, which amplifies those last bits where a gradient is tiny.
_STEP_RTOL: Final = 2e-4
_STEP_ATOL: Final = 2e-5

Inputs = dict[str, np.ndarray]
_WEIGHT_PREFIX: Final = "w."

# ---- GPT (nanoGPT's shakespeare_char shape, smaller) ----------------------------------------

GPT_LAYERS: Final = 4
GPT_HEADS: Final = 4
GPT_WIDTH: Final = 128
GPT_CONTEXT: Final = 64
GPT_BATCH: Final = 12
GPT_VOCAB: Final = 65


def _gpt_shapes() -> dict[str, tuple[int, ...]]:
    """PyTorch's state-dict names and shapes of the GPT below (untied head)."""
    width = GPT_WIDTH
    shapes: dict[str, tuple[int, ...]] = {
        "token_embedding.weight": (GPT_VOCAB, width),
        "position_embedding.weight": (GPT_CONTEXT, width),
    }
    for layer in range(GPT_LAYERS):
        block = f"blocks.{layer}."
        shapes |= {
            block + "ln_1.weight": (width,),
            block + "ln_1.bias": (width,),
            block + "attention.qkv.weight": (3 * width, width),
            block + "attention.qkv.bias": (3 * width,),
            block + "attention.projection.weight": (width, width),
            block + "attention.projection.bias": (width,),
            block + "ln_2.weight": (width,),
            block + "ln_2.bias": (width,),
            block + "mlp.0.weight": (4 * width, width),
            block + "mlp.0.bias": (4 * width,),
            block + "mlp.2.weight": (width, 4 * width),
            block + "mlp.2.bias": (width,),
        }
    shapes |= {
        "ln_f.weight": (width,),
        "ln_f.bias": (width,),
        "head.weight": (GPT_VOCAB, width),
    }
    return shapes


def _gpt_inputs(rng: np.random.Generator) -> Inputs:
    inputs: Inputs = {}
    for name, shape in _gpt_shapes().items():
        if name.endswith("bias"):
            value = np.zeros(shape, np.float32)
        elif ".ln_" in name or name.startswith("ln_"):
            value = np.ones(shape, np.float32)
        else:
            value = rng.normal(0.0, 0.02, size=shape).astype(np.float32)
        inputs[_WEIGHT_PREFIX + name] = value
    tokens = rng.integers(0, GPT_VOCAB, size=(GPT_BATCH, GPT_CONTEXT + 1))
    inputs["x"] = tokens[:, :-1].astype(np.int64)
    inputs["y"] = tokens[:, 1:].astype(np.int64)
    return inputs


def _gpt(lib: ModuleType) -> Any:
    """Pre-LN GPT: causal SDPA attention, GELU MLP 4x, final LayerNorm, untied head."""
    nn = lib.nn
    functional = nn.functional

    class Attention(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(GPT_WIDTH, 3 * GPT_WIDTH)
            self.projection = nn.Linear(GPT_WIDTH, GPT_WIDTH)

        def forward(self, x: Any) -> Any:
            batch, length, width = x.shape
            heads = GPT_HEADS
            q, k, v = self.qkv(x).split(width, dim=2)
            q = q.view(batch, length, heads, width // heads).transpose(1, 2)
            k = k.view(batch, length, heads, width // heads).transpose(1, 2)
            v = v.view(batch, length, heads, width // heads).transpose(1, 2)
            y = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(batch, length, width)
            return self.projection(y)

    class Block(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(GPT_WIDTH)
            self.attention = Attention()
            self.ln_2 = nn.LayerNorm(GPT_WIDTH)
            self.mlp = nn.Sequential(
                nn.Linear(GPT_WIDTH, 4 * GPT_WIDTH), nn.GELU(), nn.Linear(4 * GPT_WIDTH, GPT_WIDTH)
            )

        def forward(self, x: Any) -> Any:
            x = x + self.attention(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.token_embedding = nn.Embedding(GPT_VOCAB, GPT_WIDTH)
            self.position_embedding = nn.Embedding(GPT_CONTEXT, GPT_WIDTH)
            self.blocks = nn.ModuleList(Block() for _ in range(GPT_LAYERS))
            self.ln_f = nn.LayerNorm(GPT_WIDTH)
            self.head = nn.Linear(GPT_WIDTH, GPT_VOCAB, bias=False)

        def forward(self, tokens: Any, targets: Any) -> Any:
            positions = lib.arange(tokens.shape[1])
            x = self.token_embedding(tokens) + self.position_embedding(positions)
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            return functional.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return GPT()


def _gpt_optimizer(lib: ModuleType, model: Any) -> Any:
    """nanoGPT's groups: decay on every 2-D weight but the embeddings, none on the rest."""
    decay: list[Any] = []
    no_decay: list[Any] = []
    for name, parameter in model.named_parameters():
        two_d_weight = parameter.dim() >= 2 and "embedding" not in name
        (decay if two_d_weight else no_decay).append(parameter)
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    return lib.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.99))


def _gpt_setup(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    model = _gpt(lib)
    model.load_state_dict(_state_dict(ns))
    model.train()
    optimizer = _gpt_optimizer(lib, model)
    x, y = ns["x"], ns["y"]
    parameters = list(model.parameters())

    def step() -> Any:
        optimizer.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()
        return loss

    def check() -> Any:
        first = step().detach().reshape(1)
        second = step().detach().reshape(1)
        qkv = model.blocks[0].attention.qkv.weight.detach().reshape(-1)
        return lib.cat([first, second, qkv])

    return {"step": step, "check": check}


# ---- LSTM language model (PyTorch's word_language_model example) -------------------------

LSTM_LAYERS: Final = 2
LSTM_HIDDEN: Final = 200
LSTM_LENGTH: Final = 35
LSTM_BATCH: Final = 20
LSTM_VOCAB: Final = 10000
LSTM_LR: Final = 20.0
LSTM_CLIP: Final = 0.25


def _lstm_inputs(rng: np.random.Generator) -> Inputs:
    bound = 1 / math.sqrt(LSTM_HIDDEN)
    shapes: dict[str, tuple[int, ...]] = {}
    for layer in range(LSTM_LAYERS):
        for kind in ("ih", "hh"):
            shapes[f"rnn.weight_{kind}_l{layer}"] = (4 * LSTM_HIDDEN, LSTM_HIDDEN)
            shapes[f"rnn.bias_{kind}_l{layer}"] = (4 * LSTM_HIDDEN,)
    inputs: Inputs = {
        _WEIGHT_PREFIX + "encoder.weight": rng.uniform(
            -0.1, 0.1, size=(LSTM_VOCAB, LSTM_HIDDEN)
        ).astype(np.float32),
        **{
            _WEIGHT_PREFIX + name: rng.uniform(-bound, bound, size=shape).astype(np.float32)
            for name, shape in shapes.items()
        },
        _WEIGHT_PREFIX + "decoder.weight": rng.uniform(
            -0.1, 0.1, size=(LSTM_VOCAB, LSTM_HIDDEN)
        ).astype(np.float32),
        _WEIGHT_PREFIX + "decoder.bias": np.zeros(LSTM_VOCAB, np.float32),
    }
    tokens = rng.integers(0, LSTM_VOCAB, size=(LSTM_LENGTH + 1, LSTM_BATCH))
    inputs["x"] = tokens[:-1].astype(np.int64)
    inputs["y"] = tokens[1:].astype(np.int64)
    return inputs


def _lstm_model(lib: ModuleType) -> Any:
    """The example's RNNModel('LSTM', ntoken, 200, 200, 2), dropout off (no shared stream)."""
    nn = lib.nn

    class RNNModel(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(LSTM_VOCAB, LSTM_HIDDEN)
            self.rnn = nn.LSTM(LSTM_HIDDEN, LSTM_HIDDEN, LSTM_LAYERS)
            self.decoder = nn.Linear(LSTM_HIDDEN, LSTM_VOCAB)

        def forward(self, tokens: Any, hidden: Any) -> Any:
            output, hidden = self.rnn(self.encoder(tokens), hidden)
            return self.decoder(output).view(-1, LSTM_VOCAB), hidden

    return RNNModel()


def _lstm_setup(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    model = _lstm_model(lib)
    model.load_state_dict(_state_dict(ns))
    model.train()
    optimizer = lib.optim.SGD(model.parameters(), lr=LSTM_LR)
    criterion = lib.nn.CrossEntropyLoss()
    x, y = ns["x"], ns["y"].reshape(-1)
    zeros = lib.zeros(LSTM_LAYERS, LSTM_BATCH, LSTM_HIDDEN)
    hidden = [(zeros, zeros)]

    def step() -> Any:
        # As the example: the state carries over, detached (truncated BPTT).
        state = tuple(h.detach() for h in hidden[0])
        model.zero_grad()
        output, new_state = model(x, state)
        hidden[0] = new_state
        loss = criterion(output, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), LSTM_CLIP)
        optimizer.step()
        return loss

    def check() -> Any:
        first = step().detach().reshape(1)
        second = step().detach().reshape(1)
        weight = model.rnn.weight_hh_l0.detach().reshape(-1)
        return lib.cat([first, second, weight])

    return {"step": step, "check": check}


def _state_dict(ns: dict[str, Any]) -> dict[str, Any]:
    prefix = len(_WEIGHT_PREFIX)
    return {key[prefix:]: value for key, value in ns.items() if key.startswith(_WEIGHT_PREFIX)}


def _both(expression: str) -> dict[str, str]:
    return dict.fromkeys(_BOTH, expression)


def _case(
    name: str,
    label: str,
    make_inputs: Callable[[np.random.Generator], Inputs],
    setup: Callable[[ModuleType, dict[str, Any]], dict[str, Any]],
    min_ratio: float,
) -> Case:
    return Case(
        name,
        label,
        "steps/s",
        1,
        make_inputs,
        _both("step()"),
        target=Target("torch", min_ratio),
        rtol=_STEP_RTOL,
        atol=_STEP_ATOL,
        setup=setup,
        check="check()",
    )


TRANSFORMER_CASES: Final[tuple[Case, ...]] = (
    _case("gpt_step", "GPT 4x128 ctx64 AdamW step", _gpt_inputs, _gpt_setup, 1.0),
    _case("lstm_lm_step", "LSTM LM 2x200 seq35 step", _lstm_inputs, _lstm_setup, 0.8),
)
