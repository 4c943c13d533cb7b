"""Summary protocol buffers for each kind of value TensorBoard shows.

Each function returns a `Summary` for the writer to stamp with a step and wall time. The
layouts are TensorBoard's: plain `simple_value` scalars, `HistogramProto` buckets,
PNG-encoded images, the text plugin's string tensors and the hparams plugin's session data.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.types_pb2 import DT_STRING

from ember.utils.tensorboard._values import as_array, as_scalar

__all__ = ["histogram", "image", "scalar", "text"]


def scalar(tag: str, value: Any) -> Summary:
    return Summary(value=[Summary.Value(tag=tag, simple_value=as_scalar(value, "add_scalar"))])


def _tensorflow_edges() -> np.ndarray:
    """TensorFlow's default histogram edges: ±1e-12 growing by 10% up to 1e20, and 0."""
    positive = [1e-12]
    while positive[-1] < 1e20:
        positive.append(positive[-1] * 1.1)
    edges = np.array(positive)
    return np.concatenate([-edges[::-1], [0.0], edges])


_TENSORFLOW_EDGES = _tensorflow_edges()


def histogram(
    tag: str, values: Any, bins: Any = "tensorflow", max_bins: int | None = None
) -> Summary:
    """A histogram of `values`, bucketed as `numpy.histogram(values, bins)` buckets them.

    `bins="tensorflow"` uses TensorFlow's exponential edges, the default of PyTorch's
    writer. Buckets are (right edge, count) pairs; empty ones at either end are dropped,
    all but one empty bucket in front whose edge is where the data starts, as PyTorch
    writes them.
    """
    data = as_array(values).astype(np.float64).reshape(-1)
    if data.size == 0:
        raise ValueError("add_histogram: the input has no elements")
    if not np.isfinite(data).all():
        raise ValueError("add_histogram: the input has non-finite values")
    edges = _TENSORFLOW_EDGES if isinstance(bins, str) and bins == "tensorflow" else bins
    counts, limits = np.histogram(data, bins=edges)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        pad = (-len(counts)) % group
        counts = np.pad(counts, (0, pad)).reshape(-1, group).sum(axis=1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    used = np.flatnonzero(counts)
    first, last = int(used[0]), int(used[-1]) + 1
    proto = HistogramProto(
        min=float(data.min()),
        max=float(data.max()),
        num=float(data.size),
        sum=float(data.sum()),
        sum_squares=float(np.dot(data, data)),
        bucket_limit=limits[first : last + 1].tolist(),
        bucket=[0.0, *counts[first:last].astype(np.float64).tolist()],
    )
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def _to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    layout = dataformats.upper()
    if sorted(layout) != sorted(set(layout)) or not set(layout) <= set("NCHW"):
        raise ValueError(f"add_image: invalid dataformats {dataformats!r}")
    if array.ndim != len(layout):
        raise ValueError(
            f"add_image: an image of shape {list(array.shape)} does not match "
            f"dataformats {dataformats!r}"
        )
    if "N" in layout:
        array = _grid(np.moveaxis(array, layout.index("N"), 0), layout.replace("N", ""))
        layout = "HWC" if "C" in layout else "HW"
    if "C" not in layout:
        array, layout = array[..., None], layout + "C"
    hwc = np.transpose(array, [layout.index(axis) for axis in "HWC"])
    if hwc.shape[2] == 1:
        hwc = np.repeat(hwc, 3, axis=2)
    if hwc.shape[2] not in (3, 4):
        raise ValueError(f"add_image: expected 1, 3 or 4 channels, got {hwc.shape[2]}")
    return hwc


_GRID_COLUMNS = 8


def _grid(batch: np.ndarray, layout: str) -> np.ndarray:
    """N images in rows of 8 (PyTorch's writer lays batches out so), as HWC."""
    if "C" not in layout:
        batch, layout = batch[..., None], layout + "C"
    hwc = np.transpose(batch, [0, *(1 + layout.index(axis) for axis in "HWC")])
    if hwc.shape[3] == 1:
        hwc = np.repeat(hwc, 3, axis=3)
    n, h, w, c = hwc.shape
    columns = min(n, _GRID_COLUMNS)
    rows = -(-n // columns)
    canvas = np.zeros((rows * h, columns * w, c), dtype=hwc.dtype)
    for i in range(n):
        r, k = divmod(i, columns)
        canvas[r * h : (r + 1) * h, k * w : (k + 1) * w] = hwc[i]
    return canvas


def image(tag: str, values: Any, dataformats: str = "CHW") -> Summary:
    """One image (or a grid of a batch) as PNG: floats in [0, 1] scale to 0..255
    (truncated, as PyTorch's writer does)."""
    from PIL import Image  # Pillow encodes the PNG, as PyTorch's writer does

    array = as_array(values)
    hwc = _to_hwc(array, dataformats)
    if hwc.dtype != np.uint8:
        hwc = np.clip(hwc.astype(np.float32) * 255.0, 0.0, 255.0).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(hwc).save(buffer, format="PNG")
    height, width, channels = hwc.shape
    proto = Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=buffer.getvalue()
    )
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def text(tag: str, text_string: str) -> Summary:
    """A string for TensorBoard's text plugin (a one-element string tensor)."""
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    tensor = TensorProto(
        dtype=DT_STRING,
        string_val=[text_string.encode("utf-8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    value = Summary.Value(tag=f"{tag}/text_summary", metadata=metadata, tensor=tensor)
    return Summary(value=[value])
