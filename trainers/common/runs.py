"""What a path given to ``unilab eval`` / ``export`` / ``ship`` / ``train --resume`` is: which learner's run.

Every run folder says its kind in ``run.yaml`` (``kind: ppo | sac | td3 | distill | sb3``), written
when the run starts (:func:`write_run_kind`, through :mod:`trainers.common.lifecycle`); the learner
registry (:mod:`trainers.learners`) maps the kind to what evaluates, exports, ships and resumes it.

Folders from before ``run.yaml`` (the shipped policies in ``policies/``, old runs) are recognized
here and nowhere else (:func:`legacy_kind`): a folder holding ``model.zip`` (or ``checkpoint.zip``)
beside a ``config.yaml`` whose ``algo`` is ``sb3-*`` is an SB3 run; one holding ``checkpoint.pt``
is an off-policy run when its ``config.yaml``'s ``algo.kind`` is sac or td3, a distilled student
when it holds ``distill.yaml``, else a bundled-PPO run. That needs no torch or SB3 import, except
for a ``.pt`` file with no run's ``config.yaml`` beside it (a checkpoint copied aside): that one's
own ``format`` says whose it is.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml


OFFPOLICY_FORMAT = "unilab-offpolicy"  # the ``format`` of an off-policy run's checkpoint (trainers/offpolicy/runner.py)
#: the file in a run folder that names its kind
KIND_FILE = "run.yaml"
#: the run kinds (the learner registry, :mod:`trainers.learners`, has one entry for each)
KINDS = ("ppo", "sac", "td3", "distill", "sb3")


class RunError(ValueError):
    """The path is missing or is not a run; the message says what to pass instead."""


@dataclasses.dataclass(frozen=True)
class Run:
    kind: str   # one of KINDS
    path: Path  # what the evaluator takes: the checkpoint file or run folder, the model zip (sb3)

    @property
    def folder(self) -> Path:
        """The run folder."""
        return self.path if self.path.is_dir() else self.path.parent


def sb3_model(path: Path) -> Path | None:
    """The SB3 model zip of a run folder or zip, when ``config.yaml`` beside it names an ``sb3-*`` algo."""
    if path.is_dir():
        path = next((path / n for n in ("model.zip", "checkpoint.zip") if (path / n).exists()), path / "model.zip")
    if path.suffix != ".zip" or not path.exists() or not (path.parent / "config.yaml").exists():
        return None
    try:
        cfg = yaml.safe_load((path.parent / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    return path if isinstance(cfg, dict) and str(cfg.get("algo", "")).startswith("sb3-") else None


def write_run_kind(folder: str | Path, kind: str) -> Path:
    """Write ``<folder>/run.yaml`` naming the run's ``kind`` (atomically)."""
    from .atomic import atomic_write

    if kind not in KINDS:
        raise ValueError(f"unknown run kind {kind!r}; one of {KINDS}")
    return atomic_write(Path(folder) / KIND_FILE, lambda tmp: Path(tmp).write_text(f"kind: {kind}\n"))


def read_run_kind(folder: str | Path) -> str | None:
    """The kind ``<folder>/run.yaml`` names, or ``None`` (no such file: a folder from before it)."""
    try:
        data = yaml.safe_load((Path(folder) / KIND_FILE).read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if kind in KINDS else None


def _offpolicy_kind(folder: Path) -> str | None:
    """``sac`` or ``td3`` when ``folder``'s ``config.yaml`` is an off-policy run's (``algo.kind``), else ``None``."""
    try:
        cfg = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    algo = cfg.get("algo") if isinstance(cfg, dict) else None
    kind = algo.get("kind") if isinstance(algo, dict) else None
    return kind if kind in ("sac", "td3") else None


def _checkpoint_kind(path: Path) -> str:
    """A checkpoint file's kind from its own ``format`` (read memory-mapped: no tensor is copied)."""
    import torch

    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
    except Exception:  # not a zip-format torch file, or corrupt: the PPO loader says what is wrong with it
        return "ppo"
    if not isinstance(ckpt, dict) or ckpt.get("format") != OFFPOLICY_FORMAT:
        return "ppo"
    algo = (ckpt.get("config") or {}).get("algo") or {}
    return "td3" if algo.get("kind") == "td3" else "sac"


def legacy_kind(folder: Path) -> str:
    """The kind of a run folder without ``run.yaml`` (the module docstring), given it holds ``checkpoint.pt``."""
    return _offpolicy_kind(folder) or ("distill" if (folder / "distill.yaml").exists() else "ppo")


def find_run(path: str | Path, command: str = "eval") -> Run:
    """Classify ``path``; :class:`RunError` with what to do when it is missing or not a run.

    A file that is not a zip is handed to the bundled PPO's loader, which says what is
    wrong with it (corrupt, another format, ...).
    """
    path = Path(path)
    if not path.exists():
        raise RunError(f"{path} does not exist: pass the run folder `unilab train --out` wrote "
                       f"(or its checkpoint.pt / model.zip), e.g. `unilab {command} runs/go1`")
    model = sb3_model(path)
    if model is not None:
        return Run("sb3", model)
    folder = path if path.is_dir() else path.parent
    if path.is_file() and path.suffix != ".zip":
        if (folder / "config.yaml").exists():
            return Run(read_run_kind(folder) or legacy_kind(folder), path)
        return Run(_checkpoint_kind(path), path)
    if path.is_dir() and (path / "checkpoint.pt").exists():
        return Run(read_run_kind(path) or legacy_kind(path), path)
    if path.suffix == ".zip":
        problem = f"{path} is not an SB3 run's model: no config.yaml naming an sb3-* algo beside it"
    else:
        problem = f"{path} is not a run: it holds neither checkpoint.pt (bundled PPO) nor model.zip + config.yaml (SB3)"
    raise RunError(f"{problem}; pass the folder `unilab train --out` wrote, e.g. `unilab {command} runs/go1`")
