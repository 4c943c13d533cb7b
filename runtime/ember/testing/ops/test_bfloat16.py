"""bfloat16 against PyTorch: conversions bit for bit, promotion, limits, matmul, an MLP's
forward and backward, checkpoints, names.

Every device stores bfloat16 and computes it in float, rounding each result once to
nearest even, which is what PyTorch's cpu kernels do; a device's float accumulation order
may differ from PyTorch's, so products and sums compare within one or two bfloat16 ulps.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from ._reference import host, make

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

BF16_EPS = 2.0**-7  # one ulp at 1.0 (torch.finfo(torch.bfloat16).eps)

TORCH_DTYPES = {
    ember.bool: torch.bool, ember.uint8: torch.uint8, ember.int8: torch.int8,
    ember.int32: torch.int32, ember.int64: torch.int64, ember.float16: torch.float16,
    ember.float32: torch.float32, ember.float64: torch.float64, ember.bfloat16: torch.bfloat16,
}  # fmt: skip


def _bits(t: ember.Tensor) -> np.ndarray:
    """The raw 16-bit patterns of a bfloat16 tensor, from any device."""
    return np.asarray(t.numpy(force=True)).view(np.uint16)


def _torch_bits(t: object) -> np.ndarray:
    assert isinstance(t, torch.Tensor)
    return t.view(torch.int16).numpy().view(np.uint16)


def _assert_same_bits(got: ember.Tensor, expected: object) -> None:
    """Bit-identical to torch's bfloat16, NaN for NaN: the NaN bits themselves differ even
    within torch (c10::BFloat16's scalar rounding gives 0x7FC0, its vectorised cpu
    conversion 0xFFFF; the cpu device writes 0x7FC0, NumPy's ml_dtypes keeps the sign)."""
    ours, theirs = _bits(got), _torch_bits(expected)
    nan = (theirs & 0x7FFF) > 0x7F80
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    assert ((ours[nan] & 0x7FFF) > 0x7F80).all()


def _special_float32() -> np.ndarray:
    """Exact ties (low 16 bits 0x8000, even and odd kept bit), just above and below them,
    NaNs of both signs and payloads, infinities, signed zeros, subnormals, the largest
    values (which round to inf) and random values."""
    rng = np.random.default_rng(7)
    highs = rng.integers(0, 1 << 16, size=64, dtype=np.uint32) << np.uint32(16)
    lows = np.array([0x8000, 0x7FFF, 0x8001, 0x0000, 0xFFFF], dtype=np.uint32)
    patterns = (highs[:, None] | lows[None, :]).ravel()
    fixed = np.array(
        [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x7F800000, 0xFF800000, 0, 0x80000000,
         0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x80400000, 0x7F7FFFFF, 0x7F7F8000,
         0x7F7F7FFF, 0x3F808000, 0x3F818000],
        dtype=np.uint32,
    )  # fmt: skip
    return np.concatenate([patterns, fixed]).view(np.float32)


def test_float32_to_bfloat16_rounds_as_torch(device: str) -> None:
    values = _special_float32()
    got = make(values, device).bfloat16()
    assert got.dtype is ember.bfloat16
    _assert_same_bits(got, torch.from_numpy(values).bfloat16())


def test_float64_to_bfloat16_rounds_as_torch(device: str) -> None:
    # torch narrows a double through float (c10::BFloat16 is built from a float)
    rng = np.random.default_rng(3)
    spread = rng.standard_normal(200) * 10.0 ** rng.integers(-40, 39, 200)
    ties = [1.0 + 2.0**-8, 1.0 + 2.0**-8 + 2.0**-40, 3.4e38, -1e-45]
    values = np.concatenate([spread, ties])
    got = make(values, device).to(ember.bfloat16)
    _assert_same_bits(got, torch.from_numpy(values).bfloat16())


@pytest.mark.parametrize("target", [ember.float32, ember.float64, ember.float16, ember.int32])
def test_bfloat16_widens_as_torch(device: str, target: ember.dtype) -> None:
    values = _special_float32()
    finite = values[np.isfinite(values) & (np.abs(values) < 6e4)]
    source = finite if target is ember.int32 or target is ember.float16 else values
    expected = torch.from_numpy(source).bfloat16().to(TORCH_DTYPES[target]).numpy()
    got = host(make(source, device).bfloat16().to(target))
    np.testing.assert_array_equal(got, expected)


def test_host_values(device: str) -> None:
    t = ember.tensor([1.5, -2.25, 0.1], dtype=ember.bfloat16, device=device)
    as_list = t.tolist()
    assert all(type(v) is float for v in as_list)
    assert as_list == torch.tensor([1.5, -2.25, 0.1], dtype=torch.bfloat16).tolist()
    assert type(t[2].item()) is float
    array = t.numpy(force=True)
    assert array.dtype == ember.bfloat16.numpy and array.dtype.name == "bfloat16"
    back = ember.tensor(array, device=device)
    assert back.dtype is ember.bfloat16
    np.testing.assert_array_equal(_bits(back), _bits(t))
    assert repr(ember.tensor([1.5, 2.25], dtype=ember.bfloat16)) == repr(
        torch.tensor([1.5, 2.25], dtype=torch.bfloat16)
    ).replace("torch.", "ember.")


def test_promotion_matches_torch() -> None:
    for a, ta in TORCH_DTYPES.items():
        for b, tb in TORCH_DTYPES.items():
            expected = torch.promote_types(ta, tb)
            if expected == torch.int16:  # uint8 with int8: Ember has no int16 (int32)
                continue
            assert TORCH_DTYPES[ember.promote_types(a, b)] == expected, (a, b)


def test_result_type_with_scalars_matches_torch(device: str) -> None:
    x = ember.ones(2, dtype=ember.bfloat16, device=device)
    tx = torch.ones(2, dtype=torch.bfloat16)
    for other in (2, 2.5, True):
        assert TORCH_DTYPES[(x + other).dtype] == (tx + other).dtype
    for dt, tdt in TORCH_DTYPES.items():
        y = ember.ones(2, dtype=dt, device=device)
        assert TORCH_DTYPES[(x * y).dtype] == (tx * torch.ones(2, dtype=tdt)).dtype, dt
        zero_d = ember.ones((), dtype=dt, device=device)
        assert TORCH_DTYPES[(x * zero_d).dtype] == (tx * torch.ones((), dtype=tdt)).dtype, dt


def test_finfo_matches_torch() -> None:
    ours, theirs = ember.finfo(ember.bfloat16), torch.finfo(torch.bfloat16)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ember.bfloat16.is_floating_point and ember.bfloat16.is_signed
    assert ember.bfloat16.itemsize == 2


def _close_to_torch(got: ember.Tensor, expected: object, ulps: float = 2.0) -> None:
    """Within `ulps` bfloat16 ulps of torch's bfloat16 result, relative to its magnitude."""
    assert isinstance(expected, torch.Tensor)
    assert got.dtype is ember.bfloat16
    want = expected.detach().float().numpy()
    have = host(got.float())
    scale = max(float(np.abs(want).max()), 1e-30)
    np.testing.assert_allclose(have, want, rtol=ulps * BF16_EPS, atol=ulps * BF16_EPS * scale)


def test_matmul_matches_torch(device: str) -> None:
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((17, 33)), rng.standard_normal((33, 9))
    ta, tb = torch.from_numpy(a).bfloat16(), torch.from_numpy(b).bfloat16()
    ea, eb = make(a, device).bfloat16(), make(b, device).bfloat16()
    _close_to_torch(ea @ eb, ta @ tb)
    batch = rng.standard_normal((3, 5, 7))
    _close_to_torch(
        ember.bmm(make(batch, device).bfloat16(), make(batch, device).bfloat16().transpose(1, 2)),
        torch.bmm(torch.from_numpy(batch).bfloat16(), torch.from_numpy(batch).bfloat16().mT),
    )


def test_reductions_accumulate_in_float(device: str) -> None:
    # 4096 ones: a bfloat16 accumulator would stop at 256
    x = ember.ones(4096, dtype=ember.bfloat16, device=device)
    assert x.sum().item() == 4096.0 and x.sum().dtype is ember.bfloat16
    assert x.mean().item() == 1.0
    values = np.random.default_rng(5).standard_normal((6, 50))
    t = torch.from_numpy(values).bfloat16()
    e = make(values, device).bfloat16()
    _close_to_torch(e.sum(1), t.sum(1))
    _close_to_torch(e.amax(0), t.amax(0), ulps=0)
    np.testing.assert_array_equal(host(e.argmax(1)), t.argmax(1).numpy())


def test_mlp_forward_and_backward_match_torch(device: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 12))
    w1, b1 = rng.standard_normal((16, 12)) * 0.3, rng.standard_normal(16) * 0.1
    w2, b2 = rng.standard_normal((4, 16)) * 0.3, rng.standard_normal(4) * 0.1
    target = rng.standard_normal((8, 4))

    def run(lib: Any, tensor: Callable[[np.ndarray], Any]) -> tuple[Any, list[Any]]:
        params = [tensor(p).requires_grad_() for p in (w1, b1, w2, b2)]
        hidden = lib.tanh(tensor(x) @ params[0].T + params[1])
        out = hidden @ params[2].T + params[3]
        loss = ((out - tensor(target)) ** 2).mean()
        loss.backward()
        return loss, [p.grad for p in params]

    loss, grads = run(ember, lambda v: make(v, device).bfloat16())
    t_loss, t_grads = run(torch, lambda v: torch.from_numpy(v).bfloat16())
    # each layer rounds its products, sums and activations once more
    _close_to_torch(loss, t_loss, ulps=4)
    for got, expected in zip(grads, t_grads, strict=True):
        assert isinstance(got, ember.Tensor)
        _close_to_torch(got, expected, ulps=6)


def test_checkpoints_round_trip_with_torch_and_safetensors(device: str) -> None:
    load_file, save_file = safetensors_torch.load_file, safetensors_torch.save_file
    values = _special_float32()[:40]
    ours = make(values, device).bfloat16()
    theirs = torch.from_numpy(values).bfloat16()
    with tempfile.TemporaryDirectory() as folder:
        ember_file = os.path.join(folder, "ember.safetensors")
        ember.save({"w": ours}, ember_file)
        loaded = ember.load(ember_file)["w"]
        assert loaded.dtype is ember.bfloat16
        np.testing.assert_array_equal(_bits(loaded), _bits(ours))
        np.testing.assert_array_equal(_torch_bits(load_file(ember_file)["w"]), _bits(ours))
        torch_safetensors = os.path.join(folder, "torch.safetensors")
        save_file({"w": theirs}, torch_safetensors)
        np.testing.assert_array_equal(_bits(ember.load(torch_safetensors)["w"]), _bits(ours))
        pickled = os.path.join(folder, "torch.pt")
        torch.save({"w": theirs}, pickled)
        np.testing.assert_array_equal(_bits(ember.load(pickled)["w"]), _bits(ours))


def test_names_and_conversions(device: str) -> None:
    t = ember.zeros(2, device=device).bfloat16()
    assert t.dtype is ember.bfloat16 and t.is_floating_point()
    cpu = t.cpu()
    assert cpu.type() == "torch.BFloat16Tensor" == torch.zeros(2).bfloat16().type()
    assert isinstance(cpu, ember.BFloat16Tensor) and not isinstance(cpu, ember.HalfTensor)
    assert ember.BFloat16Tensor([1.0, 2.0]).dtype is ember.bfloat16
    layer = ember.nn.Linear(3, 2).bfloat16()
    assert layer.weight.dtype is ember.bfloat16 and layer.bias.dtype is ember.bfloat16


def test_autocast_cpu_computes_in_bfloat16() -> None:
    assert ember.get_autocast_dtype("cpu") is ember.bfloat16
    a, b = ember.ones(4, 4), ember.ones(4, 4)
    with ember.autocast("cpu"):
        assert (a @ b).dtype is ember.bfloat16
    with ember.autocast("cpu", dtype=ember.bfloat16):
        product = a @ b
    assert product.dtype is ember.bfloat16 and product.sum().item() == 64.0
    if not ember.cuda.is_available():  # torch answers False without a GPU too
        assert ember.cuda.is_bf16_supported() is False
