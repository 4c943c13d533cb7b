"""The error every inline kernel compiler raises (`ember_cpu.load_inline`, ...)."""

from __future__ import annotations

__all__ = ["CompileError"]


class CompileError(RuntimeError):
    """A kernel source that its device's compiler rejected.

    The message is the compiler's own (file and line included, the file named as the
    user named the source); `log` holds its whole output, `file` and `line` the first
    error's position (None when the compiler gave none), `command` what was run.
    """

    def __init__(
        self,
        message: str,
        *,
        log: str,
        file: str | None = None,
        line: int | None = None,
        command: str | None = None,
    ) -> None:
        super().__init__(message)
        self.log = log
        self.file = file
        self.line = line
        self.command = command
