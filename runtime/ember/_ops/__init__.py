"""All ops. Each module lists its public functions in `__all__`; they are gathered here
and re-exported by `ember`. Internal entry points that Tensor methods use are imported
by name below."""

from __future__ import annotations

import sys

from ember import _upper
from ember._ops import (
    conversion,
    creation,
    elementwise,
    indexing,
    linalg,
    names,
    random,
    reduction,
    shape,
    sorting,
    statistics,
    unary,
)
from ember._ops.conversion import *  # noqa: F403
from ember._ops.conversion import dlpack_device, to_dlpack, to_host_array
from ember._ops.creation import *  # noqa: F403
from ember._ops.elementwise import *  # noqa: F403
from ember._ops.indexing import *  # noqa: F403
from ember._ops.indexing import getitem, setitem
from ember._ops.linalg import *  # noqa: F403
from ember._ops.random import *  # noqa: F403
from ember._ops.reduction import *  # noqa: F403
from ember._ops.shape import *  # noqa: F403
from ember._ops.sorting import *  # noqa: F403
from ember._ops.statistics import *  # noqa: F403
from ember._ops.unary import *  # noqa: F403
from ember.autograd import _api as _autograd_api

__all__: list[str] = []
__all__ += conversion.__all__
__all__ += creation.__all__
__all__ += elementwise.__all__
__all__ += indexing.__all__
__all__ += linalg.__all__
__all__ += random.__all__
__all__ += reduction.__all__
__all__ += shape.__all__
__all__ += sorting.__all__
__all__ += statistics.__all__
__all__ += unary.__all__
__all__ += ["dlpack_device", "getitem", "names", "setitem", "to_dlpack", "to_host_array"]

# The tensor layer and autograd, below this package, reach ops through `ember._upper`.
_upper.bind(sys.modules[__name__], _autograd_api)
