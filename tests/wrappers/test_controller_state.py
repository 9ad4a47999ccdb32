"""The controller's own state reaches the policy exact under a sim-to-real stack: its last action
is the action it sent, command and phase are current; sensor groups are still perturbed."""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode

from tests.wrappers.conftest import Tap, columns, make_go1
from unilab_robot.deploy.sim2real import PlaySim2Real
from wrappers import Sim2Real

A = 12
HARSH = {"extends": "go1_real", "action_latency": {"delay": 1}, "observation_latency": {"delay": 1},
         "packet_loss": {"observations": {"model": "bernoulli", "loss_rate": 0.3},
                         "actions": {"model": "bernoulli", "loss_rate": 0.3}}}


def test_last_action_is_the_action_sent_and_command_phase_are_current():
    inner = Tap(make_go1(8))
    env = Sim2Real(inner, HARSH)
    obs, _ = env.reset(seed=0)
    last, ctrl, sensors = columns(inner, "last_action"), columns(inner, "command", "phase"), columns(inner, "gyro")
    assert np.all(obs[:, last] == 0.0)
    rng = np.random.default_rng(0)
    sensor_differs = 0
    for _ in range(20):
        a = rng.uniform(-1.5, 1.5, (8, A)).astype(np.float32)  # beyond the bounds: clipped as the env clips
        obs, _, te, tr, info = env.step(a)
        live = ~(te | tr)
        np.testing.assert_array_equal(obs[live][:, last], np.clip(a, -1, 1)[live])
        np.testing.assert_array_equal(obs[:, ctrl], inner.obs[:, ctrl])
        assert np.any(inner.obs[:, last] != obs[:, last])  # the robot executed something else (late or lost)
        sensor_differs += int(np.any(obs[:, sensors] != inner.obs[:, sensors]))
    assert sensor_differs == 20


def test_a_new_episode_starts_from_a_zero_last_action_and_the_final_obs_keeps_the_sent_one():
    inner = Tap(make_go1(4, max_episode_steps=3))
    env = Sim2Real(inner, HARSH)
    env.reset(seed=0)
    last = columns(inner, "last_action")
    a = np.full((4, A), 0.5, np.float32)
    for _ in range(2):
        env.step(a)
    obs, _, te, tr, info = env.step(a)
    assert np.all(te | tr)
    np.testing.assert_array_equal(obs[:, last], 0.0)
    np.testing.assert_array_equal(info["final_obs"][:, last], 0.5)


def test_next_step_mode_keeps_the_reset_rows_zero():
    inner = Tap(make_go1(4, max_episode_steps=3, mode=AutoresetMode.NEXT_STEP))
    env = Sim2Real(inner, HARSH)
    env.reset(seed=0)
    last = columns(inner, "last_action")
    a = np.full((4, A), -0.25, np.float32)
    for _ in range(3):
        obs, *_ = env.step(a)
    np.testing.assert_array_equal(obs[:, last], -0.25)
    obs, *_ = env.step(a)  # the reset step
    np.testing.assert_array_equal(obs[:, last], 0.0)


def test_play_side_profile_passes_the_controller_groups_unperturbed():
    import mujoco

    from unilab_envs.deploy_spec import default_model_path, deploy_spec_for
    from unilab_robot.deploy.reference import PolicyIO
    from unilab_robot.deploy.sim2real import load_play_profile

    spec = deploy_spec_for("UniLab/Go1Joystick-v0")
    model = mujoco.MjModel.from_xml_path(str(default_model_path("UniLab/Go1Joystick-v0")))
    play = PlaySim2Real(load_play_profile(HARSH), spec, seed=0)
    play.start_episode(model, PolicyIO(spec, model).actuators)
    groups = {g.name: slice(g.start, g.stop) for g in spec.observation.groups}
    rng = np.random.default_rng(0)
    for _ in range(10):
        true = rng.normal(size=spec.observation.size).astype(np.float32)
        seen = play.observation(true)
        for g in ("last_action", "command", "phase"):
            np.testing.assert_array_equal(seen[groups[g]], true[groups[g]])
        assert np.any(seen[groups["gyro"]] != true[groups["gyro"]])
