"""The reference as a ghost: a translucent second G1 posed at the clip's frame, beside the robot (motion tracking).

Cheap: one more ``MjData`` of the played model, set to the reference pose of the controller's frame
(:meth:`unilab_robot.deploy.motion.MotionIO.reference_qpos`) and ``mj_kinematics`` once per drawn frame;
its dynamic geoms are appended to a scene that already holds the robot (``mjv_addGeoms``: the window's
``user_scn``, or the headless renderer's scene after ``update_scene``), recoloured translucent. No
second model, no window needed: headless play films it through ``mujoco.Renderer``.
"""

from __future__ import annotations

import mujoco
import numpy as np

#: where the ghost stands from the reference pose (m, world): beside the robot, not inside it
GHOST_OFFSET = (0.0, 1.0, 0.0)
GHOST_RGBA = (0.35, 0.75, 1.0, 0.35)


class Ghost:
    """The reference pose of a motion-tracking player, drawn into a scene (:meth:`draw`)."""

    def __init__(self, model: mujoco.MjModel, io, offset=GHOST_OFFSET, rgba=GHOST_RGBA) -> None:
        self.model, self.io = model, io
        self.data = mujoco.MjData(model)
        self.offset, self.rgba = np.asarray(offset, dtype=np.float64), np.asarray(rgba, dtype=np.float32)
        self.option, self.perturb = mujoco.MjvOption(), mujoco.MjvPerturb()

    def pose(self, state) -> None:
        """Set the ghost to the reference frame of ``state`` (a :class:`~unilab_robot.deploy.ControllerState`)."""
        io = self.io
        io.motion.reference_qpos(state.motion, io.root_q, io.joint_q, self.data.qpos)
        self.data.qpos[io.root_q:io.root_q + 3] += self.offset
        mujoco.mj_kinematics(self.model, self.data)

    def draw(self, scene: mujoco.MjvScene) -> int:
        """Append the ghost's dynamic geoms to ``scene`` (translucent); the number added (0 when the scene is full)."""
        first = scene.ngeom
        mujoco.mjv_addGeoms(self.model, self.data, self.option, self.perturb, mujoco.mjtCatBit.mjCAT_DYNAMIC, scene)
        for i in range(first, scene.ngeom):
            scene.geoms[i].rgba[:] = self.rgba
        return scene.ngeom - first


def ghost_for(player) -> Ghost | None:
    """A :class:`Ghost` for a player of a motion-tracking spec, else ``None``."""
    return Ghost(player.model, player.io) if player.io.motion is not None else None
