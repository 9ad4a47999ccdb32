"""The documentation site (mkdocs.yml: MkDocs + Material + mkdocstrings) builds with --strict.

Strict: a warning fails the build, and mkdocs.yml's ``validation:`` makes every link to a page
that does not exist, every missing anchor and every docs page left out of the nav a warning. The
API reference pages (docs/api/) are generated from the docstrings; the build reads the sources
statically (griffe), so it imports neither Numba nor torch and takes a few seconds.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (the docs tools are in the dev extra: pip install -e '.[dev]')",
)


def test_the_site_builds_strictly(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    # every guide page is in the site, and the API reference was generated from the docstrings
    for page in ("index", "getting_started", "tasks", "env_contract", "sim2real", "training", "sb3", "deploy",
                 "benchmarks", "adding_a_task", "architecture", "training_runs"):
        assert (site / ("index.html" if page == "index" else f"{page}/index.html")).is_file(), page
    api = {
        "envs": ["unilab_envs.core.vector_env.UniLabVectorEnv", "unilab_envs.core.single_env.UniLabEnv"],
        "wrappers": ["wrappers.sim2real.Sim2Real", "wrappers.privileged", "wrappers.curriculum", "wrappers.noise"],
        "ppo": ["trainers.ppo.config.TrainConfig", "trainers.ppo.algorithm.PPO", "trainers.ppo.runner.Runner"],
        "deploy": ["unilab_robot.deploy.spec", "unilab_robot.deploy.reference.PolicyIO"],
    }
    for page, anchors in api.items():
        html = (site / "api" / page / "index.html").read_text()
        for anchor in anchors:
            assert f'id="{anchor}"' in html, f"api/{page}: no generated entry for {anchor}"
