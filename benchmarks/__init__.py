"""Ember, PyTorch and NumPy side by side on the same inputs and thread counts.

Run with `make bench` or `python -m benchmarks --help`; see benchmarks/README.md.
"""

from __future__ import annotations

__all__: list[str] = []
