"""The slim checkpoint of a bundled-PPO run (``unilab ship``: :mod:`trainers.common.ship`).

A run's checkpoint is made to resume training exactly: it holds the optimizer's moments and
the training envs' state (tens of MB for a G1 run). A shipped policy needs neither. The slim
checkpoint keeps the config, sizes, counters, the policy and its normalizers, and is marked
``slim``: ``unilab eval``, ``export`` and ``--init-from`` read it; ``--resume`` goes on from it
and says what it lacks (Adam's moments restart, envs are re-seeded: not an exact continuation).
"""

from __future__ import annotations

from pathlib import Path

from ..common.checkpoint import load_checkpoint, save_checkpoint
from .checkpoint_format import CKPT_FORMAT, CKPT_VERSION

#: what a shipped checkpoint leaves out: state only an exact resume needs
RESUME_ONLY = ("env_state", "collector", "reward_norm", "episodes", "stop")


def slim_checkpoint(src: str | Path, dst: str | Path) -> Path:
    """Write ``src``'s checkpoint without optimizer or env state to ``dst`` (atomically)."""
    ckpt = load_checkpoint(src, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"))
    slim = {k: v for k, v in ckpt.items() if k not in (*RESUME_ONLY, "format", "version")}
    slim["algo"] = {k: v for k, v in ckpt["algo"].items() if k != "optimizer"}
    slim["slim"] = True
    return save_checkpoint(slim, dst, CKPT_FORMAT, CKPT_VERSION)
