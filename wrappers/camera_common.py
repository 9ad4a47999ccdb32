"""What the camera wrappers share: finding the env's depth camera, its image columns, and which steps
carry a new frame.

A depth camera (:class:`~unilab_envs.sensors.DepthCamera`) renders a frame every
``config.update_every`` control steps, on a frame clock shared by the batch, and a fresh frame for
every row that starts an episode; between frames the task's image group repeats the last one. A
camera imperfection belongs to a *frame*, not to a control step: a noisy frame stays the same
noisy frame while the camera holds it, and a frame is dropped once, not once per control step.
So the wrappers act on new frames only (:func:`new_frame_step`) and hold their result otherwise.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from wrappers._base import Sim2RealWrapper, group_columns, require

__all__ = ["FrameWrapper", "camera_of", "camera_columns", "camera_tasks", "new_frame_step", "put_frame"]


def camera_tasks() -> list[str]:
    """The registered task ids whose observation has an image group (a camera frame)."""
    from unilab_envs.tasks import TASKS

    found = []
    for task_id, (module_name, _) in TASKS.items():
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if not isinstance(value, type) or value.__module__ != module_name:
                continue
            groups = getattr(value, "declared_groups", None)
            if isinstance(groups, Mapping) and any(getattr(g, "shape", None) for g in groups.values()):
                found.append(task_id)
                break
    return found


def camera_of(env: VectorEnv, what: str) -> Any:
    """The env's depth camera (``env.unwrapped.task.camera``); ``ValueError`` naming the tasks that have one."""
    base = env.unwrapped
    camera = getattr(getattr(base, "task", None), "camera", None)
    if camera is None:
        spec = getattr(base, "spec", None)
        name = getattr(spec, "id", None) or type(base).__name__
        raise ValueError(f"{what} needs a task with a depth camera and {name} has none; tasks with one: "
                         f"{', '.join(camera_tasks()) or 'none registered'}")
    return camera


def camera_columns(env: VectorEnv, camera: Any, group: str, what: str) -> np.ndarray:
    """The observation columns of the camera's image group ``group``, checked against the camera's pixel count."""
    cols = group_columns(env, (group,), what)[group]
    require(cols.size == camera.config.pixels,
            f"{what}: observation group {group!r} has {cols.size} columns but the camera has {camera.config.pixels} pixels "
            f"({camera.config.width} x {camera.config.height}); name the camera's image group with group=")
    return cols


@nb.njit(inline="always", cache=True)
def put_frame(dst, src, i, cols, frame):
    """Row ``i`` of ``dst``: row ``i`` of ``src`` with the image columns ``cols`` replaced by ``frame[i]``."""
    dst[i, :] = src[i, :]
    for k in range(cols.shape[0]):
        dst[i, cols[k]] = frame[i, k]


def new_frame_step(camera: Any) -> bool:
    """Whether the control step just taken rendered a new frame for every env (the camera's frame clock ticked
    on a frame). Rows that started an episode always have a new frame."""
    return bool((int(camera.frame_clock[0]) - 1) % camera.config.update_every == 0)


class FrameWrapper(Sim2RealWrapper):
    """A wrapper that changes each new frame of the camera's image group ``group`` (and holds it between frames).

    It finds the camera and the group's columns (``self.camera``, ``self._cols``), keeps its output buffers
    (``self._out``, ``self._final_out``) and sets ``self._fresh`` after each step: whether the step rendered a new
    frame for every env (a reset renders only the rows it starts).
    """

    def __init__(self, env: VectorEnv, group: str) -> None:
        super().__init__(env)
        what = type(self).__name__
        self.camera = camera_of(env, what)
        self._cols = camera_columns(env, self.camera, group, what)
        shape = (self.num_envs, int(np.prod(self.single_observation_space.shape)))
        self._out = np.zeros(shape, np.float32)
        self._final_out = np.zeros(shape, np.float32)
        self._fresh = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._fresh = False  # a reset renders only the rows it starts
        return super().reset(seed=seed, options=options)

    def _after_step(self, info):
        self._fresh = new_frame_step(self.camera)

    def _outputs(self, info: dict, final: np.ndarray) -> np.ndarray:
        """The observation to hand out; SAME_STEP's ``info["final_obs"]`` replaced by this wrapper's."""
        if final is not self._none and "final_obs" in info:
            info["final_obs"] = self._hand_out(self._final_out)
        return self._hand_out(self._out)
