"""The core op benchmarks: small-op overhead, streaming elementwise, reductions, matmul.

Each case is one statement per library over the same NumPy-generated inputs, plus how much
work one call does (bytes moved or flops) and, for the issue's goals, a target ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Literal

import numpy as np

__all__ = ["CASES", "Case", "Setup", "Target", "Unit"]

Unit = Literal["us/op", "GB/s", "GFLOP/s", "steps/s", "s"]

# Extra names for one library's statement namespace (a model, a closure), built once from
# the library's module and the wrapped inputs.
Setup = Callable[[ModuleType, dict[str, Any]], dict[str, Any]]

_N: Final = 16 * 1024 * 1024
_SIDE: Final = 4096
_F32: Final = 4
_I64: Final = 8


@dataclass(frozen=True)
class Target:
    """A goal for Ember's speed relative to `reference` (1.0 = as fast, 2.0 = twice as fast).

    `reference` is "torch", or "best" for the faster of PyTorch and NumPy.
    """

    reference: Literal["torch", "best"]
    min_ratio: float

    def describe(self) -> str:
        """E.g. `>=0.90x best`."""
        return f">={self.min_ratio:.2f}x {self.reference}"


@dataclass(frozen=True)
class Case:
    """One benchmark: inputs, a statement per library, work per call and an optional goal.

    `statements` maps a library name to an expression over the inputs (and `ember`,
    `torch`, `np`); its value is the result checked against the reference's: NumPy's, or
    PyTorch's for a case without a NumPy statement. `work` is bytes read + written (GB/s),
    flops (GFLOP/s) or steps (steps/s) per call; unused for us/op and s. `setup`, when
    given, adds names to each library's namespace; `check`, when given, is evaluated once
    instead of the statement to produce the checked result (for statements that return
    nothing, or whose result alone would not show that the library computed the right thing).
    """

    name: str
    label: str
    unit: Unit
    work: float
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    statements: Mapping[str, str]
    target: Target | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    setup: Setup | None = None
    check: str | None = None


def _same(expression: str) -> dict[str, str]:
    """The same expression in every library (operators and methods)."""
    return {"ember": expression, "torch": expression, "numpy": expression}


def _call(function: str, arguments: str, numpy_function: str | None = None) -> dict[str, str]:
    """`ember.f(args)`, `torch.f(args)`, `np.f(args)`."""
    numpy_name = numpy_function or function
    return {
        "ember": f"ember.{function}({arguments})",
        "torch": f"torch.{function}({arguments})",
        "numpy": f"np.{numpy_name}({arguments})",
    }


def _uniform(
    shape: tuple[int, ...], low: float = -1.0, high: float = 1.0
) -> Callable[[np.random.Generator], np.ndarray]:
    def make(rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(low, high, size=shape).astype(np.float32)

    return make


def _inputs(
    a: Callable[[np.random.Generator], np.ndarray],
    b: Callable[[np.random.Generator], np.ndarray] | None = None,
    *,
    out: bool = False,
) -> Callable[[np.random.Generator], dict[str, np.ndarray]]:
    """Inputs `a` (and `b`), plus a preallocated `c` shaped like `a` when `out`."""

    def make(rng: np.random.Generator) -> dict[str, np.ndarray]:
        arrays = {"a": a(rng)}
        if b is not None:
            arrays["b"] = b(rng)
        if out:
            arrays["c"] = np.zeros_like(arrays["a"])
        return arrays

    return make


def _int64(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(-(1 << 40), 1 << 40, size=_N, dtype=np.int64)


def _linear_gemm(
    name: str,
    label: str,
    a: Callable[[np.random.Generator], np.ndarray],
    b: Callable[[np.random.Generator], np.ndarray],
    expression: str,
) -> Case:
    """One of a linear layer's products at the GPT's MLP width (2 * 768 * 128 * 512 flops)."""
    return Case(
        f"linear_{name}_gemm",
        f"linear {label}",
        "GFLOP/s",
        2 * 768 * 128 * 512,
        _inputs(a, b),
        _same(expression),
        rtol=1e-4,
        atol=1e-4,
    )


_ONE = _uniform((1,))
_BIG = _uniform((_N,))
_POSITIVE = _uniform((_N,), 0.5, 1.5)
_SQUARE = _uniform((_SIDE, _SIDE))
_TINY_MATRIX = _uniform((2, 2))
_MATRIX = _uniform((1024, 1024))
_TOKENS_NARROW = _uniform((768, 128))
_TOKENS_WIDE = _uniform((768, 512))
_WEIGHT = _uniform((512, 128))

_BINARY_BYTES: Final = 3 * _N * _F32
_UNARY_BYTES: Final = 2 * _N * _F32

CASES: Final[tuple[Case, ...]] = (
    # The goals.
    Case(
        "add_small",
        "add 1 elem  a + b",
        "us/op",
        0,
        _inputs(_ONE, _ONE),
        _same("a + b"),
        target=Target("torch", 0.5),
    ),
    Case(
        "add_alloc",
        "add 16M  a + b",
        "GB/s",
        _BINARY_BYTES,
        _inputs(_BIG, _BIG),
        _same("a + b"),
        target=Target("torch", 1.5),
    ),
    Case(
        "add_out",
        "add 16M  out=",
        "GB/s",
        _BINARY_BYTES,
        _inputs(_BIG, _BIG, out=True),
        _call("add", "a, b, out=c"),
        target=Target("best", 0.9),
    ),
    Case(
        "exp_alloc",
        "exp 16M",
        "GB/s",
        _UNARY_BYTES,
        _inputs(_BIG),
        _call("exp", "a"),
        target=Target("torch", 1.5),
    ),
    Case(
        "exp_out",
        "exp 16M  out=",
        "GB/s",
        _UNARY_BYTES,
        _inputs(_BIG, out=True),
        _call("exp", "a, out=c"),
        target=Target("best", 0.9),
    ),
    Case(
        "sum",
        "sum 16M",
        "GB/s",
        _N * _F32,
        _inputs(_BIG),
        _same("a.sum()"),
        target=Target("best", 0.9),
        rtol=1e-3,
        atol=1e-2,
    ),
    Case(
        "matmul",
        "matmul 1024x1024",
        "GFLOP/s",
        2 * 1024**3,
        _inputs(_MATRIX, _MATRIX),
        _call("matmul", "a, b"),
        target=Target("torch", 0.9),
        rtol=1e-4,
        atol=1e-4,
    ),
    # Extras, without a goal.
    Case(
        "add_small_out",
        "add 1 elem  out=",
        "us/op",
        0,
        _inputs(_ONE, _ONE, out=True),
        _call("add", "a, b, out=c"),
    ),
    Case("sum_small", "sum 1 elem  a.sum()", "us/op", 0, _inputs(_ONE), _same("a.sum()")),
    Case(
        "matmul_small",
        "matmul 2x2  a @ b",
        "us/op",
        0,
        _inputs(_TINY_MATRIX, _TINY_MATRIX),
        _same("a @ b"),
    ),
    # A linear layer's three products at the GPT benchmark's MLP width: x @ W.T forward,
    # g @ W and g.T @ x backward (768 tokens, 128 -> 512 features).
    _linear_gemm("forward", "fwd  x @ W.T  768x128·128x512", _TOKENS_NARROW, _WEIGHT, "a @ b.T"),
    _linear_gemm("input_grad", "dx  g @ W  768x512·512x128", _TOKENS_WIDE, _WEIGHT, "a @ b"),
    _linear_gemm(
        "weight_grad", "dW  g.T @ x  512x768·768x128", _TOKENS_WIDE, _TOKENS_NARROW, "a.T @ b"
    ),
    Case(
        "mul_out",
        "mul 16M  out=",
        "GB/s",
        _BINARY_BYTES,
        _inputs(_BIG, _BIG, out=True),
        _call("mul", "a, b, out=c", "multiply"),
    ),
    Case(
        "div_out",
        "div 16M  out=",
        "GB/s",
        _BINARY_BYTES,
        _inputs(_BIG, _POSITIVE, out=True),
        _call("div", "a, b, out=c", "divide"),
    ),
    Case(
        "maximum_out",
        "maximum 16M  out=",
        "GB/s",
        _BINARY_BYTES,
        _inputs(_BIG, _BIG, out=True),
        _call("maximum", "a, b, out=c"),
    ),
    Case(
        "add_int64_out",
        "add int64 16M  out=",
        "GB/s",
        3 * _N * _I64,
        _inputs(_int64, _int64, out=True),
        _call("add", "a, b, out=c"),
        rtol=0,
        atol=0,
    ),
    Case(
        "sum_last_dim",
        "sum 4096x4096 dim=-1",
        "GB/s",
        (_SIDE + 1) * _SIDE * _F32,
        _inputs(_SQUARE),
        {"ember": "a.sum(dim=-1)", "torch": "a.sum(dim=-1)", "numpy": "a.sum(axis=-1)"},
        rtol=1e-4,
        atol=1e-3,
    ),
    Case(
        "transpose_copy",
        "4096x4096 .T.contiguous()",
        "GB/s",
        2 * _SIDE * _SIDE * _F32,
        _inputs(_SQUARE),
        {
            "ember": "a.T.contiguous()",
            "torch": "a.T.contiguous()",
            "numpy": "np.ascontiguousarray(a.T)",
        },
    ),
)
