"""Random numbers: counter-based generators, one per device, identical on every device.

Kernels implement Philox4x32-10 (see names.py); a generator is just (seed, offset), and
each call consumes `numel` counters, so a sequence of calls yields the same numbers on any
device that implements the primitives.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

import numpy as np

from ember import _dtype
from ember._device import DeviceLike, device
from ember._device import devices as available_types
from ember._dispatch import kernel_for
from ember._ops import elementwise as ew
from ember._ops import names
from ember._ops._meta import normalize_shape
from ember._ops.creation import _requiring_grad, resolve_device, tensor
from ember._tensor import Tensor, empty_tensor
from ember.plugins._manager import MANAGER

__all__ = [
    "Generator",
    "initial_seed",
    "manual_seed",
    "normal",
    "normal_",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "random_",
    "randperm",
    "seed",
    "uniform_",
]

DEFAULT_SEED = 67280421310721  # PyTorch's default seed


class Generator:
    """A random-number generator for one device: `ember.Generator(device="cpu")`."""

    __slots__ = ("_lock", "_offset", "_seed", "device")

    def __init__(self, device: DeviceLike = "cpu") -> None:
        self.device = resolve_device(device)
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._lock = threading.Lock()

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed`."""
        self._seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = 0
        return self

    def seed(self) -> int:
        """Seed from OS entropy and return the seed."""
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The state as an int64 tensor (seed, offset)."""
        seed = self._seed - (1 << 64) if self._seed >= 1 << 63 else self._seed
        return tensor([seed, self._offset], dtype=_dtype.int64, device="cpu")

    def set_state(self, state: Tensor) -> Generator:
        seed, offset = state.tolist()
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = offset
        return self

    def claim(self, count: int) -> tuple[int, int]:
        """Reserve `count` counters; return (seed, first counter)."""
        with self._lock:
            offset = self._offset
            self._offset += count
            return self._seed, offset


_default_generators: dict[device, Generator] = {}


def default_generator(dev: device) -> Generator:
    found = _default_generators.get(dev)
    if found is None:
        found = _default_generators[dev] = Generator(dev)
    return found


def manual_seed(seed: int) -> Generator:
    """Seed the default generator of every device; return the cpu one."""
    for type_name in available_types():
        for index in range(MANAGER.device_types[type_name].count):
            default_generator(device(type_name, index).placement).manual_seed(seed)
    return default_generator(device("cpu"))


def seed() -> int:
    """Seed every default generator from OS entropy."""
    value = default_generator(device("cpu")).seed()
    manual_seed(value)
    return value


def initial_seed() -> int:
    return default_generator(device("cpu")).initial_seed()


def _generator_for(t: Tensor, generator: Generator | None) -> Generator:
    if generator is None:
        return default_generator(t._device)
    if generator.device.type != t._device.type:
        raise RuntimeError(
            f"Expected a '{t._device.type}' device type for generator but found "
            f"'{generator.device.type}'"
        )
    return generator


def uniform_(
    t: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Generator | None = None
) -> Tensor:
    """Fill `t` with values uniform in [from_, to)."""
    if not t._dtype.is_floating_point:
        raise TypeError(f"uniform_(): expected a floating-point tensor, got {t._dtype.name}")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}"
        )
    seed_value, offset = _generator_for(t, generator).claim(t.numel())
    kernel_for(names.UNIFORM, t._device, t._dtype)(t, float(from_), float(to), seed_value, offset)
    t._storage.version += 1
    return t


def normal_(
    t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None
) -> Tensor:
    """Fill `t` with normal samples."""
    if not t._dtype.is_floating_point:
        raise TypeError(f"normal_(): expected a floating-point tensor, got {t._dtype.name}")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    seed_value, offset = _generator_for(t, generator).claim(t.numel())
    kernel_for(names.NORMAL, t._device, t._dtype)(t, float(mean), float(std), seed_value, offset)
    t._storage.version += 1
    return t


_MANTISSA_LIMIT = {"float16": 1 << 11, "float32": 1 << 24, "float64": 1 << 53, "bfloat16": 1 << 8}


def random_(
    t: Tensor, from_: int = 0, to: int | None = None, *, generator: Generator | None = None
) -> Tensor:
    """Fill `t` with integers uniform in [from_, to) (`random_(n)` means [0, n))."""
    if to is None:
        if from_:
            from_, to = 0, from_
        elif t._dtype.is_floating_point:
            to = _MANTISSA_LIMIT[t._dtype.name] + 1
        elif t._dtype is _dtype.bool:
            to = 2
        else:
            to = int(np.iinfo(t._dtype.numpy).max) + 1
    if from_ >= to:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}"
        )
    seed_value, offset = _generator_for(t, generator).claim(t.numel())
    kernel_for(names.RANDOM, t._device, t._dtype)(t, int(from_), int(to), seed_value, offset)
    t._storage.version += 1
    return t


def _new(
    op: str, size: tuple[Any, ...], dtype: _dtype.dtype | None, dev: DeviceLike | None
) -> Tensor:
    shape = normalize_shape(op, size)
    return empty_tensor(shape, dtype or _dtype.get_default_dtype(), resolve_device(dev))


def _factory_size(op: str, size: tuple[Any, ...], keywords: dict[str, Any]) -> tuple[Any, ...]:
    """The size of rand(2, 3), rand((2, 3)), rand(ember.Size(...)) or rand(size=(2, 3))."""
    if "size" in keywords:
        if size:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        size = (keywords.pop("size"),)
    if keywords:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(keywords))}'")
    return size


def _like(t: Tensor, dtype: _dtype.dtype | None, dev: DeviceLike | None) -> Tensor:
    return empty_tensor(
        t._shape, dtype or t._dtype, t._device if dev is None else resolve_device(dev)
    )


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    """Uniform samples in [0, 1); the size as ints, one sequence, or `size=`."""
    shape = _factory_size("rand", size, keywords)
    return _requiring_grad(
        uniform_(_new("rand", shape, dtype, device), generator=generator), requires_grad
    )


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    **keywords: Any,
) -> Tensor:
    """Standard normal samples; the size as ints, one sequence, or `size=`."""
    shape = _factory_size("randn", size, keywords)
    return _requiring_grad(
        normal_(_new("randn", shape, dtype, device), generator=generator), requires_grad
    )


def rand_like(
    t: Tensor,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """rand with `t`'s shape and device."""
    return _requiring_grad(uniform_(_like(t, dtype, device), generator=generator), requires_grad)


def randn_like(
    t: Tensor,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """randn with `t`'s shape and device."""
    return _requiring_grad(normal_(_like(t, dtype, device), generator=generator), requires_grad)


def randint(
    *args: Any,
    low: int | None = None,
    high: int | None = None,
    size: Any = None,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """randint(high, size) or randint(low, high, size): integers in [low, high); `low`,
    `high` and `size` may also be given by keyword, as PyTorch allows."""
    values = list(args)
    if size is None and values:
        size = values.pop()
    if high is None and values:
        high = values.pop()
    if low is None:
        low = values.pop() if values else 0
    if values or size is None or high is None:
        raise TypeError(
            "randint() expects (high, size) or (low, high, size), positionally or as "
            f"low=, high=, size=; got {len(args)} positional arguments"
        )
    out = empty_tensor(
        normalize_shape("randint", (size,)), dtype or _dtype.int64, resolve_device(device)
    )
    return _requiring_grad(random_(out, int(low), int(high), generator=generator), requires_grad)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A random permutation of 0..n-1."""
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    out = empty_tensor((n,), _dtype.int64, resolve_device(device))
    seed_value, offset = _generator_for(out, generator).claim(n)
    kernel_for(names.RANDPERM, out._device, _dtype.int64)(out, seed_value, offset)
    if dtype is not None and dtype is not _dtype.int64:
        out = out.to(dtype)
    return _requiring_grad(out, requires_grad)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples: elementwise from tensor mean/std, or of `size` from scalars."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        shape_source = (
            ew.add(mean, ew.mul(std, 0.0))
            if isinstance(mean, Tensor) and isinstance(std, Tensor)
            else like
        )
        noise = normal_(
            empty_tensor(shape_source._shape, like._dtype, like._device), generator=generator
        )
        return ew.add(ew.mul(noise, std), mean)
    if size is None:
        raise TypeError("normal(): with scalar mean and std, `size` is required")
    out = _new("normal", (size,), dtype, device)
    return _requiring_grad(
        normal_(out, float(mean), float(std), generator=generator), requires_grad
    )
