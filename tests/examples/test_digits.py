"""The digits demo end to end: it trains to 97%, round-trips its checkpoint and draws its plot."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import ember
from ember.__main__ import main as ember_main
from ember.examples import digits

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_demo(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m ember.examples.digits ARGS` in a fresh interpreter, on one thread.

    One thread: the suite runs on two pytest workers on two cores, and more threads per
    worker would only make both wait on each other.
    """
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "ember.examples.digits", "--threads", "1", *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_valid_png(path: Path) -> tuple[int, int]:
    """Check the signature and every chunk's CRC up to IEND; return (width, height)."""
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE), f"{path} is not a PNG"
    offset, kinds, size = len(PNG_SIGNATURE), [], (0, 0)
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        kinds.append(kind)
        offset += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    assert offset == len(data)
    return size


def test_the_demo_trains_to_97_percent_and_round_trips_its_checkpoint(tmp_path: Path) -> None:
    result = run_demo("--out", str(tmp_path), "--seed", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout

    assert "training on cpu for 15 epochs (batch 32, lr 0.01, seed 0, 1 thread)" in out
    epochs = re.findall(r"^epoch +(\d+)/15 +loss ([\d.]+) .* test acc +([\d.]+)%$", out, re.M)
    assert [int(number) for number, _, _ in epochs] == list(range(1, 16))
    losses = [float(loss) for _, loss, _ in epochs]
    assert losses[-1] < losses[0]  # it learned

    accuracy = re.search(r"^test accuracy: ([\d.]+)% \((\d+)/360 held-out images\)$", out, re.M)
    assert accuracy, out
    assert float(accuracy.group(1)) >= 97.0
    assert float(epochs[-1][2]) == float(accuracy.group(1))
    assert abs(int(accuracy.group(2)) / 360 * 100 - float(accuracy.group(1))) < 0.01

    checkpoint = tmp_path / "digits.ckpt"
    reload_line = re.search(
        rf"^checkpoint: {re.escape(str(checkpoint))} \(\d+ KiB, epoch 15\) reloaded into a "
        r"fresh model: test accuracy ([\d.]+)% \(unchanged, identical logits\)$",
        out,
        re.M,
    )
    assert reload_line, out
    assert reload_line.group(1) == accuracy.group(1)
    assert re.search(r"^throughput: \d+ samples/s \(training, on cpu\)$", out, re.M)
    assert re.search(r"^time to 97%: [\d.]+ s of training \(epoch \d+\)$", out, re.M)
    assert "epoch 1/15" in result.stderr  # the tqdm progress bar

    state = ember.load(checkpoint)
    assert state["epoch"] == 15
    assert set(state["model"]) == {f"{i}.{p}" for i in (0, 3, 7) for p in ("weight", "bias")}
    assert tuple(state["model"]["0.weight"].shape) == (16, 1, 3, 3)
    assert state["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.0, abs=1e-12)
    assert len(state["optimizer"]["state"]) == 6

    curve = tmp_path / "digits-curve.png"
    assert re.search(rf"^curves: {re.escape(str(curve))}$", out, re.M)
    width, height = assert_valid_png(curve)
    assert width >= 600 and height >= 300


def test_the_demo_exits_non_zero_below_97_percent(tmp_path: Path) -> None:
    result = run_demo("--out", str(tmp_path), "--epochs", "1", "--lr", "1e-4")
    assert result.returncode == 1
    assert re.search(r"error: test accuracy [\d.]+% is below 97%", result.stderr)
    assert (tmp_path / "digits.ckpt").exists()  # the checkpoint and plot are still written
    assert_valid_png(tmp_path / "digits-curve.png")


def test_an_unknown_device_is_refused_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert digits.main(["--device", "nosuch"]) == 1
    err = capsys.readouterr().err
    assert "digits: unknown device type 'nosuch'" in err
    assert "Available device types: cpu" in err


def test_the_device_comes_from_the_flag_then_ember_device_then_the_best_available(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EMBER_DEVICE", raising=False)
    assert digits.choose_device() == ember.device("cpu")
    monkeypatch.setenv("EMBER_DEVICE", "cpu:7")
    with pytest.raises(RuntimeError, match=r"cpu:7 does not exist"):
        digits.choose_device()
    assert digits.choose_device("cpu") == ember.device("cpu")  # the flag wins
    monkeypatch.delenv("EMBER_DEVICE")
    # PoCL's OpenCL device computes on the host's cores: it is not chosen over cpu.
    if "opencl" in ember.devices():
        assert ember.device("opencl")._backend.runs_on_host(0)
        assert digits.choose_device() == ember.device("cpu")
    # Another device type listed as available is asked whether it is an accelerator.
    monkeypatch.setattr(ember, "devices", lambda: ["cpu", "elsewhere"])
    monkeypatch.setattr(ember, "device_count", lambda kind=None: 1)
    with pytest.raises(RuntimeError, match=r"unknown device type 'elsewhere'"):
        digits.choose_device()


def test_ember_demo_is_the_digits_demo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        ember_main(["demo", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m ember demo [-h] [--device DEVICE] [--epochs EPOCHS]")
    assert "--out OUT" in out


def test_the_split_is_fixed_stratified_and_normalised() -> None:
    x_train, y_train, x_test, y_test = digits.load_split()
    assert x_train.shape == (1437, 1, 8, 8) and x_test.shape == (360, 1, 8, 8)
    assert str(x_train.dtype) == "float32" and str(y_train.dtype) == "int64"
    assert float(x_train.min()) >= 0.0 and float(x_train.max()) == 1.0
    counts = [int((y_test == label).sum()) for label in range(10)]
    assert min(counts) >= 35 and max(counts) <= 37  # stratified: ~36 of each digit
    again = digits.load_split()
    assert (again[2] == x_test).all() and (again[3] == y_test).all()
