"""Builds ember_cpu._kernels, the cffi extension holding every CPU kernel."""

from setuptools import setup

setup(cffi_modules=["ember_cpu/_build.py:ffibuilder"])
