"""The learner registry's contract: run kind -> the hooks that train, resume, evaluate, export and ship its runs.

``unilab train``, ``--resume``, ``eval``, ``export``, ``ship`` and ``adapt`` never switch on a run's
kind: they read the kind (``run.yaml``, :mod:`trainers.common.runs`) or the ``--algo`` asked for,
look the learner up in the registry and call its hooks. The registry is filled in one listing
module, :mod:`trainers.learners`, one explicit :class:`Learner` per kind (nothing registers itself
as a side effect of defining a class). A learner's hooks live in a module of its own package
(``trainers/<learner>/hooks.py``), imported the first time they are asked for, so asking about an
SB3 run does not import PPO's loop and the reverse.

A hooks module defines:

=================================  =========================================================================
``train(args) -> int``             ``unilab train`` (also ``--resume``) from the parsed arguments; the exit status
``run_config(run) -> dict``        the config the run trained with (``run``: a :class:`~trainers.common.runs.Run`)
``evaluate(path, **kw)``           the deterministic policy on its env: an :class:`~trainers.common.evaluation.EvalResult`
``export(path, out, opset)``       the deterministic policy as ONNX at ``out``; its path
``slim_checkpoint(src, dst)``      (shippable learners) the checkpoint without what only a resume needs
``check_commands(run)``            (joystick learners) ``ValueError`` unless ``eval --commands`` can measure it
=================================  =========================================================================
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterable
from types import ModuleType


@dataclasses.dataclass(frozen=True)
class Learner:
    """One learner in the registry.

    ``kind``: the run kind its runs write (``run.yaml``); ``algos``: the ``unilab train --algo`` values it
    trains (none: made by another command, e.g. ``unilab distill``); ``hooks``: the module holding its
    hooks (module docstring); ``what``: how a message names its runs (``"an SB3 run"``); ``ppo_checkpoint``:
    its runs are bundled-PPO checkpoints (``--init-from`` and ``unilab adapt`` read them); ``ships``:
    ``unilab ship`` writes its runs; ``measures_commands``: ``unilab eval --commands`` measures them."""

    kind: str
    algos: tuple[str, ...]
    hooks: str
    what: str
    ppo_checkpoint: bool = False
    ships: bool = False
    measures_commands: bool = False

    def load(self) -> ModuleType:
        """The hooks module (imported on first use)."""
        return importlib.import_module(self.hooks)


class Registry:
    """The learners by kind and by ``--algo``; built once from an explicit list (:mod:`trainers.learners`)."""

    def __init__(self, learners: Iterable[Learner]) -> None:
        self._by_kind: dict[str, Learner] = {}
        self._by_algo: dict[str, Learner] = {}
        for learner in learners:
            if learner.kind in self._by_kind:
                raise ValueError(f"two learners of kind {learner.kind!r}")
            self._by_kind[learner.kind] = learner
            for algo in learner.algos:
                if algo in self._by_algo:
                    raise ValueError(f"two learners train --algo {algo}")
                self._by_algo[algo] = learner

    def __getitem__(self, kind: str) -> Learner:
        """The learner of runs of ``kind``; ``KeyError`` naming the kinds known."""
        try:
            return self._by_kind[kind]
        except KeyError:
            raise KeyError(f"no learner for runs of kind {kind!r}; known: {sorted(self._by_kind)}") from None

    def for_algo(self, algo: str) -> Learner:
        """The learner ``unilab train --algo algo`` runs."""
        try:
            return self._by_algo[algo]
        except KeyError:
            raise KeyError(f"no learner trains --algo {algo!r}; known: {list(self._by_algo)}") from None

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._by_kind)

    @property
    def algos(self) -> tuple[str, ...]:
        """Every ``--algo`` value, in the listing's order."""
        return tuple(self._by_algo)
