"""The deploy spec: built from each task, round-trips through JSON and ONNX metadata, refuses what does not fit."""

from __future__ import annotations

import json

import pytest

from unilab_robot.deploy import SCHEMA_VERSION, SpecError, load_spec, spec_from_dict, spec_from_json
from unilab_envs.deploy_spec import deploy_spec_for

TASKS = ["UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/UR5Reach-v0"]


@pytest.fixture(scope="module")
def specs():
    return {t: deploy_spec_for(t) for t in TASKS}


@pytest.mark.parametrize("task", TASKS)
def test_spec_round_trips_through_json(specs, task):
    spec = specs[task]
    again = spec_from_json(spec.to_json())
    assert again == spec
    data = json.loads(spec.to_json())
    assert list(data)[:2] == ["schema", "schema_version"] and data["schema_version"] == SCHEMA_VERSION


def test_spec_holds_what_a_robot_program_needs(specs):
    go1 = specs["UniLab/Go1Joystick-v0"]
    assert go1.task.id == "UniLab/Go1Joystick-v0" and go1.task.version == 0
    assert (go1.timing.physics_dt, go1.timing.substeps, go1.timing.control_dt) == (0.004, 5, 0.02)
    assert [g.name for g in go1.observation.groups] == ["linvel", "gyro", "gravity", "joint_pos", "joint_vel",
                                                         "last_action", "command", "phase"]
    assert go1.observation.group("joint_pos").start == 9 and go1.observation.group("joint_pos").unit == "rad"
    assert go1.observation.normalizer.folded_in
    a = go1.action
    assert a.mode == "home_offset" and a.scale == 0.5 and a.clip == (-1.0, 1.0)
    assert a.joint_names[:3] == ("FR_hip_joint", "FR_thigh_joint", "FR_calf_joint")
    assert a.kp == (35.0,) * 12 and a.kd == (0.5,) * 12
    assert a.torque_limit[2] == pytest.approx(35.55) and a.torque_limit[0] == pytest.approx(23.7)
    assert go1.command.ranges[0] == (-0.6, 1.0) and go1.command.resample_time == 5.0
    assert go1.episode.max_steps == 1000 and go1.episode.max_tilt == 1.0
    assert "root" in go1.model.joint_names and go1.model.root_body == "trunk"
    ur5 = specs["UniLab/UR5Reach-v0"]
    assert ur5.action.mode == "target_delta" and ur5.model.ee_site == "attachment_site"
    assert ur5.episode.success_threshold == 0.05 and ur5.gait is None
    assert specs["UniLab/G1Joystick-v0"].action.size == 29


def test_task_keywords_reach_the_spec():
    spec = deploy_spec_for("UniLab/Go1Joystick-v0", command_vx=(0.0, 1.5), action_scale=0.3)
    assert spec.command.ranges[0] == (0.0, 1.5) and spec.action.scale == 0.3


def test_straight_commands_reach_the_spec_and_plays_draws():
    from types import SimpleNamespace

    import numpy as np

    from unilab_robot.deploy.episodes import sample_command

    spec = deploy_spec_for("UniLab/G1Joystick-v0", straight_command_probability=1.0, zero_command_probability=0.0)
    assert spec.command.straight_probability == 1.0
    assert spec_from_json(spec.to_json()).command.straight_probability == 1.0
    rng = np.random.default_rng(0)
    drawn = np.array([sample_command(SimpleNamespace(spec=spec), rng) for _ in range(20)])
    assert np.all(drawn[:, 1:] == 0.0) and np.all(drawn[:, 0] != 0.0)
    old = json.loads(deploy_spec_for("UniLab/G1Joystick-v0", zero_command_probability=0.0).to_json())
    del old["command"]["straight_probability"]  # a spec written before the option draws as before
    drawn = np.array([sample_command(SimpleNamespace(spec=spec_from_dict(old)), rng) for _ in range(20)])
    assert np.all(drawn != 0.0)


def _mutate(spec, path, value):
    data = json.loads(spec.to_json())
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


@pytest.mark.parametrize("path, value, message", [
    (("schema_version",), 99, "schema_version 99 is not supported"),
    (("schema",), "something.else", "not a UniLab deploy spec"),
    (("action", "kp"), [35.0] * 11, "action.kp has 11 entries, action.size is 12"),
    (("action", "mode"), "velocity", "action.mode must be one of"),
    (("timing", "substeps"), 4, "physics_dt * substeps"),
    (("observation", "size"), 51, "groups end at 50, but the size is 51"),
    (("action", "joint_names"), ["no_such_joint"] + [f"FR_hip_joint"] * 11, "not in the model's names"),
    (("action", "gains"), [1.0], "unknown keys ['gains']"),
])
def test_bad_specs_are_refused_with_what_is_wrong(specs, path, value, message):
    data = _mutate(specs["UniLab/Go1Joystick-v0"], path, value)
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]").replace("*", r"\*")):
        spec_from_dict(data)


def test_groups_must_tile_the_observation(specs):
    data = json.loads(specs["UniLab/Go1Joystick-v0"].to_json())
    data["observation"]["groups"][1]["start"] = 4
    with pytest.raises(SpecError, match="groups must tile"):
        spec_from_dict(data)


def test_spec_of_another_task_is_refused(specs):
    with pytest.raises(SpecError, match="is for UniLab/UR5Reach-v0, not UniLab/Go1Joystick-v0"):
        specs["UniLab/UR5Reach-v0"].require_task("UniLab/Go1Joystick-v0")
    with pytest.raises(SpecError, match=r"does not fit .* \(obs 50, action 12\)"):
        specs["UniLab/UR5Reach-v0"].require_sizes(50, 12, "policy.onnx")


def test_load_spec_says_what_to_pass(tmp_path):
    with pytest.raises(SpecError, match="run `unilab export"):
        load_spec(tmp_path)
    (tmp_path / "deploy_spec.json").write_text("{not json")
    with pytest.raises(SpecError, match="not valid JSON"):
        load_spec(tmp_path)


def test_unknown_task_has_no_spec():
    with pytest.raises(SpecError, match="no deploy spec builder for 'Pendulum-v1'"):
        deploy_spec_for("Pendulum-v1")
