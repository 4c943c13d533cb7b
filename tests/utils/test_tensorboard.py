"""ember.utils.tensorboard.SummaryWriter against PyTorch's: both log the same values, and
TensorBoard's own reader (EventAccumulator) must find the same events in both runs."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from PIL import Image  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from ember.utils.tensorboard import SummaryWriter  # noqa: E402

_ALL = {"scalars": 0, "histograms": 0, "images": 0, "tensors": 0}


def _log_both(tmp_path: Path, log: Any) -> tuple[EventAccumulator, EventAccumulator]:
    """Run `log(writer, to_tensor)` with each writer; return each run's reader."""
    readers = []
    for name, writer_type, to_tensor in (
        ("ember", SummaryWriter, ember.tensor),
        ("torch", TorchWriter, torch.tensor),
    ):
        with writer_type(str(tmp_path / name)) as writer:
            log(writer, to_tensor)
        reader = EventAccumulator(str(tmp_path / name), size_guidance=_ALL)
        reader.Reload()
        readers.append(reader)
    return readers[0], readers[1]


def test_scalars_match_torch(tmp_path: Path) -> None:
    def log(w: Any, t: Any) -> None:
        for step in range(4):
            w.add_scalar("train/loss", t(2.0 / (step + 1)), step)
            w.add_scalar("lr", 0.1 * step, step, walltime=100.0 + step)

    ours, theirs = _log_both(tmp_path, log)
    for tag in ("train/loss", "lr"):
        got = [(e.step, e.value) for e in ours.Scalars(tag)]
        assert got == [(e.step, e.value) for e in theirs.Scalars(tag)]
    assert [e.wall_time for e in ours.Scalars("lr")] == [100.0, 101.0, 102.0, 103.0]


def test_add_scalars_writes_one_run_per_tag_like_torch(tmp_path: Path) -> None:
    def log(w: Any, t: Any) -> None:
        for step in range(3):
            w.add_scalars("loss", {"train": t(1.0 + step), "val": 2.0 + step}, step)

    _log_both(tmp_path, log)
    for tag in ("train", "val"):
        readers = []
        for name in ("ember", "torch"):
            reader = EventAccumulator(str(tmp_path / name / f"loss_{tag}"))
            reader.Reload()
            readers.append([(e.step, e.value) for e in reader.Scalars("loss")])
        assert readers[0] == readers[1] and len(readers[0]) == 3


@pytest.mark.parametrize(
    "kwargs", [{}, {"bins": 10}, {"bins": "auto"}, {"bins": 50, "max_bins": 7}]
)
def test_histograms_match_torch(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    values = np.random.default_rng(0).normal(size=(40, 25))

    def log(w: Any, t: Any) -> None:
        w.add_histogram("weights", t(values), 3, **kwargs)

    ours, theirs = _log_both(tmp_path, log)
    a = ours.Histograms("weights")[0].histogram_value
    b = theirs.Histograms("weights")[0].histogram_value
    assert (a.min, a.max, a.num) == (b.min, b.max, b.num)
    assert a.sum == pytest.approx(b.sum) and a.sum_squares == pytest.approx(b.sum_squares)
    np.testing.assert_allclose(a.bucket_limit, b.bucket_limit, rtol=1e-12)
    np.testing.assert_array_equal(a.bucket, b.bucket)
    assert sum(a.bucket) == values.size


def _decoded(reader: EventAccumulator, tag: str) -> np.ndarray:
    event = reader.Images(tag)[0]
    return np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))


@pytest.mark.parametrize(
    ("shape", "dataformats", "integer"),
    [
        ((3, 9, 5), "CHW", False),
        ((9, 5, 3), "HWC", True),
        ((9, 5), "HW", False),
        ((1, 9, 5), "CHW", True),
        ((10, 1, 4, 6), "NCHW", False),
        ((3, 4, 6, 3), "NHWC", True),
    ],
)
def test_images_decode_to_what_torch_writes(
    tmp_path: Path, shape: tuple[int, ...], dataformats: str, integer: bool
) -> None:
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, shape, dtype=np.uint8) if integer else rng.random(shape)
    data = data if integer else data.astype(np.float32)
    batch = "N" in dataformats

    def log(w: Any, t: Any) -> None:
        add = w.add_images if batch else w.add_image
        add("picture", t(data), 0, dataformats=dataformats)

    ours, theirs = _log_both(tmp_path, log)
    np.testing.assert_array_equal(_decoded(ours, "picture"), _decoded(theirs, "picture"))


def test_text_matches_torch(tmp_path: Path) -> None:
    def log(w: Any, t: Any) -> None:
        w.add_text("notes", "epoch 1: **fine**", 1)

    ours, theirs = _log_both(tmp_path, log)
    a = ours.Tensors("notes/text_summary")[0]
    b = theirs.Tensors("notes/text_summary")[0]
    assert a.step == b.step == 1
    assert a.tensor_proto.string_val == b.tensor_proto.string_val == [b"epoch 1: **fine**"]


def _hparams_content(run: Path, tag: str) -> plugin_data_pb2.HParamsPluginData:
    reader = EventAccumulator(str(run), size_guidance=_ALL)
    reader.Reload()
    content = reader.SummaryMetadata(tag).plugin_data.content
    return plugin_data_pb2.HParamsPluginData.FromString(content)


def test_hparams_match_torch(tmp_path: Path) -> None:
    hparams = {"lr": 0.01, "batch": 32, "optimizer": "adam", "skipped": None}
    metrics = {"hparam/accuracy": 0.91, "hparam/loss": 0.3}

    def log(w: Any, t: Any) -> None:
        w.add_hparams(
            hparams, {k: t(v) for k, v in metrics.items()},
            hparam_domain_discrete={"batch": [16, 32, 64]}, run_name="session",
        )  # fmt: skip

    _log_both(tmp_path, log)
    for tag in ("_hparams_/experiment", "_hparams_/session_start_info"):
        ours = _hparams_content(tmp_path / "ember" / "session", tag)
        theirs = _hparams_content(tmp_path / "torch" / "session", tag)
        assert ours == theirs
    reader = EventAccumulator(str(tmp_path / "ember" / "session"))
    reader.Reload()
    assert reader.Scalars("hparam/accuracy")[0].value == pytest.approx(0.91)


def test_a_bool_hparam_is_logged_as_a_bool(tmp_path: Path) -> None:
    # torch files bools under number_value (its int check comes first); TensorBoard has a
    # bool type, and the docs list bool among the accepted values, so Ember uses it.
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_hparams({"nesterov": True}, {"m": 1.0}, run_name="s")
    start = _hparams_content(tmp_path / "s", "_hparams_/session_start_info")
    assert start.session_start_info.hparams["nesterov"].bool_value is True
    experiment = _hparams_content(tmp_path / "s", "_hparams_/experiment").experiment
    assert experiment.hparam_infos[0].type == api_pb2.DATA_TYPE_BOOL


def test_tensors_on_another_device_are_read_back(tmp_path: Path) -> None:
    device = "opencl" if ember.is_available("opencl") else "cpu"
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalar("x", ember.tensor(3.25, device=device), 7)
        writer.add_histogram("h", ember.arange(10.0, device=device), 7, bins=5)
    reader = EventAccumulator(str(tmp_path), size_guidance=_ALL)
    reader.Reload()
    assert [(e.step, e.value) for e in reader.Scalars("x")] == [(7, 3.25)]
    assert list(reader.Histograms("h")[0].histogram_value.bucket) == [0, 2, 2, 2, 2, 2]


def test_bad_input_is_refused_with_the_method_named(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(ValueError, match="add_scalar: expected a scalar"):
            writer.add_scalar("x", ember.ones(3))
        with pytest.raises(ValueError, match="add_image: an image of shape \\[4, 4\\]"):
            writer.add_image("i", np.zeros((4, 4)))
        with pytest.raises(ValueError, match="add_histogram: the input has no elements"):
            writer.add_histogram("h", np.zeros(0))
        writer.add_scalar("x", 1.0, 0)  # the writer still works afterwards
    reader = EventAccumulator(str(tmp_path))
    reader.Reload()
    assert [e.value for e in reader.Scalars("x")] == [1.0]


def test_default_log_dir_is_runs_with_time_host_and_comment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_exp") as writer:
        log_dir = Path(writer.get_logdir())
    assert log_dir.parent == Path("runs") and log_dir.name.endswith("_exp")
    assert list((tmp_path / log_dir).glob("events.out.tfevents.*"))


def test_without_tensorboard_the_import_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['tensorboard'] = None\n"
        "try:\n    import ember.utils.tensorboard\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "needs the tensorboard package" in out.stdout and "pip install tensorboard" in out.stdout
