"""A run's ``obs_history``: trained with, recorded, and rebuilt by eval, resume, --init-from, ship, export and play."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

import wrappers.history as history_module
from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

GRASP, REACH, GO1 = "UniLab/UR5Grasp-v0", "UniLab/UR5Reach-v0", "UniLab/Go1Joystick-v0"
CAMERA = "[object_pos,object_quat,object_vel,object_ang_vel,target_gap]"
QUIET = ["--no-progress", "algo.num_steps=8", "algo.num_minibatches=1", "policy.actor_hidden=[16]",
         "policy.critic_hidden=[16]", "log.tensorboard=false", "log.plot=false", "env_kwargs.num_threads=1"]
TINY_GRASP = ["--task", GRASP, "--num-envs", "4", *QUIET, f"obs_history.groups={CAMERA}", "obs_history.length=3"]


@pytest.fixture
def histories(monkeypatch):
    """The ``obs_history`` of every env built with one (what ``wrap_history`` was asked for)."""
    seen: list[dict] = []
    original = history_module.wrap_history

    def spy(env, obs_history):
        out = original(env, obs_history)
        seen.append(out.config.to_dict())
        return out

    monkeypatch.setattr(history_module, "wrap_history", spy)
    return seen


def test_grasp_trains_evaluates_resumes_and_fine_tunes_with_a_history(tmp_path, capsys, histories):
    out = tmp_path / "grasp"
    want = {"groups": ["object_pos", "object_quat", "object_vel", "object_ang_vel", "target_gap"], "length": 3}
    assert cli.main(["train", *TINY_GRASP, "--total-steps", "32", "--out", str(out), "sim2real=ur5_grasp_real"]) == 0
    assert histories == [want]
    assert yaml.safe_load((out / "config.yaml").read_text())["obs_history"] == want
    ckpt = load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    assert ckpt["config"]["obs_history"] == want and ckpt["dims"]["obs"] == 42 + 2 * 14
    capsys.readouterr()

    for extra in ([], ["--sim2real", "none"]):  # the history is the policy's: there with or without the profile
        histories.clear()
        assert cli.main(["eval", str(out), "--episodes", "2", *extra]) == 0
        assert histories == [want] and "episodes" in capsys.readouterr().out

    histories.clear()
    assert cli.main(["train", "--resume", str(out), "--total-steps", "64", "--no-progress"]) == 0
    assert histories == [want]
    assert load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)["iteration"] == 2

    # --init-from takes the run's history when the new config sets none ...
    fine = tmp_path / "fine"
    base = [a for a in TINY_GRASP if not a.startswith("obs_history")]
    assert cli.main(["train", *base, "--total-steps", "32", "--out", str(fine), "--init-from", str(out)]) == 0
    assert "obs_history" in capsys.readouterr().err
    assert yaml.safe_load((fine / "config.yaml").read_text())["obs_history"] == want
    # ... and refuses another one, in one line
    other = tmp_path / "other"
    assert cli.main(["train", *base, "--total-steps", "32", "--out", str(other), "--init-from", str(out),
                     "obs_history.groups=[object_pos]", "obs_history.length=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "was trained with obs_history {groups: ['object_pos'," in err[0], err
    assert "this run has {groups: ['object_pos'], length: 3}" in err[0] and not other.exists()
    # resuming with a config that drops the history is refused plainly, not as a size mismatch
    assert cli.main(["train", "--resume", str(out), *base, "--total-steps", "96", "--out", str(tmp_path / "r")]) == 2
    assert "this run has none" in capsys.readouterr().err


@pytest.mark.parametrize("bad, message", [
    (["obs_history.groups=[object_position]", "obs_history.length=3"],
     "obs_history: unknown observation group(s) ['object_position']; this task's groups are ['joint_pos',"),
    (["obs_history.groups=[object_pos]", "obs_history.length=0"], "obs_history.length must be a whole number"),
    (["obs_history.groups=[object_pos]"], "obs_history.length must be a whole number"),
    (["obs_history.groups=[object_pos]", "obs_history.frames=3"], "unknown config key 'obs_history.frames'"),
])
def test_bad_history_configs_fail_in_one_line_before_the_run(tmp_path, capsys, bad, message):
    out = tmp_path / "bad"
    assert cli.main(["train", "--task", GRASP, "--num-envs", "2", *QUIET, "--out", str(out), *bad]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in err[0], err
    assert not out.exists()


def test_reach_exports_ships_and_plays_with_its_history(tmp_path, capsys):
    from trainers.play import Player, find_policy, run_headless
    from unilab_robot.deploy import HistoryStack, load_spec

    out = tmp_path / "reach"
    assert cli.main(["train", "--task", REACH, "--num-envs", "4", *QUIET, "--total-steps", "32", "--out", str(out),
                     "obs_history.groups=[ee_to_target,joint_vel]", "obs_history.length=3"]) == 0
    assert cli.main(["export", str(out)]) == 0
    spec = load_spec(out / "deploy_spec.json")
    assert spec == load_spec(out / "policy.onnx")
    assert spec.history.groups == ("ee_to_target", "joint_vel") and spec.history.length == 3
    assert spec.input_size == 33 + 2 * 9 == spec.history.size
    assert [c.name for c in spec.history.columns] == ["ee_to_target@1", "joint_vel@1", "ee_to_target@2", "joint_vel@2"]
    assert json.loads((out / "deploy_spec.json").read_text())["history"]["columns"][0]["start"] == 33
    assert HistoryStack.from_spec(spec).size == spec.input_size

    played = run_headless(Player(find_policy(out), seed=0), 1, progress=False)  # the ONNX input is stacked
    assert played.episodes == 1 and np.isfinite(played.mean_length)

    shipped = tmp_path / "shipped"
    assert cli.main(["ship", str(out), "--out", str(shipped)]) == 0
    assert load_spec(shipped / "deploy_spec.json").history == spec.history
    capsys.readouterr()
    assert cli.main(["eval", str(shipped), "--episodes", "2"]) == 0


def test_symmetry_mirrors_the_history_columns_in_training(tmp_path):
    out = tmp_path / "go1"
    assert cli.main(["train", "--task", GO1, "--num-envs", "2", *QUIET, "--total-steps", "16", "--out", str(out),
                     "algo.symmetry_coef=0.5", "obs_history.groups=[gyro,joint_pos,command]",
                     "obs_history.length=2"]) == 0
    assert load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)["iteration"] == 1
