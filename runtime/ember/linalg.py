"""ember.linalg: PyTorch's torch.linalg namespace: norms, products, decompositions and
solvers."""

from __future__ import annotations

from ember._ops.linalg import matmul
from ember._ops.linalg_checks import LinAlgError
from ember._ops.linalg_decompositions import (
    cholesky,
    cholesky_ex,
    eigh,
    eigvalsh,
    householder_product,
    lu,
    lu_factor,
    lu_factor_ex,
    qr,
    svd,
    svdvals,
)
from ember._ops.linalg_products import linalg_cross as cross
from ember._ops.linalg_products import matrix_power, multi_dot, vecdot
from ember._ops.linalg_solvers import (
    det,
    inv,
    inv_ex,
    lu_solve,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
)
from ember._ops.linalg_spectral import (
    cond,
    diagonal,
    eig,
    eigvals,
    lstsq,
    matrix_exp,
    matrix_rank,
    pinv,
    tensorinv,
    tensorsolve,
    vander,
)
from ember._ops.norms import linalg_norm as norm
from ember._ops.norms import matrix_norm, vector_norm

__all__ = [
    "LinAlgError", "cross", "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm",
    "vecdot", "vector_norm",
]  # fmt: skip
__all__ += [
    "cholesky", "cholesky_ex", "cond", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
    "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex",
    "lu_solve", "matrix_exp", "matrix_rank", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
]  # fmt: skip
