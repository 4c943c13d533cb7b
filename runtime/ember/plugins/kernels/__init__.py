"""Kernel sources that several devices share, in Ember's portable dialect (`em_dialect.h`).

What two devices would both write belongs in the runtime: the algorithm of a hand-written
kernel (Philox's random streams, an index gather, a pooling window) is written here once,
as element functions in C99 that also compile as OpenCL C and CUDA C, and each device puts
its own loop or launch around them. A C compiler gets `DIR` as an include directory; a
compiler that takes one string (OpenCL, NVRTC) gets `source(...)`, the dialect followed
by the named files with their `#include "..."` lines of this folder resolved.

A device build that runs from a source tree before `ember` is installed finds this folder
at `runtime/ember/plugins/kernels` (see ember_cpu._build).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Final

__all__ = ["DIALECT", "DIR", "source"]

#: The folder of the shared sources (an include directory for C compilers).
DIR: Final = Path(__file__).resolve().parent
#: The dialect header's file name; every shared source includes it.
DIALECT: Final = "em_dialect.h"
_INCLUDE: Final = re.compile(r'^#include "([^"]+)"\s*$', re.MULTILINE)


@cache
def source(*names: str) -> str:
    """The named files of this folder as one text, each local include inlined once."""
    seen: set[str] = set()

    def inline(name: str) -> str:
        if name in seen:
            return ""
        seen.add(name)
        text = (DIR / name).read_text()
        return _INCLUDE.sub(lambda m: inline(m.group(1)), text)

    return "".join(inline(name) for name in (DIALECT, *names))
