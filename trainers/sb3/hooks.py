"""The SB3 adapter's hooks in the learner registry (:mod:`trainers.learners`; the contract:
:mod:`trainers.common.learners`): what ``unilab train --algo sb3-*`` / ``--resume`` / ``eval`` /
``export`` ask of a run of kind ``sb3`` (``unilab ship`` does not write SB3 runs)."""

from __future__ import annotations

from pathlib import Path


def train(args) -> int:
    """:func:`trainers.sb3.cli.train_from_args`."""
    from .cli import train_from_args

    return train_from_args(args)


def run_config(run) -> dict:
    """The run's ``config.yaml``."""
    import yaml

    return yaml.safe_load((run.folder / "config.yaml").read_text()) or {}


def evaluate(path, **kwargs):
    """:func:`trainers.sb3.evaluate.evaluate_sb3`."""
    from .evaluate import evaluate_sb3

    return evaluate_sb3(path, **kwargs)


def export(path, out, opset: int = 17) -> Path:
    """:func:`trainers.sb3.export.export_sb3_onnx`; its :class:`~trainers.sb3.export.ExportError` as a ``ValueError``."""
    from .export import ExportError, export_sb3_onnx

    try:
        return export_sb3_onnx(path, out, opset=opset)
    except ExportError as e:
        raise ValueError(str(e)) from None
