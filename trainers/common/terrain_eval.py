"""``unilab eval`` of a terrain task: a fixed, printed level set, no curriculum promotion.

A terrain task's curriculum (:mod:`unilab_envs.locomotion.curriculum`) moves an env up or down a
level when an episode ends, so an evaluation that counts each env's second episode (the default
frame, :func:`trainers.common.evaluation.run_episodes` with ``skip_first``) measures wherever the
curriculum sent the envs: no fixed level set. The headline of a terrain policy is measured on
levels 0-5 of every terrain type (docs/results/go1_depth.md): each env's first episode starts on a
level drawn from that range, and each env runs exactly that one episode, so no env is ever
promoted. :func:`terrain_eval` gives that plan for a task, ``None`` for a task without terrain.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the level set a terrain policy's headline is measured on (inclusive), ``unilab eval``'s default
HEADLINE_LEVELS = (0, 5)


@dataclass(frozen=True)
class TerrainEval:
    """How ``unilab eval`` measures a terrain task: ``episodes`` envs, one episode each, from ``levels``."""

    levels: tuple[int, int]
    episodes: int

    @property
    def env_kwargs(self) -> dict:
        """The task keywords: first episodes start on a level in ``levels``."""
        return {"init_levels": tuple(self.levels)}

    def line(self) -> str:
        """What is measured, in one line (``unilab eval`` prints it under the header)."""
        lo, hi = self.levels
        return (f"terrain: levels {lo}-{hi} of every terrain type; each of the {self.episodes} envs runs one episode from a "
                f"level drawn in {lo}-{hi} (its first, counted; no curriculum promotion during evaluation; "
                f"--levels LO HI for another set)")


def is_terrain_task(task_id: str) -> bool:
    """Whether ``task_id`` is a UniLab task on generated terrain (its task class is a ``TerrainLocomotionTask``)."""
    from trainers.common.task_eval import entry_module
    from unilab_envs.locomotion.terrain_task import TerrainLocomotionTask

    module = entry_module(task_id)
    if module is None:
        return False
    return any(isinstance(v, type) and issubclass(v, TerrainLocomotionTask) and v is not TerrainLocomotionTask
               for v in vars(module).values())


def terrain_eval(task_id: str, episodes: int, num_envs: int | None, levels: list[int] | None) -> TerrainEval | None:
    """The plan of ``unilab eval`` on ``task_id`` (``None``: not a terrain task, ``levels`` not given).

    ``ValueError`` in one line for ``levels`` on a task without terrain, levels out of order, or
    ``num_envs`` other than ``episodes`` (an env's second episode would start where the curriculum moved it).
    """
    terrain = is_terrain_task(task_id)
    if not terrain:
        if levels is not None:
            raise ValueError(f"--levels sets the terrain levels of a terrain task; {task_id} has no terrain: leave it out")
        return None
    lo, hi = HEADLINE_LEVELS if levels is None else (int(levels[0]), int(levels[1]))
    if not 0 <= lo <= hi:
        raise ValueError(f"--levels LO HI needs 0 <= LO <= HI, got {lo} {hi}")
    if num_envs is not None and num_envs != episodes:
        raise ValueError(f"a terrain task is evaluated one episode per env (an env's next episode starts where the "
                         f"curriculum moved it): leave out --num-envs or give --num-envs {episodes} (= --episodes)")
    return TerrainEval((lo, hi), episodes)
