"""The quickstart example runs and writes its GIF."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import imageio.v2 as imageio

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_runs_and_writes_a_gif(tmp_path):
    out = tmp_path / "quick.gif"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--steps", "8", "--num-envs", "4", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "mean return" in result.stdout
    frames = imageio.mimread(out)
    assert len(frames) == 8 and frames[0].ndim == 3


def test_film_joystick_follows_its_script_and_writes_a_gif(tmp_path):
    out = tmp_path / "walk.gif"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "film_joystick.py"), str(ROOT / "policies" / "go1_joystick"),
         "--out", str(out), "--script", "0.8,0,0:1.0 0,0,0:0.4", "--every", "10"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("command")]
    assert len(lines) == 2
    forward = float(lines[0].split("forward ")[1].split(" m/s")[0])
    assert 0.5 < forward < 1.1  # the shipped Go1 walks at the commanded 0.8 m/s
    assert len(imageio.mimread(out)) == 7


def test_film_grasp_picks_the_cube_and_writes_a_gif(tmp_path):
    out = tmp_path / "pick.gif"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "film_grasp.py"), str(ROOT / "policies" / "ur5_grasp"),
         "--out", str(out), "--episodes", "1", "--every", "10", "--size", "80", "60"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "episode 0: success after" in result.stdout  # the shipped policy lifts and holds the cube
    frames = imageio.mimread(out)
    assert len(frames) >= 2 and frames[0].shape[:2] == (60, 80)


def test_train_ppo_trains_evaluates_films_one_whole_episode_and_exports(tmp_path):
    """examples/train_ppo.py end to end on one tiny iteration: its film of one 75-step UR5 episode
    holds 75 frames and its progress bar ends at 75/75 (not 74/1000)."""
    out = tmp_path / "ur5"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_ppo.py"), "--total-steps", "2048", "--out", str(out),
         "num_envs=64", "algo.num_steps=32", "log.tensorboard=false"],
        capture_output=True, text=True, timeout=420, env={**os.environ, "UNILAB_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "deterministic policy:" in result.stdout and "onnx:" in result.stdout, result.stdout
    film = [line for line in result.stderr.replace("\r", "\n").splitlines() if line.startswith("filming eval.gif")]
    assert film and "75/75" in film[-1] and not any("/1000" in line for line in film), film[-3:]
    assert len(imageio.mimread(out / "eval.gif")) == 75
