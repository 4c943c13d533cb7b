"""`opcheck`: the conformance kit's checks, run on a custom op.

For every sample and every device type with a kernel for the op (or the devices asked
for), it checks the values against a reference implementation in float64, the fake's
outputs against the real ones, that only the declared arguments are written and that
no output aliases an input, and, when the op has a backward, its gradients against
finite differences (`ember.autograd.gradcheck`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ember._dtype import float64
from ember._tensor import Tensor
from ember.autograd._gradcheck import gradcheck
from ember.library._call import CUSTOM_OPS, CustomOp, call_form
from ember.library._custom_op import CustomOpDef
from ember.plugins._manager import MANAGER

__all__ = ["OpCheckError", "opcheck"]

Sample = tuple[tuple[Any, ...], dict[str, Any]]

# The kit's tolerances per result dtype name (ember.testing.ops._reference: RTOL, ATOL).
_RTOL = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}
_ATOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-6, "float64": 1e-12}


class OpCheckError(AssertionError):
    """A custom op failed one of opcheck's checks (the message says which, where)."""


def _samples(samples: Iterable[Any]) -> list[Sample]:
    found: list[Sample] = []
    for sample in samples:
        if isinstance(sample, tuple) and len(sample) == 2 and isinstance(sample[1], dict):
            found.append((tuple(sample[0]), dict(sample[1])))
        else:
            found.append((tuple(sample), {}))
    return found


def _to(value: Any, device: str, dtype: Any = None) -> Any:
    if isinstance(value, Tensor):
        moved = value.detach().to(device)
        return moved.to(dtype) if dtype is not None and moved.is_floating_point() else moved.clone()
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tensor) for v in value):
        return type(value)(_to(v, device, dtype) for v in value)
    return value


def _host(t: Tensor) -> np.ndarray:
    return np.array(np.asarray(t.detach().to("cpu")), copy=True)


def _outputs(result: Any) -> tuple[Tensor, ...]:
    if result is None:
        return ()
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _tensors(values: Iterable[Any]) -> list[Tensor]:
    found: list[Tensor] = []
    for value in values:
        if isinstance(value, Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, Tensor))
    return found


def _fail(check: str, op: str, where: str, detail: str) -> OpCheckError:
    return OpCheckError(f"opcheck {op}: {check} failed for {where}: {detail}")


def _check_values(name: str, where: str, got: tuple[Tensor, ...], want: tuple[Tensor, ...]) -> None:
    if len(got) != len(want):
        raise _fail("values", name, where, f"{len(got)} outputs, the reference gives {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if tuple(g.shape) != tuple(w.shape):
            raise _fail(
                "values", name, where,
                f"output {i} has shape {list(g.shape)}, the reference's {list(w.shape)}",
            )  # fmt: skip
        actual, expected = _host(g).astype(np.float64), _host(w).astype(np.float64)
        rtol, atol = _RTOL.get(g.dtype.name, 0.0), _ATOL.get(g.dtype.name, 0.0)
        if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
            error = np.max(np.abs(actual - expected)) if actual.size else 0.0
            raise _fail("values", name, where, f"output {i} differs by up to {error:.3g}")


def _check_fake(
    op: CustomOpDef, where: str, args: tuple[Any, ...], real: tuple[Tensor, ...]
) -> None:
    assert op._fake is not None
    positional, keywords = call_form(op.schema, args)
    fake = _outputs(op._fake(*positional, **keywords))
    described = [(tuple(t.shape), t.dtype) for t in fake]
    actual = [(tuple(t.shape), t.dtype) for t in real]
    if described != actual:
        raise _fail("fake", op.name, where, f"the fake gives {described}, the kernel {actual}")


def _check_writes(
    op: CustomOpDef, where: str, args: tuple[Any, ...], before: list[np.ndarray]
) -> None:
    for param, value in zip(op.schema.params, args, strict=True):
        if param.name in op.mutates_args:
            continue
        for tensor in _tensors([value]):
            original = before.pop(0)
            if not np.array_equal(_host(tensor), original, equal_nan=True):
                raise _fail(
                    "mutation", op.name, where,
                    f"the kernel wrote {param.name!r}, which mutates_args does not declare",
                )  # fmt: skip


def _check_aliasing(
    op: CustomOpDef, where: str, args: tuple[Any, ...], outputs: tuple[Tensor, ...]
) -> None:
    inputs = _tensors(args)
    for i, out in enumerate(outputs):
        if any(out.untyped_storage() is t.untyped_storage() for t in inputs):
            raise _fail(
                "aliasing", op.name, where,
                f"output {i} shares memory with an input; a custom op returns new tensors",
            )  # fmt: skip


def _check_gradients(op: CustomOpDef, where: str, args: tuple[Any, ...], device: str) -> None:
    def differentiable(value: Any) -> bool:
        return isinstance(value, Tensor) and value.is_floating_point()

    positions = [i for i, a in enumerate(args) if differentiable(a)]
    if not positions:
        return
    try:  # float64 where the kernel supports it: finite differences need it
        inputs = [_to(a, device, float64) if i in positions else a for i, a in enumerate(args)]
        positional, keywords = call_form(op.schema, tuple(inputs))
        op(*positional, **keywords)
        eps, atol, rtol = 1e-6, 1e-5, 1e-3
    except (TypeError, NotImplementedError, RuntimeError):
        inputs = [_to(a, device) for a in args]
        eps, atol, rtol = 1e-3, 1e-2, 1e-2
    leaves = [inputs[i].requires_grad_() for i in positions]

    def call(*tensors: Tensor) -> Any:
        values = list(inputs)
        for i, t in zip(positions, tensors, strict=True):
            values[i] = t
        positional, keywords = call_form(op.schema, tuple(values))
        return op(*positional, **keywords)

    try:
        gradcheck(call, tuple(leaves), eps=eps, atol=atol, rtol=rtol)
    except Exception as error:  # gradcheck's own message says which entry differs
        raise _fail("gradcheck", op.name, where, str(error)) from error


def opcheck(
    op: str | CustomOp,
    samples: Iterable[Any],
    *,
    reference: Callable[..., Any] | None = None,
    devices: Sequence[str] | None = None,
) -> dict[str, str]:
    """Check `op` on `samples` (tuples of arguments, or (args, kwargs) pairs) on every
    device type with a kernel for it (or `devices`). `reference` computes the expected
    outputs on cpu (default: the op's default implementation). Returns each check's
    outcome ("SUCCESS", or "SKIPPED: why"); raises OpCheckError on the first failure."""
    custom = CUSTOM_OPS.get(op if isinstance(op, str) else getattr(op, "name", ""))
    if custom is None:
        raise ValueError(f"opcheck: {op!r} is not a custom op")
    MANAGER.ensure_loaded()
    expected = reference or custom._default
    available = sorted(t for t, info in MANAGER.device_types.items() if info.reason is None)
    if devices is not None:
        targets = list(devices)
    elif custom._default is not None:
        targets = available  # the default implementation runs everywhere
    else:
        targets = [t for t in available if t in custom._op.kernels]
    results = dict.fromkeys(("values", "fake", "mutation", "aliasing", "gradcheck"), "SUCCESS")
    if expected is None:
        results["values"] = "SKIPPED: no reference and no default implementation"
    if custom._fake is None:
        results["fake"] = "SKIPPED: no fake registered"
    if not custom._has_autograd:
        results["gradcheck"] = "SKIPPED: no autograd registered"
    for index, (args, kwargs) in enumerate(_samples(samples)):
        bound = custom.schema.params
        full = tuple(
            args[i] if i < len(args) else kwargs.get(p.name, p.default) for i, p in enumerate(bound)
        )
        for device in targets:
            where = f"sample {index} on {device}"
            inputs = tuple(_to(a, device) for a in full)
            before = [_host(t) for p, a in zip(bound, inputs, strict=True)
                      if p.name not in custom.mutates_args for t in _tensors([a])]  # fmt: skip
            positional, keywords = call_form(custom.schema, inputs)
            outputs = _outputs(custom(*positional, **keywords))
            _check_writes(custom, where, inputs, before)
            _check_aliasing(custom, where, inputs, outputs)
            if custom._fake is not None:
                _check_fake(custom, where, inputs, outputs)
            if expected is not None:
                ref_inputs = tuple(_to(a, "cpu", float64) for a in full)
                ref_positional, ref_keywords = call_form(custom.schema, ref_inputs)
                want = _outputs(expected(*ref_positional, **ref_keywords))
                _check_values(custom.name, where, outputs, want)
            if custom._has_autograd:
                _check_gradients(custom, where, full, device)
    return results
