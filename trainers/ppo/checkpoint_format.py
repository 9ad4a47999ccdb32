"""What a bundled-PPO checkpoint is: its format tag and version, and the size check against an env.

Kept apart from the runner that writes checkpoints so that the modules reading them (``init_from``,
evaluation, adaptation) need not import the runner.
"""

from __future__ import annotations

import dataclasses

from ..common.checkpoint import CheckpointError

CKPT_FORMAT = "unilab-ppo"
CKPT_VERSION = 1


def check_compatible(ckpt: dict, dims, path, critic: bool = True) -> None:
    """``CheckpointError`` when the checkpoint's sizes differ from the env's; ``critic=False`` (evaluation,
    export) compares only the policy's, so a run whose critic saw training-only extras runs anywhere."""
    got = ckpt["dims"]
    want = dataclasses.asdict(dims)
    if not critic:
        want = {k: want[k] for k in ("obs", "act")}
        got = {k: got.get(k) for k in want}
    if got != want:
        diff = ", ".join(f"{k}: checkpoint {got.get(k)} vs env {want[k]}" for k in want if got.get(k) != want[k])
        raise CheckpointError(f"checkpoint {path} does not match this env ({diff})")
