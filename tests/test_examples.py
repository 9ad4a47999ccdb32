"""The quickstart example runs and writes its GIF."""

from __future__ import annotations

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
