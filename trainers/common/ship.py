"""``unilab ship RUN --out DIR``: a bundled-PPO or off-policy (SAC / TD3) run as a policy folder.

The folder holds the run's slim checkpoint (``trainers.ppo.ship`` / ``trainers.offpolicy.ship``:
without what only an exact resume needs), its ``config.yaml`` and ``learning_curve.png`` when it has
them, ``policy.onnx`` exported from the slim checkpoint, and ``deploy_spec.json`` for tasks with a
deploy spec.

    unilab ship runs/go1_real --out policies/go1_joystick_real
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .runs import RunError, find_run


def ship(run: str | Path, out: str | Path) -> list[Path]:
    """Write ``run``'s policy folder into ``out``; the paths written. :class:`RunError` for an SB3 run or a
    path that is not a run."""
    from .deploy_export import attach_for_run

    found = find_run(run, "ship")
    if found.kind == "offpolicy":
        from ..offpolicy.evaluate import export_offpolicy_onnx as export
        from ..offpolicy.ship import slim_checkpoint
    elif found.kind == "ppo":
        from ..ppo.evaluate import export_onnx as export
        from ..ppo.ship import slim_checkpoint
    else:
        raise RunError(f"{run} is an SB3 run: `unilab ship` writes bundled-PPO and SAC / TD3 runs; "
                       f"`unilab export {run}` writes its ONNX and deploy spec")
    folder, out = found.folder, Path(out)
    ckpt = found.path / "checkpoint.pt" if found.path.is_dir() else found.path
    out.mkdir(parents=True, exist_ok=True)
    written = [slim_checkpoint(ckpt, out / "checkpoint.pt")]
    for name in ("config.yaml", "learning_curve.png"):
        if (folder / name).exists() and folder.resolve() != out.resolve():
            written.append(Path(shutil.copyfile(folder / name, out / name)))
    onnx = export(out / "checkpoint.pt", out / "policy.onnx")
    written.append(onnx)
    spec = attach_for_run(onnx, out)
    if spec is not None:
        written.append(spec)
    return written
