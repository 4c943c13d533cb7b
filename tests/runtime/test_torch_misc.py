"""The small torch-namespace names (ember._torch_misc, ember._legacy_types) against torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def test_constants_are_pythons() -> None:
    assert (ember.e, ember.pi, ember.inf) == (torch.e, torch.pi, torch.inf)
    assert math.isnan(ember.nan) and ember.newaxis is None is torch.newaxis


def test_queries_and_aliases_match_torch() -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    x = ember.tensor(a)
    assert ember.is_tensor(x) and not ember.is_tensor(a)
    assert ember.numel(x) == torch.numel(torch.tensor(a)) == 6
    assert ember.is_same_size(x, ember.tensor(b)) and not ember.is_same_size(x, x.T)
    for name in ("concat", "concatenate"):
        ours = getattr(ember, name)([x, ember.tensor(b)], 1).numpy()
        theirs = getattr(torch, name)([torch.tensor(a), torch.tensor(b)], 1).numpy()
        np.testing.assert_array_equal(ours, theirs)
    assert ember.typename(x) == torch.typename(torch.tensor(a)) == "torch.DoubleTensor"
    assert ember.typename(3) == torch.typename(3) == "int"


def test_fill_is_out_of_place_and_zero_is_in_place() -> None:
    x = ember.ones(3)
    y = ember.fill(x, 2.5)
    assert y.tolist() == [2.5] * 3 and x.tolist() == [1.0] * 3
    assert ember.zero_(x) is x and x.tolist() == [0.0] * 3
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        ember.fill(x, ember.ones(2))


def test_detach_shares_memory_and_drops_the_graph() -> None:
    x = ember.ones(2, requires_grad=True)
    y = ember.detach(x * 2)
    assert not y.requires_grad and y.tolist() == [2.0, 2.0]


def test_scalar_tensor_asarray_and_frombuffer() -> None:
    assert ember.scalar_tensor(3).dtype == ember.float32 and ember.scalar_tensor(3).dim() == 0
    assert ember.scalar_tensor(3, dtype=ember.int64).item() == 3
    assert ember.asarray([1, 2]).dtype == ember.int64
    shared = np.arange(4.0)
    view = ember.asarray(shared)
    shared[0] = 9.0
    assert view.tolist() == [9.0, 1.0, 2.0, 3.0]  # no copy, as torch.asarray
    assert ember.asarray(shared, copy=True).data_ptr() != view.data_ptr()
    with pytest.raises(ValueError, match="copy=False"):
        ember.asarray(shared, dtype=ember.float32, copy=False)
    t = ember.ones(2)
    assert ember.asarray(t) is t
    raw = bytearray(np.array([1, 2, 3], dtype=np.int32).tobytes())
    got = ember.frombuffer(raw, dtype=ember.int32, count=2, offset=4)
    assert got.tolist() == torch.frombuffer(raw, dtype=torch.int32, count=2, offset=4).tolist()


def test_empty_strided_has_the_strides_asked_for() -> None:
    x = ember.empty_strided((2, 3), (1, 2))
    assert x.stride() == torch.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
    with pytest.raises(RuntimeError, match="mismatch in length"):
        ember.empty_strided((2, 3), (1,))


def test_rng_state_round_trips() -> None:
    state = ember.get_rng_state()
    assert state.dtype == ember.uint8
    first = ember.rand(5).tolist()
    ember.set_rng_state(state)
    assert ember.rand(5).tolist() == first
    with pytest.raises(RuntimeError, match="set_rng_state"):
        ember.set_rng_state(ember.zeros(3))


def test_anomaly_flags() -> None:
    assert ember.is_anomaly_enabled() is torch.is_anomaly_enabled() is False
    ember.set_anomaly_enabled(True, check_nan=False)
    try:
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
        assert ember.autograd.is_anomaly_enabled()
    finally:
        ember.set_anomaly_enabled(False)
    assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()


def test_interop_threads() -> None:
    assert ember.get_num_interop_threads() == 1
    ember.set_num_interop_threads(2)
    ember.init_num_threads()
    with pytest.raises(RuntimeError):
        ember.set_num_interop_threads(0)


@pytest.mark.parametrize(
    "name", ["FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor",
             "IntTensor", "LongTensor", "BoolTensor"],
)  # fmt: skip
def test_legacy_types_construct_and_check_like_torch(name: str) -> None:
    ours, theirs = getattr(ember, name), getattr(torch, name)
    made = ours(2, 3)
    assert tuple(made.shape) == tuple(theirs(2, 3).shape)
    assert str(made.dtype).split(".")[1] == str(theirs(2, 3).dtype).split(".")[1]
    data = ours([1, 0, 1])
    assert data.tolist() == theirs([1, 0, 1]).tolist()
    assert isinstance(data, ours) and isinstance(data, ember.Tensor)
    assert ours().shape == (0,)
    assert data.type() == theirs([1]).type()
    others = [n for n in ("FloatTensor", "LongTensor") if n != name]
    assert not isinstance(data, getattr(ember, others[0]))


def test_legacy_types_refuse_other_devices() -> None:
    if not ember.is_available("opencl"):
        pytest.skip("needs a second device type")
    assert not isinstance(ember.zeros(2, device="opencl"), ember.FloatTensor)
    with pytest.raises(RuntimeError, match="expects device type: cpu"):
        ember.FloatTensor(2, device="opencl")
