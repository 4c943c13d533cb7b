"""SummaryWriter: PyTorch's event-file logger, over tensorboard's own file writer."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from types import TracebackType
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ember.utils.tensorboard import summary
from ember.utils.tensorboard._values import as_scalar
from ember.utils.tensorboard.hparams import hparams

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Stamps summaries with step and wall time and appends them to one event file."""

    def __init__(
        self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return str(self.event_writer.get_logdir())

    def add_event(
        self, event: Event, step: int | None = None, walltime: float | None = None
    ) -> None:
        event.wall_time = time.time() if walltime is None else float(walltime)
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(
        self, proto: Summary, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        self.add_event(Event(summary=proto), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


def _default_log_dir(comment: str) -> str:
    """runs/<Mon-DD_HH-MM-SS>_<host><comment>, PyTorch's default."""
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")


class SummaryWriter:
    """`SummaryWriter(log_dir=None, comment='', purge_step=None, max_queue=10,
    flush_secs=120, filename_suffix='')`, as torch.utils.tensorboard.SummaryWriter.

    Values may be ember tensors on any device, NumPy arrays or Python numbers.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        self.log_dir = str(log_dir) if log_dir is not None else _default_log_dir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] = {}
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        if self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # Events after purge_step from an earlier, crashed run are hidden on reload.
                restart = Event(session_log=SessionLog(status=SessionLog.START))
                self.file_writer.add_event(restart, self.purge_step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """One scalar (`new_style`/`double_precision` choose torch's tensor layout; the
        classic `simple_value` layout is written either way and TensorBoard reads it)."""
        del new_style, double_precision
        self._get_file_writer().add_summary(
            summary.scalar(tag, scalar_value), global_step, walltime
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Several scalars in one chart: each goes to the run `<log_dir>/<main_tag>_<tag>`."""
        when = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(base, f"{main_tag.replace('/', '_')}_{tag}")
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(
                    path, self.max_queue, self.flush_secs, self.filename_suffix
                )
            writer.add_summary(summary.scalar(main_tag, value), global_step, when)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        proto = summary.histogram(tag, values, bins, max_bins)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        proto = summary.image(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """A batch of images, laid out in one grid image."""
        proto = summary.image(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        self._get_file_writer().add_summary(summary.text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list[Any]] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Hyperparameters and their metrics, as one session in a sub-run (`run_name`,
        default the current time) that TensorBoard's HPARAMS tab lists."""
        experiment, started, ended = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = run_name or str(time.time())
        path = os.path.join(self._get_file_writer().get_logdir(), run)
        with SummaryWriter(path) as session:
            writer = session._get_file_writer()
            for proto in (experiment, started, ended):
                writer.add_summary(proto, global_step)
            for tag, value in metric_dict.items():
                session.add_scalar(tag, as_scalar(value, "add_hparams"), global_step)

    def flush(self) -> None:
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = None
        self.all_writers = {}

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
