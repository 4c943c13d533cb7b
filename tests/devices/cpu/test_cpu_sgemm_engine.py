"""The choice of the cpu device's float32 GEMM engine: oneDNN where its wheel is installed
(a dependency on x86-64 Linux), OpenBLAS otherwise or when the environment asks."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from ember_cpu import _sgemm

X86_LINUX = sys.platform == "linux" and platform.machine() == "x86_64"


def _engine_in_fresh_process(setting: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "EMBER_CPU_SGEMM"}
    if setting is not None:
        env["EMBER_CPU_SGEMM"] = setting
    code = "import ember; ember.zeros(1); from ember_cpu import _sgemm; print(_sgemm.engine())"
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", code], env=env, capture_output=True, text=True
    )


@pytest.mark.skipif(not X86_LINUX, reason="oneDNN's CPU wheel is a dependency on x86-64 Linux")
def test_onednn_is_installed_and_chosen_by_default() -> None:
    assert _sgemm.available() == ("onednn", "openblas")
    result = _engine_in_fresh_process(None)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["onednn"]


def test_the_environment_can_keep_openblas() -> None:
    result = _engine_in_fresh_process("openblas")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["openblas"]


def test_a_misspelt_setting_warns_and_keeps_openblas() -> None:
    result = _engine_in_fresh_process("mkl")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["openblas"]
    assert "EMBER_CPU_SGEMM='mkl' is not 'onednn' or 'openblas'" in result.stderr


def test_a_broken_onednn_warns_and_keeps_openblas(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "libdnnl.so.3"
    fake.write_bytes(b"not a shared library")
    before = _sgemm.engine()
    _sgemm.use("openblas")
    monkeypatch.setattr(_sgemm, "_onednn", None)
    monkeypatch.setattr(_sgemm, "_configured", False)
    monkeypatch.setattr(_sgemm, "_onednn_path", lambda: fake)
    monkeypatch.delenv("EMBER_CPU_SGEMM", raising=False)
    try:
        with pytest.warns(RuntimeWarning, match="oneDNN did not load"):
            _sgemm.configure()
        assert _sgemm.engine() == "openblas"
    finally:
        monkeypatch.undo()
        _sgemm.use(before)


def test_registering_the_kernels_again_keeps_the_engine_chosen_since() -> None:
    before = _sgemm.engine()
    try:
        _sgemm.use("openblas")
        _sgemm.configure()  # what a second registration of the plugin's kernels runs
        assert _sgemm.engine() == "openblas"
    finally:
        _sgemm.use(before)


def test_use_rejects_an_unknown_engine_and_keeps_the_current_one() -> None:
    before = _sgemm.engine()
    with pytest.raises(ValueError, match="unknown sgemm engine 'mkl'"):
        _sgemm.use("mkl")  # type: ignore[arg-type]
    assert _sgemm.engine() == before


@pytest.mark.parametrize("engine", _sgemm.available())
def test_linear_forward_and_backward_agree_with_float64_on_each_engine(engine: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 128)).astype(np.float32)
    w = rng.standard_normal((384, 128)).astype(np.float32)
    g = rng.standard_normal((96, 384)).astype(np.float32)
    before = _sgemm.engine()
    _sgemm.use(engine)  # type: ignore[arg-type]
    try:
        xt = ember.from_numpy(x).requires_grad_()
        wt = ember.from_numpy(w).requires_grad_()
        y = ember.nn.functional.linear(xt, wt)
        y.backward(ember.from_numpy(g))
    finally:
        _sgemm.use(before)
    x64, w64, g64 = (v.astype(np.float64) for v in (x, w, g))
    for got, want in [(y, x64 @ w64.T), (xt.grad, g64 @ w64), (wt.grad, g64.T @ x64)]:
        assert got is not None
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-4, atol=1e-4)
