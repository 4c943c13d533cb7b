"""ember_cuda.load_inline without a GPU: the compile side for real (NVRTC, the cubin
cache, CompileError positioned in the user's source), and a launcher that says why it
cannot launch."""

from __future__ import annotations

from pathlib import Path

import pytest

import ember_cuda
from ember.library import CompileError
from ember_cuda import _inline, _nvrtc
from ember_cuda.backend import BACKEND

SOURCE = """
template <typename T>
__global__ void axpy(T* y, const T* x, T a, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
template __global__ void axpy<float>(float*, const float*, float, long long);

extern "C" __global__ void fill(float* y, float value, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = value;
}
"""


@pytest.fixture(autouse=True)
def fresh(cache: Path) -> None:
    _inline._modules.clear()


def test_kernels_compile_to_a_cubin_with_their_symbols(cache: Path) -> None:
    module = ember_cuda.load_inline(SOURCE, ["fill", "axpy<float>"], name="ops")
    assert module.kernels == ("fill", "axpy<float>")
    assert module.fill.lowered == "fill"
    templated = module["axpy<float>"]
    assert templated.lowered.startswith("_Z") and templated.lowered in module.cubin.symbols()
    assert "fill" in module.cubin.symbols() and module.arch == "sm_90"
    assert len(list(cache.glob("*.cubin"))) == 1
    assert ember_cuda.load_inline(SOURCE, ["fill", "axpy<float>"], name="ops") is module
    with pytest.raises(AttributeError, match="it has fill, axpy<float>"):
        _ = module.missing


def test_a_new_process_finds_the_cubin_on_disk(cache: Path) -> None:
    ember_cuda.load_inline(SOURCE, "fill", name="ops")
    _inline._modules.clear()
    _nvrtc.clear_memory_cache()
    hits = _nvrtc.STATS["disk_hits"]
    module = ember_cuda.load_inline(SOURCE, "fill", name="ops")
    assert _nvrtc.STATS["disk_hits"] == hits + 1 and module.fill.lowered == "fill"


def test_launching_without_a_device_names_the_reason(cache: Path) -> None:
    module = ember_cuda.load_inline(SOURCE, "fill", name="ops")
    reason = BACKEND.unavailable_reason()
    if reason is None:
        pytest.skip("a CUDA device is available: launches are the GPU session's business")
    with pytest.raises(RuntimeError, match="cuda device is unavailable") as caught:
        module.fill(1, 256, None, 1.0, 4)
    assert reason in str(caught.value)


def test_compile_errors_are_positioned_in_the_users_source(cache: Path) -> None:
    source = 'extern "C" __global__ void k(float* x) {\n    x[0] = 1.0f\n}\n'
    for dialect in (False, True):
        with pytest.raises(CompileError) as caught:
            ember_cuda.load_inline(source, "k", name="user", dialect=dialect)
        assert caught.value.file == "user.cu" and caught.value.line == 3
        assert "user.cu(3): error" in str(caught.value)


def test_the_dialect_is_there_when_asked(cache: Path) -> None:
    source = 'extern "C" __global__ void k(em_u32* x) { x[0] = (em_u32)1; }\n'
    module = ember_cuda.load_inline(source, "k", name="dialect", dialect=True)
    assert module.k.lowered == "k"
    with pytest.raises(CompileError, match="em_u32"):
        ember_cuda.load_inline(source, "k", name="nodialect")


def test_listed_kernels_are_checked_against_the_source(cache: Path) -> None:
    with pytest.raises(ValueError, match="no kernel missing"):
        ember_cuda.load_inline(SOURCE, ["fill", "missing"])
    with pytest.raises(ValueError, match="at least one kernel"):
        ember_cuda.load_inline(SOURCE, [])
    with pytest.raises(ValueError, match="identifier"):
        ember_cuda.load_inline(SOURCE, "fill", name="not a name")
