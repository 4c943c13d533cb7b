"""ember-fused as its users meet it: discovered through its entry point with no import
side effects, its ops passing opcheck on every device against NumPy float64, their
gradients matching finite differences and the composites', and the cpu logsumexp
override correct on every edge case and shown by explain."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import ember
import ember_fused
from ember import library

RNG = np.random.default_rng(11)
ERF = np.vectorize(math.erf, otypes=[np.float64])


def devices() -> list[str]:
    return ember.devices()


def t(values: np.ndarray, device: str = "cpu", dtype: Any = ember.float32) -> ember.Tensor:
    return ember.tensor(values, dtype=dtype, device=device)


def f64(x: ember.Tensor) -> np.ndarray:
    return np.asarray(x.detach().cpu()).astype(np.float64)


# -- NumPy float64 references --------------------------------------------------------------


def rms_norm_ref(x: ember.Tensor, weight: ember.Tensor, eps: float = 1e-6) -> ember.Tensor:
    a, w = f64(x), f64(weight)
    return ember.tensor(a / np.sqrt((a * a).mean(-1, keepdims=True) + eps) * w)


def rms_norm_backward_ref(
    grad: ember.Tensor, x: ember.Tensor, weight: ember.Tensor, eps: float
) -> tuple[ember.Tensor, ember.Tensor]:
    g, a, w = f64(grad), f64(x), f64(weight)
    n = a.shape[-1]
    r = 1.0 / np.sqrt((a * a).mean(-1, keepdims=True) + eps)
    gx = r * g * w - a * r**3 * (g * w * a).sum(-1, keepdims=True) / n
    gw = (g * a * r).reshape(-1, n).sum(0)
    return ember.tensor(gx), ember.tensor(gw)


def bias_gelu_ref(x: ember.Tensor, bias: ember.Tensor) -> ember.Tensor:
    u = f64(x) + f64(bias)
    return ember.tensor(0.5 * u * (1.0 + ERF(u / math.sqrt(2.0))))


def bias_gelu_backward_ref(
    grad: ember.Tensor, x: ember.Tensor, bias: ember.Tensor
) -> tuple[ember.Tensor, ember.Tensor]:
    u = f64(x) + f64(bias)
    d = 0.5 * (1.0 + ERF(u / math.sqrt(2.0))) + u * np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
    gx = f64(grad) * d
    return ember.tensor(gx), ember.tensor(gx.reshape(-1, u.shape[-1]).sum(0))


SHAPES = [(6, 10), (2, 3, 17), (1, 7), (0, 4)]


def rows_samples(extra: int = 0) -> list[tuple[Any, ...]]:
    samples: list[tuple[Any, ...]] = []
    for shape in SHAPES:
        tensors = [t(RNG.standard_normal(shape)) for _ in range(1 + extra)]
        samples.append((*tensors, t(RNG.standard_normal(shape[-1]))))
    # strided and float64 inputs take the composite path inside the kernels
    x = t(RNG.standard_normal((4, 12)))[:, ::2]
    samples.append((*([x] * (1 + extra)), t(RNG.standard_normal(6))))
    x64 = t(RNG.standard_normal((3, 5)), dtype=ember.float64)
    samples.append((*([x64] * (1 + extra)), t(RNG.standard_normal(5), dtype=ember.float64)))
    return samples


# -- the distribution ----------------------------------------------------------------------


def test_the_plugin_is_discovered_through_its_entry_point() -> None:
    status = {s.name: s for s in ember.plugins.status()}
    assert status["fused"].status == "loaded"
    assert status["fused"].distribution == "ember-fused"


def test_importing_the_package_defines_nothing() -> None:
    code = (
        "import sys, ember_fused\n"
        "assert 'ember_fused.ops' not in sys.modules, 'ops defined at import'\n"
        "from ember.library._call import CUSTOM_OPS\n"
        "assert not CUSTOM_OPS, sorted(CUSTOM_OPS)\n"
    )
    env = {**os.environ, "EMBER_DISABLE_PLUGINS": "fused"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


# -- values, fakes, aliasing and gradients on every device -----------------------------------


def test_rms_norm_passes_opcheck() -> None:
    samples = [(x, w, 1e-6) for x, w in rows_samples()]
    results = library.opcheck("fused::rms_norm", samples, reference=rms_norm_ref)
    assert set(results.values()) == {"SUCCESS"}


def test_rms_norm_backward_passes_opcheck() -> None:
    samples = [(g, x, w, 1e-5) for g, x, w in rows_samples(extra=1)]
    results = library.opcheck("fused::rms_norm_backward", samples, reference=rms_norm_backward_ref)
    assert results["values"] == "SUCCESS" and results["fake"] == "SUCCESS"


def test_bias_gelu_passes_opcheck() -> None:
    results = library.opcheck("fused::bias_gelu", rows_samples(), reference=bias_gelu_ref)
    assert set(results.values()) == {"SUCCESS"}


def test_bias_gelu_backward_passes_opcheck() -> None:
    results = library.opcheck(
        "fused::bias_gelu_backward", rows_samples(extra=1), reference=bias_gelu_backward_ref
    )
    assert results["values"] == "SUCCESS" and results["fake"] == "SUCCESS"


@pytest.mark.parametrize("op", ["rms_norm", "bias_gelu"])
@pytest.mark.parametrize("device", devices())
def test_fused_gradients_match_the_composites(device: str, op: str) -> None:
    """float32 training shapes run the fused kernels forward and backward; the gradients
    agree with those autograd derives from the composite (float64 finite differences are
    opcheck's)."""
    from ember_fused import ops

    fused = getattr(ember_fused, op)
    composite = getattr(ops, op).__wrapped__  # plain ember ops: autograd records them
    x = t(RNG.standard_normal((33, 70)), device)
    v = t(RNG.standard_normal(70), device)
    upstream = t(RNG.standard_normal((33, 70)), device)
    grads = []
    for fn in (fused, composite):
        xs, vs = x.clone().requires_grad_(), v.clone().requires_grad_()
        out = fn(xs, vs)
        (out * upstream).sum().backward()
        grads.append((f64(out), f64(xs.grad), f64(vs.grad)))  # type: ignore[arg-type]
    for got, want in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_shapes_that_do_not_match_fail_before_any_kernel() -> None:
    with pytest.raises(RuntimeError, match=r"weight of shape \[5\] does not match the last dim"):
        ember_fused.rms_norm(ember.ones(3, 4), ember.ones(5))
    with pytest.raises(RuntimeError, match=r"bias is ember\.float64, the input ember\.float32"):
        ember_fused.bias_gelu(ember.ones(3, 4), ember.ones(4, dtype=ember.float64))


# -- the cpu logsumexp override --------------------------------------------------------------


def test_explain_shows_the_fused_kernels_and_the_logsumexp_override() -> None:
    rms = library.explain("fused::rms_norm", "cpu")
    assert rms.kind == "native" and rms.supplier is not None
    assert rms.supplier.plugin == "fused" and rms.supplier.function.endswith("_cpu.rms_norm")
    if "opencl" in {d.partition(":")[0] for d in devices()}:
        assert library.explain("fused::bias_gelu", "opencl").supplier.plugin == "fused"  # type: ignore[union-attr]
    if "numpy" in devices():
        assert library.explain("fused::bias_gelu", "numpy").kind == "composite"
    lse = library.explain("logsumexp", "cpu")
    assert lse.kind == "native" and lse.supplier is not None
    assert (lse.supplier.plugin, lse.supplier.priority) == ("fused", 1)
    assert lse.replaces_composite and "replaces: the composite" in str(lse)
    assert lse.conflict is None


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("dim", [-1, 0, (0, 1)])
def test_the_logsumexp_override_matches_numpy(dtype: Any, dim: Any) -> None:
    a = RNG.standard_normal((6, 50)) * 30
    a[1] = -np.inf
    a[2, 3] = np.inf
    a[3, 4] = np.nan
    a[4, :] = np.inf
    x = t(a, dtype=dtype)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        axis = tuple(d % 2 for d in (dim if isinstance(dim, tuple) else (dim,)))
        peak = np.max(a, axis=axis, keepdims=True)
        peak = np.where(np.isinf(peak), 0.0, peak)
        expected = np.log(np.sum(np.exp(a - peak), axis=axis, keepdims=True)) + peak
        expected = expected.squeeze(axis)
    got = f64(ember.logsumexp(x, dim))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
