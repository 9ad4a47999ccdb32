"""What stops a training run that cannot go on (:class:`TrainingFault`), and the one-line messages
that say what happened, what is still on disk and what to do (``docs/faults.md``)."""

from __future__ import annotations

import shutil
from pathlib import Path


class TrainingFault(RuntimeError):
    """Training stopped on a fault it cannot go on from: the learner went NaN/inf, or a checkpoint
    could not be written (disk full). No bad state was saved; the message names the iteration,
    what is still on disk and what to do (``unilab train`` prints it as one line, exit status 2)."""


def _kept(out_dir: Path, saved_at: int | None) -> str:
    """What the run folder still holds after a fault (``saved_at``: the iteration this process last saved)."""
    path = out_dir / "checkpoint.pt"
    if saved_at is not None:
        return f"{path} still holds iteration {saved_at}"
    if path.exists():
        return f"{path} (written before this process started) is unchanged"
    return f"no checkpoint of this run was written yet ({out_dir})"


def nonfinite_message(iteration: int, bad: list[str], out_dir: Path, saved_at: int | None) -> str:
    """One line for a learner that went NaN/inf in the update of ``iteration``."""
    path = out_dir / "checkpoint.pt"
    start = (f"start again from the good weights: unilab train --init-from {path} --out NEW_RUN "
             "algo.learning_rate=... (--resume would restore the saved learning rate and repeat the same steps)"
             if saved_at is not None or path.exists() else "start again")
    return (f"iteration {iteration}: the PPO update made {', '.join(bad)} NaN or inf; training stopped without "
            f"saving that state: {_kept(out_dir, saved_at)}. Lower algo.learning_rate (adaptive schedule: "
            f"algo.desired_kl) or algo.max_grad_norm and {start}")


def close_log(logger) -> None:
    """Close the run log. On a full disk the close fails again on the row whose write failed (each row
    is flushed when logged, so nothing else is lost); the :class:`TrainingFault` that stopped training
    has said so, and this must not replace it."""
    try:
        logger.close()
    except OSError:
        pass


def write_failure(error: BaseException) -> bool:
    """Whether ``error`` (raised by :meth:`Runner.save`) is a failed write: an ``OSError`` (disk full,
    permissions, quota) or torch's zip writer failing (what a full disk gives ``torch.save``)."""
    if isinstance(error, OSError):
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and ("inline_container" in text or "PytorchStreamWriter" in text)


def write_failure_message(what: str, error: BaseException, out_dir: Path, saved_at: int | None) -> str:
    """One line for ``what`` (``"the checkpoint of iteration 6"``) that could not be written into
    ``out_dir``: the error, the free space, what is still on disk and how to go on."""
    try:
        free = f"{shutil.disk_usage(out_dir).free / 1e6:.0f} MB free there"
    except OSError:
        free = "free space unknown"
    reason = f"{type(error).__name__}: {' '.join(str(error).split())}"
    if not isinstance(error, OSError):  # torch's zip writer says "unexpected pos ..." on a full disk
        reason = f"torch.save failed as it does on a full disk: {reason}"
    go_on = (f"then resume with: unilab train --resume {out_dir / 'checkpoint.pt'}"
             if saved_at is not None or (out_dir / "checkpoint.pt").exists() else "then start again")
    return (f"could not write {what} to {out_dir} ({reason}; {free}); training "
            f"stopped: {_kept(out_dir, saved_at)}. Free disk space (or fix the folder's permissions), {go_on}")
