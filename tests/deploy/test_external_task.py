"""A task registered outside UniLab gets the whole toolchain: docs/adding_a_task.md's ``my_dog_joystick.py``,
as pasted, trained, evaluated, exported and played through ``module:Id`` with the commands the page shows."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

from trainers import cli
from unilab_envs.core.task import DeployFacts, Task
from unilab_robot.deploy import SpecError, load_spec
from unilab_envs.deploy_spec import group_docs
from unilab_robot.deploy.spec import validate
from unilab_envs.tasks.arm_groups import REACH_GROUPS

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "adding_a_task.md").read_text()
SECTION = PAGE[PAGE.index("## Your own task on the robot side"):PAGE.index("## Check it")]
MODULE, TASK_ID = "my_dog_joystick", "MyLab/MyDogJoystick-v0"
#: what the test adds to the page's commands (argparse: a later flag wins) so they run in seconds
TINY = {"train": ["--num-envs", "16", "--total-steps", "768", "--no-progress", "algo.num_steps=24",
                  "log.tensorboard=false", "log.plot=false", "policy.actor_hidden=[32,32]",
                  "policy.critic_hidden=[32,32]"],
        "eval": ["--episodes", "1", "--num-envs", "1", "--no-progress"],
        "play": ["--episodes", "1", "--no-progress"]}


def _block(text: str, lang: str, first_line: str = "") -> str:
    return re.search(rf"```{lang}\n({re.escape(first_line)}.*?)```", text, re.S).group(1)


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    """``tmp_path`` as the user's folder holding ``my_dog_joystick.py`` (as pasted), the working directory,
    and not on ``sys.path`` (as under a console script); the module and its id are gone afterwards."""
    (tmp_path / f"{MODULE}.py").write_text(_block(PAGE, "python", f"# {MODULE}.py\n"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    sys.modules.pop(MODULE, None)  # tests/test_readme.py imports a copy of its own
    gym.registry.pop(TASK_ID, None)
    yield tmp_path
    sys.modules.pop(MODULE, None)
    gym.registry.pop(TASK_ID, None)


def test_the_pages_commands_train_eval_export_and_play_the_docs_task(user_folder, capsys):
    commands = [shlex.split(line) for line in _block(SECTION, "bash").splitlines() if line.strip()]
    assert [c[:2] for c in commands] == [["unilab", "train"], ["unilab", "eval"], ["unilab", "export"],
                                         ["unilab", "play"]]
    assert f"{MODULE}:{TASK_ID}" in commands[0]
    for argv in commands[:3]:  # in this process: the module is found through the working directory only
        assert cli.main([*argv[1:], *TINY.get(argv[1], [])]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "deploy spec: runs/my_dog/deploy_spec.json" in out and "planar velocity tracking" in out
    spec = load_spec(user_folder / "runs" / "my_dog" / "deploy_spec.json")
    validate(spec)
    assert spec.task.id == f"{MODULE}:{TASK_ID}" and spec.command.kind == "velocity"
    assert spec.gait.foot_phase_offsets == (0.0, 3.14159, 3.14159, 0.0)  # MY_DOG's, not the Go1's
    assert spec.model.mjcf is not None and Path(spec.model.mjcf).is_absolute()  # play needs no user code
    assert [g.name for g in spec.observation.groups][-2:] == ["command", "phase"]
    # play as a user runs it: the console script, from the folder (its sys.path lacks the folder)
    argv = commands[3]
    unilab = Path(sys.executable).with_name("unilab")
    done = subprocess.run([str(unilab), *argv[1:], *TINY["play"]], cwd=user_folder, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{MODULE}:{TASK_ID}: episodes 1" in done.stdout and "x faster than real time" in done.stdout


def test_a_run_of_a_module_task_says_where_to_run_from_elsewhere(user_folder, tmp_path_factory, capsys):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "config.yaml").write_text(f"task: {MODULE}:{TASK_ID}\nenv_kwargs: {{}}\n")
    (elsewhere / "checkpoint.pt").write_bytes(b"")
    (user_folder / f"{MODULE}.py").unlink()
    assert cli.main(["export", str(elsewhere)]) == 2
    err = capsys.readouterr().err
    assert f"no module '{MODULE}'" in err and f"run from the folder holding {MODULE}.py" in err


def test_a_module_task_runs_default_folder_is_named_after_its_id():
    from trainers.ppo.config import TrainConfig

    assert TrainConfig(task=f"{MODULE}:{TASK_ID}").out_dir == Path("runs") / "MyLab_MyDogJoystick-v0"


def test_sb3_takes_the_module_form_too(user_folder):
    from trainers.sb3.env import make_sb3_env

    venv = make_sb3_env(f"{MODULE}:{TASK_ID}", 2)  # the SB3 side imports the module like the bundled PPO
    try:
        assert venv.num_envs == 2 and venv.observation_space.shape == (50,)
        assert venv.reset().shape == (2, 50)
    finally:
        venv.close()


def test_a_task_without_deploy_facts_is_told_which_method_to_write():
    class MyArmReach(Task):  # the page's example name; only the method under test is used
        obs_size = action_size = reward_weights = 0
        bind = apply_actions = compute = reset_envs = observe = None

    with pytest.raises(SpecError, match=r"MyArmReach has no deploy spec: implement MyArmReach\.deploy_facts\(\)"):
        MyArmReach(None, None).deploy_facts()
    with pytest.raises(ValueError, match="one of"):
        DeployFacts(command="fly", joint_names=("j",), mjcf="m.xml")
    with pytest.raises(ValueError, match="phase_offsets"):
        DeployFacts(command="velocity", joint_names=("j",), mjcf="m.xml")


def test_a_group_of_your_own_is_refused_by_name_until_the_pages_block_declares_it():
    class MyArmReach:
        obs_groups = {"joint_pos": slice(0, 6), "wrist_force": slice(6, 9)}
        declared_groups = {g.name: g for g in REACH_GROUPS}

    with pytest.raises(SpecError, match=r"MyArmReach's observation group\(s\) \['wrist_force'\] are not declared"):
        group_docs(MyArmReach())
    namespace: dict = {}
    exec(_block(SECTION, "python", "# my_arm_groups.py\n"), namespace)
    MyArmReach.declared_groups = namespace["MY_ARM_GROUPS"]
    assert group_docs(MyArmReach())["wrist_force"] == ("N", "force at the wrist's force sensor, sensor frame")
    assert callable(namespace["WRIST_FORCE"].builder)
