"""What README.md states about the tasks and commands is what the code does."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import unilab_envs

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SHORT_NAMES = {"Go1": "UniLab/Go1Joystick-v0", "Go1Rough": "UniLab/Go1JoystickRough-v0", "G1": "UniLab/G1Joystick-v0",
               "UR5": "UniLab/UR5Reach-v0", "UR5Grasp": "UniLab/UR5Grasp-v0"}


def _task_table() -> dict[str, dict[str, str]]:
    header = next(line for line in README.splitlines() if line.startswith("| id |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    rows = {}
    for line in README.splitlines():
        if line.startswith("| `UniLab/"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert len(cells) == len(columns), line
            row = dict(zip(columns, cells))
            rows[row["id"].strip("`")] = row
    return rows


TABLE = _task_table()


@pytest.fixture(scope="module")
def envs():
    built = {task: gym.make_vec(task, num_envs=1) for task in unilab_envs.TASKS}
    yield built
    for env in built.values():
        env.close()


def _number(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not found in {text!r}"
    return float(match.group(1))


def test_the_table_lists_every_registered_task():
    assert sorted(TABLE) == sorted(unilab_envs.TASKS)


@pytest.mark.parametrize("task", sorted(unilab_envs.TASKS))
def test_task_table_row_matches_the_env(task, envs):
    env, row = envs[task], TABLE[task]
    assert int(row["obs"]) == env.single_observation_space.shape[0]
    if row["privileged obs"] in ("–", "-"):
        assert env.privileged_observation_space is None
    else:
        assert int(row["privileged obs"]) == env.privileged_observation_space.shape[0]
    assert int(row["action"]) == env.single_action_space.shape[0]

    control = row["control"]  # "50 Hz (4 ms physics, 5 substeps)"
    assert _number(r"^(\d+) Hz", control) == pytest.approx(1.0 / env.dt)
    assert _number(r"\((\d+(?:\.\d+)?) ms", control) == pytest.approx(env.model.opt.timestep * 1000)
    assert _number(r"(\d+) substeps", control) == env.frame_skip
    assert env.dt == pytest.approx(env.model.opt.timestep * env.frame_skip)

    episode = row["episode"]  # "1000 steps (20 s)"
    steps = gym.spec(task).max_episode_steps
    assert _number(r"^(\d+) steps", episode) == steps == env.max_episode_steps
    assert _number(r"\((\d+(?:\.\d+)?) s\)", episode) == pytest.approx(steps * env.dt)

    assert _number(r"^(\d+)", row["reward terms"]) == len(env.reward_names)

    robot = row["robot"]  # "..., 12.7 kg, 12 PD joints ..."
    assert _number(r"(\d+) PD joints", robot) == env.model.nu
    if "kg" in robot:
        assert _number(r"(\d+(?:\.\d+)?) kg", robot) == round(float(env.model.body_mass.sum()), 1)
    if "Kp" in robot:
        np.testing.assert_allclose(env.model.actuator_gainprm[:, 0], _number(r"Kp (\d+(?:\.\d+)?)", robot))
        np.testing.assert_allclose(-env.model.actuator_biasprm[:, 2], _number(r"Kd (\d+(?:\.\d+)?)", robot))


def test_is_success_is_in_info_where_the_table_says_so(envs):
    for task, row in TABLE.items():
        env = envs[task]
        env.reset(seed=0)
        _, _, _, _, info = env.step(np.zeros((1, env.single_action_space.shape[0]), np.float32))
        assert ("is_success" in info) == ('info["is_success"]' in row["reward terms"]), task


def test_observation_group_names_match_the_env(envs):
    sentence = README[README.index("Observation groups (") : README.index("Observations are in SI")]
    stated = dict(re.findall(r"(\w+) `([^`]+)`", sentence.replace("\n", " ")))
    assert sorted(stated) == sorted(SHORT_NAMES)
    for short, names in stated.items():
        assert names.split() == list(envs[SHORT_NAMES[short]].obs_groups), short


def test_usage_example_shapes(envs):
    env = envs["UniLab/Go1Joystick-v0"]
    assert f"# ({4096}, {env.single_observation_space.shape[0]}) float32" in README
    assert f"np.zeros((4096, {env.single_action_space.shape[0]}), np.float32)" in README


def test_bench_post_processing_sizes_are_g1s(envs):
    env = envs["UniLab/G1Joystick-v0"]
    sizes = (env.single_observation_space.shape[0], env.single_action_space.shape[0], len(env.reward_names))
    assert "at G1 sizes (8192 envs, obs {}, act {}, {} terms)".format(*sizes) in README


def _command_after(marker: str) -> str:
    match = re.search(re.escape(marker) + r"\n```bash\n(.*?)\n```", README, re.S)
    assert match, f"no ```bash block right after {marker}"
    return match.group(1)


def test_main_command_trains_the_default_task():
    command = _command_after("<!-- main-command -->")
    assert "\n" not in command
    assert "pip install -q -e ." in command
    assert command.endswith("unilab train --task UniLab/Go1Joystick-v0 --out runs/go1")


def test_ci_runs_the_readme_test_command_verbatim(tmp_path):
    command = _command_after("<!-- test-command -->")
    assert command.endswith("python -m pytest -q -p no:cacheprovider")
    # Run the real .ci/run on a copy of the README, with a `bash` on PATH that only
    # records the command it is asked to run.
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text())
    (tmp_path / "README.md").write_text(README)
    fake = tmp_path / "bin" / "bash"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor last; do :; done\nprintf "%s" "$last" > "$RECORD"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    record = tmp_path / "ran.txt"
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "RECORD": str(record)}
    subprocess.run(["/bin/bash", str(tmp_path / ".ci" / "run")], env=env, check=True, capture_output=True)
    assert record.read_text() == command


def test_package_sources_point_at_nothing_outside_the_project():
    offenders = []
    for package in ("unilab_envs", "wrappers", "trainers"):
        for path in (ROOT / package).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".png", ".so"):
                continue
            text = path.read_text(errors="ignore")
            for needle in ("shared/", "DESIGN.md"):
                if needle in text:
                    offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert not offenders, "point these at docs/architecture.md instead: " + ", ".join(offenders)


def test_add_your_own_legged_task_block_runs_as_written(tmp_path, monkeypatch):
    """The README's one-file legged task builds, registers and steps (batched == its own contract)."""
    section = README[README.index("### Add your own legged task"):README.index("### Threads")]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "my_dog_joystick.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("my_dog_joystick")
    try:
        env = gym.make_vec("MyLab/MyDogJoystick-v0", num_envs=3, num_threads=1)
        obs, info = env.reset(seed=0)
        assert obs.shape == (3, 50) and info["privileged_obs"].shape == (3, 17)
        obs, reward, term, trunc, info = env.step(np.zeros((3, 12), np.float32))
        assert np.isfinite(obs).all() and np.isfinite(reward).all()
        np.testing.assert_allclose(sum(info["reward_terms"].values()), reward, rtol=1e-5, atol=1e-6)
        env.close()
        with pytest.raises(ValueError, match="Did you mean 'gait_frequency'"):
            module.with_defaults(module.LocomotionConfig, "Typo", "a typo", gait_frequncy=2.0)
    finally:
        gym.registry.pop("MyLab/MyDogJoystick-v0", None)
