"""Evaluation videos: opt-in, filmed with a progress bar, written atomically (never a partial file)."""

from __future__ import annotations

import imageio.v2 as imageio
import numpy as np
import pytest
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.common.video import VideoRecorder, write_video

FRAMES = [np.full((8, 8, 3), i, np.uint8) for i in range(5)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("video") / "run"
    assert cli.main(["train", "--task", POINT_REACH_ID, "--num-envs", "4", "--no-progress", "algo.num_steps=16",
                     "policy.actor_hidden=[8]", "policy.critic_hidden=[8]", "log.tensorboard=false", "log.plot=false",
                     "--total-steps", "64", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_write_leaves_no_file_and_keeps_the_old_one(tmp_path, monkeypatch, error):
    old = tmp_path / "eval.gif"
    write_video(FRAMES, old, fps=10)
    before = old.read_bytes()
    written = []

    def broken(path, frames, **kwargs):
        written.append(str(path))
        with open(path, "wb") as f:
            f.write(b"GIF89a partial")  # half a file, then the failure
        raise error

    monkeypatch.setattr(imageio, "mimwrite", broken)
    with pytest.raises(type(error)):
        write_video(FRAMES, old, fps=10)
    with pytest.raises(type(error)):
        write_video(FRAMES, tmp_path / "new.gif", fps=10)
    assert old.read_bytes() == before  # the previous video is intact
    assert not (tmp_path / "new.gif").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.gif"]  # no temp file left behind
    assert all(w.endswith(".gif") and w != str(old) for w in written)  # a temp beside it, same extension


def test_write_video_round_trip(tmp_path):
    path = write_video(FRAMES, tmp_path / "v.gif", fps=10)
    assert path == tmp_path / "v.gif" and len(imageio.mimread(path)) == len(FRAMES)


def test_recorder_shows_progress_and_stops_at_max_frames(tmp_path, capsys):
    rec = VideoRecorder(tmp_path / "v.gif", fps=10, max_frames=3)
    for frame in FRAMES:
        rec.add(frame[None])  # a batched render: the first image is taken
    assert rec.full and len(rec.frames) == 3 and rec.frames[0].shape == (8, 8, 3)
    assert rec.write() == tmp_path / "v.gif"
    err = capsys.readouterr().err
    assert "filming v.gif" in err and "/3 [" in err and "writing" in err and "(3 frames)" in err


def test_eval_films_only_when_asked_and_shows_progress(run, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in run.iterdir())
    capsys.readouterr()
    assert cli.main(["eval", str(run), "--episodes", "2"]) == 0
    summary = capsys.readouterr().out.splitlines()[-1]  # the first line names the run, whose path may say "video"
    assert "video" not in summary and not (tmp_path / "runs").exists()

    # a bare --video films into runs/eval/<run name>.* under the working directory, not into the run folder
    assert cli.main(["eval", str(run), "--episodes", "2", "--video"]) == 0
    out, err = capsys.readouterr()
    [video] = (tmp_path / "runs" / "eval").iterdir()
    assert video.name in ("run.gif", "run.mp4") and video.stat().st_size > 0
    assert f"video runs/eval/{video.name}" in out and "filming run." in err and "frame" in err
    assert sorted(p.name for p in run.iterdir()) == before

    assert cli.main(["eval", str(run), "--episodes", "2", "--video", str(run / "quiet.gif"), "--no-progress"]) == 0
    assert "filming" not in capsys.readouterr().err and (run / "quiet.gif").stat().st_size > 0
