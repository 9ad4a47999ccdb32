"""``unilab ship RUN --out DIR``: a run as a policy folder, for every learner that ships (the registry says which).

The folder holds the run's slim checkpoint (the learner's ``slim_checkpoint`` hook: without what only
an exact resume needs), its ``config.yaml``, ``distill.yaml`` and ``learning_curve.png`` when it has
them, ``run.yaml`` (its kind), ``policy.onnx`` exported from the slim checkpoint (the ``export``
hook), and ``deploy_spec.json`` for tasks with a deploy spec. The learner comes from the caller
(``trainers.cli`` asks :data:`trainers.learners.LEARNERS`), so this module imports no learner.

    unilab ship runs/go1_real --out policies/go1_joystick_real
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .learners import Learner
from .runs import Run, RunError, write_run_kind

#: what a policy folder copies from its run, when the run has it
COPIED = ("config.yaml", "distill.yaml", "learning_curve.png")


def ship(run: Run, learner: Learner, out: str | Path) -> list[Path]:
    """Write ``run``'s policy folder into ``out`` with ``learner``'s hooks; the paths written.
    :class:`RunError` for a learner that does not ship (an SB3 run)."""
    from .deploy_export import attach_for_run

    if not learner.ships:
        raise RunError(f"{run.path} is {learner.what}: `unilab ship` writes bundled-PPO, distilled and SAC / TD3 "
                       f"runs; `unilab export {run.path}` writes its ONNX and deploy spec")
    hooks = learner.load()
    folder, out = run.folder, Path(out)
    ckpt = run.path / "checkpoint.pt" if run.path.is_dir() else run.path
    out.mkdir(parents=True, exist_ok=True)
    written = [hooks.slim_checkpoint(ckpt, out / "checkpoint.pt")]
    for name in COPIED:
        if (folder / name).exists() and folder.resolve() != out.resolve():
            written.append(Path(shutil.copyfile(folder / name, out / name)))
    written.append(write_run_kind(out, run.kind))
    onnx = hooks.export(out / "checkpoint.pt", out / "policy.onnx")
    written.append(onnx)
    spec = attach_for_run(onnx, out)
    if spec is not None:
        written.append(spec)
    return written
