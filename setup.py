"""Builds ember's two small C extensions: `_cstorage`, the Storage type's allocation and free
paths, and `_cdispatch`, the fast path of a custom op's call.

Everything else about the package (metadata, dependencies, package data) is in
pyproject.toml; setuptools reads only the extension from here.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("ember._cstorage", ["runtime/ember/_cstorage.c"], extra_compile_args=["-O2"]),
        Extension("ember._cdispatch", ["runtime/ember/_cdispatch.c"], extra_compile_args=["-O2"]),
    ]
)
