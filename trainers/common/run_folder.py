"""The rule that keeps ``unilab train`` / ``unilab ship`` from replacing a finished run by accident.

A folder *holds a run* when it has any file a run (or a shipped policy) is made of:
a checkpoint (``checkpoint.pt``, ``checkpoint.zip``, ``model.zip``), a log
(``progress.csv``) or an exported policy (``policy.onnx``). Writing a new run into such a
folder would overwrite its checkpoint, curve and log and mix TensorBoard events, so it is
refused with one line naming the choices: ``--resume DIR`` (go on with that run), another
``--out``, or ``--overwrite``, which moves the old folder aside to ``DIR.old-<timestamp>``
(nothing is deleted). An empty folder, or one holding other files only, is used as it is.

An ``--out`` where no folder can be made (a file, a path under a file, a folder this user
cannot write in) is refused the same way, one line, before anything is written:
:func:`out_folder_problem`; :func:`out_file_problem` is its twin for a file to write
(``unilab export --out``).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

#: files whose presence makes a folder a run (or a shipped policy) folder
RUN_FILES = ("checkpoint.pt", "checkpoint.zip", "model.zip", "progress.csv", "policy.onnx")


class RunFolderError(ValueError):
    """The output folder holds a run; the message names the choices."""


def holds_run(folder: str | os.PathLike) -> list[str]:
    """The :data:`RUN_FILES` that ``folder`` holds (empty when it is free to write into)."""
    folder = Path(folder)
    return [name for name in RUN_FILES if (folder / name).exists()] if folder.is_dir() else []


def same_folder(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name the same folder (a checkpoint file stands for its folder)."""
    def folder(p) -> Path:
        p = Path(p)
        return (p.parent if p.suffix in (".pt", ".zip") or p.is_file() else p).resolve()
    return folder(a) == folder(b)


def out_folder_problem(out: str | os.PathLike, option: str = "--out") -> str | None:
    """Why no run folder can be made at ``out`` (one line naming what to do), or ``None`` when one can.
    Writes nothing that stays: whether the nearest existing folder takes a new entry is tried with a
    probe folder, made and removed (what the permission bits say is not the answer for root, nor on a
    read-only mount). ``option`` names where ``out`` came from in the message ("" for a default path)."""
    out = Path(out)
    if os.path.lexists(out) and not out.is_dir():
        return f"{_named(option, out)} is a file, not a folder: pass a folder for the run (a new path, or an existing folder)"
    return _writable_under(out, out, option)


def out_file_problem(out: str | os.PathLike, option: str = "--out") -> str | None:
    """Why the file ``out`` cannot be written (its folders made first), one line, or ``None`` when it can."""
    out = Path(out)
    if out.is_dir():
        return f"{_named(option, out)} is a folder: pass the file to write, e.g. --out {out / 'policy.onnx'}"
    return _writable_under(out.parent, out, option)


def _named(option: str, out: Path) -> str:
    return f"{option} {out}" if option else str(out)


def _writable_under(folder: Path, out: Path, option: str) -> str | None:
    """``None`` when ``folder`` exists and takes a new entry, or could be made under its nearest existing folder."""
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{_named(option, out)}: {existing} is a file, not a folder: pass a --out under a folder"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".unilab-probe-", dir=existing))
    except OSError as e:
        return f"{_named(option, out)}: cannot write in {existing} ({e.strerror or e}): pass a --out you can write to"
    return None


def check_out_folder(out: str | os.PathLike, command: str = "train", *, resume: str | os.PathLike | None = None,
                     reads: str | os.PathLike | None = None, overwrite: bool = False) -> Path | None:
    """Apply the rule to ``out`` before anything is written; returns where an old run was moved (or ``None``).

    ``resume``: the run ``--resume`` continues; writing back into its own folder is what a
    resume does, so that is allowed. ``reads``: a run this command still has to read
    (``--init-from``, the run ``ship`` copies); ``--overwrite`` cannot move that one aside.
    Raises :class:`RunFolderError` (one line) when ``out`` holds a run and neither applies, or when no
    folder can be made at ``out`` (:func:`out_folder_problem`).
    """
    out = Path(out)
    problem = out_folder_problem(out)
    if problem:
        raise RunFolderError(problem)
    found = holds_run(out)
    if not found or (resume is not None and same_folder(resume, out)):
        return None
    if overwrite:
        if reads is not None and same_folder(reads, out):
            raise RunFolderError(f"--overwrite would move {out} aside, but this command reads the run in it; "
                                 f"pass a new --out")
        return move_aside(out)
    resume_hint = {"train": f"continue it with `unilab train --resume {out}`, ",
                   "ship": ""}.get(command, "")
    raise RunFolderError(f"{out} already holds a run ({', '.join(found)}); {resume_hint}pass a new --out, or add "
                         f"--overwrite to move the old one aside to {out}.old-<timestamp>")


def move_aside(folder: str | os.PathLike) -> Path:
    """Rename ``folder`` to ``<folder>.old-<YYYYmmdd-HHMMSS>`` (``-2``, ``-3``, ... on a clash); the new path.
    :class:`RunFolderError` when the rename fails (permissions, another file system's mount point)."""
    folder = Path(folder)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = folder.with_name(f"{folder.name}.old-{stamp}")
    n = 2
    while target.exists():
        target = folder.with_name(f"{folder.name}.old-{stamp}-{n}")
        n += 1
    try:
        folder.rename(target)
    except OSError as e:
        raise RunFolderError(f"--overwrite could not move {folder} aside to {target} ({e.strerror or e}); "
                             f"pass a new --out") from None
    return target
