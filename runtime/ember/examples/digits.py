"""Train a small CNN on scikit-learn's handwritten digits: `python -m ember.examples.digits`.

The 1,797 8x8 images ship inside scikit-learn (no download). A fixed, stratified 80/20
split holds out 360 images; the model trains on the rest with Adam, a cosine learning-rate
schedule and label smoothing, reports loss and accuracy per epoch, writes a checkpoint
with `ember.save`, reloads it into a fresh model with `ember.load` (test accuracy must not
change), plots the curves to a PNG and exits non-zero below 97% held-out accuracy.

Data-parallel on several processes with the same global batch:
`python -m ember.distributed.run --nproc-per-node 2 -m ember.examples.digits`. Each rank
then trains a DistributedDataParallel copy on its DistributedSampler share (batch 32 split
between the ranks); rank 0 prints, writes the checkpoint and draws the plot.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
from tqdm import tqdm  # type: ignore[import-untyped]  # ships no type information

import ember
from ember import distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel
from ember.optim import Adam
from ember.optim.lr_scheduler import CosineAnnealingLR
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset

__all__ = [
    "BATCH_SIZE",
    "EPOCHS",
    "LABEL_SMOOTHING",
    "LEARNING_RATE",
    "TARGET_ACCURACY",
    "History",
    "build_model",
    "choose_device",
    "evaluate",
    "load_split",
    "main",
    "train",
]

TARGET_ACCURACY: Final = 0.97
EPOCHS: Final = 15
BATCH_SIZE: Final = 32
LEARNING_RATE: Final = 1e-2
LABEL_SMOOTHING: Final = 0.1
SPLIT_SEED: Final = 0  # the held-out set is the same whatever --seed says
TEST_FRACTION: Final = 0.2
CHECKPOINT_NAME: Final = "digits.ckpt"
CURVE_NAME: Final = "digits-curve.png"


@dataclass
class History:
    """Per-epoch figures of one training run, and when the test accuracy first reached 97%."""

    train_loss: list[float] = field(default_factory=list)
    train_accuracy: list[float] = field(default_factory=list)
    test_loss: list[float] = field(default_factory=list)
    test_accuracy: list[float] = field(default_factory=list)
    train_seconds: float = 0.0
    samples: int = 0
    epoch_reaching_target: int | None = None
    seconds_to_target: float | None = None


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Train, evaluate, checkpoint, reload and plot; 0 when the test accuracy is ≥ 97%."""
    args = _parser(prog).parse_args(argv)
    try:
        dev = choose_device(args.device)
    except RuntimeError as exc:  # an unknown or unavailable device: say why, no traceback
        print(f"digits: {exc}", file=sys.stderr)
        return 1
    ember.set_num_threads(args.threads)
    ember.manual_seed(args.seed)
    rank, world = _start_ranks(args.batch_size)
    x_train, y_train, x_test, y_test = (ember.from_numpy(a).to(dev) for a in load_split())
    ranks = f", {world} ranks of batch {args.batch_size // world}" if world > 1 else ""
    _say(
        rank,
        f"digits: {len(x_train)} training and {len(x_test)} test images of 8x8, 10 classes;"
        f" training on {dev} for {args.epochs} epochs (batch {args.batch_size}{ranks}, lr"
        f" {args.lr}, seed {args.seed}, {_plural(ember.get_num_threads(), 'thread')})",
    )
    model = build_model().to(dev)
    trained = model if world == 1 else _data_parallel(model)
    optimizer = Adam(trained.parameters(), lr=args.lr)
    history = train(trained, optimizer, (x_train, y_train), (x_test, y_test), args)
    if rank != 0:  # the others are done: rank 0 reports, checkpoints and plots
        return _finish_ranks(0, world)
    _summarise(history, dev, len(x_test))

    args.out.mkdir(parents=True, exist_ok=True)
    unchanged = _checkpoint_round_trip(model, optimizer, args, dev, (x_test, y_test))
    print(f"curves: {_plot(history, args.out / CURVE_NAME)}")
    accuracy = history.test_accuracy[-1]
    if not unchanged:
        print("error: the reloaded model predicts differently", file=sys.stderr)
        return _finish_ranks(1, world)
    if accuracy < TARGET_ACCURACY:
        print(
            f"error: test accuracy {accuracy:.2%} is below {TARGET_ACCURACY:.0%}", file=sys.stderr
        )
        return _finish_ranks(1, world)
    return _finish_ranks(0, world)


def _start_ranks(batch_size: int) -> tuple[int, int]:
    """This process's rank and the number of ranks: (0, 1) unless a launcher started
    several (WORLD_SIZE > 1, as ember.distributed.run and torchrun set), in which case the
    default process group is made here."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return 0, 1
    dist.init_process_group()
    world = dist.get_world_size()
    if batch_size % world:
        raise SystemExit(f"digits: --batch-size {batch_size} does not split over {world} ranks")
    return dist.get_rank(), world


def _data_parallel(model: nn.Module) -> nn.Module:
    return DistributedDataParallel(model)  # rank 0's initial weights on every rank


def _finish_ranks(status: int, world: int) -> int:
    """Leave the process group `_start_ranks` made (if it made one); return `status`."""
    if world > 1:
        dist.destroy_process_group()
    return status


def _say(rank: int, text: str) -> None:
    if rank == 0:
        print(text)


def _summarise(history: History, dev: ember.device, test_size: int) -> None:
    """The final accuracy, the training throughput and when 97% was first reached."""
    accuracy = history.test_accuracy[-1]
    correct = round(accuracy * test_size)
    print(f"test accuracy: {accuracy:.2%} ({correct}/{test_size} held-out images)")
    throughput = history.samples / history.train_seconds
    print(f"throughput: {throughput:.0f} samples/s (training, on {dev})")
    if history.seconds_to_target is None:
        print(f"time to {TARGET_ACCURACY:.0%}: not reached")
    else:
        print(
            f"time to {TARGET_ACCURACY:.0%}: {history.seconds_to_target:.2f} s of training"
            f" (epoch {history.epoch_reaching_target})"
        )


def _parser(prog: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m ember.examples.digits",
        description="Train a small CNN on scikit-learn's 8x8 handwritten digits with Ember.",
    )
    parser.add_argument(
        "--device", help="device to train on (default: EMBER_DEVICE, else the best available)"
    )
    parser.add_argument("--epochs", type=_positive, default=EPOCHS, help=f"default {EPOCHS}")
    parser.add_argument(
        "--batch-size", type=_positive, default=BATCH_SIZE, help=f"default {BATCH_SIZE}"
    )
    parser.add_argument(
        "--lr", type=float, default=LEARNING_RATE, help=f"Adam's learning rate ({LEARNING_RATE})"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds initialisation and shuffling")
    parser.add_argument(
        "--threads",
        type=_positive,
        default=1,
        help="intra-op threads (default 1: ops on 8x8 images are too small to gain from more)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("demo-output"),
        help="folder for the checkpoint and the plot (./demo-output)",
    )
    return parser


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def choose_device(requested: str | None = None) -> ember.device:
    """`requested`, else EMBER_DEVICE, else the first accelerator, else cpu.

    A device that computes on the host's own cores (PoCL's OpenCL CPU device) is no faster
    than the cpu device, so it trains only when asked for.
    """
    name = requested or os.environ.get("EMBER_DEVICE")
    if name is None:
        accelerators = [
            f"{kind}:{i}"
            for kind in ember.devices()
            for i in range(ember.device_count(kind))
            if not ember.device(f"{kind}:{i}")._backend.runs_on_host(i)
        ]
        name = accelerators[0] if accelerators else "cpu"
    dev = ember.device(name)
    ember.empty(0, device=dev)  # raises now, naming the device, if it is unusable
    return dev


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """x_train, y_train, x_test, y_test: float32 images (N, 1, 8, 8) in [0, 1], int64 labels."""
    # Imported here: scikit-learn takes a second to import and only the data needs it.
    from sklearn.datasets import load_digits  # type: ignore[import-untyped]  # untyped
    from sklearn.model_selection import train_test_split  # type: ignore[import-untyped]

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=TEST_FRACTION, stratify=labels, random_state=SPLIT_SEED
    )
    return x_train, y_train, x_test, y_test


def build_model() -> nn.Sequential:
    """Two stages of 3x3 conv, ReLU, 2x2 max-pool (1 -> 16 -> 32 channels), then a Linear."""
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 8x8 -> 4x4
        nn.Conv2d(16, 32, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 4x4 -> 2x2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


def train(
    model: nn.Module,
    optimizer: Adam,
    train_set: tuple[ember.Tensor, ember.Tensor],
    test_set: tuple[ember.Tensor, ember.Tensor],
    args: argparse.Namespace,
) -> History:
    """Run `args.epochs` epochs, evaluating on the test set after each; return the history.

    Wrapped in DistributedDataParallel, `model` trains on this rank's share of each epoch
    (a DistributedSampler) with batches of `args.batch_size` split over the ranks."""
    dataset = TensorDataset(*train_set)
    sampler: DistributedSampler | None = None
    rank = 0
    if isinstance(model, DistributedDataParallel):
        sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed)
        rank = sampler.rank
        share = args.batch_size // sampler.num_replicas
        loader = DataLoader(dataset, batch_size=share, sampler=sampler)
    else:
        generator = ember.Generator().manual_seed(args.seed)
        loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, generator=generator)
    loss_function = nn.CrossEntropyLoss(label_smoothing=LABEL_SMOOTHING)
    scheduler = CosineAnnealingLR(optimizer, T_max=args.epochs)
    history = History()
    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        started = time.perf_counter()
        figures = _train_epoch(model, optimizer, loader, loss_function, epoch, args, rank)
        loss, accuracy = _over_ranks(figures) if sampler is not None else _means(figures)
        history.train_seconds += time.perf_counter() - started
        history.samples += len(train_set[0])
        scheduler.step()
        test_loss, test_accuracy = evaluate(model, *test_set, loss_function)
        _record(history, epoch, (loss, accuracy, test_loss, test_accuracy))
        _say(
            rank,
            f"epoch {epoch:2d}/{args.epochs}  loss {loss:.4f}  train acc {accuracy:6.2%}"
            f"  test loss {test_loss:.4f}  test acc {test_accuracy:6.2%}",
        )
    return history


def _means(figures: tuple[float, int, int]) -> tuple[float, float]:
    total_loss, correct, seen = figures
    return total_loss / seen, correct / seen


def _over_ranks(figures: tuple[float, int, int]) -> tuple[float, float]:
    """The epoch's mean loss and accuracy over every rank's share."""
    totals = ember.tensor(figures, dtype=ember.float64)
    dist.all_reduce(totals)
    total_loss, correct, seen = totals.tolist()
    return total_loss / seen, correct / seen


def _train_epoch(
    model: nn.Module,
    optimizer: Adam,
    loader: DataLoader[Any],
    loss_function: nn.CrossEntropyLoss,
    epoch: int,
    args: argparse.Namespace,
    rank: int,
) -> tuple[float, int, int]:
    """One pass over the loader with a progress bar (on rank 0); the summed loss, the
    number of correct predictions and of samples seen."""
    model.train()
    total_loss = 0.0
    correct = seen = 0
    bar = tqdm(
        loader, desc=f"epoch {epoch}/{args.epochs}", unit="batch", leave=False, disable=rank != 0
    )
    for images, labels in bar:
        optimizer.zero_grad()
        logits = model(images)
        loss = loss_function(logits, labels)
        loss.backward()
        optimizer.step()
        batch = len(labels)
        value = loss.item()
        total_loss += value * batch
        correct += int((logits.argmax(dim=1) == labels).sum().item())
        seen += batch
        bar.set_postfix(loss=f"{value:.3f}", refresh=False)
    bar.close()
    return total_loss, correct, seen


def evaluate(
    model: nn.Module,
    images: ember.Tensor,
    labels: ember.Tensor,
    loss_function: nn.Module | None = None,
) -> tuple[float, float]:
    """Mean loss (nan without `loss_function`) and accuracy on one batch, in eval mode."""
    model.eval()
    with ember.no_grad():
        logits = model(images)
        loss = loss_function(logits, labels).item() if loss_function is not None else float("nan")
        correct = (logits.argmax(dim=1) == labels).sum().item()
    return loss, correct / len(labels)


def _record(history: History, epoch: int, figures: tuple[float, float, float, float]) -> None:
    history.train_loss.append(figures[0])
    history.train_accuracy.append(figures[1])
    history.test_loss.append(figures[2])
    history.test_accuracy.append(figures[3])
    if history.epoch_reaching_target is None and figures[3] >= TARGET_ACCURACY:
        history.epoch_reaching_target = epoch
        history.seconds_to_target = history.train_seconds


def _checkpoint_round_trip(
    model: nn.Module,
    optimizer: Adam,
    args: argparse.Namespace,
    dev: ember.device,
    test_set: tuple[ember.Tensor, ember.Tensor],
) -> bool:
    """Save model + optimizer + epoch, load them into fresh objects; same predictions?"""
    path = args.out / CHECKPOINT_NAME
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": args.epochs,
    }
    ember.save(checkpoint, path)
    restored = ember.load(path, map_location=dev)
    fresh = build_model().to(dev)
    fresh.load_state_dict(restored["model"])
    Adam(fresh.parameters(), lr=args.lr).load_state_dict(restored["optimizer"])
    images, labels = test_set
    _, before = evaluate(model, images, labels)
    _, after = evaluate(fresh, images, labels)
    with ember.no_grad():
        same_logits = bool((model(images) == fresh(images)).all().item())
    unchanged = same_logits and after == before
    verdict = "unchanged, identical logits" if unchanged else "CHANGED"
    print(
        f"checkpoint: {path} ({path.stat().st_size / 1024:.0f} KiB, epoch {restored['epoch']})"
        f" reloaded into a fresh model: test accuracy {after:.2%} ({verdict})"
    )
    return unchanged


def _plot(history: History, path: Path) -> Path:
    """Loss and accuracy per epoch, train and test, as a PNG (the Agg backend: no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = range(1, len(history.train_loss) + 1)
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    left.plot(epochs, history.train_loss, marker="o", label="train")
    left.plot(epochs, history.test_loss, marker="o", label="test")
    left.set(
        title=f"loss (cross-entropy, label smoothing {LABEL_SMOOTHING})",
        xlabel="epoch",
        ylabel="loss",
    )
    right.plot(epochs, [100 * a for a in history.train_accuracy], marker="o", label="train")
    right.plot(epochs, [100 * a for a in history.test_accuracy], marker="o", label="test")
    right.axhline(100 * TARGET_ACCURACY, color="grey", linestyle="--", label="97% target")
    right.set(title="accuracy", xlabel="epoch", ylabel="accuracy (%)")
    for axes in (left, right):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.suptitle("Ember: small CNN on scikit-learn's 8x8 digits")
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


if __name__ == "__main__":
    raise SystemExit(main())
