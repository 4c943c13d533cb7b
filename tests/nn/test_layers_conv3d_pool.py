"""Conv3d, ConvTranspose3d, fold/unfold and the 1-d/3-d/adaptive/power/unpool/fractional
pooling layers against PyTorch with the same weights: outputs, gradients, indices, reprs;
float64 finite-difference gradients; constructor and argument errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import functional as F

from ._helpers import check_gradients, tensor
from ._torch_parity import assert_same_gradients, assert_same_outputs, copy_into_torch, pair

torch = pytest.importorskip("torch")

LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "Conv3d": (lambda m: m.Conv3d(2, 3, 2), (2, 2, 4, 5, 4)),
    "Conv3d-strided-groups": (
        lambda m: m.Conv3d(4, 6, (3, 2, 2), stride=(2, 1, 2), padding=(1, 0, 1), groups=2),
        (1, 4, 5, 4, 5),
    ),
    "Conv3d-same-dilated": (
        lambda m: m.Conv3d(2, 2, (2, 3, 2), padding="same", dilation=(1, 1, 2), bias=False),
        (1, 2, 4, 4, 5),
    ),
    "Conv3d-circular": (
        lambda m: m.Conv3d(2, 2, 3, padding=1, padding_mode="circular"),
        (1, 2, 3, 4, 4),
    ),
    "Conv3d-unbatched": (lambda m: m.Conv3d(2, 3, 2), (2, 3, 4, 3)),
    "ConvTranspose3d": (lambda m: m.ConvTranspose3d(2, 3, 2), (2, 2, 3, 3, 2)),
    "ConvTranspose3d-strided": (
        lambda m: m.ConvTranspose3d(
            4,
            2,
            (3, 2, 3),
            stride=(2, 1, 2),
            padding=(1, 0, 1),
            output_padding=(1, 0, 1),
            groups=2,
            dilation=(1, 2, 1),
        ),
        (1, 4, 3, 3, 2),
    ),
    "MaxPool1d": (lambda m: m.MaxPool1d(3, 2, 1, dilation=2, ceil_mode=True), (2, 3, 11)),
    "MaxPool3d": (lambda m: m.MaxPool3d(2), (2, 2, 4, 5, 4)),
    "MaxPool3d-padded": (
        lambda m: m.MaxPool3d((3, 2, 3), (2, 1, 2), (1, 0, 1), ceil_mode=True),
        (1, 2, 5, 4, 5),
    ),
    "AvgPool1d": (lambda m: m.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 10)),
    "AvgPool3d": (lambda m: m.AvgPool3d(2), (2, 2, 4, 5, 4)),
    "AvgPool3d-padded": (
        lambda m: m.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False),
        (1, 2, 5, 4, 6),
    ),
    "AvgPool3d-divisor": (lambda m: m.AvgPool3d(2, 1, divisor_override=3), (1, 2, 3, 3, 4)),
    "AdaptiveAvgPool1d": (lambda m: m.AdaptiveAvgPool1d(4), (2, 3, 10)),
    "AdaptiveAvgPool3d": (lambda m: m.AdaptiveAvgPool3d((2, None, 3)), (1, 2, 5, 4, 7)),
    "AdaptiveMaxPool1d": (lambda m: m.AdaptiveMaxPool1d(3), (2, 3, 10)),
    "AdaptiveMaxPool2d": (lambda m: m.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 5)),
    "AdaptiveMaxPool3d": (lambda m: m.AdaptiveMaxPool3d(2), (1, 2, 5, 4, 3)),
    "LPPool1d": (lambda m: m.LPPool1d(2, 3, 2), (2, 3, 9)),
    "LPPool2d": (lambda m: m.LPPool2d(3, (2, 3), ceil_mode=True), (2, 3, 7, 8)),
    "LPPool3d": (lambda m: m.LPPool3d(1.5, 2), (1, 2, 4, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
def test_layer_matches_torch(device: str, name: str, rng: Any) -> None:
    build, shape = LAYERS[name]
    ours, theirs = build(nn).to(device), build(torch.nn)
    copy_into_torch(ours, theirs)
    data = rng.standard_normal(shape)
    if name.startswith("LPPool"):
        data = np.abs(data) + 0.1  # fractional powers of negative sums are NaN in both
    x, tx = pair(data, device, grad=True)
    out, expected = ours(x), theirs(tx)
    assert_same_outputs(out, expected, atol=1e-5)
    g = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    out.backward(ember.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_same_outputs(x.grad, tx.grad, atol=1e-4)
    assert_same_gradients(ours, theirs, atol=1e-4)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize(
    "make", [lambda m: m.MaxPool3d((2, 3, 2), 2, 1, return_indices=True),
             lambda m: m.MaxPool1d(3, 1, 1, return_indices=True),
             lambda m: m.AdaptiveMaxPool3d((2, 3, 2), return_indices=True)],
)  # fmt: skip
def test_max_pool_indices_with_ties(device: str, make: Any, rng: Any) -> None:
    shape = (2, 2, 4, 5, 5) if "3d" in repr(make(torch.nn)).lower() else (2, 3, 9)
    data = rng.integers(0, 3, shape).astype(np.float32)  # many ties: the first one wins
    x, tx = pair(data, device)
    (out, index), (expected, expected_index) = make(nn)(x), make(torch.nn)(tx)
    assert_same_outputs(out, expected)
    np.testing.assert_array_equal(index.numpy(force=True), expected_index.numpy(force=True))


def test_max_unpool_round_trip(device: str, rng: Any) -> None:
    for spatial, shape in ((1, (2, 3, 9)), (2, (2, 3, 6, 7)), (3, (1, 2, 4, 5, 4))):
        tx = torch.tensor(rng.standard_normal(shape), dtype=torch.float32)
        pool = getattr(torch.nn, f"MaxPool{spatial}d")(2, return_indices=True)
        values, indices = pool(tx)
        ours = getattr(nn, f"MaxUnpool{spatial}d")(2)
        theirs = getattr(torch.nn, f"MaxUnpool{spatial}d")(2)
        assert repr(ours) == repr(theirs)
        v = ember.tensor(values.detach().numpy(), device=device, requires_grad=True)
        i = ember.tensor(indices.numpy(), device=device)
        size = list(shape[-spatial:])
        out, expected = ours(v, i, output_size=size), theirs(values, indices, output_size=size)
        assert_same_outputs(out, expected)
        out.sum().backward()
        assert_same_outputs(v.grad, torch.ones_like(values))
    with pytest.raises(ValueError, match="invalid output_size"):
        nn.MaxUnpool2d(2)(v.detach().squeeze(0), i.squeeze(0), output_size=[20, 20])


def test_max_unpool_invalid_index(device: str) -> None:
    values = ember.ones((1, 1, 2), device=device)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 9 \(output volumes"):
        F.max_unpool1d(values, ember.tensor([[[0, 9]]], device=device), 2)


@pytest.mark.parametrize("spatial", [2, 3])
def test_fractional_max_pool_matches_torch(device: str, spatial: int, rng: Any) -> None:
    shape = (2, 3, 9, 8) if spatial == 2 else (2, 2, 6, 7, 5)
    samples = rng.random((shape[0], shape[1], spatial))
    for dt, tdt in ((ember.float32, torch.float32), (ember.float64, torch.float64)):
        data = rng.standard_normal(shape)
        x = ember.tensor(data, dtype=dt, device=device, requires_grad=True)
        tx = torch.tensor(data, dtype=tdt, requires_grad=True)
        s, ts = ember.tensor(samples, dtype=dt, device=device), torch.tensor(samples, dtype=tdt)
        kwargs: dict[str, Any] = {"output_size": 4} if spatial == 2 else {"output_ratio": 0.5}
        layer = getattr(nn, f"FractionalMaxPool{spatial}d")(
            2, return_indices=True, _random_samples=s, **kwargs
        )
        theirs = getattr(torch.nn, f"FractionalMaxPool{spatial}d")(
            2, return_indices=True, _random_samples=ts, **kwargs
        )
        (out, index), (expected, expected_index) = layer(x), theirs(tx)
        assert_same_outputs(out, expected)
        np.testing.assert_array_equal(index.numpy(force=True), expected_index.numpy(force=True))
        out.sum().backward()
        expected.sum().backward()
        assert_same_outputs(x.grad, tx.grad)
    unsampled = getattr(nn, f"FractionalMaxPool{spatial}d")(2, output_ratio=0.5)
    assert unsampled(ember.tensor(rng.standard_normal(shape), device=device)).shape[2] == 4 - (
        spatial == 3
    )
    with pytest.raises(ValueError, match="requires specifying either an output size"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)


@pytest.mark.parametrize(
    "options",
    [
        {"kernel_size": 2},
        {"kernel_size": (2, 3), "dilation": (2, 1), "padding": 1, "stride": (2, 1)},
    ],
)
def test_fold_unfold_match_torch(device: str, options: dict[str, Any], rng: Any) -> None:
    x, tx = pair(rng.standard_normal((2, 3, 6, 7)), device, grad=True)
    cols, expected = F.unfold(x, **options), torch.nn.functional.unfold(tx, **options)
    assert_same_outputs(cols, expected)
    assert_same_outputs(nn.Unfold(**options)(x), torch.nn.Unfold(**options)(tx))
    image = F.fold(cols * 2, (6, 7), **options)
    expected_image = torch.nn.functional.fold(expected * 2, (6, 7), **options)
    assert_same_outputs(image, expected_image)
    assert_same_outputs(
        nn.Fold((6, 7), **options)(cols), torch.nn.Fold((6, 7), **options)(expected)
    )
    image.sum().backward()
    expected_image.sum().backward()
    assert_same_outputs(x.grad, tx.grad)
    unbatched = F.fold(cols[0], (6, 7), **options)
    assert_same_outputs(unbatched, torch.nn.functional.fold(expected[0], (6, 7), **options))
    assert repr(nn.Fold((6, 7), **options)) == repr(torch.nn.Fold((6, 7), **options))
    assert repr(nn.Unfold(**options)) == repr(torch.nn.Unfold(**options))


def test_fold_errors(device: str) -> None:
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(ember.zeros((1, 5, 12), device=device), (4, 5), 2)
    with pytest.raises(RuntimeError, match="match the calculated number of sliding blocks"):
        F.fold(ember.zeros((1, 4, 10), device=device), (4, 5), 2)
    with pytest.raises(NotImplementedError, match="Only 3D or 4D input Tensors"):
        F.unfold(ember.zeros((2, 3), device=device), 2)


def test_conv_tbc_matches_torch(device: str, rng: Any) -> None:
    x, tx = pair(rng.standard_normal((7, 2, 3)), device, grad=True)
    w, tw = pair(rng.standard_normal((3, 3, 5)), device, grad=True)
    b, tb = pair(rng.standard_normal(5), device, grad=True)
    out, expected = F.conv_tbc(x, w, b, 1), torch.conv_tbc(tx, tw, tb, 1)
    assert_same_outputs(out, expected, atol=1e-5)
    out.sum().backward()
    expected.sum().backward()
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        assert_same_outputs(ours.grad, theirs.grad, atol=1e-4)


def test_gradients_by_finite_differences(device: str, rng: Any) -> None:
    x = rng.standard_normal((1, 2, 3, 3, 3))
    w = rng.standard_normal((2, 1, 2, 2, 2))
    check_gradients(lambda a, b: F.conv3d(a, b, groups=2, padding=(1, 0, 1)), [x, w], device)
    check_gradients(
        lambda a, b: F.conv_transpose3d(a, b, groups=2, stride=2, output_padding=1), [x, w],
        device,
    )  # fmt: skip
    check_gradients(lambda a: F.max_pool3d(a, 2, 1), [x], device)
    check_gradients(lambda a: F.avg_pool3d(a, 2, 1, 1, count_include_pad=False), [x], device)
    check_gradients(lambda a: F.fold(a, (3, 4), 2), [rng.standard_normal((1, 8, 6))], device)


def test_double_backward_through_conv3d(device: str, rng: Any) -> None:
    x = tensor(rng.standard_normal((1, 1, 3, 3, 3)), device, grad=True)
    w = tensor(rng.standard_normal((1, 1, 2, 2, 2)), device, grad=True)
    tx = torch.tensor(x.numpy(force=True), requires_grad=True)
    tw = torch.tensor(w.numpy(force=True), requires_grad=True)
    (gx,) = ember.autograd.grad(F.conv3d(x, w).pow(2).sum(), [x], create_graph=True)
    (tgx,) = torch.autograd.grad(torch.nn.functional.conv3d(tx, tw).pow(2).sum(), [tx],
                                 create_graph=True)  # fmt: skip
    gx.sum().backward()
    tgx.sum().backward()
    assert_same_outputs(w.grad, tw.grad, atol=1e-10)


def test_conv3d_errors(device: str) -> None:
    x = ember.zeros((1, 4, 3, 3, 3), device=device)
    with pytest.raises(RuntimeError, match="expected input\\[1, 4, 3, 3, 3\\] to have 2 channels"):
        F.conv3d(x, ember.zeros((2, 2, 1, 1, 1), device=device))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv3d(x, ember.zeros((2, 4, 4, 1, 1), device=device))
    with pytest.raises(RuntimeError, match="Expected 4D \\(unbatched\\) or 5D \\(batched\\)"):
        F.conv3d(ember.zeros((4, 3, 3), device=device), ember.zeros((2, 4, 1, 1, 1), device=device))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride"):
        F.conv_transpose3d(x, ember.zeros((4, 1, 2, 2, 2), device=device), output_padding=1)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv3d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        nn.ConvTranspose3d(1, 1, 3, padding_mode="reflect")
    with pytest.raises(RuntimeError, match="non-empty 4D or 5D"):
        F.max_pool3d(ember.zeros((3, 3, 3), device=device), 2)


def test_empty_batches_and_pool3d_errors(device: str) -> None:
    empty = ember.zeros((0, 2, 3, 3, 3), device=device)
    reference = torch.zeros(0, 2, 3, 3, 3)
    for ours, theirs in (
        (F.max_pool3d(empty, 2), torch.nn.functional.max_pool3d(reference, 2)),
        (F.avg_pool3d(empty, 2), torch.nn.functional.avg_pool3d(reference, 2)),
        (F.conv3d(empty, ember.zeros((4, 2, 2, 2, 2), device=device)),
         torch.nn.functional.conv3d(reference, torch.zeros(4, 2, 2, 2, 2))),
    ):  # fmt: skip
        assert tuple(ours.shape) == tuple(theirs.shape)
    x = ember.zeros((1, 2, 3, 3, 3), device=device)
    with pytest.raises(RuntimeError, match=r"Calculated output size: \(2x0x0x0\). Output size"):
        F.max_pool3d(x, 4)
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        F.avg_pool3d(x, 2, 0)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel"):
        F.max_pool3d(x, 2, padding=2)
