"""The learner device from a config's ``device`` setting, shared by the bundled PPO and the off-policy learner."""

from __future__ import annotations

import torch


def resolve_device(name: str) -> torch.device:
    """``"auto"``: CUDA when there is one, else the CPU; ``RuntimeError`` for CUDA asked for on a machine without it."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available (use --device cpu)")
    return dev
