"""The bundled PPO's hooks in the learner registry (:mod:`trainers.learners`; the contract:
:mod:`trainers.common.learners`): what ``unilab train`` / ``--resume`` / ``eval`` / ``export`` /
``ship`` ask of a run of kind ``ppo`` (distilled students reuse them: :mod:`trainers.distill.hooks`)."""

from __future__ import annotations

from pathlib import Path

from .cli import train  # noqa: F401  (a hook)


def run_config(run) -> dict:
    """The config stored in the run's checkpoint."""
    from ..common.checkpoint import load_checkpoint
    from .checkpoint_format import CKPT_FORMAT, CKPT_VERSION

    return load_checkpoint(run.path, CKPT_FORMAT, CKPT_VERSION, required=("config",))["config"]


def evaluate(path, **kwargs):
    """:func:`trainers.ppo.evaluate.evaluate`."""
    from .evaluate import evaluate as run_evaluation

    return run_evaluation(path, **kwargs)


def export(path, out, opset: int = 17) -> Path:
    """:func:`trainers.ppo.evaluate.export_onnx`."""
    from .evaluate import export_onnx

    return export_onnx(path, out, opset=opset)


def slim_checkpoint(src, dst) -> Path:
    """:func:`trainers.ppo.ship.slim_checkpoint`."""
    from .ship import slim_checkpoint as slim

    return slim(src, dst)


def check_commands(run) -> None:
    """``ValueError`` unless the run's task takes velocity commands (``unilab eval --commands``)."""
    from .joystick_eval import check_command_task

    check_command_task(str(run_config(run).get("task")))
