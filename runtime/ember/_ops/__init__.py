"""All ops. Each module lists its public functions in `__all__`; they are gathered here
and re-exported by `ember`. Internal entry points that Tensor methods use are imported
by name below."""

from __future__ import annotations

import sys

from ember import _upper
from ember._ops import (
    arrangement,
    blocks,
    calculus,
    contractions,
    conversion,
    counting,
    covariance,
    creation,
    diagonal_writes,
    distances,
    einsum_equation,
    elementwise,
    histograms,
    index_writes,
    indexing,
    inplace_views,
    linalg,
    linalg_products,
    linalg_torch_names,
    memory_formats,
    names,
    norms,
    order_statistics,
    pointwise_binary,
    pointwise_math,
    predicates,
    random,
    reduction,
    reorder,
    repetition,
    sampling,
    sampling_counts,
    sampling_fills,
    sampling_gamma,
    scan_composites,
    scatter_reductions,
    searching,
    sequences,
    shape,
    sorting,
    special_elementwise,
    special_functions,
    statistics,
    strided_creation,
    triangle,
    unary,
    uniqueness,
    windows,
)
from ember._ops.arrangement import *  # noqa: F403
from ember._ops.blocks import *  # noqa: F403
from ember._ops.blocks import cumsum_, unfold
from ember._ops.calculus import *  # noqa: F403
from ember._ops.contractions import *  # noqa: F403
from ember._ops.conversion import *  # noqa: F403
from ember._ops.conversion import dlpack_device, to_dlpack, to_host_array
from ember._ops.counting import *  # noqa: F403
from ember._ops.covariance import *  # noqa: F403
from ember._ops.creation import *  # noqa: F403
from ember._ops.diagonal_writes import *  # noqa: F403
from ember._ops.diagonal_writes import fill_diagonal_
from ember._ops.distances import *  # noqa: F403
from ember._ops.einsum_equation import *  # noqa: F403
from ember._ops.elementwise import *  # noqa: F403
from ember._ops.histograms import *  # noqa: F403
from ember._ops.index_writes import *  # noqa: F403
from ember._ops.indexing import *  # noqa: F403
from ember._ops.indexing import getitem, setitem
from ember._ops.inplace_views import *  # noqa: F403
from ember._ops.linalg import *  # noqa: F403
from ember._ops.linalg_products import *  # noqa: F403
from ember._ops.linalg_torch_names import *  # noqa: F403
from ember._ops.memory_formats import *  # noqa: F403
from ember._ops.norms import *  # noqa: F403
from ember._ops.order_statistics import *  # noqa: F403
from ember._ops.pointwise_binary import *  # noqa: F403
from ember._ops.pointwise_math import *  # noqa: F403
from ember._ops.predicates import *  # noqa: F403
from ember._ops.random import *  # noqa: F403
from ember._ops.reduction import *  # noqa: F403
from ember._ops.reorder import *  # noqa: F403
from ember._ops.repetition import *  # noqa: F403
from ember._ops.sampling import *  # noqa: F403
from ember._ops.sampling_counts import *  # noqa: F403
from ember._ops.sampling_fills import *  # noqa: F403
from ember._ops.sampling_gamma import *  # noqa: F403
from ember._ops.scan_composites import *  # noqa: F403
from ember._ops.scan_composites import cumprod_
from ember._ops.scatter_reductions import *  # noqa: F403
from ember._ops.searching import *  # noqa: F403
from ember._ops.sequences import *  # noqa: F403
from ember._ops.shape import *  # noqa: F403
from ember._ops.sorting import *  # noqa: F403
from ember._ops.special_elementwise import *  # noqa: F403
from ember._ops.special_functions import *  # noqa: F403
from ember._ops.statistics import *  # noqa: F403
from ember._ops.strided_creation import *  # noqa: F403
from ember._ops.triangle import *  # noqa: F403
from ember._ops.unary import *  # noqa: F403
from ember._ops.uniqueness import *  # noqa: F403
from ember._ops.windows import *  # noqa: F403
from ember.autograd import _api as _autograd_api

__all__: list[str] = []
__all__ += conversion.__all__
__all__ += creation.__all__
__all__ += elementwise.__all__
__all__ += indexing.__all__
__all__ += linalg.__all__
__all__ += memory_formats.__all__
__all__ += linalg_products.__all__
__all__ += linalg_torch_names.__all__
__all__ += norms.__all__
__all__ += random.__all__
__all__ += sampling.__all__
__all__ += sampling_counts.__all__
__all__ += sampling_fills.__all__
__all__ += sampling_gamma.__all__
__all__ += reduction.__all__
__all__ += shape.__all__
__all__ += sorting.__all__
__all__ += statistics.__all__
__all__ += unary.__all__
__all__ += arrangement.__all__
__all__ += einsum_equation.__all__
__all__ += repetition.__all__
__all__ += reorder.__all__
__all__ += scan_composites.__all__
__all__ += triangle.__all__
__all__ += blocks.__all__
__all__ += diagonal_writes.__all__
__all__ += order_statistics.__all__
__all__ += uniqueness.__all__
__all__ += covariance.__all__
__all__ += distances.__all__
__all__ += calculus.__all__
__all__ += sequences.__all__
__all__ += windows.__all__
__all__ += scatter_reductions.__all__
__all__ += index_writes.__all__
__all__ += counting.__all__
__all__ += histograms.__all__
__all__ += searching.__all__
__all__ += strided_creation.__all__
__all__ += inplace_views.__all__
__all__ += special_functions.__all__
__all__ += special_elementwise.__all__
__all__ += ["cumprod_", "cumsum_", "fill_diagonal_", "unfold"]
__all__ += pointwise_math.__all__ + pointwise_binary.__all__ + predicates.__all__
__all__ += ["dlpack_device", "getitem", "names", "setitem", "to_dlpack", "to_host_array"]

__all__ += contractions.__all__
# The tensor layer and autograd, below this package, reach ops through `ember._upper`.
_upper.bind(sys.modules[__name__], _autograd_api)
