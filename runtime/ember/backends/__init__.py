"""`ember.backends`: PyTorch's backend switches, answered from what is installed here.

`cuda.matmul.allow_tf32` and friends are settable flags, mirrored onto
`ember.get_float32_matmul_precision()` as PyTorch does. Ember's cuda device compiles its
own NVRTC kernels in full float32 (no cuBLAS/cuDNN), so these flags are recorded for
scripts to read and set, and do not change any result today. `cudnn` reports not available:
Ember never links cuDNN. `openmp` answers whether the cpu device's kernels
were built with OpenMP; `mkldnn`/`mps`/`opt_einsum` answer False because Ember has none of
them.
"""

from __future__ import annotations

from ember.backends import cpu, cuda, cudnn, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp", "opt_einsum"]
