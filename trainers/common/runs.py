"""What a path given to ``unilab eval`` / ``unilab export`` is: a bundled-PPO run, an off-policy run, an SB3 run, or neither.

A bundled-PPO run is a folder holding ``checkpoint.pt`` (or such a ``.pt`` file itself); an
off-policy run (``--algo sac|td3``) the same with a ``config.yaml`` whose ``algo.kind`` is sac or td3;
an SB3 run is a folder holding ``model.zip`` (or ``checkpoint.zip``) beside a
``config.yaml`` whose ``algo`` is ``sb3-*`` (or such a zip itself). Telling them apart
needs no torch or SB3 import, except for a ``.pt`` file with no run's ``config.yaml`` beside it (a
checkpoint copied aside): that one's own ``format`` says whose it is.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml


OFFPOLICY_FORMAT = "unilab-offpolicy"  # the ``format`` of an off-policy run's checkpoint (trainers/offpolicy/runner.py)


class RunError(ValueError):
    """The path is missing or is not a run; the message says what to pass instead."""


@dataclasses.dataclass(frozen=True)
class Run:
    kind: str   # "ppo", "offpolicy" or "sb3"
    path: Path  # what the evaluator takes: the checkpoint file or run folder (ppo, offpolicy), the model zip (sb3)

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


def is_offpolicy(folder: Path) -> bool:
    """Whether ``folder``'s ``config.yaml`` is an off-policy run's (``algo.kind`` sac or td3: ``unilab train --algo sac|td3``)."""
    try:
        cfg = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return False
    algo = cfg.get("algo") if isinstance(cfg, dict) else None
    return isinstance(algo, dict) and algo.get("kind") in ("sac", "td3")


def is_offpolicy_checkpoint(path: Path) -> bool:
    """Whether the checkpoint file's own ``format`` is an off-policy run's (read memory-mapped: no tensor is copied)."""
    import torch

    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
    except Exception:  # not a zip-format torch file, or corrupt: the PPO loader says what is wrong with it
        return False
    return isinstance(ckpt, dict) and ckpt.get("format") == OFFPOLICY_FORMAT


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
    if path.is_file() and path.suffix != ".zip":
        beside = (path.parent / "config.yaml").exists()
        offpolicy = is_offpolicy(path.parent) if beside else is_offpolicy_checkpoint(path)
        return Run("offpolicy" if offpolicy else "ppo", path)
    if path.is_dir() and (path / "checkpoint.pt").exists():
        return Run("offpolicy" if is_offpolicy(path) else "ppo", path)
    if path.suffix == ".zip":
        problem = f"{path} is not an SB3 run's model: no config.yaml naming an sb3-* algo beside it"
    else:
        problem = f"{path} is not a run: it holds neither checkpoint.pt (bundled PPO) nor model.zip + config.yaml (SB3)"
    raise RunError(f"{problem}; pass the folder `unilab train --out` wrote, e.g. `unilab {command} runs/go1`")
