"""Writing a file so that a crash or Ctrl-C leaves the old file or the new one, never a torn one."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Callable

#: tries at a fresh temp name before giving up (a clash needs 2**64 bad luck or a full folder)
_TEMP_NAME_TRIES = 100


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp)`` on a temp file beside ``path`` (same extension, so writers that
    pick a format by extension pick the right one), fsync it, then ``os.replace`` it onto
    ``path``. On any error (or ``KeyboardInterrupt``) the temp file is removed and ``path``
    is left as it was.

    The file gets the permissions any new file of the user gets (``0o666 & ~umask``,
    e.g. ``0644`` under umask ``022``), not the ``0600`` of :func:`tempfile.mkstemp`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp(path)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _create_temp(path: Path) -> str:
    """Create an empty, new ``.<stem>.<random><suffix>`` beside ``path``; its mode is
    ``0o666`` less the process umask (the kernel applies it), as for ``open(path, "w")``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TEMP_NAME_TRIES):
        tmp = path.parent / f".{path.stem}.{secrets.token_hex(8)}{path.suffix or '.tmp'}"
        try:
            os.close(os.open(tmp, flags, 0o666))
        except FileExistsError:
            continue
        return str(tmp)
    raise FileExistsError(f"could not create a temp file beside {path} after {_TEMP_NAME_TRIES} tries; "
                          f"clear stale .{path.stem}.* files in {path.parent}")
