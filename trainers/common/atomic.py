"""Writing a file so that a crash or Ctrl-C leaves the old file or the new one, never a torn one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp)`` on a temp file beside ``path`` (same extension, so writers that
    pick a format by extension pick the right one), fsync it, then ``os.replace`` it onto
    ``path``. On any error (or ``KeyboardInterrupt``) the temp file is removed and ``path``
    is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
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
