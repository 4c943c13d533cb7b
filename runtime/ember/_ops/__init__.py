"""All ops. Each module lists its public functions in `__all__`; they are gathered here
and re-exported by `ember`. Internal entry points that Tensor methods use are imported
by name below."""

from __future__ import annotations

from ember._ops import names
from ember._ops.conversion import *  # noqa: F403
from ember._ops.conversion import __all__ as _conversion_all
from ember._ops.conversion import dlpack_device, to_dlpack, to_host_array
from ember._ops.creation import *  # noqa: F403
from ember._ops.creation import __all__ as _creation_all
from ember._ops.elementwise import *  # noqa: F403
from ember._ops.elementwise import __all__ as _elementwise_all
from ember._ops.indexing import *  # noqa: F403
from ember._ops.indexing import __all__ as _indexing_all
from ember._ops.indexing import getitem, setitem
from ember._ops.linalg import *  # noqa: F403
from ember._ops.linalg import __all__ as _linalg_all
from ember._ops.random import *  # noqa: F403
from ember._ops.random import __all__ as _random_all
from ember._ops.reduction import *  # noqa: F403
from ember._ops.reduction import __all__ as _reduction_all
from ember._ops.shape import *  # noqa: F403
from ember._ops.unary import *  # noqa: F403
from ember._ops.unary import __all__ as _unary_all
from ember._ops.shape import __all__ as _shape_all

__all__ = [
    *_conversion_all,
    *_creation_all,
    *_elementwise_all,
    *_indexing_all,
    *_linalg_all,
    *_random_all,
    *_reduction_all,
    *_shape_all,
    *_unary_all,
]

__all__ += ["dlpack_device", "getitem", "names", "setitem", "to_dlpack", "to_host_array"]
