"""End-of-backward callbacks (PyTorch's `Variable._execution_engine.queue_callback`).

Each scenario runs the same program on torch and on Ember and compares the logs of what
ran when: torch is the reference for the order, the grad mode and the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import ember

torch = pytest.importorskip("torch")

Queue = Callable[[Callable[[], object]], None]


def torch_queue(callback: Callable[[], object]) -> None:
    torch.autograd.Variable._execution_engine.queue_callback(callback)


LIBS: list[tuple[Any, Queue]] = [(torch, torch_queue), (ember, ember.autograd.queue_callback)]


def both(scenario: Callable[[Any, Queue], list[Any]]) -> list[Any]:
    """The scenario's log on torch and on Ember, asserted equal; Ember's log."""
    expected, got = (scenario(lib, queue) for lib, queue in LIBS)
    assert got == expected
    return got


def test_outside_backward_is_refused_with_pytorchs_error() -> None:
    for _, queue in LIBS:
        with pytest.raises(RuntimeError, match=r"^Final callbacks can only be installed during"):
            queue(lambda: None)


def _fifo_after_the_walk(lib: Any, queue: Queue) -> list[Any]:
    log: list[Any] = []
    x = lib.ones(3, requires_grad=True)
    w = lib.full((3,), 2.0, requires_grad=True)

    def hook(grad: Any) -> None:
        log.append(("hook", lib.is_grad_enabled(), x.grad is None, w.grad is None))
        queue(lambda: log.append(("first", x.grad.tolist(), w.grad.tolist())))

        def second() -> None:
            log.append("second")
            queue(lambda: log.append("queued by a callback"))

        queue(second)

    y = x * w
    y.register_hook(hook)
    y.sum().backward()
    log.append("backward returned")
    return log


def test_callbacks_run_in_order_after_every_gradient_and_before_backward_returns() -> None:
    log = both(_fifo_after_the_walk)
    assert log[-1] == "backward returned" and log[1][0] == "first"


def _grad_mode(lib: Any, queue: Queue) -> list[Any]:
    log: list[Any] = []
    x = lib.ones(2, requires_grad=True)
    for create_graph in (False, True):
        y = x * 3
        y.register_hook(lambda g: queue(lambda: log.append(("callback", lib.is_grad_enabled()))))
        lib.autograd.grad(y.sum(), x, create_graph=create_graph)
    log.append(("after", lib.is_grad_enabled()))
    return log


def test_callbacks_run_in_the_backwards_grad_mode_and_in_autograd_grad() -> None:
    assert both(_grad_mode) == [("callback", False), ("callback", True), ("after", True)]


def _nested(lib: Any, queue: Queue) -> list[Any]:
    log: list[Any] = []
    x = lib.ones(2, requires_grad=True)
    inner_x = lib.ones(2, requires_grad=True)

    def inner_hook(grad: Any) -> None:
        queue(lambda: log.append("inner callback"))

    def outer_hook(grad: Any) -> None:
        queue(lambda: log.append("outer callback"))
        with lib.enable_grad():  # hooks run with grad mode off
            y = inner_x * 2
            y.register_hook(inner_hook)
            y.sum().backward()
        log.append("inner backward returned")

    y = x * 2
    y.register_hook(outer_hook)
    y.sum().backward()
    log.append("outer backward returned")
    return log


def test_a_backward_inside_a_hook_keeps_its_own_queue() -> None:
    assert both(_nested) == [
        "inner callback",
        "inner backward returned",
        "outer callback",
        "outer backward returned",
    ]


def _raising(lib: Any, queue: Queue) -> list[Any]:
    log: list[Any] = []
    x = lib.ones(2, requires_grad=True)

    def fail() -> None:
        raise ValueError("callback failed")

    def hook(grad: Any) -> None:
        queue(fail)
        queue(lambda: log.append("not reached"))

    y = x * 2
    y.register_hook(hook)
    with pytest.raises(ValueError, match="callback failed"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed"):
        queue(lambda: None)
    (x * 2).sum().backward()  # the engine is usable again, and nothing stale runs
    log.append(x.grad.tolist())
    return log


def test_an_exception_in_a_callback_propagates_out_of_backward() -> None:
    assert both(_raising) == [[4.0, 4.0]]


def test_a_post_accumulate_hook_can_queue_a_callback_that_sees_every_grad() -> None:
    # DistributedDataParallel's pattern: the first hook queues the callback.
    layer = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 1))
    params = list(layer.parameters())
    seen: list[list[bool]] = []
    queued: list[bool] = []

    def hook(param: ember.Tensor) -> None:
        if not queued:
            queued.append(True)
            ember.autograd.queue_callback(lambda: seen.append([p.grad is None for p in params]))

    for p in params:
        p.register_post_accumulate_grad_hook(hook)
    layer(ember.ones(2, 3)).sum().backward()
    assert seen == [[False] * len(params)]
