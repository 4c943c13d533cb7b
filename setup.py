"""Builds ember's two small C extensions: `_cstorage`, the Storage type's allocation and free
paths with the per-op tensor paths (`_ctensor.c`), and `_cdispatch`, the fast path of a
custom op's call.

Everything else about the package (metadata, dependencies, package data) is in
pyproject.toml; setuptools reads only the extension from here.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            f"ember.{name}",
            [f"runtime/ember/{source}.c" for source in sources],
            depends=["runtime/ember/_cslots.h", "runtime/ember/_cstorage.h"],
            extra_compile_args=["-O2"],
        )
        for name, sources in (
            ("_cstorage", ("_cstorage", "_ctensor")),
            ("_cdispatch", ("_cdispatch",)),
        )
    ]
)
