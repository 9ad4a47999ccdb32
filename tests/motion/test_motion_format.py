"""The motion file format (docs/motion.md): round trip, a foreign (mjlab-style) file, refusals,
kinematic playback, and the EPMOCAP1 reader on bytes written here. No envpool-assets needed."""

import struct
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest

from unilab_robot.assets.g1 import MJCF_PATH
from unilab_envs.motion.clips import clip_path
from unilab_envs.motion.epmocap import read_epmocap
from unilab_envs.motion.format import ARRAY_KEYS, MotionFormatError, load_motion, save_motion
from unilab_envs.motion.playback import play_kinematic

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def g1():
    return mujoco.MjModel.from_xml_path(str(MJCF_PATH))


def test_a_shipped_clip_round_trips_through_the_format(tmp_path, g1):
    clip = load_motion(clip_path("CMU_016_22"), g1)
    back = load_motion(save_motion(tmp_path / "again", clip), g1)
    assert back.fps == clip.fps and back.joint_names == clip.joint_names and back.body_names == clip.body_names
    for key in ARRAY_KEYS:
        a, b = getattr(clip, key), getattr(back, key)
        assert b.dtype == np.float32 and b.shape == a.shape
        np.testing.assert_array_equal(a, b, err_msg=key)
    with np.load(tmp_path / "again.npz") as z:  # the keys mjlab's loaders read, fps as [fps]
        assert set(ARRAY_KEYS) | {"fps"} <= set(z.files) and z["fps"].shape == (1,)


def _foreign_clip(model, path: Path, frames: int = 40, fps: float = 50.0) -> np.ndarray:
    """A clip written the way mjlab's csv_to_npz writes one: plain np.savez, fps as [fps], no names,
    every joint and body in model order, from MuJoCo's own kinematics of a made-up motion."""
    data = mujoco.MjData(model)
    t = np.arange(frames) / fps
    nj = model.nq - 7
    joint_pos = 0.3 * np.sin(2 * np.pi * 0.7 * t[:, None] + np.arange(nj)[None] * 0.4)
    lo, hi = model.jnt_range[1:, 0], model.jnt_range[1:, 1]
    joint_pos = np.clip(joint_pos, lo, hi)
    log = {k: [] for k in ("body_pos_w", "body_quat_w")}
    for i in range(frames):
        data.qpos[:3] = [0.5 * t[i], 0.1 * t[i], 0.78]
        data.qpos[3:7] = [np.cos(0.2 * t[i]), 0, 0, np.sin(0.2 * t[i])]
        data.qpos[7:] = joint_pos[i]
        mujoco.mj_kinematics(model, data)
        log["body_pos_w"].append(data.xpos[1:].copy())
        log["body_quat_w"].append(data.xquat[1:].copy())
    pos, quat = np.array(log["body_pos_w"]), np.array(log["body_quat_w"])
    np.savez(path, fps=[fps], joint_pos=joint_pos.astype(np.float32),
             joint_vel=np.gradient(joint_pos, 1 / fps, axis=0).astype(np.float32),
             body_pos_w=pos.astype(np.float32), body_quat_w=quat.astype(np.float32),
             body_lin_vel_w=np.gradient(pos, 1 / fps, axis=0).astype(np.float32),
             body_ang_vel_w=np.zeros_like(pos, dtype=np.float32))
    return pos


def test_a_clip_written_by_another_tool_loads_and_plays(tmp_path, g1):
    pos = _foreign_clip(g1, tmp_path / "motion.npz")
    clip = load_motion(tmp_path / "motion.npz", g1)
    assert clip.fps == 50.0 and clip.num_frames == 40 and clip.body_names[0] == "pelvis"
    np.testing.assert_allclose(clip.body_pos_w, pos, atol=1e-6)
    result = play_kinematic(g1, clip)  # joint_pos stepped through the G1: the bodies land where the file says
    assert result.frames == 40 and result.max_body_error_m < 1e-5 and result.max_quat_error_rad < 1e-3


def test_every_shipped_clip_loads_and_plays_on_the_g1(g1):
    from unilab_envs.motion.clips import clip_paths

    paths = clip_paths()
    assert len(paths) == 37
    assert (paths[0].parent / "NOTICE.md").is_file() and (paths[0].parent.parent / "README.md").is_file()
    assert sum(p.stat().st_size for p in paths) < 10e6
    frames = 0
    for p in paths:
        clip = load_motion(p, g1)
        res = play_kinematic(g1, clip)
        assert res.max_body_error_m < 1e-4, p.name
        assert abs(clip.fps - 1 / 0.03) < 1e-6
        frames += clip.num_frames
    assert frames == 4927


def test_shipped_clips_keep_the_feet_above_the_floor(g1):
    from unilab_envs.motion.retarget import RetargetConfig, Target
    from unilab_envs.motion.clips import clip_paths

    target = Target(g1, RetargetConfig())  # its collision geoms' lowest point
    for p in clip_paths():
        clip = load_motion(p, g1)
        qpos = np.concatenate([clip.root_qpos(), clip.joint_pos], axis=1)
        lowest = min(target.pose(q)[1] for q in qpos)
        assert lowest > -0.01, f"{p.name}: {lowest * 100:.2f} cm under the floor"


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(joint_names=np.array(["hip"] + list(d["joint_names"][1:]))), "joint 'hip' is not in the model"),
    (lambda d: d.update(joint_names=d["joint_names"][:-1], joint_pos=d["joint_pos"][:, :-1],
                        joint_vel=d["joint_vel"][:, :-1]), "the model's joint 'right_wrist_yaw_joint' is not in"),
    (lambda d: d.update(body_names=np.array(["torso_link"] + list(d["body_names"][1:]))), "first body must be"),
    (lambda d: d.pop("body_quat_w"), "missing key(s) body_quat_w"),
    (lambda d: d.update(joint_vel=d["joint_vel"][:-1]), "joint_vel has shape"),
])
def test_a_mismatch_is_refused_in_one_line(tmp_path, g1, change, message):
    with np.load(clip_path("CMU_016_22")) as z:
        data = {k: z[k] for k in z.files}
    change(data)
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(MotionFormatError) as e:
        load_motion(tmp_path / "bad.npz", g1)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_cli_checks_and_refuses_in_one_line(tmp_path):
    good = subprocess.run([sys.executable, "-m", "trainers.motion_cli", "check", str(clip_path("CMU_016_22"))],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert good.returncode == 0 and "83 frames" in good.stdout, good.stderr
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    bad = subprocess.run([sys.executable, "-m", "trainers.motion_cli", "check", str(tmp_path / "bad.npz")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not a readable .npz" in bad.stderr


def _epmocap_bytes() -> bytes:
    def text(s):
        return struct.pack("<I", len(s)) + s.encode()
    arr = np.arange(6, dtype=np.float32)
    return (b"EPMOCAP1" + struct.pack("<I", 1) + text("CLIP") + struct.pack("<IdI", 3, 0.03, 1)
            + text("joints") + struct.pack("<I", 2) + arr.tobytes())


def test_the_epmocap1_reader(tmp_path):
    (tmp_path / "m.bin").write_bytes(_epmocap_bytes())
    clips = read_epmocap(tmp_path / "m.bin")
    assert list(clips) == ["CLIP"] and clips["CLIP"].dt == 0.03 and clips["CLIP"].num_frames == 3
    np.testing.assert_array_equal(clips["CLIP"].arrays["joints"], [[0, 1], [2, 3], [4, 5]])
    (tmp_path / "cut.bin").write_bytes(_epmocap_bytes()[:-4])
    with pytest.raises(ValueError, match="truncated or corrupt"):
        read_epmocap(tmp_path / "cut.bin")
    (tmp_path / "no.bin").write_bytes(b"EPMOCAP2")
    with pytest.raises(ValueError, match="not an EPMOCAP1 file"):
        read_epmocap(tmp_path / "no.bin")
