"""Offscreen rendering of one simulation of a batch through ``mujoco.Renderer``.

Headless machines need an OpenGL backend: ``MUJOCO_GL=egl`` (GPU or Mesa's EGL)
or ``MUJOCO_GL=osmesa`` (software). ``unilab_envs`` picks ``egl`` when
``MUJOCO_GL`` is unset and there is no ``DISPLAY``.
"""

from __future__ import annotations

import mujoco
import numpy as np


class BatchRenderer:
    """Renders simulation ``sim`` of a batch from a camera tracking ``body``."""

    def __init__(self, batch, body: str, width: int = 480, height: int = 360) -> None:
        self._batch = batch
        self._model = batch.get_model(0)
        self._data = mujoco.MjData(self._model)
        self._renderer = mujoco.Renderer(self._model, height=height, width=width)
        self._camera = mujoco.MjvCamera()
        body_id = mujoco.mj_name2id(self._model, mujoco.mjtObj.mjOBJ_BODY, body)
        if body_id > 0:
            self._camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self._camera.trackbodyid = body_id
            self._camera.distance = 1.6
            self._camera.elevation = -20.0
            self._camera.azimuth = 120.0
        else:
            self._camera.type = mujoco.mjtCamera.mjCAMERA_FREE
            self._camera.lookat[:] = (0.0, 0.0, 0.4)
            self._camera.distance = 2.2
            self._camera.elevation = -25.0
            self._camera.azimuth = 135.0

    def render(self, sim: int = 0) -> np.ndarray:
        """An ``(height, width, 3)`` uint8 frame of simulation ``sim``."""
        self._batch.get_model(sim, self._model)
        self._batch.get_data(sim, self._data)
        mujoco.mj_forward(self._model, self._data)
        self._renderer.update_scene(self._data, camera=self._camera)
        return self._renderer.render()

    def close(self) -> None:
        self._renderer.close()
