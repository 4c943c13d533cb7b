"""conv1d, conv2d and conv_transpose2d: direct-loop NumPy float64 references, gradients
(and second derivatives) against central differences, PyTorch's errors and, where torch
is installed, parity with torch.nn.functional."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import ember
from ember.nn.functional._conv import conv1d, conv2d, conv_transpose2d

from ._helpers import tensor

Pair = tuple[int, int]


def _pair(v: int | tuple[int, int]) -> Pair:
    return (v, v) if isinstance(v, int) else v


def conv2d_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1,
) -> np.ndarray:  # fmt: skip
    """Cross-correlation by direct loops; padding is (top, bottom, left, right) or an int/pair."""
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    if isinstance(padding, tuple) and len(padding) == 4:
        top, bottom, left, right = padding
    else:
        top, left = _pair(padding)
        bottom, right = top, left
    n, _, h, width = x.shape
    c_out, c_group, kh, kw = w.shape
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (width + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c_out, oh, ow))
    per_group = c_out // groups
    for i in range(n):
        for o in range(c_out):
            g = o // per_group
            for y in range(oh):
                for z in range(ow):
                    patch = padded[
                        i, g * c_group : (g + 1) * c_group,
                        y * sh : y * sh + dh * (kh - 1) + 1 : dh,
                        z * sw : z * sw + dw * (kw - 1) + 1 : dw,
                    ]  # fmt: skip
                    out[i, o, y, z] = np.sum(patch * w[o]) + (b[o] if b is not None else 0.0)
    return out


def conv_transpose2d_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: Any = 1, padding: Any = 0,
    output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
) -> np.ndarray:  # fmt: skip
    """Each input pixel scatters its weighted kernel into the (uncropped) output."""
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    (oph, opw), (dh, dw) = _pair(output_padding), _pair(dilation)
    n, c_in, h, width = x.shape
    _, c_group, kh, kw = w.shape
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    ow = (width - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    full = np.zeros((n, c_group * groups, oh + 2 * ph + sh, ow + 2 * pw + sw))
    in_group = c_in // groups
    for i in range(n):
        for ci in range(c_in):
            g = ci // in_group
            for y in range(h):
                for z in range(width):
                    for a in range(kh):
                        for e in range(kw):
                            top, left = y * sh + a * dh, z * sw + e * dw
                            group = slice(g * c_group, (g + 1) * c_group)
                            full[i, group, top, left] += x[i, ci, y, z] * w[ci, :, a, e]
    out = full[:, :, ph : ph + oh, pw : pw + ow]
    return out + (b[None, :, None, None] if b is not None else 0.0)


Case = tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]
CONV2D_CASES: list[Case] = [
    ((2, 4, 6, 5), (6, 4, 3, 3), {}),
    ((2, 4, 7, 6), (6, 2, 3, 2), {"stride": 2, "padding": 1, "groups": 2}),
    ((1, 3, 7, 7), (2, 3, 2, 3), {"stride": (2, 1), "padding": (1, 2), "dilation": (2, 1)}),
    ((2, 6, 5, 5), (6, 1, 3, 3), {"padding": 1, "groups": 6}),
    ((2, 2, 5, 6), (3, 2, 4, 2), {"padding": "same", "dilation": (1, 2)}),
    ((1, 2, 4, 5), (3, 2, 1, 1), {"padding": "valid", "stride": 2}),
]  # fmt: skip


def _same_padding(w: tuple[int, ...], dilation: Any) -> tuple[int, int, int, int]:
    (dh, dw) = _pair(dilation)
    th, tw = dh * (w[2] - 1), dw * (w[3] - 1)
    return (th // 2, th - th // 2, tw // 2, tw - tw // 2)


@pytest.mark.parametrize("case", range(len(CONV2D_CASES)))
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_values(device: str, case: int, bias: bool, rng: Any) -> None:
    xs, ws, options = CONV2D_CASES[case]
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    ours = conv2d(
        tensor(x, device), tensor(w, device), tensor(b, device) if bias else None, **options
    )
    reference_options = dict(options)
    if reference_options.get("padding") == "same":
        reference_options["padding"] = _same_padding(ws, options.get("dilation", 1))
    elif reference_options.get("padding") == "valid":
        reference_options["padding"] = 0
    expected = conv2d_reference(x, w, b if bias else None, **reference_options)
    np.testing.assert_allclose(ours.numpy(force=True), expected, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_low_precision(device: str, dtype: str, rng: Any) -> None:
    x, w, b = (
        rng.standard_normal((2, 4, 6, 6)),
        rng.standard_normal((3, 4, 3, 3)),
        rng.standard_normal(3),
    )
    dt = getattr(ember, dtype)
    ours = conv2d(*(tensor(a, device, dt) for a in (x, w, b)), padding=1)
    assert ours.dtype is dt
    rounded = [a.astype(dtype).astype(np.float64) for a in (x, w, b)]
    expected = conv2d_reference(*rounded, padding=1)
    np.testing.assert_allclose(
        ours.numpy(force=True).astype(np.float64),
        expected,
        rtol=0,
        atol=1e-4 if dtype == "float32" else 2e-2,
    )


def test_conv2d_integers_exact(device: str, rng: Any) -> None:
    x, w = rng.integers(-5, 5, (2, 3, 5, 5)), rng.integers(-3, 3, (4, 3, 2, 2))
    ours = conv2d(tensor(x, device, ember.int64), tensor(w, device, ember.int64), stride=2)
    assert ours.dtype is ember.int64
    np.testing.assert_array_equal(
        ours.numpy(force=True), conv2d_reference(x, w, None, stride=2).astype(np.int64)
    )


def test_conv1d_and_unbatched(device: str, rng: Any) -> None:
    x, w, b = (
        rng.standard_normal((3, 4, 11)),
        rng.standard_normal((6, 2, 4)),
        rng.standard_normal(6),
    )
    ours = conv1d(tensor(x, device), tensor(w, device), tensor(b, device), 2, 3, 2, 2)
    expected = conv2d_reference(x[:, :, None], w[:, :, None], b, (1, 2), (0, 3), (1, 2), 2)[:, :, 0]
    np.testing.assert_allclose(ours.numpy(force=True), expected, atol=1e-12)
    single = conv1d(tensor(x[0], device), tensor(w, device), None, padding="same", groups=2)
    padded = conv2d_reference(x[:1, :, None], w[:, :, None], None, 1, (0, 0, 1, 2), 1, 2)
    np.testing.assert_allclose(single.numpy(force=True), padded[0, :, 0], atol=1e-12)
    image = conv2d(tensor(x[0, :, None], device), tensor(w[:, :, None], device), groups=2)
    np.testing.assert_allclose(
        image.numpy(force=True),
        conv2d_reference(x[:1, :, None], w[:, :, None], None, groups=2)[0],
        atol=1e-12,
    )


TRANSPOSE_CASES: list[Case] = [
    ((2, 4, 3, 4), (4, 3, 3, 3), {}),
    ((2, 4, 3, 3), (4, 2, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ((1, 2, 4, 3), (2, 3, 2, 3), {"stride": (2, 1), "dilation": 2, "output_padding": (1, 1)}),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv_transpose2d_values(device: str, case: int, rng: Any) -> None:
    xs, ws, options = TRANSPOSE_CASES[case]
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * options.get("groups", 1))
    ours = conv_transpose2d(tensor(x, device), tensor(w, device), tensor(b, device), **options)
    np.testing.assert_allclose(
        ours.numpy(force=True), conv_transpose2d_reference(x, w, b, **options), atol=1e-12
    )


def test_conv_transpose2d_is_the_input_gradient_of_conv2d(device: str, rng: Any) -> None:
    """<conv2d(x, w), g> = <x, conv_transpose2d(g, w)> for matching geometry."""
    x, w = rng.standard_normal((2, 4, 7, 7)), rng.standard_normal((6, 2, 3, 3))
    y = conv2d(tensor(x, device), tensor(w, device), stride=2, padding=1, groups=2)
    g = rng.standard_normal(tuple(y.shape))
    back = conv_transpose2d(tensor(g, device), tensor(w, device), stride=2, padding=1, groups=2)
    assert tuple(back.shape) == x.shape
    assert np.isclose(
        np.sum(y.numpy(force=True) * g), np.sum(x * back.numpy(force=True)), rtol=1e-12
    )


def _gradcheck(fn: Any, arrays: list[np.ndarray], device: str) -> None:
    inputs = tuple(tensor(a, device, grad=True) for a in arrays)
    assert ember.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-7, rtol=1e-5)


def _gradgradcheck(fn: Any, arrays: list[np.ndarray], device: str) -> None:
    inputs = tuple(tensor(a, device, grad=True) for a in arrays)
    assert ember.autograd.gradgradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("case", [1, 2, 4])
def test_conv2d_gradients(device: str, case: int, rng: Any) -> None:
    xs, ws, options = CONV2D_CASES[case]
    small = (1, *xs[1:])
    arrays = [rng.standard_normal(small), rng.standard_normal(ws), rng.standard_normal(ws[0])]
    _gradcheck(lambda x, w, b: conv2d(x, w, b, **options), arrays, device)


def test_conv1d_and_transpose_gradients(device: str, rng: Any) -> None:
    arrays = [
        rng.standard_normal((2, 4, 7)),
        rng.standard_normal((4, 2, 3)),
        rng.standard_normal(4),
    ]
    _gradcheck(lambda x, w, b: conv1d(x, w, b, 2, 1, 2, 2), arrays, device)
    xs, ws, options = TRANSPOSE_CASES[1]
    arrays = [rng.standard_normal((1, *xs[1:])), rng.standard_normal(ws), rng.standard_normal(4)]
    _gradcheck(lambda x, w, b: conv_transpose2d(x, w, b, **options), arrays, device)


def test_conv_second_derivatives(device: str, rng: Any) -> None:
    arrays = [rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 1, 2, 2))]
    _gradgradcheck(lambda x, w: conv2d(x, w, stride=2, padding=1, groups=2), arrays, device)
    arrays = [rng.standard_normal((1, 2, 3, 3)), rng.standard_normal((2, 2, 2, 2))]
    _gradgradcheck(lambda x, w: conv_transpose2d(x, w, stride=2, output_padding=1), arrays, device)


def test_conv_gradient_only_where_needed(device: str, rng: Any) -> None:
    x = tensor(rng.standard_normal((2, 3, 5, 5)), device)
    w = tensor(rng.standard_normal((4, 3, 3, 3)), device, grad=True)
    y = conv2d(x, w)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    y.backward(ember.ones_like(y))
    assert x.grad is None and w.grad is not None
    expected = conv2d_reference(
        x.numpy(force=True).transpose(1, 0, 2, 3), np.ones((4, 2, 3, 3)), None
    ).transpose(1, 0, 2, 3)
    np.testing.assert_allclose(w.grad.numpy(force=True), expected, atol=1e-12)


def test_conv2d_non_contiguous_input(device: str, rng: Any) -> None:
    x, w = rng.standard_normal((5, 3, 2, 4)), rng.standard_normal((2, 3, 2, 2))
    permuted = tensor(x, device).permute(2, 1, 0, 3)
    ours = conv2d(permuted, tensor(w, device), padding=1)
    np.testing.assert_allclose(
        ours.numpy(force=True),
        conv2d_reference(x.transpose(2, 1, 0, 3), w, None, padding=1),
        atol=1e-12,
    )


def test_conv_zero_sizes(device: str) -> None:
    empty_batch = conv2d(
        ember.zeros(0, 2, 5, 5, device=device), ember.zeros(3, 2, 3, 3, device=device)
    )
    assert tuple(empty_batch.shape) == (0, 3, 3, 3)
    no_channels = conv2d(
        ember.zeros(2, 0, 4, 4, device=device), ember.zeros(3, 0, 2, 2, device=device),
        ember.ones(3, device=device),
    )  # fmt: skip
    np.testing.assert_array_equal(no_channels.numpy(force=True), np.ones((2, 3, 3, 3)))


def _z(*shape: int, dtype: Any = None) -> Any:
    return ember.zeros(*shape, dtype=dtype)


# (call, PyTorch's exact message)
CONV_ERRORS: list[tuple[Any, str]] = [
    (
        lambda: conv2d(_z(2, 3), _z(6, 4, 3, 3)),
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]",
    ),
    (
        lambda: conv1d(_z(2, 4, 8), _z(6, 4, 3, 3)),
        "Expected 4-dimensional input for 4-dimensional weight [6, 4, 3, 3], but got "
        "3-dimensional input of size [2, 4, 8] instead",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 3, 3, 3)),
        "Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 8, 8] to have "
        "3 channels, but got 4 channels instead",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(5, 2, 3, 3), groups=2),
        "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got "
        "weight of size [[5, 2, 3, 3]] instead",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), groups=0),
        "non-positive groups is not supported",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), stride=0),
        "non-positive stride is not supported",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), padding=-1),
        "negative padding is not supported",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), dilation=0),
        "non-positive dilation is not supported",
    ),
    (
        lambda: conv2d(_z(2, 4, 2, 2), _z(6, 4, 3, 3)),
        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel "
        "size can't be greater than actual input size",
    ),
    (
        lambda: conv1d(_z(1, 2, 2), _z(1, 2, 2), dilation=3),
        "Calculated padded input size per channel: (2). Kernel size: (4). Kernel size "
        "can't be greater than actual input size",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), stride=2, padding="same"),
        "padding='same' is not supported for strided convolutions",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), padding="full"),
        "Invalid padding string: 'full'",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), _z(5)),
        "Given weight of size [6, 4, 3, 3], expected bias to be 1-dimensional with 6 "
        "elements, but got bias of size [5] instead",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3, dtype=ember.float64)),
        "Input type (float) and weight type (double) should be the same",
    ),
    (
        lambda: conv2d(_z(1, 4, 8, 8), _z(6, 4, 3, 3), _z(6, dtype=ember.float64)),
        "Input type (float) and bias type (double) should be the same",
    ),
    (
        lambda: conv2d(_z(2, 4, 8, 8), _z(6, 4, 3, 3), stride=(1, 1, 1)),
        "expected stride to be a single integer value or a list of 2 values to match the "
        "convolution dimensions, but got stride=[1, 1, 1]",
    ),
    (
        lambda: conv_transpose2d(_z(2, 4, 8, 8), _z(3, 6, 3, 3)),
        "Given transposed=1, weight of size [3, 6, 3, 3], expected input[2, 4, 8, 8] to "
        "have 3 channels, but got 4 channels instead",
    ),
    (
        lambda: conv_transpose2d(_z(2, 4, 8, 8), _z(4, 6, 3, 3), output_padding=1),
        "output padding must be smaller than either stride or dilation, but got "
        "output_padding_height: 1 output_padding_width: 1 stride_height: 1 stride_width: "
        "1 dilation_height: 1 dilation_width: 1",
    ),
    (
        lambda: conv_transpose2d(_z(1, 4, 2, 2), _z(4, 3, 3, 3), padding=3),
        "Given input size per channel: (2 x 2). Calculated output size per channel: (-2 x"
        " -2). Output size is too small",
    ),
    (
        lambda: conv_transpose2d(_z(1, 4, 2, 2), _z(4, 3, 3, 3), _z(5)),
        "Given transposed=1, weight of size [4, 3, 3, 3], expected bias to be "
        "1-dimensional with 3 elements, but got bias of size [5] instead",
    ),
]


@pytest.mark.parametrize("case", range(len(CONV_ERRORS)))
def test_conv_errors(case: int) -> None:
    call, message = CONV_ERRORS[case]
    with pytest.raises(RuntimeError, match=re.escape(message) + "$"):
        call()


def test_conv_transpose2d_rejects_string_padding() -> None:
    with pytest.raises(TypeError, match="argument 'padding' must be tuple of ints, not str"):
        conv_transpose2d(_z(1, 2, 3, 3), _z(2, 2, 3, 3), padding="same")  # type: ignore[arg-type]


@pytest.mark.parametrize("op", ["conv1d", "conv2d", "conv_transpose2d"])
def test_matches_torch(device: str, op: str, rng: Any) -> None:
    torch = pytest.importorskip("torch")
    spatial = (9,) if op == "conv1d" else (7, 6)
    x = rng.standard_normal((3, 4, *spatial)).astype(np.float32)
    w = rng.standard_normal((4, 2, *(3,) * len(spatial))).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    options: dict[str, Any] = {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}
    if op == "conv_transpose2d":
        options["output_padding"] = 1
    ours_in = [tensor(a, device, ember.float32, grad=True) for a in (x, w, b)]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ours = {"conv1d": conv1d, "conv2d": conv2d, "conv_transpose2d": conv_transpose2d}[op](
        *ours_in, **options
    )
    theirs = getattr(torch.nn.functional, op)(*theirs_in, **options)
    np.testing.assert_allclose(
        ours.detach().numpy(force=True), theirs.detach().numpy(force=True), atol=1e-4
    )
    g = rng.standard_normal(tuple(theirs.shape)).astype(np.float32)
    ours.backward(tensor(g, device, ember.float32))
    theirs.backward(torch.tensor(g))
    for mine, reference in zip(ours_in, theirs_in, strict=True):
        np.testing.assert_allclose(
            mine.grad.numpy(force=True), reference.grad.numpy(force=True), atol=1e-4
        )
