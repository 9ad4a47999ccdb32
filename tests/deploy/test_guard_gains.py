"""The safety guard estimates torque with the gains the motors apply, and never makes the shipped G1 fall
(issue 72, item 5): on a G1 model with stiff position servos (Kp 500, Kd 10, as published G1 models ship),
``unilab play`` drives the servos with the deploy spec's Kp / Kd (as the robot's motor drivers are driven by
the gains the runtime sends) and the guard predicts with them; ``--model-gains`` keeps the model's own and the
guard predicts with those. The 64-episode table of every shipped policy: docs/results/safety_guard.md."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from benchmarks.safety_guard_falls import SHIPPED
from benchmarks.stiff_servos import STIFF, stiff_xml, write_stiff_model
from tests.deploy.conftest import run
from trainers.play import Player, find_policy, run_headless
from unilab_robot.deploy import load_spec
from unilab_robot.deploy.safety import SafetyGuard
from unilab_robot.model import packaged_model_path

G1_REAL = Path("policies/g1_joystick_real")
pytestmark = pytest.mark.skipif(not (G1_REAL / "policy.onnx").exists(), reason="policies/g1_joystick_real is not shipped")


@pytest.fixture(scope="module")
def stiff(tmp_path_factory) -> str:
    return str(write_stiff_model("g1", tmp_path_factory.mktemp("stiff")))


def test_the_stiff_variant_has_every_servo_at_kp_500_kd_10(stiff):
    model = mujoco.MjModel.from_xml_path(stiff)
    assert model.nu == 29
    np.testing.assert_array_equal(model.actuator_gainprm[:, 0], 500.0)
    np.testing.assert_array_equal(model.actuator_biasprm[:, 1:3], [[-500.0, -10.0]] * 29)
    assert stiff_xml('<position class="a" kp="1" kv="2" forcerange="-1 1"/>', 5, 0.5) == \
        '<position kp="5" kv="0.5" class="a" forcerange="-1 1"/>'


def test_the_table_covers_every_shipped_policy_the_guard_maps(tmp_path):
    """docs/results/safety_guard.md's rows: every shipped policy with a safety section is in the benchmark's
    list, and its robot has a stiff variant, every servo at that variant's Kp / Kd (the Go2's was missing)."""
    guarded = set()
    for folder in sorted(Path("policies").iterdir()):
        if folder.name == "wip" or not (folder / "deploy_spec.json").exists():
            continue
        spec = load_spec(folder / "deploy_spec.json")
        if spec.safety is not None:
            guarded.add(folder.name)
            robot = packaged_model_path(spec).parent.name
            _, kp, kd = STIFF[robot]
            model = mujoco.MjModel.from_xml_path(str(write_stiff_model(robot, tmp_path)))
            assert (model.actuator_gainprm[:, 0] == kp).all() and (model.actuator_biasprm[:, 2] == -kd).all(), robot
    assert guarded == set(SHIPPED), sorted(guarded ^ set(SHIPPED))


def test_the_guard_estimates_torque_with_the_gains_the_motors_apply(stiff):
    spec = load_spec(G1_REAL / "deploy_spec.json")
    model = mujoco.MjModel.from_xml_path(stiff)
    robot = SafetyGuard.from_spec(spec, model)  # the robot runtime: it sends the spec's gains in LowCmd_
    np.testing.assert_array_equal(robot.limits.kp, spec.action.kp)
    np.testing.assert_array_equal(robot.limits.kd, spec.action.kd)
    own = SafetyGuard.from_spec(spec, model, gains="model")
    assert (own.limits.kp == 500.0).all() and (own.limits.kd == 10.0).all()
    # hip pitch, at rest, with 50% torque headroom (44 of its 88 N m, a limit the motor does not clamp at itself):
    # the spec's Kp 150 lets a target 44 / 150 = 0.293 rad away ask for it; the stiff MJCF's Kp 500 only 0.088 rad
    q, qd, up = np.asarray(spec.action.home, np.float64), np.zeros(29), np.array([1.0, 0, 0, 0])
    far = q.copy()
    far[0] += 0.5
    half = {**spec.safety.to_dict(), "torque_limit": None, "torque_fraction": 0.5}
    robot_half = SafetyGuard.from_spec(spec, model, half)
    own_half = SafetyGuard.from_spec(spec, model, half, gains="model")
    assert robot_half.targets(far, q, qd, up)[0] == pytest.approx(q[0] + 44.0 / 150.0)
    assert own_half.targets(far, q, qd, up)[0] == pytest.approx(q[0] + 44.0 / 500.0)
    # at the spec's limit, the motor's own 88 N m, the motor clamps on every servo tick: no target moves for torque,
    # with either gains (the guard once cut this one to 88 / 500 rad on the stiff servos and the G1 fell)
    assert not robot.limits.torque_step.any() and not own.limits.torque_step.any()
    assert robot.targets(far, q, qd, up)[0] == pytest.approx(far[0])
    assert own.targets(far, q, qd, up)[0] == pytest.approx(far[0])


def test_play_drives_a_stiff_model_with_the_spec_gains_unless_model_gains(stiff):
    spec_player = Player(find_policy(G1_REAL), model_path=stiff, seed=0)
    acts = spec_player.io.actuators
    np.testing.assert_array_equal(spec_player.model.actuator_gainprm[acts, 0], spec_player.spec.action.kp)
    np.testing.assert_array_equal(-spec_player.model.actuator_biasprm[acts, 2], spec_player.spec.action.kd)
    np.testing.assert_array_equal(spec_player.guard.limits.kp, spec_player.spec.action.kp)
    own = Player(find_policy(G1_REAL), model_path=stiff, seed=0, model_gains=True)
    assert (own.model.actuator_gainprm[acts, 0] == 500.0).all() and (own.guard.limits.kp == 500.0).all()


def test_the_guard_does_not_make_the_shipped_g1_fall_on_the_stiff_model(stiff):
    """The same 16 episodes with the spec's guard and without it: equal falls (the issue measured 50% / 0%)."""
    results = {}
    for safety in (None, "off"):
        player = Player(find_policy(G1_REAL), model_path=stiff, seed=0, safety=safety)
        results[safety] = run_headless(player, 16, progress=False)
    on, off = results[None], results["off"]
    assert abs(on.fall_rate - off.fall_rate) <= 0.01, (on.fall_rate, off.fall_rate)
    assert on.fall_rate == 0.0 and on.mean_length == 1000.0


def test_play_says_which_gains_drive_the_model(stiff, capsys):
    argv = ["play", str(G1_REAL), "--headless", "--episodes", "1", "--no-progress", "--model-path", stiff]
    assert run(argv) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "gains" in line]
    assert len(said) == 1 and "driving it with the spec's Kp / Kd" in said[0] and "--model-gains keeps" in said[0]
    assert "Kp differs on 29 actuators (e.g. left_hip_pitch_joint: 500 here, 150 in training)" in said[0], err
    assert run([*argv, "--model-gains"]) == 0
    err = capsys.readouterr().err
    assert "the model's own servo gains drive it (--model-gains)" in err, err
