"""Kernels that receive tensors: arange, indexing, im2col/col2im, random fills.

A numpy:0 tensor's `.numpy(force=True)` is a writable view of its memory (the device is
host-accessible), so each kernel is NumPy on such views. Random fills follow the cpu
device's spec (csrc/random.c), with its fmas computed in float64 (docs/plugins).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

import ember
from ember.plugins import ops
from ember.plugins.sdk import Tensor

Pair = tuple[int, int]
U32, U64, F32, F64 = np.uint64(32), np.uint64, np.float32, np.float64
Words = list[np.ndarray]


def _np(t: Tensor) -> np.ndarray:
    """t's elements in place; a 0-d tensor as one element."""
    return t.numpy(force=True).reshape(1) if t.dim() == 0 else t.numpy(force=True)


def _set(out: Tensor, values: Any) -> None:
    np.copyto(_np(out), values, casting="unsafe")


def _gather(out: Tensor, a: Tensor, dim: int, index: Tensor) -> None:
    """out[p] = a[p with dim -> index[p]]."""
    at: list[Any] = list(np.indices(_np(index).shape, sparse=True))
    at[dim] = _np(index)
    _set(out, _np(a)[tuple(at)])


def _index_put(target: Tensor, index: Tensor, values: Tensor, accumulate: bool) -> None:
    """target.flatten()[index] = values, or += with accumulate (duplicates add up)."""
    t, at = _np(target), np.unravel_index(_np(index), _np(target).shape)
    np.add.at(t, at, _np(values)) if accumulate else t.__setitem__(at, _np(values))


def _windows(x: np.ndarray, cols: Tensor, s: Pair, p: Pair, d: Pair) -> tuple[Any, Any]:
    """x padded as far as cols' windows reach, and that frame viewed as cols' windows."""
    k, hw = cols.shape[2:4], cols.shape[4:]
    size = [max((hw[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1, p[i] + x.shape[2 + i]) for i in (0, 1)]
    frame = np.zeros((*x.shape[:2], *size), x.dtype)
    frame[:, :, p[0] : p[0] + x.shape[2], p[1] : p[1] + x.shape[3]] = x
    sn, sc, sh, sw = frame.strides
    strides = (sn, sc, d[0] * sh, d[1] * sw, s[0] * sh, s[1] * sw)
    return frame, as_strided(frame, tuple(cols.shape), strides)


def _col2im(x: Tensor, cols: Tensor, s: Pair, p: Pair, d: Pair) -> None:
    """x = at each pixel, the sum of the cols elements that im2col reads from it."""
    image, columns = _np(x), _np(cols)
    frame, windows = _windows(np.zeros_like(image), cols, s, p, d)
    for i, j in np.ndindex(*cols.shape[2:4]):  # one window position: no two overlap
        windows[:, :, i, j] += columns[:, :, i, j]
    _set(x, frame[:, :, p[0] : p[0] + image.shape[2], p[1] : p[1] + image.shape[3]])


# -- random fills ------------------------------------------------------------------------


def philox(count: int, seed: int, offset: int) -> Words:
    """Philox4x32-10 of the counters offset .. offset+count-1: four uint64 arrays of words."""
    counter, mask = np.arange(count, dtype=U64) + U64(offset % 2**64), U64(0xFFFFFFFF)
    x, k0, k1 = [counter & mask, counter >> U32, 0 * counter, 0 * counter], seed, seed >> 32
    for round_ in range(10):
        if round_:
            k0, k1 = k0 + 0x9E3779B9, k1 + 0xBB67AE85
        p0, p1 = x[0] * U64(0xD2511F53), x[2] * U64(0xCD9E8D57)
        high0, high1 = U64(k0 & 0xFFFFFFFF), U64(k1 & 0xFFFFFFFF)
        x = [(p1 >> U32) ^ x[1] ^ high0, p1 & mask, (p0 >> U32) ^ x[3] ^ high1, p0 & mask]
    return x


def _unit(x: Words, i: int, dt: Any, plus: int = 0) -> np.ndarray:
    """dt's significand of top bits of words i (and i + 1), in [0, 1) (+ ulp: in (0, 1])."""
    if dt == F64:
        return ((((x[i] << U32) | x[i + 1]) >> U64(11)) + U64(plus)).astype(F64) * 2.0**-53
    bits = 11 if dt == np.float16 else 8 if np.dtype(dt).name == "bfloat16" else 24
    return ((x[i] >> U64(32 - bits)) + U64(plus)).astype(F32) * F32(2.0**-bits)


def _uniform(x: Words, dt: np.dtype, low: float, high: float) -> np.ndarray:
    c = F64 if dt == F64 else F32  # the spec's computation type
    return (_unit(x, 0, dt).astype(F64) * F64(c(high) - c(low)) + c(low)).astype(c)


def _normal(x: Words, dt: np.dtype, mean: float, std: float) -> np.ndarray:
    c = F64 if dt == F64 else F32
    u1, u2 = _unit(x, 0, c, 1), _unit(x, 2 if c is F64 else 1, c)
    z = np.sqrt(c(-2.0) * np.log(u1)) * np.cos(c(2 * np.pi) * u2)
    return (F64(c(std)) * z + c(mean)).astype(c)


def _integers(x: Words, dt: np.dtype, low: int, high: int) -> np.ndarray:
    key, span = (x[0] << U32) | x[1], U64((high - low) % 2**64)
    return ((key % span if span else key) + U64(low % 2**64)).view(np.int64)  # span 0: 2**64


def _fill(draw: Callable[[Words, np.dtype, Any, Any], np.ndarray]) -> Callable[..., None]:
    def kernel(t: Tensor, a: Any, b: Any, seed: int, offset: int) -> None:
        values = draw(philox(t.numel(), seed, offset), t.dtype.numpy, a, b)
        _set(t, values.reshape(_np(t).shape))

    return kernel


def randperm_(out: Tensor, seed: int, offset: int) -> None:
    """out = the stable argsort of n random unsigned 64-bit keys."""
    keys = _integers(philox(out.numel(), seed, offset), out.dtype.numpy, 0, 2**64)
    _set(out, np.argsort(keys.view(U64), kind="stable"))


KERNELS: dict[str, Callable[..., Any]] = {
    ops.ARANGE: lambda out, start, step: _set(out, start + np.arange(out.numel()) * step),
    ops.GATHER: _gather,
    ops.INDEX_PUT: _index_put,
    ops.NONZERO: lambda a: ember.tensor(np.argwhere(a.numpy(force=True)), device=a.device),
    ops.IM2COL: lambda cols, x, *geometry: _set(cols, _windows(_np(x), cols, *geometry)[1]),
    ops.COL2IM: _col2im,
    ops.UNIFORM: _fill(_uniform),
    ops.NORMAL: _fill(_normal),
    ops.RANDOM: _fill(_integers),
    ops.RANDPERM: randperm_,
}
