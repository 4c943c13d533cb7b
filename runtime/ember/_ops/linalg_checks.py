"""ember.linalg's error class and the input checks and info readings its ops share,
with PyTorch's messages."""

from __future__ import annotations

from ember._errors import DTypeError
from ember._ops._surface import E
from ember._tensor import Tensor

__all__ = [
    "LinAlgError", "check_floating", "check_matrix", "check_square", "failed_batches",
    "raise_for_info", "torch_dtype_name",
]  # fmt: skip


class LinAlgError(RuntimeError):
    """Numerically invalid input, such as a singular matrix (torch.linalg.LinAlgError)."""

    __module__ = "ember.linalg"  # where users import it from, and how tracebacks name it


_TORCH_DTYPE_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int32": "Int", "int64": "Long",
    "float16": "Half", "float32": "Float", "float64": "Double",
}  # fmt: skip


def torch_dtype_name(dt: E.dtype) -> str:
    """The name PyTorch's messages give a dtype (Float, Long, ...)."""
    return _TORCH_DTYPE_NAMES.get(dt.name, dt.name)


def check_floating(op: str, a: Tensor, name: str = "input") -> None:
    """float32 or float64 (LAPACK's real precisions), as PyTorch's CPU linalg; any other
    dtype raises DTypeError (a RuntimeError, as PyTorch's) with PyTorch's message."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(a).__name__}")
    if a.dtype in (E.float32, E.float64):
        return
    got = _TORCH_DTYPE_NAMES.get(a.dtype.name, a.dtype.name)
    if a.dtype.is_floating_point:
        raise DTypeError(f"{op}: Low precision dtypes not supported. Got {got}")
    raise DTypeError(f"{op}: Expected a floating point or complex tensor as {name}. Got {got}")


def check_matrix(op: str, a: Tensor, name: str = "A") -> None:
    """At least two dims, floating."""
    check_floating(op, a)
    if a.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")


def check_square(op: str, a: Tensor, name: str = "A") -> None:
    """A batch of square floating matrices."""
    check_matrix(op, a, name)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{op}: {name} must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )


def failed_batches(info: Tensor) -> list[tuple[int, int]]:
    """(batch element, code) of each non-zero status (one host read)."""
    codes = info.reshape(-1).tolist()
    return [(i, code) for i, code in enumerate(codes) if code != 0]


def raise_for_info(op: str, info: Tensor, describe: str) -> None:
    """Raise LinAlgError for the first failed matrix; `describe` is formatted with {code}."""
    failures = failed_batches(info)
    if not failures:
        return
    element, code = failures[0]
    where = f"(Batch element {element}): " if info.dim() > 0 else ""
    raise LinAlgError(f"{op}: {where}{describe.format(code=code)}")
