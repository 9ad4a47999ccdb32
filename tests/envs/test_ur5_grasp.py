"""The UR5e + 2F-85-like gripper scene and the ``UniLab/UR5Grasp-v0`` task."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from unilab_envs.assets import ur5e_2f85 as scene

TASK = "UniLab/UR5Grasp-v0"


def _scene(timestep: float, mass: float, friction: float):
    model = mujoco.MjModel.from_xml_path(str(scene.MJCF_PATH))
    model.opt.timestep = timestep
    cube = model.body(scene.OBJECT_BODY).id
    model.body_mass[cube] = mass
    model.body_inertia[cube] = mass * 0.05**2 / 6  # solid 5 cm cube
    model.geom_friction[model.geom(scene.OBJECT_BODY).id, 0] = friction
    data = mujoco.MjData(model)
    mujoco.mj_setConst(model, data)
    mujoco.mj_resetDataKeyframe(model, data, model.key(scene.HOME_KEYFRAME).id)
    return model, data


def _move(model, data, goal, grip, steps, site, down, speed=0.02):
    """Resolved-rate control at 25 Hz: each step, joint targets = q + J+ (pose error), the
    pinch point moving toward ``goal`` at ``speed`` m per step with the home orientation."""
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for _ in range(steps):
        pos, rot = data.site_xpos[site], data.site_xmat[site].reshape(3, 3)
        delta = goal - pos
        delta *= min(1.0, speed / max(np.linalg.norm(delta), 1e-9))
        mujoco.mj_jacSite(model, data, jacp, jacr, site)
        jac = np.vstack([jacp[:, :6], jacr[:, :6]])
        error = np.concatenate([delta, 0.5 * sum(np.cross(rot[:, k], down[:, k]) for k in range(3))])
        data.ctrl[:6] = data.qpos[:6] + jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), error)
        data.ctrl[6] = grip
        for _ in range(int(round(0.04 / model.opt.timestep))):
            mujoco.mj_step(model, data)


@pytest.mark.parametrize("timestep, mass, friction", [(0.004, 0.05, 1.0), (0.004, 0.25, 0.5), (0.002, 0.1, 0.8)])
def test_a_scripted_pick_lifts_and_holds_the_cube(timestep, mass, friction):
    """Open-loop pick (above, descend open, close, lift 20 cm, hold 1 s): the physics allows a
    grasp at the lightest / heaviest, most / least slippery ends of the task's ranges."""
    model, data = _scene(timestep, mass, friction)
    cube_q = model.jnt_qposadr[model.body(scene.OBJECT_BODY).jntadr[0]]
    data.qpos[cube_q : cube_q + 3] = [-0.05, 0.55, 0.025]
    mujoco.mj_forward(model, data)
    site = model.site(scene.PINCH_SITE).id
    down = data.site_xmat[site].reshape(3, 3).copy()
    start = data.qpos[cube_q : cube_q + 3].copy()
    closed = model.actuator(scene.GRIPPER_ACTUATOR).ctrlrange[1]
    _move(model, data, start + [0, 0, 0.12], 0.0, 30, site, down)
    _move(model, data, start, 0.0, 20, site, down)
    np.testing.assert_allclose(data.qpos[cube_q : cube_q + 3], start, atol=2e-3)  # the open pads straddle it untouched
    _move(model, data, start, closed, 15, site, down)
    sensors = data.sensordata.reshape(2, 4)  # per pad: contacts found, net force (3)
    assert (sensors[:, 0] > 0).all(), "both pads touch the cube"
    np.testing.assert_allclose(np.linalg.norm(sensors[:, 1:], axis=1), 20.0, rtol=0.4)  # 40 N shared by the pads
    _move(model, data, start + [0, 0, 0.2], closed, 45, site, down)  # lift, then hold (about 1 s at the top)
    pinch, cube = data.site_xpos[site], data.qpos[cube_q : cube_q + 3]
    assert cube[2] - start[2] > 0.18, f"the cube rose {cube[2] - start[2]:.3f} m of 0.2"
    assert np.linalg.norm(cube - pinch) < 0.015, "the cube stays between the pads"
    assert all(w.number == 0 for w in data.warning)


def test_scene_facts_match_the_model():
    model = mujoco.MjModel.from_xml_path(str(scene.MJCF_PATH))
    gripper = ("base_mount", "gripper_base", "left_pad", "right_pad")
    assert sum(model.body(n).mass[0] for n in gripper) == pytest.approx(0.925)  # Robotiq 2F-85 datasheet
    stroke = model.joint("left_slide").range[1] * 2
    assert stroke == pytest.approx(0.085)
    assert model.actuator(scene.GRIPPER_ACTUATOR).forcerange[1] == pytest.approx(40.0)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(scene.HOME_KEYFRAME).id)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.site_xmat[model.site(scene.PINCH_SITE).id].reshape(3, 3)[:, 2], [0, 0, -1], atol=1e-4)
    pads = [data.xpos[model.body(n).id] for n in scene.PAD_BODIES]
    assert np.linalg.norm(pads[0] - pads[1]) - 0.008 == pytest.approx(0.085, abs=1e-6)  # open: 85 mm between the pad faces
