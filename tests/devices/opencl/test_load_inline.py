"""ember_opencl.load_inline: real builds on the OpenCL device, results against NumPy
float64, scalar parameter types, build errors positioned in the user's source, the
program cache, and launches on the current ember stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.library import CompileError
from ember_opencl import InlineProgram, _inline, _programs, load_inline

KERNELS = """
// y = a * x + b, with an int offset and a float scale
__kernel void axpb(__global float* y, __global const float* x, float a, int b, long n) {
    const long i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + b;
}

/* Each row's sum of squares, one work item per row. */
__kernel void row_square_sums(__global const double* restrict x, __global double* out,
                              uint rows, uint cols) {
    const uint r = get_global_id(0);
    if (r >= rows) return;
    double total = 0.0;
    for (uint c = 0; c < cols; c++) total += x[r * cols + c] * x[r * cols + c];
    out[r] = total;
}

__kernel void fill(__global int* out, int value, ulong n) {
    const ulong i = get_global_id(0);
    if (i < n) out[i] = value;
}
"""
NAMES = ["axpb", "row_square_sums", "fill"]

LOAD_AND_REPORT = """
import json, sys
import ember
from ember_opencl import _programs, load_inline
out = ember.zeros(8, dtype=ember.int32, device="opencl")  # builds ember's own kernels first
before = dict(_programs.STATS)
prog = load_inline(sys.argv[1], "fill")
prog.fill(8, out, 5, 8)
counts = {key: _programs.STATS[key] - before[key] for key in before}
print(json.dumps({**counts, "values": out.tolist()}))
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("ember-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBER_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def program(cache: Path) -> InlineProgram:
    return load_inline(KERNELS, NAMES, name="kernels")


def _tensor(array: np.ndarray) -> ember.Tensor:
    return ember.tensor(array, device="opencl")


def test_a_kernel_on_tensors_matches_numpy(program: InlineProgram) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    y = ember.empty(1000, device="opencl")
    program.axpb(1024, y, _tensor(x), 2.5, 3, 1000)
    np.testing.assert_allclose(
        y.cpu().numpy(), 2.5 * x.astype(np.float64) + 3, rtol=1e-6, atol=1e-6
    )


def test_unsigned_and_double_parameters(program: InlineProgram) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 129))
    out = ember.empty(37, dtype=ember.float64, device="opencl")
    program.row_square_sums(64, _tensor(x), out, 37, 129, local_size=32)
    np.testing.assert_allclose(out.cpu().numpy(), (x * x).sum(axis=1), rtol=1e-12)


def test_python_numbers_take_the_declared_scalar_types(program: InlineProgram) -> None:
    out = ember.zeros(5, dtype=ember.int32, device="opencl")
    program.fill(5, out, -7, 5)  # int and ulong: packed as 4 and 8 bytes
    assert out.tolist() == [-7] * 5
    with pytest.raises(TypeError, match=r"argument 1 is declared int; got float 1.5"):
        program.fill(5, out, 1.5, 5)
    with pytest.raises(OverflowError):
        program.fill(5, out, 2**40, 5)
    with pytest.raises(TypeError, match=r"takes 3 kernel arguments"):
        program.fill(5, out, 1)


def test_parameter_kinds_come_from_the_source() -> None:
    parameters = _inline._signatures(KERNELS, ["axpb", "row_square_sums"])
    kinds = {kernel: [_inline._kind(p) for p in params] for kernel, params in parameters.items()}
    assert kinds == {
        "axpb": ["buffer", "buffer", "float", "int", "long"],
        "row_square_sums": ["buffer", "buffer", "uint", "uint"],
    }
    assert [_inline._kind(p) for p in ("__local float* t", "const unsigned int n", "float4 v")] == [
        "local",
        "uint",
        "value",
    ]
    pointers = ("__global const unsigned char* restrict m", "global half *h", "EM_GLOBAL float* x")
    assert [_inline._pointee(p) for p in pointers] == ["uchar", "half", None]


def test_tensors_of_another_device_or_a_view_are_refused(program: InlineProgram) -> None:
    out = ember.zeros(4, dtype=ember.int32, device="opencl")
    with pytest.raises(ValueError, match=r"argument 0 is a tensor on cpu.*runs on opencl:0"):
        program.fill(4, ember.zeros(4, dtype=ember.int32), 1, 4)
    with pytest.raises(ValueError, match=r"starts 1 elements into its storage"):
        program.fill(2, out[1:3], 1, 2)
    with pytest.raises(TypeError, match=r"argument 0 points to int; got a float32 tensor"):
        program.fill(4, ember.zeros(4, device="opencl"), 1, 4)


def test_an_unknown_kernel_is_named() -> None:
    with pytest.raises(ValueError, match=r"no kernel missing_kernel in the source"):
        load_inline(KERNELS, ["axpb", "missing_kernel"])


@pytest.mark.parametrize("dialect", [False, True])
def test_build_errors_point_at_the_users_file_and_line(cache: Path, dialect: bool) -> None:
    token = uuid.uuid4().hex[:8]  # a new source each run, never in a cache
    source = (
        f"__kernel void broken_{token}(__global int* o) {{\n"
        "    int a = 1;\n"
        "    o[0] = undeclared_name + a;\n"
        "}\n"
    )
    with pytest.raises(CompileError) as raised:
        load_inline(source, f"broken_{token}", name="mykernel", dialect=dialect)
    error = raised.value
    assert (error.file, error.line) == ("mykernel.cl", 3)
    assert "mykernel.cl:3:" in str(error) and "undeclared_name" in str(error)
    assert "undeclared_name" in error.log


def test_the_dialect_is_available_when_asked_for(cache: Path) -> None:
    source = (
        "EM_FN float half_of(float v) { return v * 0.5f; }\n"
        "__kernel void halve(EM_GLOBAL float* x) {\n"
        "    x[get_global_id(0)] = half_of(x[get_global_id(0)]);\n"
        "}\n"
    )
    with pytest.raises(CompileError):  # EM_FN and EM_GLOBAL are the dialect's
        load_inline(source, "halve")
    prog = load_inline(source, "halve", dialect=True)
    x = _tensor(np.array([2.0, 4.0], dtype=np.float32))
    prog.halve(2, x)
    assert x.tolist() == [1.0, 2.0]


def test_a_second_load_is_served_from_memory(program: InlineProgram) -> None:
    before = dict(_programs.STATS)
    assert load_inline(KERNELS, NAMES, name="kernels") is program
    assert _programs.STATS["source_builds"] == before["source_builds"]


def test_a_new_process_loads_the_binary_from_disk(tmp_path: Path) -> None:
    source = f"/* {uuid.uuid4().hex} */\n" + KERNELS
    env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path)}

    def run() -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", LOAD_AND_REPORT, source],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    first = run()
    assert (first["source_builds"], first["disk_hits"], first["values"]) == (1, 0, [5] * 8)
    second = run()
    assert (second["source_builds"], second["disk_hits"], second["values"]) == (0, 1, [5] * 8)


def test_kernels_run_on_the_current_stream(program: InlineProgram) -> None:
    dev = ember.device("opencl")
    out = ember.zeros(256, dtype=ember.int32, device=dev)
    side = ember.Stream(dev)
    side.wait_stream(ember.current_stream(dev))  # the zeros above were written on the default
    with ember.stream(side):
        event = program.fill(256, out, 9, 256)
        done = side.record_event()
    assert event.command_queue == side.native.queue  # enqueued on the side stream's queue
    assert side.native.queue != ember.default_stream(dev).native.queue
    ember.current_stream(dev).wait_event(done)  # the default stream reads after it
    assert out.tolist() == [9] * 256
    default_event = program.fill(256, out, 4, 256)
    assert default_event.command_queue == ember.default_stream(dev).native.queue
    assert out.tolist() == [4] * 256
