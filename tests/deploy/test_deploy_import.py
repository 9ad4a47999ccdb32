"""What a robot-side program imports (the deploy spec, the reference path, play) pulls in neither torch nor Numba."""

from __future__ import annotations

import subprocess
import sys


def test_deploy_and_play_import_without_torch_or_numba():
    code = ("import sys\n"
            "import unilab_robot.deploy, unilab_robot.deploy.sim2real, unilab_robot.deploy.episodes\n"
            "import unilab_envs.deploy_spec, trainers.play, trainers.play_cli\n"
            "print(sorted(m for m in ('torch', 'numba', 'mujoco.batch', 'stable_baselines3') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
