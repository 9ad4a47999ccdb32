"""UniLab robot tasks on batched MuJoCo physics, registered with Gymnasium.

``import unilab_envs`` registers every task; then ``gym.make(id)`` gives one
``gymnasium.Env`` and ``gym.make_vec(id, num_envs=N)`` a natively batched
``gymnasium.vector.VectorEnv``. ``gym.make("unilab_envs:UniLab/Go1Joystick-v0")``
works without a prior import.
"""

from __future__ import annotations

import os

from unilab_envs.core.render_backend import headless_gl_backend
from unilab_envs.threads import set_thread_policies

set_thread_policies()  # before Numba or torch start a parallel region
if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
    _backend = headless_gl_backend()
    if _backend is not None:  # with neither library, leave MuJoCo's default: import must not fail
        os.environ["MUJOCO_GL"] = _backend

import gymnasium as gym  # noqa: E402

from unilab_envs.tasks import TASKS  # noqa: E402

__all__ = ["TASKS", "UniLabEnv", "UniLabVectorEnv", "register_all"]


def __getattr__(name: str):
    # the env classes load Numba; import them on first use so that ``unilab_robot.deploy``
    # (what a robot-side program imports) stays free of it
    if name == "UniLabEnv":
        from unilab_envs.core.single_env import UniLabEnv

        return UniLabEnv
    if name == "UniLabVectorEnv":
        from unilab_envs.core.vector_env import UniLabVectorEnv

        return UniLabVectorEnv
    raise AttributeError(f"module 'unilab_envs' has no attribute {name!r}")


def register_all() -> None:
    """Register every task with Gymnasium (idempotent)."""
    for env_id, (module, episode_steps) in TASKS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"{module}:make_env",
            vector_entry_point=f"{module}:make_vector_env",
            max_episode_steps=episode_steps,
        )


register_all()
