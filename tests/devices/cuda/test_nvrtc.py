"""NVRTC compiles for real, without a GPU: cubins, their disk cache, positioned errors,
warnings as errors, ptxas's resource report, and the shared kernel headers as CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from ember.library import CompileError
from ember.plugins import kernels as shared_kernels
from ember_cuda import _nvrtc

SCALE = """
extern "C" __global__ void scale(float* x, float a, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


def test_a_program_compiles_to_a_cubin_holding_its_kernel(cache: Path) -> None:
    cubin = _nvrtc.compile_cuda(SCALE, "scale", resource_usage=True)
    assert cubin.image[:4] == b"\x7fELF" and cubin.arch == "sm_90"
    assert "scale" in cubin.symbols()
    assert cubin.warnings() == []
    resources = cubin.resources()["scale"]
    assert 0 < resources.registers <= 32 and not resources.spills
    assert "-arch=sm_90" in _nvrtc.default_options() and "--fmad=false" in _nvrtc.default_options()


def test_the_second_compile_is_a_disk_hit_and_a_corrupt_file_is_rebuilt(cache: Path) -> None:
    before = dict(_nvrtc.STATS)
    first = _nvrtc.compile_cuda(SCALE, "scale")
    assert _nvrtc.STATS["compiles"] == before["compiles"] + 1
    files = sorted(p.name for p in cache.iterdir())
    assert files == [f"{first.key}.cubin", f"{first.key}.json"]

    _nvrtc.clear_memory_cache()
    again = _nvrtc.compile_cuda(SCALE, "scale")
    assert _nvrtc.STATS["disk_hits"] == before["disk_hits"] + 1
    assert _nvrtc.STATS["compiles"] == before["compiles"] + 1
    assert again.image == first.image and again.log == first.log

    assert _nvrtc.compile_cuda(SCALE, "scale") is again  # the memory cache
    assert _nvrtc.STATS["memory_hits"] == before["memory_hits"] + 1

    for damage in (b"garbage", first.image[: len(first.image) // 2], b""):
        (cache / f"{first.key}.cubin").write_bytes(damage)
        _nvrtc.clear_memory_cache()
        rebuilt = _nvrtc.compile_cuda(SCALE, "scale")
        assert rebuilt.image == first.image
        assert (cache / f"{first.key}.cubin").read_bytes() == first.image
    assert _nvrtc.STATS["compiles"] == before["compiles"] + 4
    assert not list(cache.glob("*.tmp"))


def test_the_key_covers_source_options_and_architecture(cache: Path) -> None:
    keys = {
        _nvrtc.compile_cuda(SCALE, "scale").key,
        _nvrtc.compile_cuda(SCALE + "\n", "scale").key,
        _nvrtc.compile_cuda(SCALE, "scale", options=["-DEXTRA=1"]).key,
        _nvrtc.compile_cuda(SCALE, "scale", arch="sm_80").key,
    }
    assert len(keys) == 4
    assert len(list(cache.glob("*.cubin"))) == 4


BAD = """extern "C" __global__ void broken(float* x) {
    float y = x[0];
    x[0] = y +;
}
"""


def test_a_compile_error_carries_nvrtc_log_file_and_line(cache: Path) -> None:
    with pytest.raises(CompileError) as caught:
        _nvrtc.compile_cuda(BAD, "mykernel")
    error = caught.value
    assert error.file == "mykernel.cu" and error.line == 3
    assert "mykernel.cu(3): error" in str(error)
    assert "expected an expression" in error.log
    assert error.command is not None and "-arch=sm_90" in error.command
    assert not cache.exists() or not list(cache.glob("*.cubin"))


def test_warnings_are_errors_only_where_asked(cache: Path) -> None:
    source = 'extern "C" __global__ void k(int* x) {\n    int unused;\n    x[0] = 1;\n}\n'
    cubin = _nvrtc.compile_cuda(source, "warns")
    assert any("warns.cu(2): warning" in line for line in cubin.warnings())
    with pytest.raises(CompileError) as caught:
        _nvrtc.compile_cuda(source, "warns", warnings_as_errors=True)
    assert caught.value.line == 2 and "treated as errors" in str(caught.value)


def test_half_and_bfloat16_headers_come_from_the_runtime_wheel(cache: Path) -> None:
    source = """#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void mix(__half* h, __nv_bfloat16* b, float* out) {
    out[0] = __half2float(h[0]) + __bfloat162float(b[0]);
}
"""
    cubin = _nvrtc.compile_cuda(source, "mix", warnings_as_errors=True)
    assert "mix" in cubin.symbols()


@pytest.mark.parametrize(
    "header", ["em_random.h", "em_index.h", "em_reduce.h", "em_pool.h", "em_im2col.h"]
)
def test_shared_kernel_headers_compile_as_cuda(session_cache: Path, header: str) -> None:
    """The algorithms the opencl device shares, parsed and type-checked by NVRTC (their
    element functions are not called here, so ptxas sees only the probe kernel)."""
    source = shared_kernels.source(header) + '\nextern "C" __global__ void em_probe() {}\n'
    cubin = _nvrtc.compile_cuda(source, header.replace(".", "_"), warnings_as_errors=True)
    assert "em_probe" in cubin.symbols()
