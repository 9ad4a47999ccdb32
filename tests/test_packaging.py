"""The distribution builds and works installed: ``python -m build`` makes an sdist and a wheel (the
wheel built from the sdist), and the wheel, pip-installed (not editable) into a clean venv, runs
``unilab tasks`` and a short ``unilab eval`` of a shipped policy from its installed copy.

Bounded and offline: the sources are copied to a temp folder and built there with
``--no-isolation`` (``build`` and ``setuptools`` are in the dev extra), the wheel is installed with
``--no-deps --no-index``, and the venv reaches the dependencies already installed here (torch,
MuJoCo, Numba, ...) through a ``.pth`` file that lists this interpreter's site-packages. Path
lines of a ``.pth`` file do not run the ``.pth`` files in the folders they add, so the editable
install of the repository cannot shadow the wheel; the test checks that every import package
comes from the venv. The first ``unilab eval`` compiles the Numba kernels of the installed copy
(about 30 s of CPU).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import unilab_envs

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DIST = PYPROJECT["project"]["name"]
PACKAGES = ("unilab_envs", "wrappers", "trainers", "unilab_robot")
POLICY = ROOT / "policies" / "go1_joystick"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("build") is None,
                                reason="`build` is not installed (it is in the dev extra: pip install -e '.[dev]')")


def _run(argv, cwd, env, timeout=240):
    result = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _data_files() -> set[str]:
    """The import packages' non-Python files (MJCF, configs, profiles, ...): what a wheel must carry."""
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            rel = path.relative_to(ROOT)
            if (path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in rel.parts
                    and not any(part.startswith(".") for part in rel.parts)
                    and rel.as_posix() != "unilab_robot/pyproject.toml"):  # the robot side's own distribution, not data
                found.add(rel.as_posix())
    return found


def _dependency_paths() -> list[str]:
    """This interpreter's site-packages folders (where torch, MuJoCo, ... are), never the repository."""
    paths = [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_paths()["purelib"],
             sysconfig.get_paths()["platlib"], *(p for p in sys.path if Path(p).name in ("site-packages", "dist-packages"))]
    keep = []
    for p in paths:
        if p and p not in keep and Path(p).is_dir() and Path(p).resolve() != ROOT and not (Path(p) / "unilab_envs").exists():
            keep.append(p)
    return keep


def test_the_distribution_name_is_not_the_taken_one():
    # `unilab` on the public index is another robot-learning project: ours must not install in its place
    assert DIST.lower().replace("_", "-") != "unilab"
    assert PYPROJECT["project"]["scripts"] == {"unilab": "trainers.cli:main"}


@pytest.mark.timeout(600)
def test_the_wheel_installs_and_runs_a_shipped_policy(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env.setdefault("UNILAB_NUM_THREADS", "1")
    env.pop("NUMBA_CACHE_DIR", None)  # the installed copy's kernels are cached beside it, in the venv

    # 1. python -m build: the sdist, then the wheel from the sdist (so the sdist must carry the data too)
    src, dist = tmp_path / "src", tmp_path / "dist"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    if (ROOT / "MANIFEST.in").exists():
        shutil.copy2(ROOT / "MANIFEST.in", src / "MANIFEST.in")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, src], cwd=src, env=env, timeout=180)
    stem = DIST.replace("-", "_")
    version = PYPROJECT["project"]["version"]
    sdist, wheel = dist / f"{stem}-{version}.tar.gz", dist / f"{stem}-{version}-py3-none-any.whl"
    assert sdist.is_file() and wheel.is_file(), sorted(p.name for p in dist.iterdir())
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_data_files() - names)
    assert not missing, f"the wheel lacks package data the envs load at runtime: {missing} (pyproject's package-data)"
    assert not [n for n in names if n.startswith(("tests/", "policies/", "docs/", "runs/")) or n.endswith(".pyc")]

    # 2. a clean venv; the wheel installed into it (no deps, no index) before the dependencies are reachable
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path, env=env, timeout=120)
    python, unilab = venv / "bin" / "python", venv / "bin" / "unilab"
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir", "-q", wheel],
         cwd=tmp_path, env=env, timeout=120)
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=tmp_path, env=env).stdout.strip())
    (purelib / "_unilab_test_dependencies.pth").write_text("\n".join(_dependency_paths()) + "\n")

    # 3. every import package, its configs and profiles come from the installed copy, not the repository
    probe = (
        "import json, importlib.metadata as md, unilab_envs, wrappers, trainers, unilab_robot\n"
        "from trainers.ppo.config import CONFIG_DIR, load_config\n"
        "from unilab_robot.profiles import profile_folder, profile_names, resolve_profile\n"
        "from unilab_robot.assets.go1 import MJCF_PATH\n"
        "cfg = load_config('UniLab/Go1Joystick-v0')\n"
        "resolve_profile('go1_real')\n"
        "print(json.dumps({'files': [m.__file__ for m in (unilab_envs, wrappers, trainers, unilab_robot)],\n"
        "                  'dist': str(md.distribution('" + DIST + "').locate_file('')),\n"
        "                  'configs': sorted(p.name for p in CONFIG_DIR.glob('*.yaml')), 'config_dir': str(CONFIG_DIR),\n"
        "                  'profiles': profile_names(), 'profile_dir': str(profile_folder()),\n"
        "                  'mjcf': str(MJCF_PATH), 'mjcf_exists': MJCF_PATH.is_file()}))\n"
    )
    info = json.loads(_run([python, "-c", probe], cwd=tmp_path, env=env).stdout.strip().splitlines()[-1])
    venv_root = venv.resolve()
    for path in (*info["files"], info["dist"], info["config_dir"], info["profile_dir"], info["mjcf"]):
        assert Path(path).resolve().is_relative_to(venv_root), f"{path} is not the wheel's installed copy"
    assert info["mjcf_exists"]
    assert info["configs"] == sorted(p.name for p in (ROOT / "trainers" / "configs").glob("*.yaml"))
    assert info["profiles"] == sorted(p.stem for p in (ROOT / "unilab_robot" / "profiles").glob("*.yaml"))

    # 4. the installed `unilab` command: the task list, then a short evaluation of a shipped policy
    tasks = _run([unilab, "tasks"], cwd=tmp_path, env=env).stdout
    assert all(task in tasks for task in unilab_envs.TASKS), tasks
    if not (POLICY / "checkpoint.pt").exists():
        pytest.skip(f"{POLICY.relative_to(ROOT)} is not shipped here")
    out = _run([unilab, "eval", POLICY, "--episodes", "2", "--num-envs", "2"], cwd=tmp_path, env=env, timeout=400)
    assert "episodes 2" in out.stdout, out.stdout
    assert "Traceback" not in out.stderr
