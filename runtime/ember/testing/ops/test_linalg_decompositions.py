"""ember.linalg's decompositions and solvers on every device: reconstruction identities,
values against numpy.linalg in float64 (PyTorch's orderings: eigh ascending, svd
descending), batched and empty shapes, LinAlgError for singular and non-positive-definite
input, gradients by finite differences, and parity with torch.linalg."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .test_gradients_reduction import check_gradients, check_second_order


def _e(a: np.ndarray, device: str) -> ember.Tensor:
    return ember.tensor(a, device=device)


def _n(t: ember.Tensor) -> np.ndarray:
    return t.numpy(force=True)


def _spd(rng: np.random.Generator, *shape: int) -> np.ndarray:
    x = rng.standard_normal((*shape[:-1], shape[-1], shape[-1]))
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def _close(got: ember.Tensor, want: np.ndarray, tol: float = 1e-10) -> None:
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(_n(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_reconstructs_with_orthonormal_q(device: str, rng, shape, mode: str) -> None:
    a = rng.standard_normal(shape)
    q, r = ember.linalg.qr(_e(a, device), mode=mode)
    k = min(shape[-2:]) if mode == "reduced" else shape[-2]
    assert tuple(q.shape) == (*shape[:-1], k) and tuple(r.shape) == (*shape[:-2], k, shape[-1])
    _close(q @ r, a)
    _close(q.mT @ q, np.broadcast_to(np.eye(k), (*shape[:-2], k, k)))
    np.testing.assert_array_equal(np.tril(_n(r), -1), 0)
    # LAPACK's Householder signs, as numpy (and PyTorch) return them.
    _close(r, np.linalg.qr(a, mode=mode)[1])
    _close(ember.linalg.qr(_e(a, device), mode="r").R, np.linalg.qr(a, mode="r"))


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 5, 5)])
def test_cholesky_matches_numpy_and_upper(device: str, rng, shape) -> None:
    a = _spd(rng, *shape[:-1])
    factor = ember.linalg.cholesky(_e(a, device))
    _close(factor, np.linalg.cholesky(a))
    _close(
        ember.linalg.cholesky(_e(a, device), upper=True), np.swapaxes(np.linalg.cholesky(a), -1, -2)
    )
    _close(ember.cholesky_inverse(factor), np.linalg.inv(a))
    b = rng.standard_normal((*shape[:-1], 2))
    _close(ember.cholesky_solve(_e(b, device), factor), np.linalg.solve(a, b))


def test_cholesky_not_positive_definite_raises(device: str, rng) -> None:
    a = np.stack([_spd(rng, 3), np.diag([1.0, -1.0, 2.0])])
    with pytest.raises(
        ember.linalg.LinAlgError, match=r"\(Batch element 1\).*leading minor of order 2"
    ):
        ember.linalg.cholesky(_e(a, device))
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    _, info = ember.linalg.cholesky_ex(_e(a, device))
    assert info.tolist() == [0, 2]


@pytest.mark.parametrize("shape", [(4, 4), (3, 2, 2)])
def test_eigh_ascending_and_reconstructs(device: str, rng, shape) -> None:
    x = rng.standard_normal(shape)
    a = x + np.swapaxes(x, -1, -2)
    values, vectors = ember.linalg.eigh(_e(a, device))
    _close(values, np.linalg.eigvalsh(a))
    _close(vectors @ ember.diag_embed(values) @ vectors.mT, a)
    _close(ember.linalg.eigvalsh(_e(np.tril(a), device)), np.linalg.eigvalsh(a))
    _close(ember.linalg.eigvalsh(_e(np.triu(a), device), UPLO="U"), np.linalg.eigvalsh(a))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (4, 1)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_descending_and_reconstructs(device: str, rng, shape, full: bool) -> None:
    a = rng.standard_normal(shape)
    u, s, vh = ember.linalg.svd(_e(a, device), full_matrices=full)
    nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
    assert tuple(u.shape) == nu.shape and tuple(vh.shape) == nvh.shape
    _close(s, ns)
    k = ns.shape[-1]
    _close((u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :], a)
    _close(u.mT @ u, np.broadcast_to(np.eye(nu.shape[-1]), nu.shape[:-2] + (nu.shape[-1],) * 2))
    _close(
        vh @ vh.mT, np.broadcast_to(np.eye(nvh.shape[-2]), nvh.shape[:-2] + (nvh.shape[-2],) * 2)
    )
    _close(ember.linalg.svdvals(_e(a, device)), ns)


def test_svd_of_a_rank_deficient_matrix_has_orthonormal_factors(device: str) -> None:
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])
    u, s, vh = ember.linalg.svd(_e(a, device))
    _close(s, np.linalg.svd(a, compute_uv=False))
    _close(u.mT @ u, np.eye(3))
    _close((u[:, :2] * s) @ vh, a)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (3, 5), (5, 3)])
def test_lu_reconstructs_and_unpacks(device: str, rng, shape) -> None:
    a = rng.standard_normal(shape)
    p, lower, upper = ember.linalg.lu(_e(a, device))
    _close(p @ lower @ upper, a)
    lu_matrix, pivots = ember.linalg.lu_factor(_e(a, device))
    assert pivots.dtype == ember.int32
    pp, pl, pu = ember.lu_unpack(lu_matrix, pivots)
    _close(pp @ pl @ pu, a)


def test_solve_inv_det_slogdet_match_numpy(device: str, rng) -> None:
    a = rng.standard_normal((2, 4, 4))
    b = rng.standard_normal((2, 4, 3))
    A = _e(a, device)
    _close(ember.linalg.solve(A, _e(b, device)), np.linalg.solve(a, b))
    _close(
        ember.linalg.solve(A, _e(b[0, :, 0], device)),
        np.linalg.solve(a, b[0, :, 0][None, :, None])[..., 0],
    )
    _close(
        ember.linalg.solve(A, _e(b.swapaxes(-1, -2), device), left=False),
        np.swapaxes(np.linalg.solve(a.swapaxes(-1, -2), b), -1, -2),
    )
    _close(ember.linalg.inv(A), np.linalg.inv(a))
    _close(ember.linalg.det(A), np.linalg.det(a))
    sign, logabsdet = ember.linalg.slogdet(A)
    nsign, nlog = np.linalg.slogdet(a)
    _close(sign, nsign)
    _close(logabsdet, nlog)
    _close(A.det(), np.linalg.det(a))
    _close(ember.linalg.matrix_power(A, -3), np.linalg.matrix_power(np.linalg.inv(a), 3), 1e-8)
    lu_matrix, pivots = ember.linalg.lu_factor(A)
    _close(ember.linalg.lu_solve(lu_matrix, pivots, _e(b, device)), np.linalg.solve(a, b))
    _close(
        ember.linalg.lu_solve(lu_matrix, pivots, _e(b, device), adjoint=True),
        np.linalg.solve(a.swapaxes(-1, -2), b),
    )


def test_singular_input_raises_linalg_error(device: str) -> None:
    singular = _e(np.array([[1.0, 2.0], [2.0, 4.0]]), device)
    with pytest.raises(
        ember.linalg.LinAlgError, match=r"linalg.inv: The diagonal element 2 is zero"
    ):
        ember.linalg.inv(singular)
    with pytest.raises(ember.linalg.LinAlgError, match="input matrix is singular"):
        ember.linalg.solve(singular, ember.ones(2, 1, dtype=ember.float64, device=device))
    assert ember.linalg.inv_ex(singular).info.item() == 2
    assert ember.linalg.det(singular).item() == 0.0
    sign, logabsdet = ember.linalg.slogdet(singular)
    assert sign.item() == 0.0 and logabsdet.item() == -np.inf


def test_shape_and_dtype_errors(device: str) -> None:
    with pytest.raises(
        RuntimeError, match="must be batches of square matrices, but they are 2 by 3"
    ):
        ember.linalg.inv(ember.ones(2, 3, device=device))
    with pytest.raises(
        RuntimeError, match=r"Expected a floating point or complex tensor as input\. Got Long"
    ):
        ember.linalg.det(ember.ones(2, 2, dtype=ember.int64, device=device))
    with pytest.raises(ember.DTypeError, match=r"Low precision dtypes not supported\. Got Half"):
        ember.linalg.cholesky(ember.eye(2, dtype=ember.float16, device=device))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.linalg.qr(ember.ones(3, device=device))
    with pytest.raises(NotImplementedError, match="complex"):
        ember.linalg.eigvals(ember.eye(2, device=device))


def test_empty_and_float32(device: str, rng) -> None:
    assert tuple(ember.linalg.inv(ember.ones(0, 3, 3, device=device)).shape) == (0, 3, 3)
    assert ember.linalg.det(ember.ones(0, 0, device=device)).item() == 1.0
    a = _spd(rng, 4).astype(np.float32)
    factor = ember.linalg.cholesky(_e(a, device))
    assert factor.dtype == ember.float32
    np.testing.assert_allclose(_n(factor @ factor.mT), a, rtol=1e-4, atol=1e-4)


def test_solve_triangular_sides_and_flags(device: str, rng) -> None:
    a = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2))
    A = _e(a, device)
    _close(ember.linalg.solve_triangular(A, _e(b, device), upper=True), np.linalg.solve(a, b))
    _close(
        ember.linalg.solve_triangular(
            A.mT, _e(b.swapaxes(-1, -2), device), upper=False, left=False
        ),
        np.linalg.solve(a, b).swapaxes(-1, -2),
    )
    unit = np.triu(a, 1) + np.eye(3)
    _close(
        ember.linalg.solve_triangular(A, _e(b, device), upper=True, unitriangular=True),
        np.linalg.solve(unit, b),
    )
    solution, _ = ember.triangular_solve(_e(b, device), A, upper=True, transpose=True)
    _close(solution, np.linalg.solve(a.T, b))


def test_lstsq_pinv_rank_cond_exp(device: str, rng) -> None:
    a = rng.standard_normal((5, 3))
    b = rng.standard_normal((5, 2))
    result = ember.linalg.lstsq(_e(a, device), _e(b, device), driver="gelsd")
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    _close(result.solution, x)
    _close(result.residuals, residuals)
    assert result.rank.item() == rank
    _close(result.singular_values, sv)
    _close(ember.linalg.pinv(_e(a, device)), np.linalg.pinv(a))
    _close(ember.pinverse(_e(a, device)), np.linalg.pinv(a))
    deficient = np.outer([1.0, 2.0, 3.0], [1.0, 0.5, -1.0])
    assert ember.linalg.matrix_rank(_e(deficient, device)).item() == 1
    square = rng.standard_normal((3, 3))
    _close(ember.linalg.cond(_e(square, device)), np.linalg.cond(square))
    _close(ember.linalg.cond(_e(square, device), "fro"), np.linalg.cond(square, "fro"))
    _close(ember.linalg.matrix_norm(_e(a, device), "nuc"), np.linalg.norm(a, "nuc"))
    _close(ember.linalg.matrix_norm(_e(a, device), 2), np.linalg.norm(a, 2))
    _close(ember.linalg.matrix_norm(_e(a, device), -2), np.linalg.norm(a, -2))
    batched = rng.standard_normal((2, 3, 4))
    got = ember.linalg.matrix_norm(_e(batched, device), "nuc", dim=(2, 0), keepdim=True)
    _close(got, np.linalg.norm(batched, "nuc", axis=(2, 0), keepdims=True))
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    _close(
        ember.linalg.matrix_exp(_e(rotation, device)),
        np.array([[np.cos(1), -np.sin(1)], [np.sin(1), np.cos(1)]]),
    )
    _close(
        ember.linalg.tensorinv(_e(square.reshape(3, 3), device), ind=1),
        np.linalg.tensorinv(square, ind=1),
    )


def test_householder_product_forms_q(device: str, rng) -> None:
    a = rng.standard_normal((5, 3))
    h, tau = np.linalg.qr(a, mode="raw")
    q = ember.linalg.householder_product(_e(np.ascontiguousarray(h.T), device), _e(tau, device))
    _close(q, np.linalg.qr(a)[0])


# -- gradients (float64, central finite differences) --------------------------------------


def _symmetric(x: ember.Tensor) -> ember.Tensor:
    return x + x.mT


GRADIENTS: dict[str, tuple[Any, list[tuple[int, ...]]]] = {
    "solve": (
        lambda a, b: ember.linalg.solve(a + 3 * ember.eye(3, dtype=a.dtype, device=a.device), b),
        [(3, 3), (3, 2)],
    ),
    "inv": (
        lambda a: ember.linalg.inv(a + 3 * ember.eye(3, dtype=a.dtype, device=a.device)),
        [(2, 3, 3)],
    ),
    "det": (lambda a: ember.linalg.det(a), [(3, 3)]),
    "slogdet": (lambda a: ember.linalg.slogdet(a).logabsdet, [(2, 3, 3)]),
    "cholesky": (
        lambda a: ember.linalg.cholesky(
            a @ a.mT + 3 * ember.eye(3, dtype=a.dtype, device=a.device)
        ),
        [(3, 3)],
    ),
    "qr_tall": (lambda a: ember.linalg.qr(a), [(4, 3)]),
    "qr_wide": (lambda a: ember.linalg.qr(a), [(2, 4)]),
    "eigh": (lambda a: ember.linalg.eigh(_symmetric(a)), [(3, 3)]),
    "svd": (lambda a: ember.linalg.svd(a, full_matrices=False), [(3, 2)]),
    "svd_wide": (lambda a: ember.linalg.svd(a, full_matrices=False), [(2, 3)]),
    "solve_triangular": (
        lambda a, b: ember.linalg.solve_triangular(
            a.triu() + 3 * ember.eye(3, dtype=a.dtype, device=a.device), b, upper=True
        ),
        [(3, 3), (3, 2)],
    ),
    "lstsq": (lambda a, b: ember.linalg.lstsq(a, b).solution, [(3, 2), (3, 1)]),
    "lu_factor": (lambda a: ember.linalg.lu_factor(a).LU, [(2, 3, 3)]),
    "lu": (lambda a: ember.linalg.lu(a)[1:], [(3, 3)]),
    "householder_product": (lambda a, t: ember.linalg.householder_product(a, t), [(4, 3), (2,)]),
}


@pytest.mark.parametrize("name", list(GRADIENTS))
def test_gradients_by_finite_differences(device: str, rng, name: str) -> None:
    fn, shapes = GRADIENTS[name]
    check_gradients(fn, *[rng.standard_normal(s) for s in shapes], device=device)


@pytest.mark.parametrize("name", ["inv", "det", "cholesky", "eigh"])
def test_second_order_gradients(device: str, rng, name: str) -> None:
    """The formulas are written in differentiable ember ops, so they differentiate again."""
    cases = {
        "inv": GRADIENTS["inv"][0],
        "det": GRADIENTS["det"][0],
        "cholesky": GRADIENTS["cholesky"][0],
        "eigh": lambda a: ember.linalg.eigh(_symmetric(a)).eigenvalues,
    }
    check_second_order(cases[name], rng.standard_normal((3, 3)), device=device)


def _sign_free(name: str, outputs: list[Any]) -> list[Any]:
    """Outputs that do not depend on the eigen/singular vectors' signs."""
    if name == "eigh":
        return [outputs[0], outputs[1] ** 2]
    if name == "svd":
        return [outputs[1], outputs[0] ** 2, outputs[2] ** 2]
    return outputs


@pytest.mark.parametrize("name", ["qr", "eigh", "svd", "cholesky"])
def test_parity_with_torch(device: str, rng, name: str) -> None:
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 4, 3))
    if name in ("eigh", "cholesky"):
        a = _spd(rng, 2, 4)
    e_in, t_in = _e(a, device).requires_grad_(), torch.tensor(a, requires_grad=True)
    e_outs = _sign_free(
        name,
        list(getattr(ember.linalg, name)(e_in))
        if name != "cholesky"
        else [ember.linalg.cholesky(e_in)],
    )
    t_outs = _sign_free(
        name,
        list(getattr(torch.linalg, name)(t_in))
        if name != "cholesky"
        else [torch.linalg.cholesky(t_in)],
    )
    weights = [rng.standard_normal(tuple(o.shape)) for o in t_outs]
    for got, want in zip(e_outs, t_outs, strict=True):
        _close(got, want.detach().numpy())
    sum((o * _e(w, device)).sum() for o, w in zip(e_outs, weights, strict=True)).backward()
    sum((o * torch.tensor(w)).sum() for o, w in zip(t_outs, weights, strict=True)).backward()
    _close(e_in.grad, t_in.grad.numpy(), 1e-8)


# -- the torch-level names and Tensor methods ----------------------------------------------


@pytest.mark.filterwarnings("ignore:torch.(cholesky|lu_solve|triangular_solve) is deprecated")
def test_torch_level_names_match_torch(device: str, rng) -> None:
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 4, 3))
    square = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    spd = _spd(rng, 3)
    b = rng.standard_normal((3, 2))
    ea, es, ep, eb = (_e(x, device) for x in (a, square, spd, b))
    ta, ts, tp, tb = (torch.tensor(x) for x in (a, square, spd, b))
    for some in (True, False):
        u, s, v = ember.svd(ea, some=some)
        tu, tsv, tv = torch.svd(ta, some=some)
        assert tuple(u.shape) == tuple(tu.shape) and tuple(v.shape) == tuple(tv.shape)
        _close((u[..., :3] * s.unsqueeze(-2)) @ v[..., :3].mT, a)
        _close(s, tsv.numpy())
    no_uv = ember.svd(ea, compute_uv=False)
    assert not bool(no_uv.U.any().item()) and not bool(no_uv.V.any().item())
    assert tuple(ember.qr(ea, some=False).Q.shape) == (2, 4, 4)
    _close(es.det(), torch.det(ts).numpy())
    _close(es.logdet(), torch.logdet(ts).numpy())
    _close(es.slogdet().logabsdet, torch.slogdet(ts).logabsdet.numpy())
    _close(es.inverse(), torch.inverse(ts).numpy())
    _close(es.matrix_exp(), torch.matrix_exp(ts).numpy())
    _close(ea.pinverse(), torch.pinverse(ta).numpy())
    factor = ep.cholesky()
    _close(factor, torch.cholesky(tp).numpy())
    _close(eb.cholesky_solve(factor), torch.cholesky_solve(tb, torch.cholesky(tp)).numpy())
    _close(factor.cholesky_inverse(), torch.cholesky_inverse(torch.cholesky(tp)).numpy())
    lu_matrix, pivots = es.lu()
    tlu, tpiv = torch.linalg.lu_factor(ts)
    _close(lu_matrix, tlu.numpy())
    assert pivots.tolist() == tpiv.tolist()
    _close(eb.lu_solve(lu_matrix, pivots), torch.lu_solve(tb, tlu, tpiv).numpy())
    for got, want in zip(
        ember.lu_unpack(lu_matrix, pivots), torch.lu_unpack(tlu, tpiv), strict=True
    ):
        _close(got, want.numpy())
    solution, coefficient = eb.triangular_solve(es, upper=False)
    want = torch.triangular_solve(tb, ts, upper=False)
    _close(solution, want.solution.numpy())
    _close(coefficient, square)


def test_det_gradient_of_a_singular_matrix_is_the_adjugate(device: str) -> None:
    a = _e(np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]]), device)
    a.requires_grad_()
    ember.linalg.det(a).sum().backward()
    _close(a.grad, np.array([[[4.0, -2.0], [-2.0, 1.0]], [[3.0, -1.0], [-1.0, 2.0]]]))


@pytest.mark.filterwarnings("ignore:.*(nuclear|frobenius)_norm is deprecated")
def test_lapack_style_torch_names_match_torch(device: str, rng) -> None:
    torch = pytest.importorskip("torch")
    a, c = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    reflectors, tau = ember.geqrf(_e(a, device))
    want = torch.geqrf(torch.tensor(a))
    _close(reflectors, want.a.numpy())
    _close(tau, want.tau.numpy())
    _close(reflectors.orgqr(tau), torch.orgqr(want.a, want.tau).numpy())
    for left, transpose in ((True, False), (True, True)):
        got = reflectors.ormqr(tau, _e(c, device), left, transpose)
        expected = torch.ormqr(want.a, want.tau, torch.tensor(c), left, transpose)
        _close(got, expected.numpy())
    got = ember.ormqr(reflectors, tau, _e(c.swapaxes(-1, -2), device), left=False)
    expected = torch.ormqr(want.a, want.tau, torch.tensor(c.swapaxes(-1, -2)), left=False)
    _close(got, expected.numpy())
    _close(ember.nuclear_norm(_e(a, device)), torch.nuclear_norm(torch.tensor(a)).numpy())
    _close(
        ember.frobenius_norm(_e(a, device)),
        torch.frobenius_norm(torch.tensor(a), dim=(-2, -1)).numpy(),
    )


def test_lowrank_recovers_a_low_rank_matrix(device: str, rng) -> None:
    a = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 5))
    ember.manual_seed(0)
    u, s, v = ember.svd_lowrank(_e(a, device), q=3)
    assert tuple(u.shape) == (8, 3) and tuple(v.shape) == (5, 3)
    _close(s[:2], np.linalg.svd(a, compute_uv=False)[:2])
    _close((u * s) @ v.mT, a)
    u, s, v = ember.svd_lowrank(_e(a.T, device), q=2)
    _close((u * s) @ v.mT, a.T)
    centered = a - a.mean(0)
    u, s, v = ember.pca_lowrank(_e(a, device), q=2)
    _close(s, np.linalg.svd(centered, compute_uv=False)[:2])


def test_logdet_of_negative_determinant_is_nan(device: str) -> None:
    flip = _e(np.array([[0.0, 1.0], [1.0, 0.0]]), device)
    assert np.isnan(ember.logdet(flip).item())


def test_lstsq_drivers_match_torch(device: str, rng) -> None:
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        got = ember.linalg.lstsq(_e(a, device), _e(b, device), driver=driver)
        want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for g, w in zip(got, want, strict=True):
            assert tuple(g.shape) == tuple(w.shape), driver
            _close(g.to(ember.float64), w.double().numpy())
