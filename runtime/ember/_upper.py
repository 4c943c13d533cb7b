"""The ops package and the autograd API, for the layers below them.

The tensor's methods and autograd compute with ops (`t + u`, accumulating a gradient),
yet they sit below the ops layer, which imports them: ops create tensors and record the
graph. So nothing below ops imports it. Instead the ops package, once imported, binds
itself and the autograd API here (`bind`, called at the end of `ember._ops`), the way
plugins register kernels into the dispatcher below them. Every tensor is made by an op,
so the binding precedes any call through it. Callers read `_upper.ops.add`: one module
attribute more than a direct import, and no import at call time.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["autograd", "bind", "ops"]

if TYPE_CHECKING:
    from ember import _ops as ops
    from ember.autograd import _api as autograd
else:
    ops = autograd = None  # bound by `bind`


def bind(ops_package: ModuleType, autograd_api: ModuleType) -> None:
    """Make `ember._ops` and `ember.autograd._api` reachable as `ops` and `autograd`."""
    global ops, autograd
    ops, autograd = ops_package, autograd_api
