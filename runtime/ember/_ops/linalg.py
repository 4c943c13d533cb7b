"""Matrix products: bmm (a primitive), mm (a composite: bmm over a batch of one, unless
the device has its own mm kernel) and matmul, which PyTorch-style dispatches 1-D, 2-D and
batched operands onto them."""

from __future__ import annotations

import warnings
from typing import Any, Final

from ember import _autocast, _dtype
from ember._dispatch import Kernel, kernel_for
from ember._errors import DTypeError
from ember._ops import conversion as conv
from ember._ops import linalg_formulas as formulas
from ember._ops import names
from ember._ops import shape as shape_ops
from ember._ops._meta import broadcast_shapes, same_device
from ember._plan import MatmulPlan
from ember._storage import Storage
from ember._tensor import Tensor, contiguous_strides, empty_tensor
from ember.autograd._graph import needs_grad, record

__all__ = ["bmm", "launch_product", "matmul", "mm", "plan_for"]

Shape = tuple[int, ...]

# PyTorch prints C++ type names in its matrix-product dtype errors.
_CPP_NAMES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int32": "int",
    "int64": "long int",
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "bfloat16": "c10::BFloat16",
}


def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product of two 2-D tensors of the same dtype."""
    if _autocast._active and not _autocast.STATE.suspended:
        return _autocast.call("mm", mm, input, mat2, out=out)
    a, b = input, mat2
    if len(a._shape) != 2:
        raise RuntimeError(f"self must be a matrix, got a {len(a._shape)}-D tensor")
    if len(b._shape) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got a {len(b._shape)}-D tensor")
    _inner_size(a, b)
    _check_operands("mm", a, b)
    return _mm(a, b, out)


def _mm(a: Tensor, b: Tensor, out: Tensor | None) -> Tensor:
    """mm of checked matrices."""
    shape = (a._shape[0], b._shape[1])
    if a._autograd is None and b._autograd is None:
        return _product(a, b, shape, out, "mm")
    grad = _check_grad_out("mm", a, b, out)
    result = _product(a, b, shape, out, "mm")
    return _record("MmBackward", formulas.mm_backward, a, b, result) if grad else result


def _inner_size(a: Tensor, b: Tensor) -> None:
    """Check that matrices a and b can be multiplied."""
    (m, k), (k2, n) = a._shape, b._shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")


def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Batched matrix product of two 3-D tensors with equal batch sizes."""
    if _autocast._active and not _autocast.STATE.suspended:
        return _autocast.call("bmm", bmm, input, mat2, out=out)
    a, b = input, mat2
    if len(a._shape) != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got a {len(a._shape)}-D tensor")
    if len(b._shape) != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got a {len(b._shape)}-D tensor")
    (batch, m, k), (batch2, k2, n) = a._shape, b._shape
    if batch2 != batch or k2 != k:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] "
            f"but got: [{batch2}, {k2}]."
        )
    _check_operands("bmm", a, b)
    if a._autograd is None and b._autograd is None:
        return _product(a, b, (batch, m, n), out, "bmm")
    grad = _check_grad_out("bmm", a, b, out)
    result = _product(a, b, (batch, m, n), out, "bmm")
    return _record("BmmBackward", formulas.bmm_backward, a, b, result) if grad else result


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product with NumPy's rules: 1-D operands and broadcast batch dims."""
    if _autocast._active and not _autocast.STATE.suspended:
        return _autocast.call("matmul", matmul, input, other, out=out)
    a, b = input, other
    da, db = len(a._shape), len(b._shape)
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    _check_operands("matmul", a, b)
    _check_grad_out("matmul", a, b, out)
    if da == 2 and db == 2:
        _inner_size(a, b)
        return _mm(a, b, out)
    if da == 1 and db == 1:
        result = _dot(a, b)
    elif da <= 2 and db <= 2:
        result = _matrix_vector(a, b)
    elif db <= 2 and _folds(a):
        result = _folded(a, b)
    else:
        result = _batched(a, b)
    if out is None:
        return result
    _prepare_out(out, result._shape, result._dtype, result._device, "matmul")
    return conv.copy_(out, result)


# -- matmul's cases -----------------------------------------------------------------------------


def _dot(a: Tensor, b: Tensor) -> Tensor:
    if a._shape != b._shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._shape[0]}] and src "
            f"[{b._shape[0]}] to have the same number of elements, but got "
            f"{a._shape[0]} and {b._shape[0]} elements respectively"
        )
    product = mm(shape_ops.unsqueeze(a, 0), shape_ops.unsqueeze(b, 1))
    return shape_ops.reshape(product, ())


def _matrix_vector(a: Tensor, b: Tensor) -> Tensor:
    """(n, k) @ (k,) and (k,) @ (k, p): a 1-D operand becomes a matrix, then goes away."""
    if len(a._shape) == 1:
        return shape_ops.squeeze(mm(shape_ops.unsqueeze(a, 0), b), 0)
    return shape_ops.squeeze(mm(a, shape_ops.unsqueeze(b, 1)), 1)


def _folds(a: Tensor) -> bool:
    """Whether a's leading dims merge into one without a copy (PyTorch's should_fold)."""
    shape, strides = a._shape, a._strides
    if 0 in shape:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded(a: Tensor, b: Tensor) -> Tensor:
    """(..., n, k) @ (k, p) or (k,) as one mm over the stacked rows of a."""
    rows = shape_ops.reshape(a, (-1, a._shape[-1]))
    if len(b._shape) == 1:
        product = mm(rows, shape_ops.unsqueeze(b, 1))
        return shape_ops.reshape(product, a._shape[:-1])
    product = mm(rows, b)
    return shape_ops.reshape(product, (*a._shape[:-1], b._shape[1]))


def _batched(a: Tensor, b: Tensor) -> Tensor:
    """Broadcast the batch dims, flatten them into one and call bmm."""
    left = a if len(a._shape) > 1 else shape_ops.unsqueeze(a, 0)
    right = b if len(b._shape) > 1 else shape_ops.unsqueeze(b, 1)
    n, p = left._shape[-2], right._shape[-1]
    batch = broadcast_shapes("matmul", left._shape[:-2], right._shape[:-2])
    count = 1
    for size in batch:
        count *= size
    product = bmm(_as_batch(left, batch, count), _as_batch(right, batch, count))
    # reshape of bmm's contiguous output is a view; it also drops a 1-D operand's dim.
    rows = (n,) if len(a._shape) > 1 else ()
    columns = (p,) if len(b._shape) > 1 else ()
    return shape_ops.reshape(product, (*batch, *rows, *columns))


def _as_batch(t: Tensor, batch: Shape, count: int) -> Tensor:
    """t broadcast to batch + its matrix dims, then viewed (or copied) as one batch dim."""
    matrix = t._shape[-2:]
    if t._shape[:-2] != batch:
        t = shape_ops.expand(t, (*batch, *matrix))
    return shape_ops.reshape(t, (count, *matrix))


# -- shared checks, recording and output handling --------------------------------------------


def _check_grad_out(op: str, a: Tensor, b: Tensor, out: Tensor | None) -> bool:
    """Whether the product records the graph (never with `out=`, as in PyTorch)."""
    if a._autograd is None and b._autograd is None:
        return False
    grad = needs_grad(a, b)
    if grad and out is not None:
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    return grad


def _record(name: str, formula: Any, a: Tensor, b: Tensor, result: Tensor) -> Tensor:
    needs_a, needs_b = (x._autograd is not None and x._autograd.requires_grad for x in (a, b))
    # dA reads B and dB reads A: save only what a needed gradient reads.
    save = ([b] if needs_a else []) + ([a] if needs_b else [])
    return record(name, formula, (a, b), result, save, ctx=(needs_a, needs_b))


def _check_operands(op: str, a: Tensor, b: Tensor) -> None:
    same_device(op, a, b)
    if a._dtype is not b._dtype:
        raise DTypeError(
            f"expected m1 and m2 to have the same dtype, but got: "
            f"{_CPP_NAMES[a._dtype.name]} != {_CPP_NAMES[b._dtype.name]}"
        )
    if a._dtype is _dtype.bool:
        raise DTypeError(f"{op}: not implemented for 'Bool'")


def launch_product(out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """out = a @ b for 2-D (mm) or 3-D (bmm) operands, through the device's kernel.

    The meta step has checked the operands; `out` is contiguous, of the product's shape,
    and shares memory with neither operand. Empty products never reach a kernel.
    """
    key = (
        a._shape, b._shape, out._strides, a._strides, b._strides, out._offset, a._offset,
        b._offset, a._dtype,
    )  # fmt: skip
    plan = _PLANS.get(key)
    if plan is None:  # a new layout: only these can be empty
        if 0 in out._shape:
            return out
        if a._shape[-1] == 0:
            return conv.fill_(out, 0)
        plan = plan_for(out, a, b)
        if len(_PLANS) < _CACHE_LIMIT:
            _PLANS[key] = plan
    kernel = _kernel(len(a._shape) == 2, a._device, a._dtype)
    kernel(out._storage, a._storage, b._storage, plan)
    return out


# Plans of the layouts a program repeats, by layout: the key costs a fraction of building
# a plan. Bounded like the other plan caches (_launch.py).
_CACHE_LIMIT: Final = 4096
_PLANS: dict[tuple[object, ...], MatmulPlan] = {}


def plan_for(out: Tensor, a: Tensor, b: Tensor) -> MatmulPlan:
    """The plan of out = a @ b (2-D or 3-D operands, none empty)."""
    if len(a._shape) == 2:  # an mm: a batch of one
        batch, strides = 1, ((0, *out._strides), (0, *a._strides), (0, *b._strides))
    else:
        batch, strides = a._shape[0], (out._strides, a._strides, b._strides)
    m, k = a._shape[-2:]
    dt = a._dtype
    offsets = (out._offset, a._offset, b._offset)
    return MatmulPlan(batch, m, b._shape[-1], k, strides, offsets, (dt, dt, dt))


def _kernel(mm: bool, dev: Any, dt: _dtype.dtype) -> Kernel:
    """bmm's kernel, or for an mm the device's own mm kernel if it has one (bmm's runs an
    mm's plan, a batch of one: mm is a composite)."""
    if mm:
        fn = names.MM.kernels.get(dev.type)
        if fn is not None:
            return fn
    return kernel_for(names.BMM, dev, dt)  # a device with neither fails naming bmm


def _product(a: Tensor, b: Tensor, shape: Shape, out: Tensor | None, name: str) -> Tensor:
    if out is None:
        return launch_product(empty_tensor(shape, a._dtype, a._device), a, b)
    _prepare_out(out, shape, a._dtype, a._device, name)
    # The kernel writes a contiguous output that it does not read from; anything else
    # (a strided out, or one that shares memory with an operand) goes through a temporary.
    if out._contiguous and out._storage is not a._storage and out._storage is not b._storage:
        launch_product(out, a, b)
        out._storage.version += 1
        return out
    result = launch_product(empty_tensor(shape, a._dtype, a._device), a, b)
    return conv.copy_(out, result)


def _prepare_out(out: Tensor, shape: Shape, dt: _dtype.dtype, dev: object, op: str) -> None:
    """Check `out` like PyTorch, resizing it when its shape differs."""
    if out._dtype is not dt:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_CPP_NAMES[dt.name]}, but got "
            f"{_CPP_NAMES[out._dtype.name]} instead"
        )
    if out._device is not dev:
        raise RuntimeError(f"{op}: out is on {out._device} but the operands are on {dev}")
    if out._shape == shape:
        return
    if out.numel() != 0:
        warnings.warn(
            f"{op}: an output with one or more elements was resized since it had shape "
            f"{list(out._shape)}, which does not match the required output shape "
            f"{list(shape)}. Pass an out tensor of the right shape or with zero elements.",
            UserWarning,
            stacklevel=3,
        )
    n = 1
    for size in shape:
        n *= size
    out._storage = Storage(out._device, n * dt.itemsize)
    out._offset = 0
    out._shape = shape
    out._strides = contiguous_strides(shape)
    out._contiguous = True
