"""What README.md and the docs pages (docs/*.md) state about the tasks and commands is what the code does."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

import unilab_envs
from unilab_envs.core.obs_groups import registered_obs_groups
from unilab_envs.locomotion.terms import LEGGED_TERMS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = {path.relative_to(ROOT).as_posix(): path.read_text() for path in sorted((ROOT / "docs").glob("*.md"))}
TASKS_PAGE = DOCS["docs/tasks.md"]
SHORT_NAMES = {"Go1": "UniLab/Go1Joystick-v0", "Go1Rough": "UniLab/Go1JoystickRough-v0",
               "Go1Depth": "UniLab/Go1JoystickDepth-v0", "Go2": "UniLab/Go2Joystick-v0", "G1": "UniLab/G1Joystick-v0",
               "UR5": "UniLab/UR5Reach-v0", "UR5Grasp": "UniLab/UR5Grasp-v0", "G1Track": "UniLab/G1Track-v0"}
#: the pages that carry the task table, each checked cell by cell
TABLE_SOURCES = {"README.md": README, "docs/tasks.md": TASKS_PAGE}


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells (``\\|`` is a literal bar inside a cell)."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _task_table(text: str) -> dict[str, dict[str, str]]:
    header = next(line for line in text.splitlines() if line.startswith("| id |"))
    columns = _cells(header)
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `UniLab/"):
            cells = _cells(line)
            assert len(cells) == len(columns), line
            row = dict(zip(columns, cells))
            rows[row["id"].strip("`")] = row
    return rows


TABLES = {source: _task_table(text) for source, text in TABLE_SOURCES.items()}


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


@pytest.mark.parametrize("source", sorted(TABLES))
def test_the_table_lists_every_registered_task(source):
    assert sorted(TABLES[source]) == sorted(unilab_envs.TASKS)


@pytest.mark.parametrize("source", sorted(TABLES))
@pytest.mark.parametrize("task", sorted(unilab_envs.TASKS))
def test_task_table_row_matches_the_env(task, source, envs):
    env, row = envs[task], TABLES[source][task]
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


@pytest.mark.parametrize("source", sorted(TABLES))
def test_is_success_is_in_info_where_the_table_says_so(source, envs):
    for task, row in TABLES[source].items():
        env = envs[task]
        env.reset(seed=0)
        _, _, _, _, info = env.step(np.zeros((1, env.single_action_space.shape[0]), np.float32))
        assert ("is_success" in info) == ('info["is_success"]' in row["reward terms"]), task


def test_observation_group_names_match_the_env(envs):
    sentence = TASKS_PAGE[TASKS_PAGE.index("Observation groups (") : TASKS_PAGE.index("Observations are in SI")]
    stated = dict(re.findall(r"(\w+) `([^`]+)`", sentence.replace("\n", " ")))
    assert sorted(stated) == sorted(SHORT_NAMES)
    for short, names in stated.items():
        assert names.split() == list(envs[SHORT_NAMES[short]].obs_groups), short


def _task_section(task: str) -> str:
    """docs/tasks.md's section of one task: from its ``### `id``` heading to the next heading."""
    start = TASKS_PAGE.index(f"### `{task}`")
    following = re.search(r"^#{2,3} ", TASKS_PAGE[start + 4 :], re.M)
    return TASKS_PAGE[start : start + 4 + following.start()] if following else TASKS_PAGE[start:]


def _table_after(text: str, header_start: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table in ``text`` whose header row starts with ``header_start``."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    columns = _cells(lines[first])
    rows = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(columns, _cells(line))))
    return rows


@pytest.mark.parametrize("task", sorted(unilab_envs.TASKS))
def test_tasks_page_observation_layout_matches_the_env(task, envs):
    env, section = envs[task], _task_section(task)
    assert _number(r"Observation \((\d+) floats", section) == env.single_observation_space.shape[0]
    rows = _table_after(section, "| group | size | offset |")
    stated = [(row["group"].strip("`"), int(row["size"]), int(row["offset"]), row["units"], row["meaning"]) for row in rows]
    declared = env.task.declared_groups  # units and meaning are the declaration's
    actual = [(name, s.stop - s.start, s.start, declared[name].units, declared[name].doc) for name, s in env.obs_groups.items()]
    assert stated == actual


def test_tasks_page_legged_observation_groups_are_the_declarations():
    start = TASKS_PAGE.index("### Observation groups of the legged tasks")
    rows = _table_after(TASKS_PAGE[start:], "| group | size | units |")
    declared = registered_obs_groups("locomotion")
    assert [row["group"].strip("`") for row in rows] == list(declared)
    for row in rows:
        group = declared[row["group"].strip("`")]
        noise = None if row["noise"] == "–" else float(row["noise"])
        assert (row["size"], row["units"], row["meaning"], noise, row["robot side"] == "yes") == (
            str(group.size), group.units, group.doc, group.noise, group.builder is not None), group.name


def _scales(env) -> dict[str, float]:
    scales = env.task.config.reward_scales
    return {name: float(getattr(scales, name)) for name in env.reward_names}


def test_tasks_page_legged_reward_terms_match_the_envs(envs):
    start = TASKS_PAGE.index("### Reward terms of the legged tasks")
    rows = _table_after(TASKS_PAGE[start:], "| term | value |")
    columns = {"Go1": "UniLab/Go1Joystick-v0", "Go1Rough": "UniLab/Go1JoystickRough-v0", "G1": "UniLab/G1Joystick-v0"}
    for column, task in columns.items():
        env = envs[task]
        assert [row["term"].strip("`") for row in rows] == list(env.reward_names), task
        assert {row["term"].strip("`"): float(row[column]) for row in rows} == _scales(env), task
    declared = {term.name: term.doc for term in LEGGED_TERMS}  # the value column is each term's declared doc
    assert {row["term"].strip("`"): row["value"].replace("\\|", "|") for row in rows[:-1]} == declared


@pytest.mark.parametrize("task", ["UniLab/UR5Reach-v0", "UniLab/UR5Grasp-v0", "UniLab/G1Track-v0"])
def test_tasks_page_arm_reward_terms_match_the_env(task, envs):
    rows = _table_after(_task_section(task), "| term | value | default scale |")
    env = envs[task]
    assert [row["term"].strip("`") for row in rows] == list(env.reward_names)
    assert {row["term"].strip("`"): float(row["default scale"]) for row in rows} == _scales(env)


@pytest.mark.parametrize("source", ["README.md", "docs/getting_started.md"])
def test_usage_example_shapes(source, envs):
    text = README if source == "README.md" else DOCS[source]
    env = envs["UniLab/Go1Joystick-v0"]
    assert f"# ({4096}, {env.single_observation_space.shape[0]}) float32" in text
    assert f"np.zeros((4096, {env.single_action_space.shape[0]}), np.float32)" in text


def test_bench_post_processing_sizes_are_g1s(envs):
    env = envs["UniLab/G1Joystick-v0"]
    sizes = (env.single_observation_space.shape[0], env.single_action_space.shape[0], len(env.reward_names))
    assert "at G1 sizes (8192 envs, obs {}, act {}, {} terms)".format(*sizes) in DOCS["docs/benchmarks.md"]


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
    # pytest-xdist: one worker a core (at most 4), a test file on one worker (its module fixtures built once)
    assert command.endswith("python -m pytest -q -p no:cacheprovider -n auto --maxprocesses 4 --dist loadfile")
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


def test_the_getting_started_page_repeats_the_readme_commands_verbatim():
    page = DOCS["docs/getting_started.md"]
    for marker in ("<!-- main-command -->", "<!-- test-command -->"):
        assert _command_after(marker) in page, marker


def test_the_torch_choice_is_told_truthfully():
    """torch is pinned; a CPU-only machine is pointed at PyTorch's CPU index for that same version."""
    pin = re.search(r"pip install -q torch==([\d.]+)", _command_after("<!-- main-command -->")).group(1)
    assert f"torch=={pin}" in _command_after("<!-- test-command -->")
    cpu = f"pip install torch=={pin} --index-url https://download.pytorch.org/whl/cpu"
    assert cpu in README and cpu in DOCS["docs/getting_started.md"]
    assert "an unpinned `torch` pulls" not in README  # the pinned public wheel is itself a CUDA build on Linux


def _bash_block_after(text: str, heading: str) -> list[str]:
    section = text[text.index(heading) :]
    block = re.search(r"```bash\n(.*?)\n```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("source", ["README.md", "docs/getting_started.md"])
def test_the_first_five_commands_parse_and_name_shipped_files(source):
    """Each of the five commands is a valid `unilab` command line, and the shipped policy it names has the files it reads."""
    from trainers.cli import build_parser

    text = README if source == "README.md" else DOCS[source]
    commands = _bash_block_after(text, "## Five things to do first")
    assert [shlex.split(c)[1] for c in commands] == ["tasks", "eval", "play", "export", "train"]
    parser = build_parser()
    needs = {"eval": ("checkpoint.pt",), "export": ("checkpoint.pt",), "play": ("policy.onnx", "deploy_spec.json")}
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "unilab", command
        args, extra = parser.parse_known_args(argv[1:])
        assert all("=" in e and not e.startswith("-") for e in extra) and (not extra or args.command == "train"), command
        if args.command == "train":
            assert args.task in unilab_envs.TASKS, command
        target = getattr(args, "checkpoint", None) or getattr(args, "run", None)
        if target is not None:
            assert target.startswith("policies/"), f"{command}: the first steps use a shipped policy"
            for name in needs[args.command]:
                assert (ROOT / target / name).is_file(), f"{command}: {target}/{name} is missing"


@pytest.mark.parametrize("source", ["README.md", "docs/deploy.md"])
def test_deploy_snippet_runs_as_written(source, monkeypatch):
    """The robot-side snippet (deploy spec + PolicyIO + ONNX) runs on the shipped Go1 policy as written."""
    text = README if source == "README.md" else DOCS[source]
    code = re.search(r"```python\n(import mujoco, onnxruntime as ort\n.*?)```", text, re.S).group(1)
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(code, f"{source}:deploy-snippet", "exec"), namespace)
    action = namespace["action"]
    assert action.shape == (12,) and np.isfinite(action).all()


def test_the_profiles_the_readme_names_exist_and_its_inline_profile_builds():
    import wrappers
    from trainers.ppo.config import load_config

    section = README[README.index("## Sim-to-real") : README.index("## Stable-Baselines3")]
    named = re.search(r"# also ([\w, ]+), or", section).group(1).replace(" ", "").split(",")
    assert set(named) | {"go1_real"} <= set(wrappers.profile_names())
    override = re.search(r'"(sim2real=\{[^"]+\})"', section.replace("\n", " ")).group(1)
    cfg = load_config("UniLab/Go1Joystick-v0", overrides=[override])
    env = wrappers.Sim2Real(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=2, num_threads=1), profile=cfg.sim2real)
    try:
        env.reset(seed=0)
        _, _, _, _, info = env.step(np.zeros((2, 12), np.float32))
        assert env.curriculum is not None and "profile_level" in info
        assert info["privileged_obs"].shape[1] > 25  # the task's 25 + the clean observation + the perturbations
    finally:
        env.close()


def _slug(heading: str) -> str:
    """A heading's anchor, as GitHub and Python-Markdown's toc both make it for the headings we use."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_the_readme_links_resolve():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    assert links
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README links to {link}, which does not exist"
        if anchor:
            headings = re.findall(r"^#{1,6} (.+)$", target.read_text(), re.M)
            assert anchor in {_slug(h) for h in headings}, f"README links to {link}: no such heading"


def test_the_readme_is_a_front_door():
    assert len(README.splitlines()) <= 250
    for phrase in ("this 2-core", "shared machine", "load average", "this machine"):
        assert phrase not in README, f"name the hardware instead of {phrase!r}"


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
    """docs/adding_a_task.md's one-file legged task builds, registers and steps (batched == its own contract)."""
    page = DOCS["docs/adding_a_task.md"]
    code = re.search(r"```python\n(# my_dog_joystick\.py\n.*?)```", page, re.S).group(1)
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


def test_add_a_reward_term_blocks_run_as_written(tmp_path, monkeypatch, capsys):
    """docs/adding_a_task.md's registered term: added from the config, logged with its weighted value, and
    named on the training command line through its module."""
    page = DOCS["docs/adding_a_task.md"]
    section = page[page.index("## Add a reward term") : page.index("## Add an observation group")]
    term_module, usage = re.findall(r"```python\n(.*?)```", section, re.S)
    assert term_module.startswith("# my_terms.py\n")
    (tmp_path / "my_terms.py").write_text(term_module)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {}
    exec(compile(usage, "adding_a_task.md", "exec"), namespace)
    env = namespace["env"]
    assert env.reward_names[-2:] == ("swing_clearance", "positive_clip") and "swing_clearance" in capsys.readouterr().out
    _, reward, _, _, info = env.step(np.zeros((64, 12), np.float32))
    column = info["reward_terms"]["swing_clearance"]
    assert (column <= 0).all() and (column < 0).any()  # -1.0 x 0.02 x how far the feet are below 5 cm
    np.testing.assert_allclose(sum(info["reward_terms"].values()), reward, rtol=1e-5, atol=1e-6)
    env.close()
    yaml_block = re.search(r"```yaml\n(env_kwargs:\n  reward_terms:\n.*?)```", section, re.S).group(1)
    assert yaml.safe_load(yaml_block) == {"env_kwargs": {"reward_terms": {"swing_clearance": {"weight": -1.0, "target_height": 0.05}}}}
    command = re.search(r"```bash\n(unilab train .*?)```", section, re.S).group(1).replace("\\\n", " ")
    argv = shlex.split(command)[1:]
    argv[argv.index("--config") + 1] = str(ROOT / argv[argv.index("--config") + 1])
    monkeypatch.chdir(tmp_path)  # the module is found from the current folder
    from trainers.cli import main as unilab

    assert unilab([*argv, "--print-config"]) in (0, None)
    assert "swing_clearance" in capsys.readouterr().out


@pytest.mark.parametrize("source", ["README.md", "docs/sb3.md"])
def test_sb3_snippet_runs_as_written_and_shows_progress_from_the_start(source, capsys, monkeypatch):
    """The Stable-Baselines3 snippet runs as pasted (only its step budget cut to one update) and
    prints a progress bar from the first steps, not after 2048 x 1024 silent ones."""
    text = README if source == "README.md" else DOCS[source]
    code = re.search(r"```python\n(import unilab_envs, wrappers\nfrom stable_baselines3 .*?)```", text, re.S).group(1)
    assert code.count("10_000_000") == 1
    monkeypatch.setenv("UNILAB_NUM_THREADS", os.environ.get("UNILAB_NUM_THREADS", "1"))
    namespace: dict = {}
    exec(compile(code.replace("10_000_000", "16_384"), f"{source}:sb3-snippet", "exec"), namespace)
    model = namespace["model"]
    try:
        assert model.num_timesteps == 16_384 == model.n_steps * model.n_envs  # one rollout, then one update
        bar = capsys.readouterr().err.replace("\r", "\n")
        assert "16.4k/16.4k" in bar and "ret=" in bar and "fps=" in bar, bar[-500:]
    finally:
        model.get_env().close()
