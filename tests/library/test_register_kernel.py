"""ember.library.register_kernel on custom and built-in ops: precedence (priority, then
registration order), conflicts reported once, handles that restore, registration-time
errors, and what explain and `python -m ember info --ops` say."""

from __future__ import annotations

import itertools
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember import library
from ember.__main__ import format_info
from ember.nn import functional as F
from ember.plugins import hookimpl

_names = itertools.count()


def define_double() -> library.CustomOp:
    @library.custom_op(f"test_register::double_{next(_names)}", mutates_args=())
    def double(a: ember.Tensor) -> ember.Tensor:
        return a * 2

    return double


def times(factor: float) -> Any:
    def kernel(a: ember.Tensor) -> ember.Tensor:
        return a * factor

    kernel.__qualname__ = f"times_{factor:g}"
    return kernel


class KernelPlugin:
    """A plugin that registers one kernel through the pluggy hook, as a package would."""

    def __init__(self, op: str, device_type: str, kernel: Any, priority: int = 0) -> None:
        self.args = (op, device_type, kernel)
        self.priority = priority

    @hookimpl
    def ember_kernels(self, registry: Any) -> None:
        registry.register(*self.args, priority=self.priority)


def test_a_kernel_overrides_the_default_on_its_device_only_and_remove_restores_it() -> None:
    op = define_double()
    handle = library.register_kernel(op, "cpu", times(10))
    assert op(ember.ones(2)).tolist() == [10.0, 10.0]
    if "numpy" in ember.devices():
        assert op(ember.ones(2, device="numpy")).tolist() == [2.0, 2.0]
    assert library.explain(op, "cpu").kind == "native"
    handle.remove()
    handle.remove()  # a second remove changes nothing
    assert op(ember.ones(2)).tolist() == [2.0, 2.0]
    assert library.explain(op, "cpu").kind == "composite"


def test_priority_then_registration_order_decide_and_removal_restores_the_previous() -> None:
    op = define_double()
    low = library.register_kernel(op, "cpu", times(3), priority=-1)
    first = library.register_kernel(op, "cpu", times(4))
    second = library.register_kernel(op, "cpu", times(5))
    assert op(ember.ones(1)).tolist() == [5.0]  # same priority: the later one
    high = library.register_kernel(op, "cpu", times(6), priority=1)
    later_low = library.register_kernel(op, "cpu", times(7))
    assert op(ember.ones(1)).tolist() == [6.0]  # priority beats order
    explained = library.explain(op, "cpu")
    assert explained.supplier is not None and explained.supplier.function.endswith("times_6")
    assert [s.function.rpartition(".")[2] for s in explained.overrides] == [
        "times_7", "times_5", "times_4", "times_3",
    ]  # fmt: skip
    for handle, expected in (
        (high, 7.0),
        (later_low, 5.0),
        (second, 4.0),
        (first, 3.0),
        (low, 2.0),
    ):
        handle.remove()
        assert op(ember.ones(1)).tolist() == [expected]


def test_the_decorator_form_returns_a_handle_that_calls_the_kernel() -> None:
    op = define_double()

    @library.register_kernel(op, "cpu")
    def kernel(a: ember.Tensor) -> ember.Tensor:
        return a + 100

    assert isinstance(kernel, library.KernelHandle)
    assert kernel(ember.zeros(1)).tolist() == [100.0]
    assert op(ember.zeros(1)).tolist() == [100.0]
    kernel.remove()


def test_two_plugins_at_one_priority_are_a_conflict_reported_once() -> None:
    op = define_double()
    ember.plugins.register(KernelPlugin(op.name, "cpu", times(8)), "test_conflict_a")
    try:
        with pytest.warns(library.KernelConflictWarning, match=f"{op.name} on cpu") as caught:
            ember.plugins.register(KernelPlugin(op.name, "cpu", times(9)), "test_conflict_b")
        assert len(caught) == 1 and "test_conflict_b" in str(caught[0].message)
        assert op(ember.ones(1)).tolist() == [9.0]  # the latest registration wins
        explained = library.explain(op, "cpu")
        assert explained.conflict is not None and "priority=" in explained.conflict
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # reported once: refreezing stays quiet
            handle = library.register_kernel(op, "cpu", times(11), priority=5)
            handle.remove()
        info = format_info()
        assert f"{op.name} on cpu: test_conflict_b" in info
    finally:
        ember.plugins.unregister("test_conflict_b")
        ember.plugins.unregister("test_conflict_a")
    assert op(ember.ones(1)).tolist() == [2.0]


def test_an_explicit_priority_is_not_a_conflict() -> None:
    op = define_double()
    ember.plugins.register(KernelPlugin(op.name, "cpu", times(8)), "test_priority_a")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ember.plugins.register(KernelPlugin(op.name, "cpu", times(9), 1), "test_priority_b")
        assert library.explain(op, "cpu").conflict is None
    finally:
        ember.plugins.unregister("test_priority_b")
        ember.plugins.unregister("test_priority_a")


def test_a_built_in_kernel_can_be_overridden_and_restored() -> None:
    x = ember.tensor(np.random.default_rng(2).standard_normal((3, 5)), dtype=ember.float32)
    expected = F.softmax(x, dim=1).tolist()
    calls = []

    def marked_softmax(out: ember.Tensor, a: ember.Tensor, dim: int) -> None:
        calls.append(dim)
        out.copy_(ember.full(a.shape, 0.5))

    handle = library.register_kernel("softmax", "cpu", marked_softmax, priority=1)
    try:
        assert F.softmax(x, dim=1).tolist() == [[0.5] * 5] * 3 and calls == [1]
        explained = library.explain("softmax", "cpu")
        assert explained.supplier is not None
        assert explained.supplier.function.endswith("marked_softmax")
        assert [s.plugin for s in explained.overrides] == ["cpu"]
        assert "overrides: ember_cpu.kernels_softmax" in str(explained)
    finally:
        handle.remove()
    assert F.softmax(x, dim=1).tolist() == expected
    assert library.explain("softmax", "cpu").supplier.plugin == "cpu"  # type: ignore[union-attr]


def test_bad_registrations_fail_when_made() -> None:
    op = define_double()
    with pytest.raises(ValueError, match="unknown device type 'cdua'"):
        library.register_kernel(op, "cdua", times(1))
    with pytest.raises(ValueError, match="unknown op 'no_such_op'"):
        library.register_kernel("no_such_op", "cpu", times(1))
    with pytest.raises(TypeError, match="does not take the op's parameters"):
        library.register_kernel(op, "cpu", lambda a, b: a)
    with pytest.raises(TypeError, match="not callable"):
        library.register_kernel(op, "cpu", 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="softmax's kernels take 3 arguments"):
        library.register_kernel("softmax", "cpu", lambda out, a: None)
    with pytest.raises(TypeError, match=r"the fake for .* does not take"):
        op.register_fake(lambda: None)
    assert op(ember.ones(1)).tolist() == [2.0]  # nothing was registered


def test_explain_names_native_rendered_and_composite_kernels() -> None:
    assert library.explain("add", "cpu").kind == "rendered"
    assert library.explain("mm", ember.device("cpu")).kind == "native"
    mean = library.explain("mean", "cpu")
    assert mean.kind == "composite" and mean.supplier is None
    op = define_double()
    default = library.explain(op, "cpu:0")
    assert default.kind == "composite" and default.supplier is not None
    assert default.supplier.function.endswith("define_double.<locals>.double")


def test_info_ops_lists_every_op_per_device() -> None:
    op = define_double()
    handle = library.register_kernel(op, "cpu", times(3))
    try:
        code = "import ember, ember.__main__ as m, sys;sys.exit(m.main(['info', '--ops']))"
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert any(
            line.split()[:3] == ["softmax", "cpu", "native"] for line in lines if line.strip()
        )
        assert any(line.split()[:3] == ["add", "cpu", "rendered"] for line in lines if line.strip())
        assert "Kernel conflicts" in result.stdout
        # In this process, the custom op and its kernel are in the table too.
        text = format_info(ops=True)
        assert f"{op.name}" in text and "times_3" in text
    finally:
        handle.remove()
