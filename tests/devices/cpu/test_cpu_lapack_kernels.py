"""The cpu device's LAPACK-level kernels (csrc/lapack.c), called directly on column-major
batches as the runtime lays them out, in float32 and float64, with LAPACK's info codes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember._dispatch import Op
from ember._ops import names
from ember._ops.linalg_primitives import column_major

TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def _kernel(op: Op) -> Any:
    ember.ones(1)  # loads the plugins
    return op.kernels["cpu"]


@pytest.fixture(params=["float32", "float64"])
def dtype(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_primitive_has_a_native_cpu_kernel() -> None:
    primitives = (
        names.LU_FACTOR, names.CHOLESKY, names.HOUSEHOLDER_QR, names.HOUSEHOLDER_PRODUCT,
        names.EIGH, names.SVD, names.TRIANGULAR_SOLVE,
    )  # fmt: skip
    for op in primitives:
        assert _kernel(op).__module__ == "ember_cpu.kernels_lapack"


def test_getrf_and_potrf_report_info(dtype: str) -> None:
    a = column_major(
        ember.tensor([[[1.0, 2.0], [2.0, 4.0]], [[4.0, 1.0], [1.0, 3.0]]]).to(getattr(ember, dtype))
    )
    pivots = ember.empty(2, 2, dtype=ember.int32)
    info = ember.zeros(2, dtype=ember.int32)
    _kernel(names.LU_FACTOR)(a, pivots, info)
    assert info.tolist() == [2, 0] and pivots.tolist() == [[2, 2], [1, 2]]
    b = column_major(
        ember.tensor([[[4.0, 1.0], [1.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]]).to(getattr(ember, dtype))
    )
    _kernel(names.CHOLESKY)(b, info)
    assert info.tolist() == [0, 2]
    np.testing.assert_allclose(b[0].tril().numpy(), np.linalg.cholesky([[4.0, 1.0], [1.0, 3.0]]),
                               rtol=TOLERANCE[dtype])  # fmt: skip


def test_gesdd_and_syevd(dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 3))
    a = column_major(ember.tensor(x).to(getattr(ember, dtype)))
    u = ember.empty(3, 3, 4, dtype=a.dtype).mT
    vh = ember.empty(3, 3, 3, dtype=a.dtype).mT
    s = ember.empty(3, 3, dtype=a.dtype)
    info = ember.zeros(3, dtype=ember.int32)
    _kernel(names.SVD)(a, u, s, vh, info, False)
    assert info.tolist() == [0, 0, 0]
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(x, compute_uv=False), rtol=TOLERANCE[dtype])
    sym = x[:, :3] + np.swapaxes(x[:, :3], -1, -2)
    vectors = column_major(ember.tensor(sym).to(getattr(ember, dtype)))
    w = ember.empty(3, 3, dtype=vectors.dtype)
    _kernel(names.EIGH)(vectors, w, info)
    np.testing.assert_allclose(
        w.numpy(), np.linalg.eigvalsh(sym), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype]
    )
