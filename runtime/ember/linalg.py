"""ember.linalg: PyTorch's torch.linalg namespace (norms and products so far)."""

from __future__ import annotations

from ember._ops.linalg import matmul
from ember._ops.linalg_products import linalg_cross as cross
from ember._ops.linalg_products import matrix_power, multi_dot, vecdot
from ember._ops.norms import linalg_norm as norm
from ember._ops.norms import matrix_norm, vector_norm

__all__ = [
    "LinAlgError", "cross", "matmul", "matrix_norm", "matrix_power", "multi_dot", "norm",
    "vecdot", "vector_norm",
]  # fmt: skip


class LinAlgError(RuntimeError):
    """Numerically invalid input, such as a singular matrix (torch.linalg.LinAlgError)."""
