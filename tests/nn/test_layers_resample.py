"""New layers vs torch 2.13: interpolate, pixel/channel shuffle, conv_transpose1d, adaptive
pools, padding layers, and dropout2d/3d on wrong-rank input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _e(t: torch.Tensor, grad: bool = False) -> ember.Tensor:
    return ember.tensor(t.detach().numpy(), requires_grad=grad)


def _close(a: ember.Tensor, b: torch.Tensor, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


INTERP = [
    ("nearest", None, (4, 6, 5), dict(size=(8, 9))),
    ("nearest", None, (4, 6, 5), dict(scale_factor=1.7)),
    ("nearest-exact", None, (4, 6, 5), dict(scale_factor=(0.6, 2.3))),
    ("bilinear", False, (4, 6, 5), dict(size=(7, 3))),
    ("bilinear", True, (4, 6, 5), dict(scale_factor=2)),
    ("bicubic", False, (4, 6, 5), dict(size=(9, 4))),
    ("bicubic", True, (4, 6, 5), dict(scale_factor=1.5)),
    ("area", None, (4, 6, 5), dict(size=(4, 3))),
    ("linear", False, (3, 7), dict(scale_factor=2.5)),
    ("trilinear", True, (2, 3, 4, 5), dict(size=(4, 5, 3))),
]


@pytest.mark.parametrize(("mode", "corners", "shape", "kw"), INTERP)
def test_interpolate_values_and_grads(mode: str, corners: bool | None, shape, kw) -> None:
    x = torch.randn(2, *shape, dtype=torch.float64, requires_grad=True)
    ref = TF.interpolate(x, mode=mode, align_corners=corners, **kw)
    xe = _e(x, grad=True)
    out = F.interpolate(xe, mode=mode, align_corners=corners, **kw)
    _close(out, ref)
    g = torch.randn_like(ref)
    ref.backward(g)
    out.backward(_e(g))
    _close(xe.grad, x.grad)


def test_interpolate_gradcheck_bicubic() -> None:
    x = ember.tensor(np.random.default_rng(0).standard_normal((1, 1, 3, 4)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: F.interpolate(t, size=(5, 3), mode="bicubic"), (x,))


def test_interpolate_errors() -> None:
    x = ember.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="align_corners option"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)


def test_upsample_modules_match_torch() -> None:
    x = torch.randn(1, 2, 3, 4, dtype=torch.float64)
    for ours, theirs in [
        (enn.UpsamplingBilinear2d(scale_factor=2), torch.nn.UpsamplingBilinear2d(scale_factor=2)),
        (enn.UpsamplingNearest2d(size=(5, 7)), torch.nn.UpsamplingNearest2d(size=(5, 7))),
        (
            enn.Upsample(scale_factor=3, mode="bicubic"),
            torch.nn.Upsample(scale_factor=3, mode="bicubic"),
        ),
    ]:
        _close(ours(_e(x)), theirs(x))
        assert repr(ours) == repr(theirs)


def test_pixel_and_channel_shuffle() -> None:
    x = torch.randn(2, 3, 8, 4, 6, dtype=torch.float64, requires_grad=True)
    xe = _e(x, grad=True)
    _close(F.pixel_shuffle(xe, 2), TF.pixel_shuffle(x, 2))
    _close(F.pixel_unshuffle(xe, 2), TF.pixel_unshuffle(x, 2))
    y = x[0]
    _close(enn.ChannelShuffle(4)(_e(y)), torch.nn.ChannelShuffle(4)(y))
    F.pixel_shuffle(xe, 2).sum().backward()
    assert xe.grad.shape == xe.shape
    with pytest.raises(RuntimeError, match="divisible by the square"):
        F.pixel_shuffle(ember.zeros(1, 5, 2, 2), 2)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_transpose1d_module(groups: int) -> None:
    torch.manual_seed(0)
    ref = torch.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=groups,
                                   dilation=2).double()  # fmt: skip
    ours = enn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=groups,
                               dilation=2, dtype=ember.float64)  # fmt: skip
    ours.load_state_dict({k: _e(v) for k, v in ref.state_dict().items()})
    x = torch.randn(2, 4, 7, dtype=torch.float64, requires_grad=True)
    xe = _e(x, grad=True)
    out, want = ours(xe), ref(x)
    _close(out, want)
    out.sum().backward()
    want.sum().backward()
    _close(xe.grad, x.grad)
    _close(ours.weight.grad, ref.weight.grad)


def test_adaptive_pools() -> None:
    x = torch.randn(2, 3, 7, 5, 6, dtype=torch.float64, requires_grad=True)
    xe = _e(x, grad=True)
    _close(F.adaptive_avg_pool3d(xe, (3, None, 4)), TF.adaptive_avg_pool3d(x, (3, None, 4)))
    v, i = F.adaptive_max_pool3d(xe, (3, 2, 4), return_indices=True)
    tv, ti = TF.adaptive_max_pool3d(x, (3, 2, 4), return_indices=True)
    _close(v, tv)
    assert (i.detach().numpy() == ti.numpy()).all()
    v.sum().backward()
    tv.sum().backward()
    _close(xe.grad, x.grad)
    p = x[0, :, 0].detach()
    _, i2 = F.adaptive_max_pool2d(_e(p), (3, 4), return_indices=True)
    assert (i2.numpy() == TF.adaptive_max_pool2d(p, (3, 4), return_indices=True)[1].numpy()).all()
    q = x[:, :, 0, 0].detach()
    _close(F.adaptive_avg_pool1d(_e(q), 4), TF.adaptive_avg_pool1d(q, 4))
    _close(F.adaptive_max_pool1d(_e(q), 4), TF.adaptive_max_pool1d(q, 4))


@pytest.mark.parametrize(
    "name", ["ZeroPad2d", "ConstantPad1d", "ReflectionPad2d", "ReplicationPad3d", "CircularPad1d"]
)
def test_padding_layers(name: str) -> None:
    dims = int(name[-2])
    pad = tuple(range(1, 2 * dims + 1)) if dims < 3 else 1
    args = (pad, 2.5) if name.startswith("Constant") else (pad,)
    x = torch.randn(2, 3, *([5] * dims), dtype=torch.float64)
    ours, theirs = getattr(enn, name)(*args), getattr(torch.nn, name)(*args)
    _close(ours(_e(x)), theirs(x))
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(("fn", "shape"), [("dropout2d", (40, 50)), ("dropout3d", (6, 40, 50))])
def test_feature_dropout_wrong_rank_warns_and_drops(fn: str, shape) -> None:
    x = ember.ones(*shape)
    with pytest.warns(UserWarning, match=f"Received a {len(shape)}-D input to {fn}"):
        y = getattr(F, fn)(x, 0.5)
    values = y.numpy()
    assert set(np.unique(values)) <= {0.0, 2.0}
    if fn == "dropout2d":  # (N, C): element-wise
        assert 0 < (values == 0).mean() < 1
    else:  # unbatched (C, H, W): whole channels
        per_channel = values.reshape(shape[0], -1)
        assert all(len(set(row)) == 1 for row in per_channel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2"):
            F.dropout2d(ember.ones(5), 0.5)
        assert F.dropout2d(ember.ones(5), 0.5, training=False).shape == (5,)
