"""A motion-tracking policy exported and played: ``unilab export`` copies its clips beside ``policy.onnx``, ``unilab
play --headless --clip`` plays whole clips (success = the clip's end), the reference is drawn beside the robot as a
ghost, and the mistakes (a clip the spec lacks, ``--clip`` on a joystick policy) are one line."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from unilab_envs.motion.clips import clip_path

from tests.deploy.conftest import _train_and_export, one_error_line, run

CLIPS = ("CMU_016_22", "CMU_077_02")


@pytest.fixture(scope="module")
def track_run(tmp_path_factory) -> str:
    """G1Track on two clips after one tiny PPO iteration (it does not track: the plumbing is what is tested)."""
    return _train_and_export(tmp_path_factory.mktemp("track") / "run", "UniLab/G1Track-v0", 16 * 8, 16,
                             ["algo.num_steps=8", "policy.actor_hidden=[32,32]", "policy.critic_hidden=[32,32]",
                              f"env_kwargs.clips=[{','.join(CLIPS)}]"])


def test_export_copies_the_clips_beside_the_policy(track_run):
    folder = Path(track_run)
    spec = json.loads((folder / "deploy_spec.json").read_text())
    assert spec["command"]["kind"] == "motion" and spec["motion"]["clips"] == [f"{c}.npz" for c in CLIPS]
    for c in CLIPS:
        assert (folder / f"{c}.npz").read_bytes() == clip_path(c).read_bytes()


def test_play_headless_plays_the_clip_and_reports_its_end(track_run, capsys):
    assert run(["play", track_run, "--headless", "--episodes", "2", "--clip", "CMU_077_02", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "UniLab/G1Track-v0: episodes 2" in out and "success" in out


def test_the_ghost_is_the_reference_pose_beside_the_robot(track_run):
    from trainers.play import Player, find_policy
    from trainers.play.ghost import GHOST_OFFSET, GHOST_RGBA, ghost_for

    player = Player(find_policy(track_run), clip="CMU_016_22")
    for _ in range(5):
        player.control_step()
    ghost = ghost_for(player)
    ghost.pose(player.state)
    io, g = player.io, player.io.motion.global_frame(player.state.motion)
    root = io.motion.reference.root_pos[g]
    np.testing.assert_allclose(ghost.data.qpos[io.root_q:io.root_q + 3], root + np.array(GHOST_OFFSET))
    np.testing.assert_allclose(ghost.data.qpos[io.joint_q], io.motion.reference.joint_pos[g, io.motion.ref_joint])
    scene = mujoco.MjvScene(player.model, maxgeom=1000)  # no GL context: a scene is plain memory
    mujoco.mjv_updateScene(player.model, player.data, mujoco.MjvOption(), None, mujoco.MjvCamera(),
                           mujoco.mjtCatBit.mjCAT_ALL, scene)
    robot = scene.ngeom
    added = ghost.draw(scene)
    assert added > 20 and scene.ngeom == robot + added
    assert all(np.allclose(scene.geoms[i].rgba, GHOST_RGBA) for i in range(robot, scene.ngeom))
    assert ghost_for(type("P", (), {"io": type("IO", (), {"motion": None})()})()) is None  # no motion: no ghost


def test_play_mistakes_of_a_motion_policy_are_one_line(track_run, go1_run, capsys):
    assert run(["play", track_run, "--headless", "--clip", "CMU_999_99"]) == 2
    assert "no clip 'CMU_999_99' in the deploy spec; its clips: CMU_016_22, CMU_077_02" in one_error_line(capsys)
    assert run(["play", go1_run, "--headless", "--clip", "CMU_016_22"]) == 2
    assert "follows none" in one_error_line(capsys)
