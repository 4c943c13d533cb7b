"""ember.onnx.export: every layer exported by tracing runs in onnxruntime and gives what
Ember's forward gives on the same input."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import ember.onnx  # noqa: E402
from ember.onnx._trace import _tensors  # noqa: E402


def _run(proto: Any, inputs: list[ember.Tensor]) -> list[np.ndarray]:
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: x.numpy() for i, x in zip(session.get_inputs(), inputs, strict=True)}
    return list(session.run(None, feeds))


def _check(model: nn.Module, *inputs: ember.Tensor, tol: float = 1e-5) -> Any:
    proto = ember.onnx.export(model, inputs if len(inputs) > 1 else inputs[0])
    got = _run(proto, list(inputs))
    model.eval()
    with ember.no_grad():
        want = _tensors(model(*inputs))
    assert len(got) == len(want)
    for ours, theirs in zip(got, want, strict=True):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=tol, atol=tol)
    return proto


def r(*shape: int) -> ember.Tensor:
    return ember.randn(*shape)


LAYERS: list[tuple[str, Callable[[], nn.Module], Callable[[], tuple[ember.Tensor, ...]]]] = [
    ("mlp", lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(-1)),
     lambda: (r(5, 4),)),
    ("cnn", lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                  nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 5)),
     lambda: (r(2, 3, 8, 8),)),
    ("embedding_norm", lambda: nn.Sequential(nn.Embedding(10, 6), nn.LayerNorm(6), nn.GELU(),
                                             nn.Dropout(0.1)),
     lambda: (ember.tensor([[1, 2, 3], [4, 5, 9]]),)),
    ("conv1d", lambda: nn.Conv1d(3, 4, 3, stride=2, padding=1), lambda: (r(2, 3, 9),)),
    ("conv2d_groups_same", lambda: nn.Conv2d(4, 4, 3, groups=2, dilation=2, padding="same"),
     lambda: (r(1, 4, 7, 7),)),
    ("conv_transpose1d", lambda: nn.ConvTranspose1d(3, 2, 3, stride=2), lambda: (r(1, 3, 5),)),
    ("conv_transpose2d", lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                    output_padding=1),
     lambda: (r(1, 3, 4, 4),)),
    ("max_pool", lambda: nn.MaxPool2d(3, stride=2, padding=1), lambda: (r(1, 2, 7, 7),)),
    ("avg_pool", lambda: nn.AvgPool2d(2), lambda: (r(1, 2, 4, 4),)),
    ("adaptive_avg_pool_1", lambda: nn.AdaptiveAvgPool2d(1), lambda: (r(1, 2, 4, 4),)),
    ("adaptive_avg_pool_2", lambda: nn.AdaptiveAvgPool2d((2, 2)), lambda: (r(1, 2, 4, 4),)),
    ("batch_norm1d", lambda: nn.BatchNorm1d(4), lambda: (r(3, 4),)),
    ("group_norm", lambda: nn.GroupNorm(2, 4), lambda: (r(2, 4, 3, 3),)),
    ("layer_norm_2d", lambda: nn.LayerNorm([3, 4]), lambda: (r(2, 3, 4),)),
    ("lstm_2_layers", lambda: nn.LSTM(4, 6, num_layers=2, batch_first=True),
     lambda: (r(2, 3, 4),)),
    ("gru_bidirectional", lambda: nn.GRU(4, 6, bidirectional=True), lambda: (r(3, 2, 4),)),
    ("rnn", lambda: nn.RNN(4, 6), lambda: (r(3, 2, 4),)),
    ("lstm_cell", lambda: nn.LSTMCell(4, 5), lambda: (r(2, 4),)),
    ("multihead_attention", lambda: nn.MultiheadAttention(8, 2, batch_first=True),
     lambda: (r(2, 3, 8), r(2, 3, 8), r(2, 3, 8))),
    ("transformer_encoder_layer", lambda: nn.TransformerEncoderLayer(16, 4, 32,
                                                                     batch_first=True),
     lambda: (r(2, 5, 16),)),
    ("transformer", lambda: nn.Transformer(8, 2, 1, 1, 16, batch_first=True),
     lambda: (r(2, 3, 8), r(2, 4, 8))),
    ("pixel_shuffle", lambda: nn.PixelShuffle(2), lambda: (r(1, 8, 2, 2),)),
    ("upsample_nearest", lambda: nn.Upsample(scale_factor=2), lambda: (r(1, 2, 2, 2),)),
    ("upsample_bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
     lambda: (r(1, 2, 3, 3),)),
    ("upsample_bilinear_corners", lambda: nn.Upsample(scale_factor=2, mode="bilinear",
                                                      align_corners=True),
     lambda: (r(1, 2, 3, 3),)),
    ("pads", lambda: nn.Sequential(nn.ZeroPad2d(1), nn.ReflectionPad2d(1),
                                   nn.ReplicationPad2d((1, 0, 2, 1))),
     lambda: (r(1, 1, 3, 3),)),
    ("bilinear", lambda: nn.Bilinear(3, 4, 5), lambda: (r(2, 3), r(2, 4))),
    ("dropout2d", lambda: nn.Dropout2d(), lambda: (r(1, 2, 3, 3),)),
    ("activations", lambda: nn.Sequential(
        nn.ELU(), nn.LeakyReLU(0.2), nn.SiLU(), nn.Softplus(beta=2), nn.Hardtanh(), nn.ReLU6(),
        nn.Tanh(), nn.Sigmoid(), nn.GELU("tanh"), nn.Identity(), nn.LogSoftmax(1)),
     lambda: (r(2, 6),)),
    ("flatten_unflatten", lambda: nn.Sequential(nn.Flatten(), nn.Unflatten(1, (2, 6))),
     lambda: (r(2, 3, 4),)),
    ("conv3d", lambda: nn.Conv3d(2, 3, 3, padding=1), lambda: (r(1, 2, 4, 4, 4),)),
    ("conv_transpose3d", lambda: nn.ConvTranspose3d(2, 3, 3, stride=2),
     lambda: (r(1, 2, 3, 3, 3),)),
    ("pools_1d", lambda: nn.Sequential(nn.MaxPool1d(2), nn.AvgPool1d(3, stride=2, padding=1)),
     lambda: (r(1, 2, 12),)),
    ("pools_3d", lambda: nn.Sequential(nn.MaxPool3d(2), nn.AvgPool3d(2)),
     lambda: (r(1, 2, 8, 8, 8),)),
    ("adaptive_pools", lambda: nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Flatten()),
     lambda: (r(1, 2, 4, 4, 4),)),
    ("adaptive_max_pool", lambda: nn.AdaptiveMaxPool2d(1), lambda: (r(1, 2, 4, 4),)),
    ("lp_pool", lambda: nn.LPPool2d(2, 2), lambda: (r(1, 2, 4, 4),)),
    ("instance_norm", lambda: nn.InstanceNorm2d(3, affine=True), lambda: (r(2, 3, 4, 4),)),
    ("rms_norm", lambda: nn.RMSNorm(6), lambda: (r(2, 6),)),
    ("local_response_norm", lambda: nn.LocalResponseNorm(3), lambda: (r(1, 5, 3, 3),)),
    ("sync_batch_norm", lambda: nn.SyncBatchNorm(3), lambda: (r(2, 3, 4),)),
    ("more_activations", lambda: nn.Sequential(
        nn.Hardswish(), nn.Hardsigmoid(), nn.Mish(), nn.CELU(0.5), nn.SELU(), nn.Softsign(),
        nn.Tanhshrink(), nn.Softshrink(), nn.Hardshrink(), nn.Threshold(0.1, 2.0),
        nn.AlphaDropout()),
     lambda: (r(2, 6),)),
    ("glu", lambda: nn.GLU(), lambda: (r(2, 6),)),
    ("prelu", lambda: nn.PReLU(3), lambda: (r(2, 3, 4),)),
    ("distances", lambda: _Distances(), lambda: (r(2, 6), r(2, 6))),
    ("softmax2d_shuffles", lambda: nn.Sequential(nn.Softmax2d(), nn.ChannelShuffle(2),
                                                 nn.PixelUnshuffle(2)),
     lambda: (r(1, 4, 4, 4),)),
    ("upsample_to_size", lambda: nn.Upsample(size=(5, 7)), lambda: (r(1, 2, 3, 3),)),
    ("constant_pad", lambda: nn.ConstantPad1d(2, 0.5), lambda: (r(1, 2, 3),)),
    ("lstm_projection", lambda: nn.LSTM(4, 6, proj_size=3), lambda: (r(3, 2, 4),)),
    ("transformer_encoder_pre_norm", lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, norm_first=True, activation="gelu"), 2),
     lambda: (r(3, 2, 8),)),
]  # fmt: skip


class _Distances(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cosine, self.pairwise = nn.CosineSimilarity(), nn.PairwiseDistance()

    def forward(self, a: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
        return self.cosine(a, b) + self.pairwise(a, b)


@pytest.mark.parametrize(("name", "make", "inputs"), LAYERS, ids=[c[0] for c in LAYERS])
def test_layers_export_and_match_onnxruntime(name: str, make: Any, inputs: Any) -> None:
    ember.manual_seed(0)
    _check(make(), *inputs(), tol=1e-4 if "trans" in name or "attention" in name else 1e-5)


class Glue(nn.Module):
    """Python between the layers: residuals, views, slicing, scalars, cat, masks."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.register_buffer("offset", ember.arange(9.0))

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        h = self.fc(x) * 0.5 + x
        h = h.view(2, 3, 2).permute(0, 2, 1).reshape(2, 6)
        h = ember.cat([h[:, :3], h[:, 3:] - 1.0, h[:, ::2].exp()], dim=1)
        h = h.masked_fill(h > 2.0, 2.0) + self.offset[None, :] / 3
        return ember.tanh(h).sum(dim=1, keepdim=True).clamp(min=-1.0) - h.mean()


def test_python_glue_between_layers_is_traced() -> None:
    ember.manual_seed(1)
    _check(Glue(), r(2, 6))


def test_names_files_and_mode() -> None:
    model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))
    model.train()
    x = r(4, 3)
    buffer = io.BytesIO()
    proto = ember.onnx.export(model, (x,), buffer, input_names=["features"],
                              output_names=["scores"])  # fmt: skip
    assert model.training  # back in its mode after the eval-mode trace
    loaded = onnx.load_from_string(buffer.getvalue())
    assert [i.name for i in loaded.graph.input] == ["features"]
    assert [o.name for o in loaded.graph.output] == ["scores"]
    assert {t.name for t in proto.graph.initializer} >= {"0.weight", "0.bias"}
    assert loaded.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 4
    model.eval()
    np.testing.assert_allclose(_run(loaded, [x])[0], model(x).detach().numpy(), rtol=1e-6)


def test_writes_a_file(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    ember.onnx.export(nn.Linear(2, 2), r(1, 2), path)
    onnx.checker.check_model(onnx.load(str(path)))


class Sorting(nn.Module):
    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return ember.cumsum(x, 0) + 1


def test_an_op_without_a_conversion_is_named() -> None:
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="cumsum"):
        ember.onnx.export(Sorting(), r(3))


def test_an_op_writing_in_place_without_a_conversion_is_named() -> None:
    # EmbeddingBag accumulates its bags with an in-place scatter: exporting the tensor it
    # wrote into as a constant would be wrong for every other input, so it is refused.
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="writes in place"):
        ember.onnx.export(nn.EmbeddingBag(10, 3), ember.tensor([[1, 2], [3, 4]]))


def test_unsupported_options_are_refused_not_ignored() -> None:
    model = nn.Linear(2, 2)
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="dynamic_axes"):
        ember.onnx.export(model, r(1, 2), dynamic_axes={"input_0": {0: "batch"}})
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="opset"):
        ember.onnx.export(model, r(1, 2), opset_version=11)
