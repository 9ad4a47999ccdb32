"""The motor driver's law by hand, and the simulated driver applying exactly it through MuJoCo's actuators."""

from __future__ import annotations

import mujoco
import numpy as np

from unilab_robot.deploy import load_spec
from unilab_robot.driver import MotorDriver, motor_torque
from unilab_robot.motors import G1_29


def test_motor_torque_by_hand():
    # 1 + 10 (0.5 - 0.3) + 2 (0 - 1) = 1 + 2 - 2 = 1
    assert motor_torque(0.3, 1.0, 0.5, 0.0, 1.0, 10.0, 2.0, 50.0) == 1.0
    # 0 + 100 (1 - 0) + 0 = 100, clipped to 25; and -100 to -25
    np.testing.assert_allclose(motor_torque([0, 0], [0, 0], [1, -1], 0, 0, 100.0, 0.0, 25.0), [25.0, -25.0])
    # damping: Kp 0, Kd 3, dq 2 -> -6
    assert motor_torque(0.7, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 50.0) == -6.0


def _g1_model():
    from unilab_robot.model import load_play_model

    return load_play_model(load_spec("policies/g1_joystick_real/deploy_spec.json"))


def test_mujoco_actuators_apply_the_law():
    model = _g1_model()
    data = mujoco.MjData(model)
    driver = MotorDriver(model, G1_29)
    rng = np.random.default_rng(0)
    n = len(G1_29)
    data.qpos[driver.qadr] = rng.uniform(-0.3, 0.3, n)
    data.qvel[driver.dadr] = rng.uniform(-2, 2, n)
    q_des, dq_des, tau = rng.uniform(-0.5, 0.5, n), rng.uniform(-1, 1, n), rng.uniform(-5, 5, n)
    kp, kd = rng.uniform(20, 300, n), rng.uniform(0.5, 5, n)
    enabled = np.ones(n, bool)
    enabled[5] = False
    driver.command(data, q_des, dq_des, tau, kp, kd, enabled)
    mujoco.mj_forward(model, data)
    want = motor_torque(data.qpos[driver.qadr], data.qvel[driver.dadr], q_des, dq_des, tau, kp, kd, driver.tau_max)
    want[5] = 0.0  # mode 0: unpowered
    np.testing.assert_allclose(driver.torque(data), want, rtol=1e-9, atol=1e-9)
    assert (np.abs(want) >= driver.tau_max - 1e-9).any()  # some motors are at their force limit, clipped
    assert driver.tau_max[3] == 139.0  # the knee's force range in the model
