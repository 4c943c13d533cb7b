"""The training benchmarks: autograd overhead, MLP and CNN training steps, digits to 97%.

Ember and PyTorch only (NumPy has no autograd). Each case's `setup` builds the same thing in
both libraries from the same NumPy-generated inputs (for the models: the same initial
weights, PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in))), its `check` runs one
step (or backward) and returns the loss with every parameter or gradient, compared with
PyTorch's before anything is timed; then the statement is timed: one op, one backward, one
training step, or one whole run to 97% on the digits demo's data.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Final

import numpy as np

from benchmarks.bench_core import Case, Target

__all__ = ["TRAINING_CASES"]

_BOTH: Final = ("ember", "torch")
_BATCH: Final = 64
_CLASSES: Final = 10
# One step of float32 training: different summation orders in GEMM and reductions.
_STEP_RTOL: Final = 1e-4
_STEP_ATOL: Final = 1e-5

Inputs = dict[str, np.ndarray]


def _both(expression: str) -> dict[str, str]:
    return dict.fromkeys(_BOTH, expression)


# ---- autograd overhead --------------------------------------------------------------------


def _small_pair(rng: np.random.Generator) -> Inputs:
    return {name: rng.uniform(-1, 1, size=1).astype(np.float32) for name in ("a", "b")}


def _requires_grad(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    return {"a": ns["a"].requires_grad_(), "b": ns["b"].requires_grad_()}


def _chain_inputs(rng: np.random.Generator) -> Inputs:
    return {name: rng.uniform(-1, 1, size=16).astype(np.float32) for name in ("x", "w", "c")}


def _chain(x: Any, w: Any, c: Any) -> Any:
    """Ten differentiable ops on 16 elements: binary, unary, scalar and a reduction."""
    y = x * w
    y = y + c
    y = y.tanh()
    y = y * w
    y = y - c
    y = y.exp()
    y = y * 0.5
    y = y.sigmoid()
    y = y * x
    return y.sum()


def _chain_setup(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    leaves = [ns[name].requires_grad_() for name in ("x", "w", "c")]

    def forward_backward() -> None:
        _chain(*leaves).backward()

    def check() -> Any:
        for leaf in leaves:
            leaf.grad = None
        forward_backward()
        return lib.cat([leaf.grad for leaf in leaves])

    # A graph built once; `backward(retain_graph=True)` then times the backward pass alone.
    return {"loss": _chain(*leaves), "forward_backward": forward_backward, "check": check}


# ---- training steps -------------------------------------------------------------------------


def _uniform_parameters(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]]) -> Inputs:
    """PyTorch's default init for Linear/Conv: weight and bias ~ U(±1/sqrt(fan_in))."""
    parameters = {}
    for index, shape in enumerate(shapes):
        weight_shape = shapes[index - 1] if len(shape) == 1 else shape
        fan_in = math.prod(weight_shape[1:])
        bound = 1 / math.sqrt(fan_in)
        parameters[f"p{index}"] = rng.uniform(-bound, bound, size=shape).astype(np.float32)
    return parameters


def _batch(shape: tuple[int, ...]) -> Callable[[np.random.Generator], Inputs]:
    def make(rng: np.random.Generator) -> Inputs:
        return {
            "x": rng.uniform(0, 1, size=(_BATCH, *shape)).astype(np.float32),
            "y": rng.integers(0, _CLASSES, size=_BATCH).astype(np.int64),
        }

    return make


_MLP_SHAPES: Final = ((256, 784), (256,), (256, 256), (256,), (10, 256), (10,))
_CNN_SHAPES: Final = ((16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (10, 800), (10,))


def _mlp_inputs(rng: np.random.Generator) -> Inputs:
    return {**_batch((784,))(rng), **_uniform_parameters(rng, _MLP_SHAPES)}


def _cnn_inputs(rng: np.random.Generator) -> Inputs:
    return {**_batch((1, 28, 28))(rng), **_uniform_parameters(rng, _CNN_SHAPES)}


def _mlp(lib: ModuleType) -> Any:
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    )


def _cnn(lib: ModuleType) -> Any:
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 28 -> 26 -> 13
        nn.Conv2d(16, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 13 -> 11 -> 5
        nn.Flatten(),
        nn.Linear(32 * 5 * 5, 10),
    )


def _training_setup(
    build: Callable[[ModuleType], Any],
) -> Callable[[ModuleType, dict[str, Any]], dict[str, Any]]:
    """A model from `build` with the inputs' weights, SGD(lr=0.01) and cross-entropy."""

    def setup(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
        model = build(lib)
        parameters = list(model.parameters())
        with lib.no_grad():
            for index, parameter in enumerate(parameters):
                parameter.copy_(ns[f"p{index}"])
        optimizer = lib.optim.SGD(parameters, lr=0.01)
        loss_function = lib.nn.CrossEntropyLoss()
        x, y = ns["x"], ns["y"]

        def step() -> Any:
            optimizer.zero_grad()
            loss = loss_function(model(x), y)
            loss.backward()
            optimizer.step()
            return loss

        def check() -> Any:
            loss = step().detach().reshape(1)
            return lib.cat([loss, *(p.detach().reshape(-1) for p in parameters)])

        return {"step": step, "check": check}

    return setup


# ---- the digits demo, to 97% ---------------------------------------------------------------


def _digits_inputs(rng: np.random.Generator) -> Inputs:
    from ember.examples.digits import load_split

    x_train, y_train, x_test, y_test = load_split()
    return {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}


def _digits_model(lib: ModuleType) -> Any:
    """The demo's model (ember.examples.digits.build_model), layer for layer."""
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


def _digits_to_target(lib: ModuleType, ns: dict[str, Any], seed: int) -> int:
    """Train as the demo does until the held-out accuracy reaches 97%; the epochs it took."""
    from ember.examples import digits

    lib.manual_seed(seed)
    model = _digits_model(lib)
    optimizer = lib.optim.Adam(model.parameters(), lr=digits.LEARNING_RATE)
    scheduler = lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=digits.EPOCHS)
    loss_function = lib.nn.CrossEntropyLoss(label_smoothing=digits.LABEL_SMOOTHING)
    data = lib.utils.data
    loader = data.DataLoader(
        data.TensorDataset(ns["x_train"], ns["y_train"]),
        batch_size=digits.BATCH_SIZE,
        shuffle=True,
        generator=lib.Generator().manual_seed(seed),
    )
    x_test, y_test = ns["x_test"], ns["y_test"]
    accuracy = 0.0
    for epoch in range(1, digits.EPOCHS + 1):
        model.train()
        for images, labels in loader:
            optimizer.zero_grad()
            loss_function(model(images), labels).backward()
            optimizer.step()
        scheduler.step()
        model.eval()
        with lib.no_grad():
            accuracy = (model(x_test).argmax(dim=1) == y_test).sum().item() / len(y_test)
        if accuracy >= digits.TARGET_ACCURACY:
            return epoch
    raise RuntimeError(f"seed {seed}: {accuracy:.2%} after {digits.EPOCHS} epochs, below 97%")


def _digits_setup(lib: ModuleType, ns: dict[str, Any]) -> dict[str, Any]:
    seeds = itertools.count()  # every timed run is another seed: the median is over seeds

    def run() -> int:
        return _digits_to_target(lib, ns, next(seeds))

    def check() -> Any:
        run()  # raises unless it reached 97%
        return lib.ones(1)

    return {"run": run, "check": check}


TRAINING_CASES: Final[tuple[Case, ...]] = (
    Case(
        "grad_add_small",
        "grad: a + b, 1 elem",
        "us/op",
        0,
        _small_pair,
        _both("a + b"),
        target=Target("torch", 0.5),
        setup=_requires_grad,
        check="(a + b).detach()",
    ),
    Case(
        "grad_backward_10",
        "grad: backward of 10 ops",
        "us/op",
        0,
        _chain_inputs,
        _both("loss.backward(retain_graph=True)"),
        target=Target("torch", 0.5),
        rtol=1e-5,
        setup=_chain_setup,
        check="check()",
    ),
    Case(
        "grad_fwd_bwd_10",
        "grad: 10 ops fwd+bwd",
        "us/op",
        0,
        _chain_inputs,
        _both("forward_backward()"),
        setup=_chain_setup,
        check="check()",
    ),
    Case(
        "mlp_step",
        "MLP 784-256-256-10 step",
        "steps/s",
        1,
        _mlp_inputs,
        _both("step()"),
        target=Target("torch", 0.8),
        rtol=_STEP_RTOL,
        atol=_STEP_ATOL,
        setup=_training_setup(_mlp),
        check="check()",
    ),
    Case(
        "cnn_step",
        "CNN 28x28 step",
        "steps/s",
        1,
        _cnn_inputs,
        _both("step()"),
        target=Target("torch", 0.6),
        rtol=_STEP_RTOL,
        atol=_STEP_ATOL,
        setup=_training_setup(_cnn),
        check="check()",
    ),
    Case(
        "digits_to_97",
        "digits demo: time to 97%",
        "s",
        0,
        _digits_inputs,
        _both("run()"),
        setup=_digits_setup,
        check="check()",
    ),
)
