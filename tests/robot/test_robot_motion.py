"""A motion-tracking policy through the wire: ``unilab robot lockstep POLICY --clip NAME`` plays one clip per episode
with the simulated robot and says per episode whether it reached the clip's end.

The policy is scripted, so the plumbing is what is tested: an ONNX graph (one MatMul) that holds the reference joints
(its action is the observation's ``ref_joint_pos`` / ``action.scale``: the PD targets are the next frame's reference
joints), exported with G1Track's deploy spec and clips as ``unilab export`` writes them. Nothing balances it, so it
stands for a second or two (as the env's own test of that action says): on a 1.2 s cut of the standing clip it
reaches the end of every episode, on a walk it falls; the episodes start on the clip's first frame, in step with the
controller."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from unilab_robot import robot_cli

ROOT = Path(__file__).resolve().parents[2]

STANDING, WALK, SHORT = "CMU_077_02", "CMU_016_22", "stand_1s"


def _hold_reference_onnx(path, spec) -> None:
    """``actions = obs @ W``: the ``ref_joint_pos`` columns divided by the action scale (targets = the reference)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    group = spec.observation.group("ref_joint_pos")
    w = np.zeros((spec.observation.size, spec.action.size), np.float32)
    w[group.start + np.arange(spec.action.size), np.arange(spec.action.size)] = 1.0 / spec.action.scale
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "W"], ["actions"])], "hold_reference",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", spec.observation.size])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", spec.action.size])],
        [numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.fixture(scope="module")
def hold_policy(tmp_path_factory):
    """A folder as ``unilab export`` writes it for G1Track on two clips, with the scripted policy."""
    from trainers.common.deploy_export import DEFAULT_SAFETY_SOURCE, attach_deploy_spec, build_spec

    from unilab_envs.motion.clips import clip_path
    from unilab_robot.deploy.motion_file import load_motion, make_clip, save_motion

    folder, clips = tmp_path_factory.mktemp("hold"), tmp_path_factory.mktemp("clips")
    stand = load_motion(clip_path(STANDING))
    cut = round(1.2 * stand.fps) + 1  # 1.2 s of standing, a motion file of our own (written with the format's writer)
    save_motion(clips / f"{SHORT}.npz", make_clip(stand.fps, stand.joint_names, stand.body_names,
                                                  **{k: v[:cut] for k, v in stand.arrays().items()}))
    kwargs = {"clips": [str(clips / f"{SHORT}.npz"), WALK]}
    _hold_reference_onnx(folder / "policy.onnx", build_spec("UniLab/G1Track-v0", kwargs))
    attach_deploy_spec(folder / "policy.onnx", "UniLab/G1Track-v0", kwargs, safety=({}, DEFAULT_SAFETY_SOURCE))
    return folder


def _lockstep(capsys, *argv):
    import argparse

    parser = argparse.ArgumentParser()
    robot_cli.add_arguments(parser)
    code = robot_cli.run(parser.parse_args(["lockstep", *map(str, argv)]))
    out = capsys.readouterr()
    return code, out


def test_a_clip_is_played_to_its_end_in_every_episode(hold_policy, capsys):
    assert (hold_policy / f"{SHORT}.npz").is_file() and (hold_policy / f"{WALK}.npz").is_file()  # beside the spec
    code, out = _lockstep(capsys, hold_policy, "--clip", SHORT, "--episodes", "3")
    assert code == 0, out.err
    summary = json.loads(out.out.strip().splitlines()[-1])
    assert summary["clip"] == SHORT and summary["episodes"] == 3
    assert summary["reached_end"] == 3 and summary["episode_ends"] == "111" and summary["falls"] == 0
    assert summary["runtime_fault"] is None and summary["runtime_mode"] == "policy"
    assert 3 * 1.2 < summary["sim_time_s"] < 3 * 1.2 + 3.0  # three whole clips and the start-up (2 s on the gantry)


def test_every_episode_ends_at_the_clips_end_or_a_fall(hold_policy, capsys):
    """Holding the reference's joints does not walk: the walk's episodes end in the task's termination, each counted
    once, and the runtime starts each on the clip's first frame, in step with the simulated robot."""
    from unilab_robot.gate import World, lockstep_pair
    from unilab_robot.lockstep import run_lockstep
    from unilab_robot.policy import find_policy

    runtime, sim = lockstep_pair(find_policy(hold_policy), World(), None, 0, quiet=True, clip=WALK)
    starts = []
    start = runtime._start_policy

    def started(now):
        start(now)
        if sim._ctl is not None:  # an episode of the clip: the robot on its first frame when the controller starts
            starts.append((runtime.ctl.motion.frame, sim.stats.steps - sim._episode_step,
                           float(np.abs(runtime.data.qpos[runtime.io.joint_q] - sim.data.qpos[sim.io.joint_q]).max())))

    runtime._start_policy = started
    run_lockstep(runtime, sim, 1e9, until=lambda: sim.stats.episodes >= 3)
    summary = sim.summary()
    assert summary["episodes"] == 3 and len(summary["episode_ends"]) == 3
    assert summary["reached_end"] + summary["falls"] == 3 and summary["falls"] >= 1
    assert len(starts) >= 3 and all(frame == 0 and steps == 0 and gap < 1e-6 for frame, steps, gap in starts[-3:])  # (float32 on the wire)


def test_lockstep_mistakes_of_a_motion_policy_are_one_line(hold_policy, capsys):
    code, out = _lockstep(capsys, hold_policy, "--clip", "CMU_999_99", "--episodes", "1")
    assert code == 2 and out.err.count("\n") == 1
    assert "no clip 'CMU_999_99' in the deploy spec; its clips: stand_1s, CMU_016_22" in out.err
    code, out = _lockstep(capsys, ROOT / "policies" / "go2_joystick_real", "--clip", WALK, "--episodes", "1")
    assert code == 2 and out.err.count("\n") == 1 and "follows none" in out.err
