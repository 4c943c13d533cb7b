"""The Tensor: a strided view (storage, offset, shape, strides, dtype, device).

`Tensor` is `TensorCore` (slots and metadata, `_tensor_core.py`) plus one mixin per method
family, each in its own module: autograd, host reads, operators, elementwise math,
reductions, shape and views, conversion. Every computation is an op of `ember._ops`, which
sits above this layer and is reached through `ember._upper` (see docs/architecture.md,
"Layers"). The factories below build tensors without `__init__`: they are the allocation
fast path of every op.
"""

from __future__ import annotations

from typing import Any

from ember import _dtype as dtypes
from ember import _upper
from ember._cstorage import configure_tensor, empty_tensor, make_view
from ember._storage import Storage
from ember._tensor_arithmetic import ArithmeticMethods
from ember._tensor_autograd import AutogradMethods
from ember._tensor_conversion import ConversionMethods
from ember._tensor_core import (
    _LAYOUT_CACHE,
    Shape,
    Size,
    TensorCore,
    contiguous_layout,
    contiguous_strides,
    is_contiguous,
)
from ember._tensor_host import HostMethods
from ember._tensor_inplace_views import InplaceViewMethods
from ember._tensor_math import MathMethods
from ember._tensor_pointwise import PointwiseMethods
from ember._tensor_pointwise_binary import PointwiseBinaryMethods
from ember._tensor_reductions import ReductionMethods
from ember._tensor_sampling import SamplingMethods
from ember._tensor_selection import SelectionMethods
from ember._tensor_shape import ShapeMethods
from ember._tensor_sorting import SortingMethods
from ember._tensor_special import SpecialMethods
from ember._tensor_structure import StructureMethods
from ember._tensor_surface import SurfaceMethods

__all__ = ["Size", "Tensor", "contiguous_strides", "empty_tensor", "make_view", "wrap_storage"]


class Tensor(
    ArithmeticMethods,
    MathMethods,
    ReductionMethods,
    ShapeMethods,
    StructureMethods,
    SortingMethods,
    SelectionMethods,
    SamplingMethods,
    SpecialMethods,
    ConversionMethods,
    SurfaceMethods,
    InplaceViewMethods,
    HostMethods,
    AutogradMethods,
    PointwiseMethods,
    PointwiseBinaryMethods,
    TensorCore,
):
    """An n-dimensional array on a device, with PyTorch's names and semantics."""

    __slots__ = ()

    # These build views, which need the final class (make_view), so they live here.
    def detach(self) -> Tensor:
        return make_view(self, self._offset, self._shape, self._strides)

    @property
    def data(self) -> Tensor:
        """This tensor's values outside autograd (a view sharing storage)."""
        return make_view(self, self._offset, self._shape, self._strides)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._storage = value._storage
        self._offset = value._offset
        self._shape = value._shape
        self._strides = value._strides
        self._dtype = value._dtype
        self._device = value._device
        self._contiguous = value._contiguous

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        found = memo.get(id(self))
        if found is not None:
            return found
        result = _upper.ops.clone(self.detach())
        if self.requires_grad:
            result.requires_grad_(True)
        memo[id(self)] = result
        return result


_new_tensor = object.__new__


# `empty_tensor(shape, dt, dev)`, a new contiguous tensor over fresh memory (the allocation
# fast path of every op result), is C (_cstorage.c): it is `object.__new__(Tensor)` and
# eight slot stores, which cost ~0.5 us in Python.
configure_tensor(Tensor, _LAYOUT_CACHE, contiguous_layout)


# `make_view(base, offset, shape, strides)`, a tensor sharing `base`'s storage with new
# geometry and no autograd metadata (every view op's result), is C too (_ctensor.c): the
# eight slot stores and the contiguity loop cost ~2 us in Python.


def wrap_storage(
    storage: Storage, offset: int, shape: Shape, strides: Shape, dt: dtypes.dtype
) -> Tensor:
    """A tensor over an existing storage."""
    t: Tensor = _new_tensor(Tensor)
    t._storage = storage
    t._offset = offset
    t._shape = shape
    t._strides = strides
    t._dtype = dt
    t._device = storage.device
    t._contiguous = is_contiguous(shape, strides)
    t._autograd = None
    return t
