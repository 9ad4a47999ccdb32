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
