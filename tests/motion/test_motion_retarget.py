"""``unilab motion retarget`` on a CMU clip (needs the `motion` extra's envpool-assets wheel; skipped without)."""

import json
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest

pytest.importorskip("envpool_assets", reason="the motion extra (envpool-assets) is not installed")

from unilab_robot.assets.g1 import MJCF_PATH  # noqa: E402
from unilab_envs.motion.cmu_source import cmu_model, forward_kinematics, load_source_clips  # noqa: E402
from unilab_envs.motion.format import load_motion  # noqa: E402
from unilab_envs.motion.playback import play_kinematic  # noqa: E402
from unilab_envs.motion.retarget import RetargetConfig, load_target, retarget_clip  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_37_clips_of_4927_frames():
    clips = load_source_clips()
    assert len(clips) == 37 and sum(c.clip.num_frames for c in clips) == 4927
    assert {c.clip.dt for c in clips} == {0.03}


def test_source_fk_follows_the_clip_root():
    src = load_source_clips(["CMU_016_22"])[0]
    root = forward_kinematics(cmu_model(src.model_path), src.qpos(), ["root"])[:, 0]
    np.testing.assert_allclose(root, src.clip.arrays["position"], atol=1e-6)
    assert np.linalg.norm(root[-1, :2] - root[0, :2]) > 2.0  # it walks (about 4 m)


def test_a_walking_clip_retargets_within_the_must_holds():
    src = load_source_clips(["CMU_016_27"])[0]
    clip, rep = retarget_clip(src, load_target(None, RetargetConfig()))
    assert rep.frames == clip.num_frames == 65
    assert rep.penetration_cm <= 1.0
    assert rep.mean_error_cm < 3.0 and rep.max_error_cm < 10.0
    assert rep.skate_cm < 0.5 and rep.stance_frames > 30
    g1 = mujoco.MjModel.from_xml_path(str(MJCF_PATH))
    assert play_kinematic(g1, clip).max_body_error_m < 1e-4
    # heading kept: the pelvis walks where the CMU root walks (scaled), within 20 degrees
    d_src = src.qpos()[-1, :2] - src.qpos()[0, :2]
    d_g1 = clip.body_pos_w[-1, 0, :2] - clip.body_pos_w[0, 0, :2]
    cos = d_src @ d_g1 / np.linalg.norm(d_src) / np.linalg.norm(d_g1)
    assert cos > np.cos(np.radians(20))
    lo = g1.jnt_range[1:, 0] - 1e-6
    hi = g1.jnt_range[1:, 1] + 1e-6
    assert ((clip.joint_pos >= lo) & (clip.joint_pos <= hi)).all()


def test_the_cli_retargets_to_a_model_path_and_refuses_an_unknown_clip(tmp_path):
    out = subprocess.run([sys.executable, "-m", "trainers.motion_cli", "retarget", "--clip", "CMU_016_27",
                          "--model-path", str(MJCF_PATH), "--out", str(tmp_path), "--report", str(tmp_path / "r.json")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert load_motion(tmp_path / "CMU_016_27.npz").num_frames == 65 and (tmp_path / "NOTICE.md").is_file()
    assert json.loads((tmp_path / "r.json").read_text())["clips"][0]["clip"] == "CMU_016_27"
    bad = subprocess.run([sys.executable, "-m", "trainers.motion_cli", "retarget", "--clip", "CMU_999_99",
                          "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no clip 'CMU_999_99'" in bad.stderr
