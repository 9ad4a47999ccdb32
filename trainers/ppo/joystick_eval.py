"""What the joystick tasks' targets are stated in: tracking share, falls, speed per command.

* :func:`~trainers.common.evaluation.tracking_share` (every evaluation reports it): the
  planar-velocity (vx, vy) tracking reward per step as a share of its maximum (the term is
  ``scale * dt * exp(-error / sigma)``, so 1.0 is perfect tracking every step);
* :func:`hold_command`: the deterministic policy under one fixed (forward speed, yaw rate)
  command, the base's measured forward speed and yaw rate in its own frame, and the share
  of envs that fell; :func:`measure_commands` runs it for forward-speed commands.

``unilab eval RUN --commands 0.3 0.6 1.0`` prints both; :func:`check_command_task` refuses
``--commands`` up front for a task without velocity commands.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mujoco
import numpy as np
import torch


def takes_velocity_commands(task: str) -> bool:
    """Whether ``task``'s env takes a velocity command (the ``command_vx`` / ``command_vy`` /
    ``command_yaw`` keywords :func:`hold_command` sets): asks one env of it built through
    Gymnasium (its task's deploy facts name the command kind). A task without a batched entry
    point, or whose task states no deploy facts, takes none."""
    import gymnasium as gym

    from unilab_robot.deploy.spec import SpecError

    from ..common.envs import make_vec_env

    if gym.spec(task).vector_entry_point is None:
        return False
    env = make_vec_env(task, 1)
    try:
        return getattr(env.unwrapped, "task", None) is not None and env.unwrapped.task.deploy_facts().command == "velocity"
    except SpecError:
        return False
    finally:
        env.close()


def velocity_command_tasks() -> tuple[str, ...]:
    """The registered UniLab tasks that take a velocity command (:func:`takes_velocity_commands`), in registration order."""
    import gymnasium as gym

    import unilab_envs  # noqa: F401  registers UniLab/*

    return tuple(task for task in gym.registry if task.startswith("UniLab/") and takes_velocity_commands(task))


def check_command_task(task: str) -> None:
    """``ValueError`` with what to do when ``task`` takes no velocity command (``--commands``
    holds forward-speed commands): call it before building envs or evaluating."""
    if not takes_velocity_commands(task):
        tasks = velocity_command_tasks()
        raise ValueError(f"--commands holds forward-speed commands, but {task} takes no velocity command; "
                         f"the tasks that do: {', '.join(tasks)}. Leave out --commands to evaluate this run")


@dataclasses.dataclass(frozen=True)
class CommandResult:
    command: float          # commanded forward speed, m/s
    speed: float            # measured forward speed in the base frame (mean over envs and time), m/s
    speed_std: float        # spread of the per-env mean speeds, m/s
    yaw_rate: float         # measured yaw rate, rad/s
    fall_rate: float        # share of envs that fell during the run

    def line(self) -> str:
        return (f"command {self.command:+.2f} m/s -> {self.speed:+.3f} +- {self.speed_std:.3f} m/s "
                f"(yaw {self.yaw_rate:+.3f} rad/s, falls {self.fall_rate:.0%})")


def _root_indices(model: mujoco.MjModel) -> tuple[int, int]:
    """qpos and qvel addresses of the model's first free joint (the floating base)."""
    free = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
    if free.size == 0:
        raise ValueError("the task's model has no floating base (free joint): speed per command needs a mobile robot")
    return int(model.jnt_qposadr[free[0]]), int(model.jnt_dofadr[free[0]])


def base_velocity(batch, model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """``(N,)`` forward speed in the base's frame and ``(N,)`` yaw rate, from the batch's state."""
    q, d = _root_indices(model)
    qpos, qvel = batch.bind("qpos"), batch.bind("qvel")
    w, x, y, z = (qpos[:, q + 3 + k] for k in range(4))
    vx, vy, vz = qvel[:, d], qvel[:, d + 1], qvel[:, d + 2]
    # the base's x axis in the world frame is the first column of its rotation matrix
    ax = 1.0 - 2.0 * (y * y + z * z)
    ay = 2.0 * (x * y + w * z)
    az = 2.0 * (x * z - w * y)
    return ax * vx + ay * vy + az * vz, qvel[:, d + 5]


def hold_command(policy, cfg, vx: float, yaw: float = 0.0, seconds: float = 10.0, num_envs: int = 32,
                 settle_s: float = 2.0, seed: int = 12345, device: str = "cpu",
                 env_kwargs: dict | None = None) -> CommandResult:
    """Hold the command ``(vx, 0, yaw)`` for ``seconds`` on ``num_envs`` envs of ``cfg``'s bare task
    under the deterministic ``policy`` and measure the base's forward speed and yaw rate
    (means over the (env, step) pairs still standing after the first ``settle_s`` seconds).

    The command is fixed through the task's own keywords (no zero commands, no spread
    episode starts); ``env_kwargs`` are task keywords on top of the run's.
    """
    from .envs import make_vec_env

    kwargs = {**cfg.env_kwargs, **(env_kwargs or {}), "command_vx": (vx, vx), "command_vy": (0.0, 0.0),
              "command_yaw": (yaw, yaw), "zero_command_probability": 0.0, "spread_episode_starts": False}
    env = make_vec_env(cfg.task, num_envs, kwargs, cfg.vectorization_mode, obs_history=cfg.obs_history)
    try:
        base = env.unwrapped
        steps, settle = int(round(seconds / base.dt)), int(round(settle_s / base.dt))
        obs, _ = env.reset(seed=seed)
        fell = np.zeros(num_envs, bool)
        speed_sum, yaw_sum, count = np.zeros(num_envs), np.zeros(num_envs), np.zeros(num_envs)
        for t in range(steps):
            with torch.no_grad():
                act = policy(torch.as_tensor(obs, dtype=torch.float32, device=device)).cpu().numpy()
            obs, _, terminated, _, _ = env.step(act)
            fell |= terminated
            if t >= settle:
                speed, yaw_rate = base_velocity(base.batch, base.model)
                alive = ~fell
                speed_sum += np.where(alive, speed, 0.0)
                yaw_sum += np.where(alive, yaw_rate, 0.0)
                count += alive
    finally:
        env.close()
    ok = count > 0
    if not ok.any():
        nan = float("nan")
        return CommandResult(float(vx), nan, nan, nan, float(fell.mean()))
    per_env = speed_sum[ok] / count[ok]
    total = count[ok].sum()
    return CommandResult(command=float(vx), speed=float(speed_sum[ok].sum() / total), speed_std=float(per_env.std()),
                         yaw_rate=float(yaw_sum[ok].sum() / total), fall_rate=float(fell.mean()))


def measure_commands(checkpoint: str | Path, speeds: list[float], seconds: float = 10.0, num_envs: int = 32,
                     settle_s: float = 2.0, seed: int = 12345, device: str = "cpu",
                     env_kwargs: dict | None = None) -> list[CommandResult]:
    """Hold each forward-speed command (no sideways or yaw command) for ``seconds`` on
    ``num_envs`` envs and measure the gait (:func:`hold_command`); the first ``settle_s``
    seconds (acceleration) are left out of the mean. Envs run on the bare task (no
    sim-to-real wrappers), as the target is stated. ``env_kwargs`` are task keywords on top
    of the run's (e.g. a terrain task's ``terrain={"types": ["flat"]}``).
    """
    from .evaluate import load_policy

    policy, cfg, _ = load_policy(checkpoint, device)
    return [hold_command(policy, cfg, v, 0.0, seconds, num_envs, settle_s, seed, device, env_kwargs) for v in speeds]
