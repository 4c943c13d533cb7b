"""The descriptive Tensor surface (format, type strings, new_*, is_*, finfo/iinfo) against
torch 2.13."""

from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]


@pytest.mark.parametrize("spec", ["", ".4f", ".2e", "10.3f", "g"])
def test_format_of_a_0d_tensor_is_its_number(spec: str) -> None:
    assert format(ember.tensor(3.14159265), spec) == format(torch.tensor(3.14159265), spec)


def test_format_of_other_tensors_as_torch() -> None:
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{ember.ones(2):.2f}"
    assert format(ember.ones(2), "") == repr(ember.ones(2))
    assert f"{ember.tensor(5):4d}" == f"{torch.tensor(5):4d}"


@pytest.mark.parametrize("name", DTYPES)
def test_type_strings_match_torch(name: str) -> None:
    e = ember.zeros(2, dtype=getattr(ember, name))
    t = torch.zeros(2, dtype=getattr(torch, name))
    assert e.type() == t.type()
    assert e.type(ember.float64).dtype is ember.float64
    assert e.type("torch.LongTensor").dtype is ember.int64
    with pytest.raises(ValueError):
        e.type("torch.NoSuchTensor")


def test_new_factories_take_dtype_device_requires_grad() -> None:
    e, t = ember.ones(2, 3), torch.ones(2, 3)
    for name in ("new_zeros", "new_ones", "new_empty"):
        a = getattr(e, name)(4, 2, dtype=ember.int64)
        b = getattr(t, name)(4, 2, dtype=torch.int64)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[6:] == str(b.dtype)[6:]
        assert getattr(e, name)((3,), requires_grad=True).requires_grad
        assert getattr(e, name)(2).dtype is ember.float32
    assert e.new_full((2,), 3).dtype is ember.float32
    assert e.new_full((2,), 3, dtype=ember.int32).tolist() == [3, 3]
    assert e.new_tensor([1, 2]).dtype is ember.float32
    assert e.new_tensor([1, 2], dtype=ember.int64, requires_grad=False).dtype is ember.int64
    assert e.new_zeros(2, device="cpu").device == e.device


@pytest.mark.parametrize("name", DTYPES)
def test_predicates_match_torch(name: str) -> None:
    e = ember.zeros(2, 3, dtype=getattr(ember, name))
    t = torch.zeros(2, 3, dtype=getattr(torch, name))
    assert e.is_signed() == t.is_signed()
    assert e.is_floating_point() == t.is_floating_point() == ember.is_floating_point(e)
    assert e.is_complex() == t.is_complex() == ember.is_complex(e)
    assert (e.is_sparse, e.is_quantized, e.is_meta, e.is_cuda) == (
        t.is_sparse, t.is_quantized, t.is_meta, t.is_cuda,
    )  # fmt: skip
    assert e.element_size() == t.element_size() and e.itemsize == t.itemsize
    assert e.nbytes == t.nbytes and e.nelement() == t.nelement()
    assert e.ndimension() == t.ndimension() and e.get_device() == t.get_device()
    assert e.layout is ember.strided and repr(e.layout) == "ember.strided"


def test_dim_order_matches_torch() -> None:
    e, t = ember.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    assert e.dim_order() == t.dim_order()
    assert e.permute(2, 0, 1).dim_order() == t.permute(2, 0, 1).dim_order()


def test_byte_char() -> None:
    e = ember.tensor([1.5, 2.0])
    assert e.byte().dtype is ember.uint8 and e.char().dtype is ember.int8


def test_is_nonzero_as_torch() -> None:
    assert ember.is_nonzero(ember.tensor([0.0])) is torch.is_nonzero(torch.tensor([0.0]))
    assert ember.tensor([2]).is_nonzero() is True
    for data in ([1.0, 2.0], []):
        with pytest.raises(RuntimeError, match="ambiguous"):
            torch.is_nonzero(torch.tensor(data))
        with pytest.raises(RuntimeError, match="ambiguous"):
            ember.is_nonzero(ember.tensor(data))


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_torch(name: str) -> None:
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, field) == getattr(t, field), field
    assert ember.finfo().dtype == torch.finfo().dtype
    with pytest.raises(TypeError):
        ember.finfo(ember.int32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int32", "int64"])
def test_iinfo_matches_torch(name: str) -> None:
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.bits, e.min, e.max, e.dtype) == (t.bits, t.min, t.max, t.dtype)
    with pytest.raises(TypeError):
        ember.iinfo(ember.float32)


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_can_cast_matches_torch(a: str, b: str) -> None:
    expected = torch.can_cast(getattr(torch, a), getattr(torch, b))
    assert ember.can_cast(getattr(ember, a), getattr(ember, b)) is expected


def test_function_forms() -> None:
    e = ember.zeros(2, dtype=ember.uint8)
    assert ember.is_signed(e) is False and ember.get_device(e) == -1
    assert e.is_same_size(ember.ones(2)) and not e.is_same_size(ember.ones(3))
