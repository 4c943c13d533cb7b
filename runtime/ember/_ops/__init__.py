"""All ops. Each module lists its public functions in `__all__`; they are gathered here
and re-exported by `ember`. Internal entry points that Tensor methods use are imported
by name below."""

from __future__ import annotations

import sys

from ember import _upper
from ember._ops import (
    arrangement,
    blocks,
    conversion,
    creation,
    diagonal_writes,
    einsum_equation,
    elementwise,
    indexing,
    linalg,
    linalg_products,
    memory_formats,
    names,
    norms,
    random,
    reduction,
    reorder,
    repetition,
    sampling,
    scan_composites,
    shape,
    sorting,
    special_elementwise,
    special_functions,
    statistics,
    triangle,
    unary,
)
from ember._ops.arrangement import *  # noqa: F403
from ember._ops.blocks import *  # noqa: F403
from ember._ops.blocks import cumsum_, unfold
from ember._ops.conversion import *  # noqa: F403
from ember._ops.conversion import dlpack_device, to_dlpack, to_host_array
from ember._ops.creation import *  # noqa: F403
from ember._ops.diagonal_writes import *  # noqa: F403
from ember._ops.diagonal_writes import fill_diagonal_
from ember._ops.einsum_equation import *  # noqa: F403
from ember._ops.elementwise import *  # noqa: F403
from ember._ops.indexing import *  # noqa: F403
from ember._ops.indexing import getitem, setitem
from ember._ops.linalg import *  # noqa: F403
from ember._ops.linalg_products import *  # noqa: F403
from ember._ops.memory_formats import *  # noqa: F403
from ember._ops.norms import *  # noqa: F403
from ember._ops.random import *  # noqa: F403
from ember._ops.reduction import *  # noqa: F403
from ember._ops.reorder import *  # noqa: F403
from ember._ops.repetition import *  # noqa: F403
from ember._ops.sampling import *  # noqa: F403
from ember._ops.scan_composites import *  # noqa: F403
from ember._ops.scan_composites import cumprod_
from ember._ops.shape import *  # noqa: F403
from ember._ops.sorting import *  # noqa: F403
from ember._ops.special_elementwise import *  # noqa: F403
from ember._ops.special_functions import *  # noqa: F403
from ember._ops.statistics import *  # noqa: F403
from ember._ops.triangle import *  # noqa: F403
from ember._ops.unary import *  # noqa: F403
from ember.autograd import _api as _autograd_api

__all__: list[str] = []
__all__ += conversion.__all__
__all__ += creation.__all__
__all__ += elementwise.__all__
__all__ += indexing.__all__
__all__ += linalg.__all__
__all__ += memory_formats.__all__
__all__ += linalg_products.__all__
__all__ += norms.__all__
__all__ += random.__all__
__all__ += sampling.__all__
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
__all__ += special_functions.__all__
__all__ += special_elementwise.__all__
__all__ += ["cumprod_", "cumsum_", "fill_diagonal_", "unfold"]
__all__ += ["dlpack_device", "getitem", "names", "setitem", "to_dlpack", "to_host_array"]

# The tensor layer and autograd, below this package, reach ops through `ember._upper`.
_upper.bind(sys.modules[__name__], _autograd_api)
