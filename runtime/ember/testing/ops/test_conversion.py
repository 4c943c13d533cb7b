"""Conversions: .to(dtype|device), .float() and friends, item, tolist, NumPy interop
(zero-copy on host devices), __array__, DLPack, repr and Python number protocols."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from ._reference import (
    DTYPES,
    assert_close,
    host,
    is_host_device,
    laid_out,
    make,
    pid,
    sample,
    shares_storage,
)


def _convertible(source: ember.dtype, target: ember.dtype, rng) -> np.ndarray:
    """Values whose conversion C defines: non-negative when the target is unsigned."""
    values = sample((3, 4), source, rng, "rounding")
    if target is ember.uint8 and source is not ember.bool:
        values = np.abs(values)
    return values


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
@pytest.mark.parametrize("target", DTYPES, ids=pid)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_to_dtype(device: str, dtype: ember.dtype, target: ember.dtype, layout: str, rng) -> None:
    tensor, values = laid_out(_convertible(dtype, target, rng), layout, device)
    result = tensor.to(target)
    assert_close(result, values.astype(target.numpy), target, rtol=0, atol=0)
    assert result.device == tensor.device
    if target is dtype:
        assert result is tensor
    else:
        assert not shares_storage(result, tensor)


METHODS = {
    "float": ember.float32,
    "double": ember.float64,
    "half": ember.float16,
    "long": ember.int64,
    "int": ember.int32,
    "bool": ember.bool,
}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.bool, ember.float16], ids=pid)
def test_dtype_methods(device: str, method: str, dtype: ember.dtype, rng) -> None:
    target = METHODS[method]
    values = _convertible(dtype, target, rng)
    result = getattr(make(values, device), method)()
    assert_close(result, values.astype(target.numpy), target, rtol=0, atol=0)


def test_to_variants(device: str, rng) -> None:
    values = sample((2, 3), ember.float32, rng)
    t = make(values, device)
    assert t.to(device) is t
    assert t.to(ember.device(device)) is t
    assert t.to(ember.float32) is t
    assert t.to(device, ember.float32) is t
    copy = t.to(ember.float32, copy=True)
    assert copy is not t and not shares_storage(copy, t)
    assert_close(t.to(dtype=ember.float64), values.astype(np.float64), ember.float64)
    other = ember.zeros(1, dtype=ember.int32, device=device)
    assert t.to(other).dtype is ember.int32
    assert t.type_as(other).dtype is ember.int32
    assert_close(t.to(device=device, dtype=ember.float16), values, ember.float16)


def test_round_trip_through_cpu(device: str, rng) -> None:
    tensor, values = laid_out(sample((3, 4), ember.float64, rng), "transposed", device)
    on_cpu = tensor.to("cpu")
    assert on_cpu.device == ember.device("cpu")
    assert_close(on_cpu, values, ember.float64, rtol=0, atol=0)
    back = on_cpu.to(device)
    assert back.device == ember.device(device)
    assert_close(back, values, ember.float64, rtol=0, atol=0)
    assert_close(tensor.cpu(), values, ember.float64, rtol=0, atol=0)
    assert_close(on_cpu.to(device, ember.int64), values.astype(np.int64), ember.int64)


# -- Python values --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_item_and_tolist(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((2, 3), dtype, rng)
    tensor = make(values, device)
    python_type = bool if dtype is ember.bool else float if dtype.is_floating_point else int
    item = tensor[1, 2].item()
    assert type(item) is python_type and item == values[1, 2].item()
    assert type(make(values[:1, :1], device).item()) is python_type
    listed = tensor.tolist()
    assert listed == values.tolist()
    assert all(type(v) is python_type for row in listed for v in row)
    assert tensor[0, 0].tolist() == values[0, 0].item()
    with pytest.raises(RuntimeError):
        tensor.item()


def test_python_number_protocols(device: str) -> None:
    t = make([3.5, -1.0], device)
    assert float(t[0]) == 3.5
    assert int(t[0]) == 3
    assert bool(t[1]) is True
    assert bool(make([0.0], device)) is False
    assert len(t) == 2
    assert [float(x) for x in t] == [3.5, -1.0]
    assert [0, 1, 2][make(np.int64(1), device)] == 1  # __index__
    with pytest.raises(RuntimeError):
        bool(t)
    with pytest.raises(TypeError):
        [0, 1][t[0]]
    with pytest.raises(TypeError):
        len(make(np.float32(1.0), device))


# -- NumPy, __array__ and DLPack ----------------------------------------------------------


def test_numpy_shares_memory_on_host_devices(device: str, rng) -> None:
    tensor = make(sample((3, 4), ember.float32, rng), device)
    if not is_host_device(device):
        with pytest.raises(TypeError, match=r"Use Tensor\.cpu"):
            tensor.numpy()  # as PyTorch's does for a cuda tensor
        np.testing.assert_array_equal(tensor.numpy(force=True), host(tensor))
        return
    array = tensor.numpy()
    array[0, 0] = 42.0
    assert tensor[0, 0].item() == 42.0
    tensor.fill_(7.0)
    assert (array == 7.0).all()
    view = tensor.t()[1:]
    np.testing.assert_array_equal(view.numpy(), array.T[1:])
    assert np.shares_memory(view.numpy(), array)


def test_from_numpy_and_as_tensor_share_memory(device: str) -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    shared = ember.from_numpy(array)
    assert shared.device == ember.device("cpu") and shared.dtype is ember.float32
    array[0, 0] = -1.0
    assert shared[0, 0].item() == -1.0
    shared.fill_(3.0)
    assert (array == 3.0).all()
    strided = ember.from_numpy(array[:, ::2])
    assert strided.stride() == (3, 2)
    assert ember.as_tensor(array).untyped_storage().ptr == array.ctypes.data
    copied = ember.tensor(array, device=device)
    array[...] = 0.0
    assert (host(copied) == 3.0).all()
    moved = ember.as_tensor(array, device=device)
    assert moved.device == ember.device(device)


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_array_protocol(device: str, dtype: ember.dtype, rng) -> None:
    tensor, values = laid_out(sample((3, 4), dtype, rng), "transposed", device)
    array = np.asarray(tensor)
    assert array.dtype == dtype.numpy
    np.testing.assert_array_equal(array, values)
    np.testing.assert_array_equal(np.asarray(tensor, dtype=np.float64), values.astype(np.float64))
    np.testing.assert_array_equal(np.array(tensor[0]), values[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=pid)
def test_dlpack_round_trip(device: str, dtype: ember.dtype, rng) -> None:
    values = sample((3, 4), dtype, rng)
    tensor = make(values, device)
    if not is_host_device(device) or dtype is ember.bfloat16:  # NumPy exports no bfloat16
        with pytest.raises(BufferError):
            tensor.__dlpack__()
        return
    assert tensor.__dlpack_device__() == (1, 0)
    exported = np.from_dlpack(tensor)
    np.testing.assert_array_equal(exported, values)
    imported = ember.from_dlpack(values)
    assert imported.dtype is dtype and tuple(imported.shape) == values.shape
    assert imported.untyped_storage().ptr == values.ctypes.data
    np.testing.assert_array_equal(host(ember.from_dlpack(tensor.t())), values.T)
    exported[0, 0] = 1
    assert tensor[0, 0].item() == 1  # the export shares memory


# -- repr -----------------------------------------------------------------------------------

REPRS = [
    ([1.0, 2.0, 3.0], None, "tensor([1., 2., 3.])"),
    ([1.0, 2.0, 3.0], ember.float64, "tensor([1., 2., 3.], dtype=ember.float64)"),
    ([1.5, 2.25], None, "tensor([1.5000, 2.2500])"),
    ([-1.0, 2.0], None, "tensor([-1.,  2.])"),
    ([1, 2, 3], None, "tensor([1, 2, 3])"),
    ([1, 2, 3], ember.int32, "tensor([1, 2, 3], dtype=ember.int32)"),
    ([True, False], None, "tensor([ True, False])"),
    ([[1.0, 2.0], [3.0, 4.0]], None, "tensor([[1., 2.],\n        [3., 4.]])"),
    ([[1, 2], [3, 4]], ember.uint8, "tensor([[1, 2],\n        [3, 4]], dtype=ember.uint8)"),
    (3.0, None, "tensor(3.)"),
    (7, None, "tensor(7)"),
    (True, None, "tensor(True)"),
    ([], None, "tensor([])"),
    ([], ember.float64, "tensor([], dtype=ember.float64)"),
    ([1e-5, 1.0], None, "tensor([1.0000e-05, 1.0000e+00])"),
    ([float("nan"), 1.0], None, "tensor([nan, 1.])"),
    ([float("inf"), -1.0], None, "tensor([inf, -1.])"),
    ([1.0, 2.0], ember.float16, "tensor([1., 2.], dtype=ember.float16)"),
]


@pytest.mark.parametrize(("data", "dtype", "text"), REPRS, ids=[r[2] for r in REPRS])
def test_repr_matches_pytorch(device: str, data, dtype, text: str) -> None:
    tensor = ember.tensor(data, dtype=dtype, device=device)
    if ember.device(device).type != "cpu":
        # PyTorch prints device= before dtype=: tensor([1], device='cuda:0', dtype=torch.int32)
        where = f", device='{ember.device(device)}'"
        cut = text.find(", dtype=")
        text = text[:-1] + where + ")" if cut < 0 else text[:cut] + where + text[cut:]
    assert repr(tensor) == text


def test_repr_of_empty_matrix(device: str) -> None:
    text = repr(ember.zeros(0, 3, device=device))
    assert text.startswith("tensor([], ") and "size=(0, 3)" in text
