"""One run lifecycle for every learner (PPO, SAC / TD3, distillation, the SB3 adapter).

What a training run does around its algorithm, the same way for each learner (each CLI calls
:func:`run_in_folder`, which does the first two)::

    claim_run_folder(out, ...)           the run-folder rule (trainers.common.run_folder): refuse, or move aside
    with output_to_log(out):             a closed stdout/stderr goes on in <out>/train.log (trainers.common.streams)
        write_run_files(out, kind, cfg)  config.yaml and run.yaml (the run kind), each atomically
        print(start_line(...))           task, learner, device, envs, threads, profile, folder, where it starts
        with stop_on_signals(request):   SIGINT / SIGTERM / SIGHUP: finish the step, save (trainers.common.signals)
            ... Progress (the bar, labelled with the task), Cadence (checkpoints, log rows) ...
        learning_curve(out, title)       learning_curve.png from progress.csv
        stopped_line(...)                after a signal: where it stopped and `unilab train --resume OUT`
        report(result, counted)          the closing lines: steps, time, return, success, why it stopped

Checkpoints are written atomically by each learner's own format (:mod:`trainers.common.checkpoint`,
SB3's zip through :func:`trainers.common.atomic.atomic_write`). The stop rules share their
defaults (:data:`STOP_MIN_EPISODES` finished episodes before a success rule may fire, over the last
:data:`RECENT_EPISODES`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from .atomic import atomic_write
from .run_folder import RunFolderError, check_out_folder
from .runs import write_run_kind
from .streams import fallback_output

#: where a run's output goes once its stdout or stderr is closed (a dead ``tee``, a closed terminal)
LOG_NAME = "train.log"
#: finished episodes a stop rule waits for before the rolling success may end a run (every learner's default)
STOP_MIN_EPISODES = 256
#: the recent finished episodes the rolling training success is read over (at least; PPO: max(this, num_envs))
RECENT_EPISODES = 200


def claim_run_folder(out: str | os.PathLike, command: str = "train", *, resume=None, reads=None,
                     overwrite: bool = False) -> None:
    """The run-folder rule on ``out`` before anything is written (:func:`~trainers.common.run_folder.check_out_folder`):
    :class:`~trainers.common.run_folder.RunFolderError` (one line) when no run may be written there; with
    ``overwrite`` the old run is moved aside, and that is said on stderr."""
    moved = check_out_folder(out, command, resume=resume, reads=reads, overwrite=overwrite)
    if moved is not None:
        print(f"unilab {command}: --overwrite: moved the run in {out} aside to {moved}", file=sys.stderr)


def output_to_log(out: str | os.PathLike):
    """The block in which a closed stdout or stderr falls back to ``<out>/train.log`` (:func:`fallback_output`)."""
    return fallback_output(Path(out) / LOG_NAME)


def run_in_folder(out: str | os.PathLike, run: Callable[[], int], command: str = "train", *, claim: bool = True,
                  resume=None, reads=None, overwrite: bool = False) -> int:
    """Every learner's CLI around its run: ``out`` claimed (:func:`claim_run_folder`; a refusal is one line,
    ``unilab <command>: ...``, and exit status 2), then ``run()`` under :func:`output_to_log`; its exit status.
    ``claim=False`` leaves the claim to the caller (a torchrun group restarted in its folder, SB3's
    ``--overwrite`` once every setting is checked)."""
    if claim:
        try:
            claim_run_folder(out, command, resume=resume, reads=reads, overwrite=overwrite)
        except RunFolderError as e:
            from trainers.cli_checks import fail

            return fail(command, e)
    with output_to_log(out):
        return run()


def write_yaml(path: str | os.PathLike, data: dict) -> Path:
    """``data`` as YAML (keys in their order), written atomically."""
    text = yaml.safe_dump(data, sort_keys=False)
    return atomic_write(path, lambda tmp: Path(tmp).write_text(text))


def write_run_files(out: str | os.PathLike, kind: str, config: dict, **extra: dict) -> None:
    """``<out>/config.yaml`` (the resolved config), ``<out>/<name>.yaml`` for each of ``extra`` and
    ``<out>/run.yaml`` (the run kind: :func:`~trainers.common.runs.write_run_kind`), each atomically."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_yaml(out / "config.yaml", config)
    for name, data in extra.items():
        write_yaml(out / f"{name}.yaml", data)
    write_run_kind(out, kind)


class Cadence:
    """Due every ``every`` counts (iterations, env steps) counted from multiples of ``every`` (a resumed run
    keeps the straight run's beat), and at least every ``minutes`` of wall-clock time (0: no clock).
    :meth:`due` asks; :meth:`done` starts the next period."""

    def __init__(self, every: int, start: int = 0, minutes: float = 0.0) -> None:
        self.every, self.minutes = max(int(every), 1), float(minutes)
        self.next = (int(start) // self.every + 1) * self.every
        self.last = time.perf_counter()

    def due(self, count: int) -> bool:
        return count >= self.next or bool(self.minutes) and time.perf_counter() - self.last > 60 * self.minutes

    def done(self, count: int) -> None:
        self.next = (int(count) // self.every + 1) * self.every
        self.last = time.perf_counter()


def start_line(task: str, learner: str, device, envs: int, out, start: str, total_steps: int,
               profile=None, detail: str = "") -> str:
    """The line every run starts with: task, learner, device, envs, torch and env threads, sim-to-real
    profile, output folder, where it starts (``"a new run"``, ``"resuming ... at ..."``) and its steps."""
    import torch

    from unilab_envs.threads import resolve_num_threads

    from .profile_label import profile_label
    return (f"[unilab] train {task} with {learner} on {device}: {envs} envs{detail}, torch {torch.get_num_threads()} "
            f"threads, env {resolve_num_threads()} threads; sim2real: {profile_label(profile)}; out {out} "
            f"({start}, {total_steps} steps)")


def stopped_line(out, where: str, saved, go_on: str | None = None) -> str:
    """The line a stopped run ends with: where it stopped, what was saved, the command that continues it
    (``go_on``; by default ``unilab train --resume OUT``, an exact continuation)."""
    return f"[unilab] stopped at {where}; saved {saved}. {go_on or f'Resume with: unilab train --resume {out}'}"


def learning_curve(out, title: str, enabled: bool = True) -> Path | None:
    """``<out>/learning_curve.png`` from ``<out>/progress.csv`` (``None``: off, or no log rows)."""
    csv = Path(out) / "progress.csv"
    if not enabled or not csv.exists():
        return None
    from .plotting import plot_learning_curve

    return plot_learning_curve(csv, Path(out) / "learning_curve.png", title=title)


def report(result, counted: str) -> None:
    """The closing lines of ``unilab train`` (every learner): steps, ``counted`` (``"40 iterations"``,
    ``"6604 updates"``), time, return and success, why it stopped early, the checkpoint, the curve."""
    s = result.stats
    print(f"{'stopped' if result.interrupted else 'done'}: {result.env_steps} steps, {counted}, "
          f"{result.wall_time:.0f} s; return {s.get('episode/return', float('nan')):.3f}"
          + (f", success {s['episode/success']:.1%}" if "episode/success" in s else ""))
    if getattr(result, "stop_reason", None):
        print(f"stopped early: {result.stop_reason} (the config's stop: section)")
    print(f"checkpoint: {result.checkpoint}")
    if getattr(result, "learning_curve", None):
        print(f"learning curve: {result.learning_curve}")
