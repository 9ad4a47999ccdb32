"""Checkpoint files: written atomically, read with ``torch.load(weights_only=True)``.

A checkpoint is a dict of tensors and plain Python values (no pickled objects), tagged
with ``format`` and ``version`` so a foreign or truncated file gets a clear
:class:`CheckpointError` instead of an unpickling traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .atomic import atomic_write


class CheckpointError(RuntimeError):
    """A checkpoint is missing, corrupt, of another format, or does not fit this run."""


def atomic_save(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` to a temp file in the same directory, fsync, then ``os.replace``.

    A crash or Ctrl-C mid-write leaves the previous file intact, never a torn one.
    """
    return atomic_write(path, lambda tmp: torch.save(obj, tmp))


def save_checkpoint(state: dict, path: str | os.PathLike, fmt: str, version: int) -> Path:
    return atomic_save({"format": fmt, "version": version, **state}, path)


def load_checkpoint(path: str | os.PathLike, fmt: str, version: int,
                    required: tuple[str, ...] = (), map_location: str | torch.device = "cpu") -> dict:
    """Load and check a checkpoint; raise :class:`CheckpointError` with the reason."""
    path = Path(path)
    if path.is_dir():
        path = path / "checkpoint.pt"
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many types for a bad file
        raise CheckpointError(
            f"checkpoint {path} is corrupt or not a checkpoint (torch.load failed: {_load_reason(e)}); "
            "a truncated copy or another program's file: use another checkpoint of the run "
            "(checkpoint_<iteration>.pt) or copy it again") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != fmt:
        got = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise CheckpointError(f"checkpoint {path} is not a {fmt} checkpoint (format: {got!r})")
    if ckpt.get("version") != version:
        raise CheckpointError(f"checkpoint {path} has format version {ckpt.get('version')}, "
                              f"this code reads version {version}")
    missing = [k for k in required if k not in ckpt]
    if missing:
        raise CheckpointError(f"checkpoint {path} is incomplete: missing {', '.join(missing)}")
    return ckpt


def _load_reason(error: Exception) -> str:
    """``torch.load``'s error in a few words: its first line, without the advice to load with
    ``weights_only=False`` that torch appends to an unpickling error (a checkpoint never needs it)."""
    text = str(error).splitlines()[0] if str(error) else ""
    if text.startswith("Weights only load failed"):
        text = "Weights only load failed"
    return f"{type(error).__name__}: {text}".rstrip(": ")

def to_tensors(obj: Any) -> Any:
    """NumPy arrays -> tensors, recursively (so env states pass ``weights_only`` loading)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj).copy())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: to_tensors(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_tensors(v) for v in obj)
    return obj


def to_numpy(obj: Any) -> Any:
    """Inverse of :func:`to_tensors`."""
    if isinstance(obj, torch.Tensor):
        return obj.cpu().numpy()
    if isinstance(obj, dict):
        return {k: to_numpy(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_numpy(v) for v in obj)
    return obj
