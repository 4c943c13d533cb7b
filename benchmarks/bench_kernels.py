"""The third-party kernel benchmarks: what a custom op's call costs, and what the fused
kernels of plugins/ember-fused buy.

- Per-call overhead: a custom op whose kernel is the built-in add, against the built-in
  add itself (Ember's goal: equal, at most 1.1x), and the same pair in PyTorch with
  `torch.library.custom_op`; `custom_op_overhead` prints both ratios.
- The fused RMSNorm and bias + GELU at a transformer-like shape (4096 x 1024 float32),
  forward and forward + backward, against Ember's composites (the ops' default
  implementations) and PyTorch (`torch.nn.functional.rms_norm`, bias add then `gelu`).
- The cpu `logsumexp` that ember-fused overrides, against PyTorch.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Final

import numpy as np

from benchmarks.bench_core import Case, Target

__all__ = ["KERNEL_CASES", "custom_op_overhead"]

_ROWS: Final = 4096
_COLS: Final = 1024
_F32: Final = 4
_TENSOR_BYTES: Final = _ROWS * _COLS * _F32
_BOTH: Final = ("ember", "torch")

Inputs = dict[str, np.ndarray]


def _pair(rng: np.random.Generator) -> Inputs:
    return {name: rng.uniform(-1, 1, size=1).astype(np.float32) for name in ("a", "b")}


@functools.cache
def _ember_custom_add(ember: ModuleType) -> Any:
    def add(a, b):  # type: ignore[no-untyped-def]
        return ember.add(a, b)

    # The annotations as objects: this module's are strings (PEP 563), and `ember` here is
    # a parameter, not a global they could resolve against.
    add.__annotations__ = {"a": ember.Tensor, "b": ember.Tensor, "return": ember.Tensor}
    add = ember.library.custom_op("bench::add", add, mutates_args=())

    # The built-in kernel-level call as the cpu kernel: what remains is the dispatch.
    ember.library.register_kernel(add, "cpu", ember.add)
    return add


@functools.cache
def _torch_custom_add(torch: ModuleType) -> Any:
    # The schema spelled out: this module's annotations are strings (PEP 563), which
    # torch's schema inference does not resolve.
    def add(a: Any, b: Any) -> Any:
        return torch.add(a, b)

    return torch.library.custom_op(
        "bench::add", add, mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor"
    )


def _custom_add(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    make = _ember_custom_add if lib.__name__ == "ember" else _torch_custom_add
    return {"custom_add": make(lib)}


def _rows(rng: np.random.Generator) -> Inputs:
    return {
        "x": rng.standard_normal((_ROWS, _COLS)).astype(np.float32),
        "v": rng.standard_normal(_COLS).astype(np.float32),
        "g": rng.standard_normal((_ROWS, _COLS)).astype(np.float32),
    }


def _fused(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    """Names for the statements: Ember's fused ops and composites, PyTorch's references,
    and leaves that require grad for the backward cases."""
    x, v = ns["x"], ns["v"]
    names: dict[str, Any] = {
        "xg": x.detach().clone().requires_grad_(),
        "vg": v.detach().clone().requires_grad_(),
    }
    if lib.__name__ == "ember":
        import ember_fused
        from ember_fused import ops

        names.update(
            rms=ember_fused.rms_norm,
            bias_gelu=ember_fused.bias_gelu,
            rms_composite=ops.rms_norm.__wrapped__,
            bias_gelu_composite=ops.bias_gelu.__wrapped__,
        )
    else:
        names.update(
            rms=lambda x, w: lib.nn.functional.rms_norm(x, (_COLS,), w, 1e-6),
            bias_gelu=lambda x, b: lib.nn.functional.gelu(x + b),
            rms_composite=lambda x, w: lib.nn.functional.rms_norm(x, (_COLS,), w, 1e-6),
            bias_gelu_composite=lambda x, b: lib.nn.functional.gelu(x + b),
        )
    return names


def _both(expression: str) -> dict[str, str]:
    return dict.fromkeys(_BOTH, expression)


# Forward: read x and the vector, write y. Backward adds reading g and x, writing grad x.
_FORWARD_BYTES: Final = 2 * _TENSOR_BYTES
_TRAINING_BYTES: Final = 5 * _TENSOR_BYTES


def _fused_cases(op: str) -> tuple[Case, ...]:
    """An ember-fused op, fused and as Ember's composite, forward and forward + backward;
    the fused rows carry the target. The statements' names come from `_fused`."""
    function = {"rms_norm": "rms", "bias_gelu": "bias_gelu"}[op]
    title = {"rms_norm": "rms_norm", "bias_gelu": "bias+gelu"}[op]
    cases = []
    for suffix, fn in (("fused", function), ("composite", f"{function}_composite")):
        target = Target("torch", 0.9) if suffix == "fused" else None
        cases.append(
            Case(
                f"{op}_{suffix}",
                f"{title} 4096x1024 {suffix}",
                "GB/s",
                _FORWARD_BYTES,
                _rows,
                _both(f"{fn}(x, v)"),
                target=target,
                rtol=1e-4,
                atol=1e-5,
                setup=_fused,
            )
        )
        cases.append(
            Case(
                f"{op}_{suffix}_backward",
                f"{title} fwd+bwd {suffix}",
                "GB/s",
                _TRAINING_BYTES,
                _rows,
                _both(f"{fn}(xg, vg).backward(g)"),
                target=target,
                setup=_fused,
                check=f"({fn}(xg, vg).backward(g), xg.grad)[1]",
                rtol=1e-3,
                atol=1e-3,
            )
        )
    return tuple(cases)


KERNEL_CASES: Final[tuple[Case, ...]] = (
    Case(
        "builtin_add_small",
        "built-in add 1 elem",
        "us/op",
        0,
        _pair,
        _both("torch.add(a, b)") | {"ember": "ember.add(a, b)"},
    ),
    Case(
        "custom_add_small",
        "custom op add 1 elem (torch.library)",
        "us/op",
        0,
        _pair,
        _both("custom_add(a, b)"),
        target=Target("torch", 1.0),
        setup=_custom_add,
    ),
    *(case for op in ("rms_norm", "bias_gelu") for case in _fused_cases(op)),
    Case(
        "logsumexp_override",
        "logsumexp 4096x1024 (fused cpu)",
        "GB/s",
        _TENSOR_BYTES,
        _rows,
        _both("torch.logsumexp(x, -1)") | {"ember": "ember.logsumexp(x, -1)"},
        target=Target("torch", 0.9),
        rtol=1e-5,
        atol=1e-5,
    ),
)


def custom_op_overhead(results: Sequence[Any]) -> list[str]:
    """The custom-op call's cost over the built-in op's, per library, from one section."""
    by_name = {result.case.name: result for result in results}
    builtin, custom = by_name.get("builtin_add_small"), by_name.get("custom_add_small")
    if builtin is None or custom is None:
        return []
    lines = []
    for library in _BOTH:
        base, call = builtin.value(library), custom.value(library)
        if base and call:
            lines.append(
                f"custom-op overhead ({library}): {call:.2f} us against {base:.2f} us built in, "
                f"{call / base:.2f}x" + (" (goal <= 1.10x)" if library == "ember" else "")
            )
    return lines
