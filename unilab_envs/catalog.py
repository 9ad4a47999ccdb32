"""The registered tasks and their sizes, read from the tasks themselves (``unilab tasks``).

Each row comes from a 1-env batched env of the task (``gym.make_vec(id, num_envs=1)``,
about 30 ms each) and the task's Gymnasium spec, so the table cannot drift from the code::

    from unilab_envs.catalog import task_catalog, format_table
    print(format_table(task_catalog()))                  # aligned text
    print(format_table(task_catalog(), markdown=True))   # the task tables of README.md and docs/tasks.md
    print(group_table("UniLab/Go1Joystick-v0"))          # its observation groups, from their declarations
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym

from unilab_envs.tasks import TASKS


@dataclass(frozen=True)
class TaskInfo:
    """One task: its sizes, timing and reward terms."""

    id: str
    obs: int
    privileged_obs: int | None
    action: int
    control_hz: float
    physics_dt: float
    substeps: int
    episode_steps: int | None
    reward_names: tuple[str, ...]

    @property
    def episode_seconds(self) -> float | None:
        return None if self.episode_steps is None else self.episode_steps / self.control_hz


def task_info(task_id: str) -> TaskInfo:
    """Build a 1-env vector env of ``task_id`` and read its spaces, timing and reward terms."""
    import unilab_envs  # noqa: F401  (registers the tasks)

    env = gym.make_vec(task_id, num_envs=1)
    try:
        priv = getattr(env, "privileged_observation_space", None)
        return TaskInfo(
            id=task_id,
            obs=int(env.single_observation_space.shape[0]),
            privileged_obs=None if priv is None else int(priv.shape[-1]),
            action=int(env.single_action_space.shape[0]),
            control_hz=1.0 / env.dt,
            physics_dt=float(env.model.opt.timestep),
            substeps=int(env.frame_skip),
            episode_steps=gym.spec(task_id).max_episode_steps,
            reward_names=tuple(env.reward_names),
        )
    finally:
        env.close()


def task_catalog(ids: list[str] | None = None) -> list[TaskInfo]:
    """Rows for ``ids`` (default: every registered UniLab task, in registry order)."""
    return [task_info(t) for t in (ids if ids is not None else list(TASKS))]


def _row_cells(t: TaskInfo) -> list[str]:
    episode = "-" if t.episode_steps is None else f"{t.episode_steps} steps ({t.episode_seconds:g} s)"
    return [t.id, str(t.obs), "-" if t.privileged_obs is None else str(t.privileged_obs), str(t.action),
            f"{t.control_hz:g} Hz ({t.physics_dt * 1000:g} ms x {t.substeps})", episode,
            f"{len(t.reward_names)}: {', '.join(t.reward_names)}"]


HEADER = ["id", "obs", "privileged obs", "action", "control (physics x substeps)", "episode", "reward terms"]


def format_table(rows: list[TaskInfo], markdown: bool = False) -> str:
    """The rows as an aligned text table, or as a Markdown table (``markdown=True``)."""
    cells = [HEADER] + [_row_cells(t) for t in rows]
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        lines += ["| " + " | ".join(f"`{c}`" if i == 0 else c for i, c in enumerate(r)) + " |" for r in cells[1:]]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in cells) for i in range(len(HEADER) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in cells)


GROUP_HEADER = ["observation", "group", "columns", "units", "noise", "meaning"]


def group_table(task_id: str) -> str:
    """Task ``task_id``'s observation groups (policy, then the critic's privileged ones), aligned: columns,
    units, default noise scale (``observation_noise`` without ``scales``; the policy's groups only) and
    meaning, from the task's declarations (``task.declared_groups``)."""
    import unilab_envs  # noqa: F401  (registers the tasks)

    env = gym.make_vec(task_id, num_envs=1)
    try:
        task = env.unwrapped.task
        declared = task.declared_groups
        rows = [GROUP_HEADER]
        for where, groups in (("policy", task.obs_groups), ("privileged", task.privileged_obs_groups)):
            for name, cols in groups.items():
                group = declared.get(name)
                noiseless = group is None or group.noise is None or where == "privileged"  # noise touches the policy's only
                noise = "-" if noiseless else f"{group.noise:g}"
                rows.append([where, name, f"{cols.start}:{cols.stop}", group.units if group else "?", noise,
                             group.doc if group else "(not declared)"])
    finally:
        env.close()
    widths = [max(len(r[i]) for r in rows) for i in range(len(GROUP_HEADER) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows)
