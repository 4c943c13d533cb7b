"""ember_cpu.load_inline: real compiles, results against NumPy float64, the disk cache
across processes, and compiler errors positioned in the user's source."""

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
from ember_cpu import InlineLibrary, _inline, load_inline
from ember_cpu._prototypes import declarations_of

KERNELS = r"""
#include <omp.h>
#include "cblas.h"
#include "em_dialect.h"

/* y += a * x, the saxpy of BLAS level 1 */
void saxpy(long n, float a, const float *restrict x, float *restrict y) {
    for (long i = 0; i < n; i++) y[i] += a * x[i];
}

// Each row's sum of squares, rows in parallel.
static void row_square_sums(long rows, long cols, const double *x, double *out)
{
    #pragma omp parallel for
    for (long r = 0; r < rows; r++) {
        double total = 0.0;
        for (long c = 0; c < cols; c++) total += x[r * cols + c] * x[r * cols + c];
        out[r] = total;
    }
}

int team_size(int requested) {
    int size = 0;
    #pragma omp parallel num_threads(requested)
    {
        #pragma omp single
        size = omp_get_num_threads();
    }
    return size;
}

int default_team(void) {
    int size = 0;
    #pragma omp parallel
    {
        #pragma omp single
        size = omp_get_num_threads();
    }
    return size;
}

void matmul(int m, int n, int k, const double *a, const double *b, double *c) {
    scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n,
                      0.0, c, n);
}
"""
FUNCTIONS = ["saxpy", "row_square_sums", "team_size", "default_team", "matmul"]

LOAD_AND_REPORT = """
import json, sys
import ember
from ember_cpu import _inline, load_inline
lib = load_inline(sys.argv[1], "scale", name="probe")
x = ember.ones(4)
lib.scale(4, 3.0, lib.ptr(x))
print(json.dumps({**_inline.STATS, "from_cache": lib.from_cache, "path": str(lib.path),
                  "values": x.tolist()}))
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache folder for the module, so that its compiled libraries are shared."""
    folder = tmp_path_factory.mktemp("ember-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBER_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def kernels(cache: Path) -> InlineLibrary:
    return load_inline(KERNELS, FUNCTIONS, name="kernels")


def _unique_source() -> str:
    # A source no cache has seen, so that the first load must compile.
    token = uuid.uuid4().hex
    return f"/* {token} */\nvoid scale(long n, float a, float *x) {{\n" + (
        "    for (long i = 0; i < n; i++) x[i] *= a;\n}\n"
    )


def _load_in_new_process(cache: Path, source: str) -> dict[str, object]:
    env = {**os.environ, "EMBER_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_REPORT, source],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_saxpy_matches_numpy(kernels: InlineLibrary) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 1000)).astype(np.float32)
    tx, ty = ember.tensor(x), ember.tensor(y)
    kernels.saxpy(1000, 2.5, kernels.ptr(tx), kernels.ptr(ty))
    expected = 2.5 * x.astype(np.float64) + y.astype(np.float64)
    np.testing.assert_allclose(ty.numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(tx.numpy(), x)  # the const input is untouched


def test_rowwise_kernel_in_openmp_matches_numpy(kernels: InlineLibrary) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 129))
    out = ember.empty(37, dtype=ember.float64)
    kernels.row_square_sums(37, 129, kernels.ptr(ember.tensor(x)), kernels.ptr(out))
    np.testing.assert_allclose(out.numpy(), (x * x).sum(axis=1), rtol=1e-12)


def test_openmp_pragmas_make_real_teams(kernels: InlineLibrary) -> None:
    # Without -fopenmp the pragma is ignored and omp_get_num_threads() is 1 (or unlinked).
    assert kernels.team_size(3) == 3


def test_plain_parallel_regions_follow_ember_set_num_threads(kernels: InlineLibrary) -> None:
    before = ember.get_num_threads()
    try:
        for n in (1, 3):
            ember.set_num_threads(n)
            assert kernels.default_team() == n
    finally:
        ember.set_num_threads(before)


def test_blas_is_linked(kernels: InlineLibrary) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    c = ember.empty(5, 3, dtype=ember.float64)
    kernels.matmul(
        5, 3, 7, kernels.ptr(ember.tensor(a)), kernels.ptr(ember.tensor(b)), kernels.ptr(c)
    )
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-12)


def test_a_pointer_keeps_its_tensor_alive(kernels: InlineLibrary) -> None:
    # Were the first temporary tensor freed after ptr(), the second would reuse its block.
    x = kernels.ptr(ember.tensor(np.arange(64, dtype=np.float32)))
    y = ember.tensor(np.zeros(64, dtype=np.float32))
    kernels.saxpy(64, 1.0, x, kernels.ptr(y))
    np.testing.assert_array_equal(y.numpy(), np.arange(64))


def test_ptr_addresses_a_views_first_element(kernels: InlineLibrary) -> None:
    base = ember.zeros(10)
    view = base[4:7]
    kernels.saxpy(3, 1.0, kernels.ptr(ember.ones(3)), kernels.ptr(view))
    np.testing.assert_array_equal(base.numpy(), [0, 0, 0, 0, 1, 1, 1, 0, 0, 0])


def test_ptr_refuses_a_tensor_of_another_device(kernels: InlineLibrary) -> None:
    if not ember.is_available("numpy"):
        pytest.skip("the numpy reference device (plugins/ember-numpy) is not installed")
    elsewhere = ember.zeros(3, device="numpy")
    with pytest.raises(ValueError, match=r"on numpy:0; cpu kernels take cpu tensors"):
        kernels.ptr(elsewhere)


def test_the_library_lists_its_functions(kernels: InlineLibrary, cache: Path) -> None:
    assert kernels.functions == tuple(FUNCTIONS)
    assert kernels.path.is_file() and kernels.path.parents[1] == cache / "cpu-inline"
    with pytest.raises(AttributeError, match=r"no function 'nope'.*saxpy, row_square_sums"):
        _ = kernels.nope


def test_a_second_load_is_a_memory_hit(kernels: InlineLibrary) -> None:
    before = _inline.STATS["memory_hits"]
    assert load_inline(KERNELS, FUNCTIONS, name="kernels") is kernels
    assert _inline.STATS["memory_hits"] == before + 1


def test_prototypes_come_from_the_definitions() -> None:
    declarations = declarations_of(KERNELS, FUNCTIONS)
    assert declarations.splitlines() == [
        "void saxpy(long n, float a, const float *restrict x, float *restrict y);",
        "void row_square_sums(long rows, long cols, const double *x, double *out);",
        "int team_size(int requested);",
        "int default_team(void);",
        "void matmul(int m, int n, int k, const double *a, const double *b, double *c);",
    ]


def test_prototypes_skip_calls_declarations_and_attributes() -> None:
    source = """
    static inline int helper(int v);                      /* a declaration */
    int twice(int v) { return helper(v) + helper(v); }    // helper( is only called here
    static inline __attribute__((always_inline)) int
    helper(int v) { return v; }
    """
    assert declarations_of(source, ["helper", "twice"]).splitlines() == [
        "int helper(int v);",
        "int twice(int v);",
    ]


def test_a_missing_function_is_named() -> None:
    with pytest.raises(ValueError, match="no definition of missing_one, missing_two"):
        load_inline(KERNELS, ["saxpy", "missing_one", "missing_two"])


def test_names_that_would_hide_the_librarys_attributes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"would hide InlineLibrary\.ptr"):
        load_inline("void ptr(void) {}", "ptr")


def test_compile_errors_point_at_the_users_file_and_line(cache: Path) -> None:
    source = "int broken(int a) {\n    int b = a;\n    return b + undeclared_name;\n}\n"
    with pytest.raises(CompileError) as raised:
        load_inline(source, "broken", name="mykernel")
    error = raised.value
    assert (error.file, error.line) == ("mykernel.c", 3)
    assert "mykernel.c:3:" in str(error) and "undeclared_name" in str(error)
    assert "undeclared_name" in error.log
    assert error.command is not None and "-fopenmp" in error.command
    assert not list(cache.glob("cpu-inline/*/mykernel_*"))  # nothing is cached for a failure


def test_an_undefined_symbol_is_a_compile_error(cache: Path) -> None:
    source = "int not_defined_anywhere(void);\nint calls(void) { return not_defined_anywhere(); }\n"
    with pytest.raises(CompileError, match="undefined symbol: not_defined_anywhere"):
        load_inline(source, "calls", name="unlinked")
    assert not list(cache.glob("cpu-inline/*/unlinked_*.so"))


def test_cdef_and_extra_cflags(cache: Path) -> None:
    # A definition made by a macro: the source does not show its header, cdef= declares it.
    source = "#define DEFINE_ADD(name) int name(int v) { return v + OFFSET; }\nDEFINE_ADD(add)\n"
    library = load_inline(source, "add", cdef="int add(int v);", extra_cflags=["-DOFFSET=40"])
    assert library.add(2) == 42
    other = load_inline(source, "add", cdef="int add(int v);", extra_cflags=["-DOFFSET=1"])
    assert other.path != library.path and other.add(2) == 3  # flags are in the cache key


def test_a_new_process_loads_the_library_without_compiling(tmp_path: Path) -> None:
    source = _unique_source()
    first = _load_in_new_process(tmp_path, source)
    assert (first["compiles"], first["disk_hits"], first["from_cache"]) == (1, 0, False)
    assert first["values"] == [3.0, 3.0, 3.0, 3.0]
    path = Path(str(first["path"]))
    stamp = path.stat().st_mtime_ns
    second = _load_in_new_process(tmp_path, source)
    assert (second["compiles"], second["disk_hits"], second["from_cache"]) == (0, 1, True)
    assert second["values"] == [3.0, 3.0, 3.0, 3.0]
    assert second["path"] == first["path"] and path.stat().st_mtime_ns == stamp
    assert not list(path.parent.glob(".build-*"))  # the scratch folder is gone


def test_a_corrupt_cached_library_is_rebuilt(tmp_path: Path) -> None:
    source = _unique_source()
    path = Path(str(_load_in_new_process(tmp_path, source)["path"]))
    path.write_bytes(b"not a shared library")
    again = _load_in_new_process(tmp_path, source)
    assert (again["compiles"], again["disk_hits"]) == (1, 0)
    assert again["values"] == [3.0, 3.0, 3.0, 3.0]
    assert path.read_bytes()[:4] == b"\x7fELF"  # replaced by a good build
    assert _load_in_new_process(tmp_path, source)["disk_hits"] == 1


def test_concurrent_processes_share_one_cache_entry(tmp_path: Path) -> None:
    source = _unique_source()
    env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", LOAD_AND_REPORT, source],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    reports = [json.loads(run.communicate()[0].strip().splitlines()[-1]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert all(report["values"] == [3.0, 3.0, 3.0, 3.0] for report in reports)
    assert len({report["path"] for report in reports}) == 1
    assert _load_in_new_process(tmp_path, source)["disk_hits"] == 1
