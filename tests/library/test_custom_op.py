"""ember.library.custom_op: definitions and their errors, calls against NumPy float64, the
meta step (fake, devices, argument kinds), mutation and autograd."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
from ember import library

_names = itertools.count()


def unique(stem: str) -> str:
    """Ops are process-wide: every test defines its own."""
    return f"test_custom::{stem}_{next(_names)}"


def f64(t: ember.Tensor) -> np.ndarray:
    return np.asarray(t.detach()).astype(np.float64)


def define_scaled_add(name: str | None = None) -> library.CustomOp:
    @library.custom_op(name or unique("scaled_add"), mutates_args=())
    def scaled_add(a: ember.Tensor, b: ember.Tensor, alpha: float = 1.0) -> ember.Tensor:
        return a + alpha * b

    return scaled_add


# -- definitions ------------------------------------------------------------------------------


def test_the_default_implementation_runs_on_every_device() -> None:
    op = define_scaled_add()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for device in ember.devices():
        x = ember.tensor(a, dtype=ember.float32, device=device)
        y = ember.tensor(b, dtype=ember.float32, device=device)
        for result in (op(x, y, 0.5), op(x, y, alpha=0.5), op(a=x, b=y, alpha=0.5)):
            assert result.device == x.device
            np.testing.assert_allclose(f64(result.cpu()), a + 0.5 * b, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(f64(op(x, y).cpu()), a + b, rtol=1e-6, atol=1e-6)


def test_ops_are_reachable_by_name_and_show_their_schema() -> None:
    name = unique("scaled_add")
    op = define_scaled_add(name)
    namespace, _, short = name.partition("::")
    assert getattr(getattr(ember.ops, namespace), short) is op
    assert short in dir(getattr(ember.ops, namespace))
    assert str(op.schema) == f"{name}(Tensor a, Tensor b, value alpha) -> Tensor"
    with pytest.raises(AttributeError, match="no custom op"):
        _ = getattr(ember.ops, namespace).not_defined


def test_optional_tensors_lists_and_keyword_only_parameters() -> None:
    @library.custom_op(unique("weighted_sum"), mutates_args=())
    def weighted_sum(
        xs: list[ember.Tensor], bias: ember.Tensor | None, *, scales: list[float]
    ) -> ember.Tensor:
        total = xs[0] * scales[0]
        for x, s in zip(xs[1:], scales[1:], strict=True):
            total = total + x * s
        return total if bias is None else total + bias

    xs = [ember.full((2,), float(i)) for i in range(1, 4)]
    assert weighted_sum(xs, None, scales=[1.0, 2.0, 3.0]).tolist() == [14.0, 14.0]
    assert weighted_sum(xs, ember.ones(2), scales=[1.0, 0.0, 0.0]).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError):
        weighted_sum(xs, None, [1.0, 2.0, 3.0])  # keyword-only stays keyword-only


@pytest.mark.parametrize(
    ("source", "error", "match"),
    [
        ("def f(a: ember.Tensor) -> ember.Tensor: ...", None, None),
        ("def f(a) -> ember.Tensor: ...", ValueError, "needs a type annotation"),
        ("def f(a: ember.Tensor): ...", ValueError, "return type needs an annotation"),
        ("def f(a: ember.Tensor, b: dict) -> ember.Tensor: ...", ValueError, "unsupported type"),
        ("def f(a: int) -> ember.Tensor: ...", ValueError, "at least one Tensor"),
        ("def f(*a: ember.Tensor) -> ember.Tensor: ...", ValueError, r"\*args"),
        ("def f(a: ember.Tensor) -> int: ...", ValueError, "unsupported return type"),
    ],
)
def test_signatures_are_checked_at_definition(
    source: str, error: type[Exception] | None, match: str | None
) -> None:
    scope: dict[str, object] = {"ember": ember}
    exec(source, scope)
    if error is None:
        library.custom_op(unique("ok"), scope["f"], mutates_args=())  # type: ignore[arg-type]
    else:
        with pytest.raises(error, match=match):
            library.custom_op(unique("bad"), scope["f"], mutates_args=())  # type: ignore[arg-type]


def test_names_and_mutation_declarations_are_checked_at_definition() -> None:
    def inplace(a: ember.Tensor, b: ember.Tensor) -> None:
        a.add_(b)

    def pure(a: ember.Tensor, n: int) -> ember.Tensor:
        return a * n

    with pytest.raises(ValueError, match="qualified name"):
        library.custom_op("no_namespace", pure, mutates_args=())
    with pytest.raises(TypeError, match="mutates_args"):
        library.custom_op(unique("pure"), pure)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="not a parameter"):
        library.custom_op(unique("scale"), pure, mutates_args=("c",))
    with pytest.raises(ValueError, match="not a Tensor"):
        library.custom_op(unique("scale"), pure, mutates_args=("n",))
    with pytest.raises(ValueError, match="returns nothing and mutates nothing"):
        library.custom_op(unique("add"), inplace, mutates_args=())
    with pytest.raises(ValueError, match="ending in '_' is an in-place op"):
        library.custom_op(unique("scale") + "_", pure, mutates_args=())
    name = unique("pure")
    library.custom_op(name, pure, mutates_args=())
    with pytest.raises(RuntimeError, match="already defined"):
        library.custom_op(name, pure, mutates_args=())
    with pytest.raises(ValueError, match="qualified name"):
        library.custom_op("add", pure, mutates_args=())  # built-in names are never qualified


# -- the meta step ----------------------------------------------------------------------------


def test_the_fake_rejects_bad_shapes_before_any_kernel_and_runs_once_per_key() -> None:
    op = define_scaled_add()
    fake_calls, kernel_calls = [], []

    @op.register_fake
    def _(a: ember.Tensor, b: ember.Tensor, alpha: float = 1.0) -> ember.Tensor:
        fake_calls.append((tuple(a.shape), tuple(b.shape), alpha))
        if a.shape != b.shape:
            raise ValueError(f"shapes {list(a.shape)} and {list(b.shape)} differ")
        return ember.empty_like(a)

    def kernel(a: ember.Tensor, b: ember.Tensor, alpha: float = 1.0) -> ember.Tensor:
        kernel_calls.append(1)
        return ember.add(a, b, alpha=alpha)

    handle = op.register_kernel("cpu", kernel)
    try:
        with pytest.raises(ValueError, match=r"shapes \[3\] and \[4\] differ"):
            op(ember.ones(3), ember.ones(4))
        assert not kernel_calls
        for _ in range(3):
            assert op(ember.ones(3), ember.ones(3), 2.0).tolist() == [3.0, 3.0, 3.0]
        op(ember.ones(2), ember.ones(2), 2.0)
        op(ember.ones(3), ember.ones(3), 5.0)
        assert fake_calls == [
            ((3,), (4,), 1.0),
            ((3,), (3,), 2.0),
            ((2,), (2,), 2.0),
            ((3,), (3,), 5.0),
        ]
        assert len(kernel_calls) == 5
    finally:
        handle.remove()


def test_a_fake_that_returns_the_wrong_thing_is_reported() -> None:
    op = define_scaled_add()
    op.register_fake(lambda a, b, alpha=1.0: (ember.empty_like(a), ember.empty_like(b)))
    with pytest.raises(RuntimeError, match="the fake returned"):
        op(ember.ones(2), ember.ones(2))


def test_arguments_of_the_wrong_kind_or_on_two_devices_are_errors() -> None:
    op = define_scaled_add()
    with pytest.raises(TypeError, match="argument 'b' must be Tensor, not float"):
        op(ember.ones(2), 1.0)
    with pytest.raises(TypeError, match="argument 'a' must be Tensor, not list"):
        op([1.0], ember.ones(1))
    other = next((d for d in ember.devices() if not d.startswith("cpu")), None)
    if other is None:
        pytest.skip("one device type only: nothing to mix")
    with pytest.raises(RuntimeError, match="expected all tensors to be on the same device"):
        op(ember.ones(2), ember.ones(2, device=other))


def test_a_device_without_a_kernel_or_default_is_an_error() -> None:
    @library.custom_op(unique("cpu_only"), mutates_args=(), device_types="cpu")
    def cpu_only(a: ember.Tensor) -> ember.Tensor:
        return a * 2

    assert cpu_only(ember.ones(2)).tolist() == [2.0, 2.0]
    other = next((d for d in ember.devices() if not d.startswith("cpu")), None)
    if other is None:
        pytest.skip("one device type only")
    with pytest.raises(
        NotImplementedError, match=r"no kernel for device .* it has kernels for cpu"
    ):
        cpu_only(ember.ones(2, device=other))


# -- mutation and autograd -------------------------------------------------------------------


def test_a_mutating_op_bumps_the_version_that_autograd_checks() -> None:
    @library.custom_op(unique("scale_"), mutates_args=("t",))
    def scale_(t: ember.Tensor, factor: float) -> None:
        np.asarray(t)[...] *= factor  # as a kernel writes: through memory, bumping nothing

    x = ember.ones(3, requires_grad=True)
    base = x.detach()
    y = x * base  # saves base for backward
    version = base._version
    assert scale_(base, 3.0) is None
    assert base._version == version + 1 and base.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_register_autograd_gradients_match_finite_differences() -> None:
    op = define_scaled_add()

    def setup_context(ctx: object, inputs: tuple[object, ...], output: object) -> None:
        ctx.alpha = inputs[2]  # type: ignore[attr-defined]

    def backward(ctx: object, grad: ember.Tensor) -> tuple[object, ...]:
        return grad, grad * ctx.alpha, None  # type: ignore[attr-defined]

    op.register_autograd(backward, setup_context=setup_context)
    rng = np.random.default_rng(1)
    a = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: op(x, y, 0.25), (a, b))
    out = op(a, b, 0.25)
    assert out.requires_grad and out.grad_fn is not None


def test_without_a_registered_backward_the_gradient_is_an_error_not_a_silent_zero() -> None:
    op = define_scaled_add()
    a = ember.ones(2, requires_grad=True)
    out = op(a, ember.ones(2))
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="autograd is not registered for this op"):
        out.sum().backward()
    with ember.no_grad():
        assert not op(a, ember.ones(2)).requires_grad


def test_bad_autograd_registrations_are_errors() -> None:
    op = define_scaled_add()
    with pytest.raises(TypeError, match="backward must take 2 arguments"):
        op.register_autograd(lambda grad: grad)
    with pytest.raises(TypeError, match="setup_context must take 3 arguments"):
        op.register_autograd(lambda ctx, g: g, setup_context=lambda ctx: None)

    @library.custom_op(unique("fill_"), mutates_args=("t",))
    def fill_(t: ember.Tensor) -> None:
        t.fill_(1.0)

    with pytest.raises(RuntimeError, match="autograd of mutating custom ops is not supported"):
        fill_.register_autograd(lambda ctx, g: g)
    with pytest.raises(ValueError, match="not a custom op"):
        library.register_autograd("add", lambda ctx, g: g)


def test_the_c_fast_path_and_the_python_call_agree() -> None:
    """OpCall's fast path (positional, plain tensors outside autograd, one device) and the
    generated Python call it falls back to give the same kernel the same arguments."""
    op = define_scaled_add()
    seen: list[tuple[object, ...]] = []

    def kernel(a: ember.Tensor, b: ember.Tensor, alpha: float = 1.0) -> ember.Tensor:
        seen.append((a, b, alpha))
        return ember.add(a, b, alpha=alpha)

    handle = op.register_kernel("cpu", kernel)
    try:
        x, y = ember.ones(3), ember.arange(3.0)
        fast = op(x, y, 2.0)
        slow = op.fallback(x, y, 2.0)  # type: ignore[attr-defined]
        keyword = op(x, y, alpha=2.0)
        parameter = op(ember.nn.Parameter(ember.ones(3)), y, 2.0)  # a Tensor subclass
        for result in (fast, slow, keyword, parameter):
            assert result.tolist() == [1.0, 3.0, 5.0]
        assert [s[2] for s in seen] == [2.0, 2.0, 2.0, 2.0]
        assert all(s[0] is x and s[1] is y for s in seen[:3])
    finally:
        handle.remove()
    assert op(x, y, 2.0).tolist() == [1.0, 3.0, 5.0]  # the default again, through C
