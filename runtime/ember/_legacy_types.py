"""PyTorch's legacy tensor types: `torch.FloatTensor(2, 3)`, `torch.LongTensor([1, 2])`,
`isinstance(x, torch.FloatTensor)`.

Each is a constructor of cpu tensors of one dtype and an isinstance check matching a
tensor of that dtype on the cpu, which is what these names mean in PyTorch (the cuda ones
live in `torch.cuda`, where Ember has no legacy types).
"""

from __future__ import annotations

from typing import Any

from ember import _dtype as dtypes
from ember._ops import creation
from ember._tensor import Tensor
from ember._tensor_surface import type_name

__all__ = [
    "BFloat16Tensor",
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor",
    "IntTensor", "LongTensor",
]  # fmt: skip

_CPU = "cpu"


class tensortype(type):
    """The metaclass of the legacy types (torch.tensortype)."""

    dtype: dtypes.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == _CPU

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        """Sizes make uninitialised memory; one sequence or tensor is data to copy."""
        if device is not None and creation.resolve_device(device).type != _CPU:
            raise RuntimeError(
                f"{cls.__name__}: legacy constructor expects device type: cpu but device "
                f"type: {creation.resolve_device(device).type} was passed"
            )
        if not args:
            return creation.empty(0, dtype=cls.dtype, device=_CPU)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return creation.empty(args, dtype=cls.dtype, device=_CPU)
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(device=_CPU, dtype=cls.dtype)
        if len(args) == 1:
            return creation.tensor(args[0], dtype=cls.dtype, device=_CPU)
        raise TypeError(f"{cls.__name__}(): expected sizes or one sequence, got {args!r}")

    def __repr__(cls) -> str:
        return f"<class '{type_name(cls.dtype, _CPU)}'>"


def _legacy(name: str, dt: dtypes.dtype) -> tensortype:
    kind = tensortype(name, (), {"dtype": dt, "__module__": "ember"})
    return kind


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dtypes.bfloat16)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
CharTensor = _legacy("CharTensor", dtypes.int8)
IntTensor = _legacy("IntTensor", dtypes.int32)
LongTensor = _legacy("LongTensor", dtypes.int64)
BoolTensor = _legacy("BoolTensor", dtypes.bool)
