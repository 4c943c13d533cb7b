"""ember.library.opcheck passes a correct custom op on every device and catches each kind of
defect it checks for: wrong values, a fake that disagrees, an undeclared write, an output
aliasing an input, and a wrong backward."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import ember
from ember import library

_names = itertools.count()


def samples() -> list[Any]:
    rng = np.random.default_rng(3)

    def t(*shape: int) -> ember.Tensor:
        return ember.tensor(rng.standard_normal(shape), dtype=ember.float32)

    return [(t(4, 3), t(4, 3), 0.5), ((t(7), t(7)), {"alpha": -2.0})]


def scaled_add(kernel: Any = None, backward: Any = None, fake: Any = None) -> library.CustomOp:
    @library.custom_op(f"test_opcheck::scaled_add_{next(_names)}", mutates_args=())
    def op(a: ember.Tensor, b: ember.Tensor, alpha: float = 1.0) -> ember.Tensor:
        return a + alpha * b

    if kernel is not None:
        op.register_kernel("cpu", kernel)
    op.register_fake(fake or (lambda a, b, alpha=1.0: ember.empty_like(a)))

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.alpha = inputs[2]

    op.register_autograd(
        backward or (lambda ctx, g: (g, g * ctx.alpha, None)), setup_context=setup_context
    )
    return op


def reference(a: ember.Tensor, b: ember.Tensor, alpha: float = 1.0) -> ember.Tensor:
    return ember.tensor(np.asarray(a) + alpha * np.asarray(b))  # NumPy, in float64


def test_a_correct_op_passes_every_check_on_every_device() -> None:
    op = scaled_add(kernel=lambda a, b, alpha=1.0: ember.add(a, b, alpha=alpha))
    results = library.opcheck(op, samples(), reference=reference)
    assert results == dict.fromkeys(
        ("values", "fake", "mutation", "aliasing", "gradcheck"), "SUCCESS"
    )


def test_checks_without_what_they_need_are_reported_skipped() -> None:
    @library.custom_op(f"test_opcheck::bare_{next(_names)}", mutates_args=())
    def bare(a: ember.Tensor) -> ember.Tensor:
        return a * 3

    results = library.opcheck(bare, [(ember.ones(2),)], devices=["cpu"])
    assert results["values"] == "SUCCESS"  # against the default implementation
    assert results["fake"].startswith("SKIPPED") and results["gradcheck"].startswith("SKIPPED")


@pytest.mark.parametrize(
    ("defect", "match"),
    [
        ("values", "values failed for sample 0 on cpu: output 0 differs"),
        ("fake", "fake failed for sample 0 on cpu"),
        ("mutation", "mutation failed .* wrote 'b', which mutates_args does not declare"),
        ("aliasing", "aliasing failed .* shares memory with an input"),
        ("gradcheck", "gradcheck failed for sample 0 on cpu"),
    ],
)
def test_each_defect_is_caught(defect: str, match: str) -> None:
    good = lambda a, b, alpha=1.0: ember.add(a, b, alpha=alpha)  # noqa: E731
    kernels = {
        "values": lambda a, b, alpha=1.0: ember.add(a, b),  # ignores alpha
        "mutation": lambda a, b, alpha=1.0: ember.add(a, b.mul_(alpha)),
        "aliasing": lambda a, b, alpha=1.0: a.view(a.shape),
    }
    op = scaled_add(
        kernel=kernels.get(defect, good),
        fake=(lambda a, b, alpha=1.0: ember.empty(3)) if defect == "fake" else None,
        backward=(lambda ctx, g: (g, g, None)) if defect == "gradcheck" else None,
    )
    with pytest.raises(library.OpCheckError, match=match):
        library.opcheck(op, samples(), reference=reference, devices=["cpu"])
