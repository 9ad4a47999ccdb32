"""The off-policy learner's hooks in the learner registry (:mod:`trainers.learners`; the contract:
:mod:`trainers.common.learners`): what ``unilab train`` / ``--resume`` / ``eval`` / ``export`` / ``ship``
ask of a run of kind ``sac`` or ``td3``."""

from __future__ import annotations

from pathlib import Path

from .cli import train_offpolicy as train  # noqa: F401  (a hook)


def run_config(run) -> dict:
    """The run's ``config.yaml``; for a checkpoint copied out of its folder, the config stored in it."""
    if (run.folder / "config.yaml").is_file():
        import yaml

        return yaml.safe_load((run.folder / "config.yaml").read_text()) or {}
    from ..common.checkpoint import load_checkpoint
    from .runner import CKPT_FORMAT, CKPT_VERSION

    return load_checkpoint(run.path, CKPT_FORMAT, CKPT_VERSION, required=("config",))["config"]


def evaluate(path, **kwargs):
    """:func:`trainers.offpolicy.evaluate.evaluate_offpolicy`."""
    from .evaluate import evaluate_offpolicy

    return evaluate_offpolicy(path, **kwargs)


def export(path, out, opset: int = 17) -> Path:
    """:func:`trainers.offpolicy.evaluate.export_offpolicy_onnx`."""
    from .evaluate import export_offpolicy_onnx

    return export_offpolicy_onnx(path, out, opset=opset)


def slim_checkpoint(src, dst) -> Path:
    """:func:`trainers.offpolicy.ship.slim_checkpoint`."""
    from .ship import slim_checkpoint as slim

    return slim(src, dst)
