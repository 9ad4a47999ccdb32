"""The slim checkpoint of an off-policy run (``unilab ship`` of a ``--algo sac|td3`` run).

A run's checkpoint resumes training exactly: it holds Adam's moments, the env's state, every RNG,
the exploring noise and (``log.save_replay``) the replay buffer. A shipped policy needs none of
that. The slim checkpoint keeps the config, sizes, counters and the learner's weights (actor, twin
critic, their targets, the normalizers and the temperature), and is marked ``slim``: ``unilab
eval``, ``export`` and ``play`` read it; ``--resume`` goes on from it and says what it lacks (Adam
restarts, the envs are re-seeded, the buffer refills: not an exact continuation).
"""

from __future__ import annotations

from pathlib import Path

from ..common.checkpoint import load_checkpoint, save_checkpoint
from .runner import CKPT_FORMAT, CKPT_VERSION

#: what a shipped checkpoint leaves out: state only an exact resume needs
RESUME_ONLY = ("optimizers", "rng", "env_state", "obs", "priv", "episodes", "replay", "exploration_noise")


def slim_checkpoint(src: str | Path, dst: str | Path) -> Path:
    """Write ``src``'s checkpoint without optimizer, env, RNG or replay state to ``dst`` (atomically)."""
    ckpt = load_checkpoint(src, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "learner"))
    slim = {k: v for k, v in ckpt.items() if k not in (*RESUME_ONLY, "format", "version")}
    slim["slim"] = True
    return save_checkpoint(slim, dst, CKPT_FORMAT, CKPT_VERSION)
