"""ember.autocast and ember.amp.GradScaler against torch 2.13's (cpu) behaviour."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(*shape: int, seed: int = 0) -> tuple[ember.Tensor, torch.Tensor]:
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(data), torch.tensor(data)


def _name(dt: object) -> str:
    return str(dt).split(".")[-1]


@pytest.mark.parametrize("name", ["linear", "mm", "matmul", "bmm", "mse_loss", "softmax", "relu"])
def test_cpu_result_dtypes_match_torch(name: str) -> None:
    (ea, ta), (eb, tb) = _pair(3, 4), _pair(3, 4, seed=1)
    calls = {
        "linear": (lambda: F.linear(ea, eb), lambda: TF.linear(ta, tb)),
        "mm": (lambda: ember.mm(ea, eb.T), lambda: torch.mm(ta, tb.T)),
        "matmul": (lambda: ember.matmul(ea, eb.T), lambda: torch.matmul(ta, tb.T)),
        "bmm": (
            lambda: ember.bmm(ea[None], eb.T[None]),
            lambda: torch.bmm(ta[None], tb.T[None]),
        ),
        "mse_loss": (lambda: F.mse_loss(ea.half(), eb), lambda: TF.mse_loss(ta.half(), tb)),
        "softmax": (lambda: F.softmax(ea, -1), lambda: TF.softmax(ta, -1)),
        "relu": (lambda: F.relu(ea), lambda: TF.relu(ta)),
    }
    ours, theirs = calls[name]
    with ember.autocast("cpu", dtype=ember.float16):
        e = ours()
    with torch.autocast("cpu", dtype=torch.float16):
        t = theirs()
    assert _name(e.dtype) == _name(t.dtype)
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-3)


def test_lower_precision_ops_compute_on_cast_inputs() -> None:
    (x, _), (w, _) = _pair(5, 8), _pair(3, 8, seed=2)
    with ember.autocast("cpu", dtype=ember.float16):
        inside = F.linear(x, w)
    expected = F.linear(x.half(), w.half())
    np.testing.assert_array_equal(inside.numpy(), expected.numpy())


def test_gradients_come_back_in_float32() -> None:
    layer = ember.nn.Linear(4, 2)
    x, _ = _pair(3, 4)
    with ember.autocast("cpu", dtype=ember.float16):
        loss = F.mse_loss(layer(x), ember.zeros(3, 2))
    assert loss.dtype is ember.float32
    loss.backward()
    assert layer.weight.grad is not None and layer.weight.grad.dtype is ember.float32


def test_weight_casts_are_cached_within_a_region() -> None:
    w = ember.randn(3, 4, requires_grad=True)
    x = ember.randn(2, 4)
    with ember.autocast("cpu", dtype=ember.float16):
        a, b = F.linear(x, w), F.linear(x, w)
        assert a.grad_fn is not None and b.grad_fn is not None
        from ember import _autocast

        assert id(w) in _autocast.STATE.cache
    assert not _autocast.STATE.cache
    with ember.autocast("cpu", dtype=ember.float16, cache_enabled=False):
        F.linear(x, w)
        assert not _autocast.STATE.cache


def test_state_nesting_and_decorator_match_torch() -> None:
    for lib in (torch, ember):
        assert lib.is_autocast_enabled("cpu") is False
        assert _name(lib.get_autocast_dtype("cpu")) in ("bfloat16", "float16")
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") is True
            assert lib.get_autocast_dtype("cpu") is lib.float16
            with lib.autocast("cpu", enabled=False):
                assert lib.is_autocast_enabled("cpu") is False
            assert lib.is_autocast_enabled("cpu") is True
        assert lib.is_autocast_enabled("cpu") is False

    @ember.autocast("cpu", dtype=ember.float16)
    def product(a: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
        return ember.mm(a, b)

    assert product(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.float16
    assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.float32


def test_disabled_region_leaves_ops_alone() -> None:
    with ember.autocast("cpu", dtype=ember.float16, enabled=False):
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.float32


def test_non_cpu_devices_use_the_cuda_lists() -> None:
    x = ember.randn(3, 4, device="numpy")
    with ember.autocast("numpy"):
        assert ember.matmul(x, x.T).dtype is ember.float16
        assert F.softmax(x.half(), -1).dtype is ember.float32  # cuda's float32 list
        assert F.layer_norm(x.half(), (4,)).dtype is ember.float32
    with ember.autocast("cpu", dtype=ember.float16):
        assert F.softmax(x.half(), -1).dtype is ember.float16  # numpy tensors: no cpu region


def test_bad_arguments() -> None:
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        ember.autocast("nosuchdevice")
    with pytest.raises(RuntimeError, match="not supported"):
        ember.autocast("cpu", dtype=ember.float64)


def test_cuda_autocast_without_a_gpu_warns_and_disables() -> None:
    if ember.cuda.is_available():
        pytest.skip("needs a machine without a GPU")
    with pytest.warns(FutureWarning, match="deprecated"), pytest.warns(UserWarning):
        region = ember.cuda.amp.autocast()
    with region:
        assert not ember.is_autocast_enabled("cuda")
    with pytest.warns(FutureWarning, match="ember.amp.autocast\\('cpu'"):
        ember.cpu.amp.autocast(dtype=ember.float16)


def _train(lib, scaler, model, steps, poison):  # type: ignore[no-untyped-def]
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.ones(4, 3)
    scales, weights = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        scaler.scale(loss).backward()
        if step in poison:
            next(iter(model.parameters())).grad.fill_(float("inf"))
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        weights.append(next(iter(model.parameters())).detach().numpy().copy())
    return scales, weights


def test_grad_scaler_matches_torch_cpu() -> None:
    w = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    em = ember.nn.Linear(3, 2, bias=False)
    tm = torch.nn.Linear(3, 2, bias=False)
    with ember.no_grad():
        em.weight.copy_(ember.tensor(w))
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(w))
    kwargs = {"init_scale": 1024.0, "growth_interval": 2}
    es = ember.amp.GradScaler("cpu", **kwargs)
    ts = torch.amp.GradScaler("cpu", **kwargs)
    e_scales, e_weights = _train(ember, es, em, 6, {1, 4})
    t_scales, t_weights = _train(torch, ts, tm, 6, {1, 4})
    assert e_scales == t_scales
    for a, b in zip(e_weights, t_weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert es.state_dict() == ts.state_dict()
    fresh = ember.amp.GradScaler("cpu")
    fresh.load_state_dict(es.state_dict())
    assert fresh.state_dict() == es.state_dict()


def test_grad_scaler_call_order_errors_match_torch() -> None:
    for lib in (torch, ember):
        model = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(model(lib.ones(1, 2)).sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            scaler.step(opt)
        scaler.update()


def test_disabled_grad_scaler_is_transparent() -> None:
    scaler = ember.amp.GradScaler("cpu", enabled=False)
    loss = ember.tensor(2.0)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    assert scaler.state_dict() == {} == torch.amp.GradScaler("cpu", enabled=False).state_dict()


def test_cuda_grad_scaler_alias_warns() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = ember.cuda.amp.GradScaler()
    assert any(issubclass(w.category, FutureWarning) for w in caught)
    assert scaler.is_enabled() == ember.cuda.is_available()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_older_autocast_names_match_torch() -> None:
    with pytest.warns(DeprecationWarning, match="is_autocast_enabled\\('cpu'\\)"):
        ember.is_autocast_cpu_enabled()
    for lib in (torch, ember):
        assert lib.is_autocast_cpu_enabled() is False
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_cpu_enabled() is True
            assert lib.get_autocast_cpu_dtype() is lib.float16
    assert ember.get_autocast_gpu_dtype() is ember.float16
    assert _name(torch.get_autocast_gpu_dtype()) == "float16"
