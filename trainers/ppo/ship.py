"""Ship a run as a policy folder: a slim checkpoint, its config and curve, ONNX and deploy spec.

A run's checkpoint is made to resume training exactly: it holds the optimizer's moments and
the training envs' state (tens of MB for a G1 run). A shipped policy needs neither. The slim
checkpoint keeps the config, sizes, counters, the policy and its normalizers, and is marked
``slim``: ``unilab eval``, ``export`` and ``--init-from`` read it; ``--resume`` goes on from it
and says what it lacks (Adam's moments restart, envs are re-seeded: not an exact continuation).

    unilab ship runs/go1_real --out policies/go1_joystick_real
"""

from __future__ import annotations

import shutil
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


def ship(run: str | Path, out: str | Path) -> list[Path]:
    """Write ``run``'s policy folder into ``out``: checkpoint.pt (slim), config.yaml, learning_curve.png
    (when the run has them), policy.onnx and deploy_spec.json (for tasks with a deploy spec)."""
    from ..common.deploy_export import attach_for_run
    from .evaluate import export_onnx

    run, out = Path(run), Path(out)
    folder = run if run.is_dir() else run.parent
    ckpt = run / "checkpoint.pt" if run.is_dir() else run
    out.mkdir(parents=True, exist_ok=True)
    written = [slim_checkpoint(ckpt, out / "checkpoint.pt")]
    for name in ("config.yaml", "learning_curve.png"):
        if (folder / name).exists() and folder.resolve() != out.resolve():
            written.append(Path(shutil.copyfile(folder / name, out / name)))
    onnx = export_onnx(out / "checkpoint.pt", out / "policy.onnx")
    written.append(onnx)
    spec = attach_for_run(onnx, out)
    if spec is not None:
        written.append(spec)
    return written
