"""The long tail of torch names: tensordot, chain_matmul, adjoint, as_strided_scatter, the
in-place scaled products, deprecated resize, autograd queries, autocast setters, legacy
default types, build flags and small forwards; checked against torch 2.13."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck


def _pair(*shape: int, seed: int = 0) -> tuple[ember.Tensor, torch.Tensor]:
    values = np.random.default_rng(seed + sum(shape)).standard_normal(shape)
    return ember.tensor(values), torch.tensor(values)


def _close(got: ember.Tensor, want: torch.Tensor) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("sa", "sb", "dims"),
    [
        ((2, 3, 4), (3, 4, 5), 2),
        ((2, 3), (3, 5), 1),
        ((2, 3), (4, 5), 0),
        ((2, 3, 4), (4, 2, 6), ([0, 2], [1, 0])),
        ((3, 4), (4, 3), ([1, 0], [0, 1])),
        ((2, 3, 4), (4, 5), ([-1], [0])),
    ],
)
def test_tensordot_matches_torch(sa: tuple[int, ...], sb: tuple[int, ...], dims: object) -> None:
    a, ta = _pair(*sa)
    b, tb = _pair(*sb, seed=1)
    _close(ember.tensordot(a, b, dims), torch.tensordot(ta, tb, dims))  # type: ignore[arg-type]


def test_tensordot_tensor_dims_and_out() -> None:
    a, ta = _pair(2, 3)
    b, tb = _pair(3, 4, seed=2)
    _close(ember.tensordot(a, b, ember.tensor(1)), torch.tensordot(ta, tb, torch.tensor(1)))
    out = ember.empty(2, 4, dtype=ember.float64)
    assert ember.tensordot(a, b, 1, out=out) is out
    _close(out, torch.tensordot(ta, tb, 1))


def test_tensordot_gradients() -> None:
    a = ember.tensor(np.random.default_rng(3).standard_normal((2, 3, 4)), requires_grad=True)
    b = ember.tensor(np.random.default_rng(4).standard_normal((4, 3, 2)), requires_grad=True)
    assert gradcheck(lambda x, y: ember.tensordot(x, y, ([1, 2], [1, 0])), (a, b))


@pytest.mark.parametrize(
    ("sa", "sb", "dims", "message"),
    [
        ((2, 3), (4, 5), 1, "contracted dimensions need to match"),
        ((2, 3), (3, 5), -1, "tensordot expects dims >= 0"),
        ((2, 3), (3, 5), ([0, 1], [0]), "both dimension lists should have same length"),
    ],
)
def test_tensordot_errors_as_torch(sa: tuple[int, ...], sb: tuple[int, ...], dims: object,
                                   message: str) -> None:  # fmt: skip
    with pytest.raises(RuntimeError, match=message):
        torch.tensordot(torch.ones(sa), torch.ones(sb), dims)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match=message):
        ember.tensordot(ember.ones(sa), ember.ones(sb), dims)
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.tensordot(ember.ones(2, 3), ember.ones(3, 2, dtype=ember.float64), 1)


def test_chain_matmul_warns_and_multiplies() -> None:
    mats = [_pair(2, 3), _pair(3, 4, seed=1), _pair(4, 2, seed=2)]
    with pytest.warns(UserWarning, match="deprecated"):
        got = ember.chain_matmul(*(m for m, _ in mats))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.chain_matmul(*(t for _, t in mats))
        with pytest.raises(RuntimeError, match="expected 2"):
            ember.chain_matmul(ember.ones(3), ember.ones(3, 2))
        single = ember.chain_matmul(mats[0][0])
    _close(got, want)
    _close(single, mats[0][1])
    assert single.data_ptr() != mats[0][0].data_ptr()


def test_adjoint_is_transposed_view() -> None:
    x, tx = _pair(2, 3, 4)
    for got in (ember.adjoint(x), x.adjoint()):
        _close(got, tx.adjoint())
        assert got.data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="Got 1-D tensor"):
        ember.ones(3).adjoint()


@pytest.mark.parametrize(
    ("make", "size", "stride", "offset"),
    [
        (lambda m: m.arange(12.0).reshape(3, 4), (2, 2), (1, 2), 1),
        (lambda m: m.arange(12.0).reshape(3, 4)[1:], (2, 2), (1, 2), None),
        (lambda m: m.arange(12.0).reshape(3, 4).t(), (2, 2), (1, 2), None),
        (lambda m: m.arange(12.0).reshape(3, 4)[:, ::2], (3,), (2,), 0),
        (lambda m: m.arange(6.0), (0,), (1,), None),
    ],
)
def test_as_strided_scatter_matches_torch(make, size, stride, offset) -> None:  # type: ignore[no-untyped-def]
    src_values = -np.arange(1.0, 1.0 + np.prod(size, dtype=int)).reshape(size)
    got = ember.as_strided_scatter(make(ember), ember.tensor(src_values, dtype=ember.float32),
                                   size, stride, offset)  # fmt: skip
    want = torch.as_strided_scatter(make(torch), torch.tensor(src_values, dtype=torch.float32),
                                    size, stride, offset)  # fmt: skip
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    method = make(ember).as_strided_scatter(ember.tensor(src_values, dtype=ember.float32),
                                            size, stride, offset)  # fmt: skip
    np.testing.assert_array_equal(method.numpy(), want.numpy())


def test_as_strided_scatter_gradients_and_errors() -> None:
    x = ember.tensor(np.random.default_rng(5).standard_normal((3, 4)), requires_grad=True)
    s = ember.tensor(np.random.default_rng(6).standard_normal((2, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: ember.as_strided_scatter(a, b, (2, 2), (1, 2), 1), (x, s))
    with pytest.raises(RuntimeError, match="expected src to have a size equal"):
        ember.as_strided_scatter(ember.ones(3, 4), ember.ones(3), (2, 2), (1, 2))
    with pytest.raises(RuntimeError, match="out of bounds"):
        ember.as_strided_scatter(ember.ones(3, 4), ember.ones(2, 2), (2, 2), (1, 2), 20)


_PRODUCTS = {
    "addmm_": ((3, 4), (3, 5), (5, 4)),
    "addmv_": ((3,), (3, 5), (5,)),
    "addr_": ((3, 4), (3,), (4,)),
    "baddbmm_": ((2, 3, 4), (2, 3, 5), (2, 5, 4)),
    "addbmm_": ((3, 4), (2, 3, 5), (2, 5, 4)),
}


@pytest.mark.parametrize("name", sorted(_PRODUCTS))
def test_inplace_products_values_and_autograd(name: str) -> None:
    shapes = _PRODUCTS[name]
    pairs = [_pair(*s, seed=i) for i, s in enumerate(shapes)]
    (x, tx), (a, ta), (b, tb) = pairs
    assert getattr(x, name)(a, b, beta=0.5, alpha=2.0) is x
    getattr(tx, name)(ta, tb, beta=0.5, alpha=2.0)
    _close(x, tx)
    # Through autograd: the in-place write on a non-leaf continues the graph.
    leaves = [ember.tensor(p[0].numpy(), requires_grad=True) for p in _pair_list(shapes)]
    tleaves = [torch.tensor(p[0].numpy(), requires_grad=True) for p in _pair_list(shapes)]
    out = getattr(leaves[0] * 1.0, name)(leaves[1], leaves[2], beta=0.5, alpha=2.0)
    tout = getattr(tleaves[0] * 1.0, name)(tleaves[1], tleaves[2], beta=0.5, alpha=2.0)
    out.sum().backward()
    tout.sum().backward()
    for leaf, tleaf in zip(leaves, tleaves, strict=True):
        _close(leaf.grad, tleaf.grad)
    assert out.grad_fn is not None
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(leaves[0], name)(leaves[1], leaves[2])


def _pair_list(shapes: tuple[tuple[int, ...], ...]) -> list[tuple[ember.Tensor, torch.Tensor]]:
    return [_pair(*s, seed=10 + i) for i, s in enumerate(shapes)]


def test_inplace_product_bad_shape_leaves_input_intact() -> None:
    x = ember.ones(3)
    with pytest.raises(RuntimeError):
        x.addmm_(ember.ones(3, 2), ember.ones(2, 3))
    np.testing.assert_array_equal(x.numpy(), np.ones(3))
    y = ember.ones(4)
    ember.addmv_(y, ember.ones(4, 2), ember.ones(2))
    np.testing.assert_array_equal(y.numpy(), np.full(4, 3.0))


def test_deprecated_resize_and_resize_as() -> None:
    x = ember.arange(6.0, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        y = x.resize(2, 3)
    assert y.shape == (2, 3) and y.data_ptr() != x.data_ptr()
    (y * ember.arange(6.0).reshape(2, 3)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0))
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        z = x.resize_as(ember.ones(3, 2))
    assert z.shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="requested resize to 4x2"):
            x.resize(4, 2)
        with pytest.raises(RuntimeError, match="requested resize to 4x2"):
            torch.arange(6.0).resize(4, 2)


def test_torch_level_forwards() -> None:
    x = ember.ones(2, 3) * ember.ones(2, 3, requires_grad=True)
    assert ember.detach_(x) is x and x.grad_fn is None and not x.requires_grad
    y = ember.arange(6.0)
    ember.as_strided_(y, (2, 2), (1, 2))
    np.testing.assert_array_equal(y.numpy(), [[0.0, 2.0], [1.0, 3.0]])
    z = ember.arange(6.0)
    assert ember.resize_as_(z, ember.ones(2, 2)) is z and z.shape == (2, 2)
    np.testing.assert_array_equal(z.numpy(), [[0.0, 1.0], [2.0, 3.0]])
    back = torch.from_dlpack(ember.to_dlpack(ember.arange(4.0)))
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0, 3.0])


def test_pdist_is_the_torch_level_function() -> None:
    assert F.pdist is ember.pdist
    x, tx = _pair(5, 3)
    _close(F.pdist(x, p=1.5), torch.nn.functional.pdist(tx, p=1.5))


def test_tensor_queries() -> None:
    leaf = ember.ones(3, requires_grad=True)
    parts = (leaf * 2).unbind()
    tparts = (torch.ones(3, requires_grad=True) * 2).unbind()
    assert [p.output_nr for p in parts] == [p.output_nr for p in tparts] == [0, 1, 2]
    assert leaf.output_nr == 0 and ember.ones(2).output_nr == 0
    assert ember.ones(2).name is None and torch.ones(2).name is None
    assert ember.ones(2).is_shared() is False


def test_flags_and_exceptions() -> None:
    assert ember.has_lapack is True and ember.has_mkl is False and ember.has_spectral is False
    # The kernels are built with -fopenmp unless EMBER_CPU_CFLAGS replaced the flags.
    from ember_cpu import _kernels

    with open(_kernels.__file__, "rb") as library:
        assert ember.has_openmp is (b"GOMP_parallel" in library.read())
    for name in ("AcceleratorError", "FatalError"):
        mine, theirs = getattr(ember, name), getattr(torch, name)
        assert issubclass(mine, Exception)
        assert issubclass(mine, RuntimeError) is issubclass(theirs, RuntimeError)
    assert ember.GradScaler is ember.amp.GradScaler
    assert ember.set_flush_denormal(True) is False


def test_set_default_tensor_type() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ember.set_default_tensor_type(ember.DoubleTensor)
            assert ember.get_default_dtype() is ember.float64
            assert ember.tensor([1.0]).dtype is ember.float64
            ember.set_default_tensor_type("torch.FloatTensor")
            assert ember.get_default_dtype() is ember.float32
            ember.set_default_tensor_type("ember.DoubleTensor")
            assert ember.get_default_dtype() is ember.float64
            for bad in ("torch.cuda.FloatTensor", ember.LongTensor, "torch.LongTensor", 3):
                with pytest.raises(TypeError):
                    ember.set_default_tensor_type(bad)
                with pytest.raises(TypeError):
                    torch.set_default_tensor_type(
                        bad if not isinstance(bad, type(ember.LongTensor)) else torch.LongTensor
                    )
        finally:
            ember.set_default_dtype(ember.float32)
            torch.set_default_dtype(torch.float32)


def test_autocast_setters_really_switch_autocast() -> None:
    a = ember.ones(2, 2)
    try:
        ember.set_autocast_enabled("cpu", True)
        assert ember.is_autocast_enabled("cpu")
        assert (a @ a).dtype is ember.get_autocast_dtype("cpu")
        ember.set_autocast_dtype("cpu", ember.float16)
        assert (a @ a).dtype is ember.float16
        with ember.autocast("cpu", enabled=False):
            assert (a @ a).dtype is ember.float32
        assert (a @ a).dtype is ember.float16  # the region restores the state it found
        ember.set_autocast_enabled("cpu", False)
        assert (a @ a).dtype is ember.float32 and not ember.is_autocast_enabled("cpu")
        with ember.autocast("cpu"):
            ember.set_autocast_enabled("cpu", False)  # switched off inside a region
            assert (a @ a).dtype is ember.float32
        assert (a @ a).dtype is ember.float32
        from ember import _autocast

        assert not _autocast.is_active()  # the fast path's counter is back to zero
        with pytest.warns(DeprecationWarning):
            ember.set_autocast_cpu_enabled(True)
        assert (a @ a).dtype is ember.float16
        with pytest.warns(DeprecationWarning):
            ember.set_autocast_cpu_dtype(ember.float16)
        with pytest.warns(DeprecationWarning):
            ember.set_autocast_cpu_enabled(False)
        with pytest.warns(DeprecationWarning):
            ember.set_autocast_gpu_dtype(ember.float16)
        assert ember.get_autocast_dtype("cuda") is ember.float16
        with pytest.raises(RuntimeError):
            ember.set_autocast_enabled("nope", True)
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_dtype("cpu", ember.get_autocast_dtype("cpu"))
        from ember import _autocast

        _autocast.STATE.regions.clear()


@pytest.mark.parametrize("start", [0, 1])
@pytest.mark.parametrize("stride", [(1,), (2,), (3,)])
def test_as_strided_scatter_non_dense_input_as_torch(stride: tuple[int, ...], start: int) -> None:
    src = [-1.0, -2.0, -3.0]
    got = ember.as_strided_scatter(
        ember.arange(12.0).reshape(3, 4)[:, start::2], ember.tensor(src), (3,), stride, 0
    )
    want = torch.as_strided_scatter(
        torch.arange(12.0).reshape(3, 4)[:, start::2], torch.tensor(src), (3,), stride, 0
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_utils_dlpack_round_trip() -> None:
    from ember.utils import dlpack

    x = ember.arange(6.0).reshape(2, 3)
    back = dlpack.from_dlpack(dlpack.to_dlpack(x))
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    from_torch = dlpack.from_dlpack(torch.arange(4.0))
    np.testing.assert_array_equal(from_torch.numpy(), [0.0, 1.0, 2.0, 3.0])
