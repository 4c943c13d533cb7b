"""The generic defaults of the LAPACK-level primitives (ember._ops.linalg_generic), which
every device without native kernels runs, checked on the cpu device with its LAPACK
kernels taken away."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember._ops import names

PRIMITIVES = (
    names.LU_FACTOR, names.CHOLESKY, names.HOUSEHOLDER_QR, names.HOUSEHOLDER_PRODUCT,
    names.EIGH, names.SVD, names.TRIANGULAR_SOLVE,
)  # fmt: skip


@pytest.fixture(autouse=True)
def _generic_only(monkeypatch: pytest.MonkeyPatch) -> None:
    ember.ones(1)  # loads the plugins, so that their kernels are there to take away
    for op in PRIMITIVES:
        monkeypatch.delitem(op.kernels, "cpu", raising=False)


def _close(got: ember.Tensor, want: np.ndarray) -> None:
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-9)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_lu_pivots_as_lapack(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 4, 3))
    lu_matrix, pivots, info = ember.linalg.lu_factor_ex(ember.tensor(a))
    want = torch.linalg.lu_factor_ex(torch.tensor(a))
    _close(lu_matrix, want.LU.numpy())
    assert pivots.tolist() == want.pivots.tolist() and info.tolist() == [0, 0]
    singular = ember.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ember.float64)
    assert ember.linalg.lu_factor_ex(singular).info.item() == 2


def test_cholesky_and_its_failure(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 3))
    spd = x @ x.T + 3 * np.eye(3)
    _close(ember.linalg.cholesky(ember.tensor(spd)), np.linalg.cholesky(spd))
    bad = ember.tensor(np.diag([1.0, 2.0, -1.0]))
    assert ember.linalg.cholesky_ex(bad).info.item() == 3


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_qr_matches_lapack_signs(rng: np.random.Generator, shape: tuple[int, int]) -> None:
    a = rng.standard_normal(shape)
    q, r = ember.linalg.qr(ember.tensor(a), mode="complete")
    nq, nr = np.linalg.qr(a, mode="complete")
    _close(q, nq)
    _close(r, nr)


def test_eigh_and_svd(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 4))
    sym = x + x.T
    values, vectors = ember.linalg.eigh(ember.tensor(sym))
    _close(values, np.linalg.eigvalsh(sym))
    _close(vectors @ ember.diag_embed(values) @ vectors.mT, sym)
    for shape in ((5, 3), (3, 5)):
        a = rng.standard_normal(shape)
        u, s, vh = ember.linalg.svd(ember.tensor(a))
        _close(s, np.linalg.svd(a, compute_uv=False))
        _close(u.mT @ u, np.eye(shape[0]))
        _close(vh @ vh.mT, np.eye(shape[1]))
        _close((u[:, :3] * s) @ vh[:3], a)


def test_triangular_solve(rng: np.random.Generator) -> None:
    a = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    b = rng.standard_normal((4, 2))
    got = ember.linalg.solve_triangular(ember.tensor(a), ember.tensor(b), upper=False)
    _close(got, np.linalg.solve(a, b))


def test_batches_mix_pivots_ranks_and_failures(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4, 3, 3))
    a[1] = [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]]  # a zero first column
    a[2] = np.outer([1.0, 2.0, 3.0], [1.0, 0.0, -1.0])  # rank one
    got = ember.linalg.lu_factor_ex(ember.tensor(a))
    want = torch.linalg.lu_factor_ex(torch.tensor(a))
    _close(got.LU, want.LU.numpy())
    assert got.pivots.tolist() == want.pivots.tolist()
    assert got.info.tolist() == want.info.tolist()
    u, s, vh = ember.linalg.svd(ember.tensor(a))
    _close(s, np.linalg.svd(a, compute_uv=False))
    _close(u.mT @ u, np.broadcast_to(np.eye(3), (4, 3, 3)))
    _close(vh @ vh.mT, np.broadcast_to(np.eye(3), (4, 3, 3)))
    _close((u * s.unsqueeze(-2)) @ vh, a)
    spd = np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0]), np.diag([1.0, 1.0, 0.0]), 2 * np.eye(3)])
    assert ember.linalg.cholesky_ex(ember.tensor(spd)).info.tolist() == [0, 2, 3, 0]
    values, vectors = ember.linalg.eigh(ember.tensor(spd))
    _close(values, np.linalg.eigvalsh(spd))
    _close(vectors.mT @ vectors, np.broadcast_to(np.eye(3), (4, 3, 3)))
