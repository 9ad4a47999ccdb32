"""The robot side is one package at the bottom of the import graph, installable alone on a robot's computer.

* ``unilab_robot`` imports nothing of the simulator (``unilab_envs``), the wrappers or the trainers, nor torch,
  Numba, Gymnasium or SB3 (read from every module's imports, those inside functions too); the simulator's
  core, locomotion and task layers import nothing of the trainers.
* ``unilab_robot/pyproject.toml`` (distribution ``unilab-robot``) lists every package folder of it.
* Installed alone (``pip install ./unilab_robot``, the command docs/robot_bridge.md gives "On the robot's
  computer") into an empty venv with its dependencies from the package index, torch, Numba, Gymnasium and
  SB3 are not there, ``unilab robot run --help`` answers and ``unilab robot lockstep`` runs a shipped policy's
  episode. This interpreter's pip installs into the venv (``pip --python``), with this machine's pip
  configuration and cache; the test skips, saying so, only when pip cannot reach an index. About 25 s, most of
  it pip resolving and unpacking NumPy, onnxruntime and MuJoCo.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "unilab_robot"
#: what the robot side must not import: the layers above it and the training stack's heavy dependencies
ABOVE = ("unilab_envs", "wrappers", "trainers", "benchmarks")
HEAVY = ("torch", "numba", "gymnasium", "stable_baselines3", "tensorboard")
POLICY = ROOT / "policies" / "go2_joystick_real"
#: pip's words when it reached no index (offline) rather than failing on the package itself
UNREACHABLE = ("NewConnectionError", "Max retries exceeded", "Temporary failure in name resolution",
               "No matching distribution found", "Could not find a version that satisfies", "Network is unreachable")


def _imports(path: Path, package: str) -> set[str]:
    """Top-level names of the modules ``path`` imports (absolute, and relative ones resolved)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(package if node.level else (node.module or "").split(".")[0])
    return found


def test_the_robot_package_imports_nothing_above_it():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if {"build", "__pycache__"} & set(path.relative_to(PACKAGE).parts):
            continue
        bad = sorted(_imports(path, "unilab_robot") & {*ABOVE, *HEAVY})
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert not offenders, f"the robot side imports above itself or the training stack: {offenders}"


def test_the_simulators_layers_import_nothing_of_the_trainers():
    offenders = {}
    for layer in ("core", "locomotion", "tasks"):
        for path in sorted((ROOT / "unilab_envs" / layer).rglob("*.py")):
            bad = sorted(_imports(path, "unilab_envs") & {"trainers", "benchmarks"})
            if bad:
                offenders[str(path.relative_to(ROOT))] = bad
    assert not offenders, f"unilab_envs imports the trainers: {offenders}"


def test_the_robot_distribution_lists_every_package_folder():
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    folders = sorted(".".join(("unilab_robot", *p.parent.relative_to(PACKAGE).parts))
                     for p in PACKAGE.rglob("__init__.py") if not {"build", "__pycache__"} & set(p.parts))
    assert sorted(project["tool"]["setuptools"]["packages"]) == folders
    assert project["project"]["scripts"] == {"unilab": "unilab_robot.cli:main"}
    assert not {d.split(">")[0].split("<")[0].split("=")[0].lower() for d in project["project"]["dependencies"]} & {
        "torch", "numba", "gymnasium", "stable-baselines3", "tensorboard"}


def _run(argv, cwd, env, timeout=300, check=True):
    result = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.mark.timeout(900)
def test_the_robot_package_installs_alone_and_runs_a_lockstep_episode(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    # the package's folder as a robot's computer gets it (no caches, no build left-overs)
    src = tmp_path / "src" / "unilab_robot"
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info"))
    venv, work = tmp_path / "venv", tmp_path / "work"  # commands run in work: a unilab_robot folder there would shadow
    work.mkdir()                                       # the venv's copy
    # empty: no system site-packages, not even pip (this interpreter's pip installs into it: ensurepip costs ~10 s)
    _run([sys.executable, "-m", "venv", "--without-pip", venv], work, env, timeout=120)
    python, unilab = venv / "bin" / "python", venv / "bin" / "unilab"
    installed = _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--disable-pip-version-check", src],
                     work, env, check=False)
    if installed.returncode != 0:
        said = installed.stdout + installed.stderr
        if any(word in said for word in UNREACHABLE):
            pytest.skip(f"pip reached no package index for the robot package's dependencies: {said.strip().splitlines()[-1]}")
        raise AssertionError(f"pip install ./unilab_robot failed:\n{said[-3000:]}")

    # the training stack is not there; the robot side is, from the venv
    probe = ("import importlib.util, json, unilab_robot\n"
             "print(json.dumps({'file': unilab_robot.__file__, 'missing': [m for m in "
             f"{list(HEAVY[:4])!r} if importlib.util.find_spec(m) is None]}}))")
    info = json.loads(_run([python, "-c", probe], work, env).stdout.strip().splitlines()[-1])
    assert Path(info["file"]).resolve().is_relative_to(venv.resolve()), info
    assert info["missing"] == list(HEAVY[:4]), f"the robot package's venv has {set(HEAVY[:4]) - set(info['missing'])}"

    help_text = _run([unilab, "robot", "run", "--help"], work, env, timeout=60).stdout
    assert "--command" in help_text and "policy" in help_text

    if not (POLICY / "policy.onnx").is_file():
        pytest.skip(f"{POLICY.relative_to(ROOT)} is not shipped here")
    summary = tmp_path / "summary.json"
    _run([unilab, "robot", "lockstep", POLICY, "--episodes", "1", "--episode-s", "1", "--summary", summary], work, env,
         timeout=300)
    result = json.loads(summary.read_text())
    assert result["episodes"] == 1 and result["runtime_fault"] is None, result
