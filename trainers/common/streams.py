"""Output that cannot kill a training run: a closed stdout/stderr falls back to the run's log file.

Training runs for hours are piped into ``tee`` or left under ``nohup``/``tmux``. When the
reader of the pipe dies (Ctrl-C reaches ``tee`` too) or the terminal goes away (SIGHUP),
the next ``print`` or progress-bar refresh raises ``BrokenPipeError`` (or ``EIO``), which,
unhandled, ends the run wherever it happens: mid-iteration, inside a signal handler,
before the checkpoint is written. Inside :func:`fallback_output` ``sys.stdout`` and
``sys.stderr`` are :class:`FallbackStream` s: the first write or flush that fails points
that stream's file descriptor at ``<run>/train.log`` (appended to; C-level writes and
anything still buffered follow it there) and the write is retried, so the run goes on and
every later line, the resume command included, lands in the log. Progress-bar refreshes
(a ``\\r`` line without a newline) are not copied to the log; the bar's last state is,
when it closes.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


class _LogFile:
    """The run's log file, opened on first use and shared by stdout and stderr."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def fd(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class FallbackStream(io.TextIOBase):
    """``stream`` until a write or flush on it fails with ``OSError``; then the log file (see the module)."""

    def __init__(self, stream: TextIO, log: _LogFile, name: str):
        super().__init__()
        self.stream, self.log, self.name = stream, log, name
        self.fell_back: str | None = None  # why, once it has
        self._log_stream: TextIO | None = None  # when the stream has no file descriptor to redirect
        self._bar = ""  # the last progress-bar refresh skipped while falling back

    def write(self, text: str) -> int:
        if self.fell_back is not None:
            return self._write_log(text)
        try:
            return self.stream.write(text)
        except OSError as e:
            self._fall_back(e)
            return self._write_log(text)

    def flush(self) -> None:
        try:
            if self._log_stream is not None:
                self._log_stream.flush()
            else:
                self.stream.flush()
        except OSError as e:
            if self.fell_back is not None:
                return  # the log itself failed (disk full): nothing left to write to
            self._fall_back(e)
            self.flush()

    def _write_log(self, text: str) -> int:
        if "\r" in text and "\n" not in text:  # a progress-bar refresh: keep the last one only
            self._bar = text.rsplit("\r", 1)[-1]
            return len(text)
        if text.startswith("\n") and self._bar:
            text, self._bar = self._bar + text, ""
        target = self._log_stream or self.stream
        try:
            target.write(text.replace("\r", ""))
            target.flush()
        except OSError:
            pass  # the log failed too (disk full): a lost line must not end the run
        return len(text)

    def _fall_back(self, error: OSError) -> None:
        self.fell_back = f"{type(error).__name__}: {error.strerror or error}"
        note = (f"[unilab] {time.strftime('%Y-%m-%d %H:%M:%S')}: {self.name} was closed ({self.fell_back}); "
                f"its output goes on here\n").encode()
        try:
            fd = self.log.fd()
            os.write(fd, note)
            os.dup2(fd, self.stream.fileno())  # what is still buffered, and C-level writes, go there too
        except (OSError, ValueError):  # no file descriptor (a test's capture): write to the log directly
            try:
                self._log_stream = open(self.log.path, "a")
            except OSError:
                self._log_stream = open(os.devnull, "w")

    # what code that inspects a stream asks
    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        try:
            return self.fell_back is None and self.stream.isatty()
        except (OSError, ValueError):
            return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"

    def writable(self) -> bool:
        return True

    def __getattr__(self, name: str):  # the rest (``buffer``, ``reconfigure``, ...): the wrapped stream's
        return getattr(self.stream, name)


@contextlib.contextmanager
def fallback_output(log_path: str | os.PathLike) -> Iterator[tuple[FallbackStream, FallbackStream]]:
    """Make ``sys.stdout`` and ``sys.stderr`` :class:`FallbackStream` s onto ``log_path`` inside the block.

    On leaving, both are flushed (a pipe that died after the last write fails here, not at
    interpreter exit, where it would change the exit status) and put back.
    """
    log = _LogFile(Path(log_path))
    saved = sys.stdout, sys.stderr
    out, err = FallbackStream(sys.stdout, log, "stdout"), FallbackStream(sys.stderr, log, "stderr")
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        for stream in (out, err):
            stream.flush()
        sys.stdout, sys.stderr = saved
        if out._log_stream is not None:
            out._log_stream.close()
        if err._log_stream is not None:
            err._log_stream.close()
        log.close()
