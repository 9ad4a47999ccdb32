"""``unilab`` answers mistakes with one line on stderr and exit status 2, before it makes a run folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli

TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--no-progress", "algo.num_steps=16",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]"]


def run(argv: list[str]) -> int:
    """``cli.main(argv)``'s exit status, whether it returns it or argparse raises SystemExit."""
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("argv, expected", [
    (["--task", "UniLab/Go1Joystik-v0"],
     "unknown task 'UniLab/Go1Joystik-v0': did you mean 'UniLab/Go1Joystick-v0'? `unilab tasks` lists the UniLab ids"),
    (["--task", "NoSuchThing-v9"], "unknown task 'NoSuchThing-v9'"),
    (["--task", "UniLab/UR5Reach-v0", "env_kwargs.not_a_key=1"], "unknown UR5Reach config key 'not_a_key'"),
    (["--task", "UniLab/Go1Joystick-v0", "env_kwargs.command_vx=[2,1]"], "command_vx must have low <= high"),
    (["--task", "UniLab/UR5Reach-v0", "policy.actor_hidden=[64,"], "not valid YAML"),
    (["--task", "UniLab/UR5Reach-v0", "algo.gamm=0.9"], "Did you mean 'algo.gamma'"),
    (["--task", "UniLab/UR5Reach-v0", "not-an-override"], "overrides look like key=value"),
    (["--num-envs", "0"], "--num-envs: must be a positive integer, got '0'"),
    (["--num-envs", "-4"], "--num-envs: must be a positive integer, got '-4'"),
    (["--total-steps", "0"], "--total-steps: step count must be a positive integer"),
    (["--total-steps", "-5"], "--total-steps"),
    (["--total-steps", "1.5"], "--total-steps: step count must be a positive integer"),
    (["--total-steps", "lots"], "--total-steps: not a step count: 'lots'"),
    (["--torch-threads", "0"], "--torch-threads: must be a positive integer"),
    (["--algo", "sb3-ppo", "--task", "UniLab/Go1Joystik-v0"], "did you mean 'UniLab/Go1Joystick-v0'?"),
])
def test_train_mistakes_end_in_one_line_and_no_run_folder(argv, expected, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(["train", *argv, "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert line.startswith("unilab train: ") and expected in line, line
    assert not out.exists()


def test_config_file_that_does_not_parse(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo: [1, 2\nnum_envs: 4\n")
    assert run(["train", "--config", str(bad), "--out", str(tmp_path / "run")]) == 2
    line = one_error_line(capsys)
    assert f"config file {bad} is not valid YAML (line " in line and "fix it" in line
    assert run(["train", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read config file" in one_error_line(capsys)
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
@pytest.mark.parametrize("argv", [["--device", "cuda"], ["--device", "cuda:1"], ["device=cuda"]])
def test_cuda_without_cuda_is_refused_before_building_anything(argv, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(["train", *TINY, *argv, "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert "needs CUDA, which this machine does not have" in line and "--device cpu" in line
    assert not out.exists()


def test_train_without_task_trains_go1(capsys):
    assert run(["train", "--print-config"]) == 0
    text = capsys.readouterr().out
    assert "task: UniLab/Go1Joystick-v0" in text
    assert "num_envs: 1024" in text  # the Go1 YAML's defaults, not the bare dataclass's


def _options(parser) -> list:
    return [a for a in parser._actions if a.option_strings and "-h" not in a.option_strings]


def test_every_option_of_every_subcommand_has_help():
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == {"train", "eval", "export", "ship", "tasks", "bench", "play", "adapt", "robot", "distill", "motion"}
    for name, parser in sub.choices.items():
        for action in _options(parser):
            assert action.help, f"unilab {name} {action.option_strings[0]} has no help"
        for action in parser._actions:
            if not action.option_strings:
                assert action.help, f"unilab {name} {action.dest} has no help"


def test_bench_help_and_unknown_row(capsys):
    assert run(["bench", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--rows" in text and "--quick" in text and "post-processing kernels" in text
    assert run(["bench", "--rows", "9"]) == 2
    assert "unknown rows [9]" in one_error_line(capsys)


def test_bench_options_are_the_bench_modules_own():
    from trainers.bench import cli as bench_cli

    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    ours = {a.dest: (a.default, a.type) for a in _options(sub.choices["bench"])}
    theirs = {a.dest: (a.default, a.type) for a in _options(bench_cli.build_parser())}
    assert ours == theirs


def test_bench_runs_a_tiny_row(tmp_path, capsys):
    assert run(["bench", "--quick", "--rows", "3", "--device", "cpu", "--threads", "1", "--out", str(tmp_path)]) == 0
    assert "rollout storage" in capsys.readouterr().out
    assert (tmp_path / "bench.json").exists()


SHIPPED_GRASP = Path(__file__).resolve().parents[2] / "policies" / "ur5_grasp"


@pytest.mark.skipif(not (SHIPPED_GRASP / "checkpoint.pt").exists(), reason="policies/ur5_grasp is not shipped here")
def test_commands_on_a_task_without_velocity_commands_is_refused_before_evaluating(monkeypatch, capsys):
    import trainers.ppo.envs
    import trainers.ppo.evaluate

    def no_env(*args, **kwargs):
        raise AssertionError("an env was built or an evaluation started before --commands was checked")

    monkeypatch.setattr(trainers.ppo.evaluate, "evaluate", no_env)
    monkeypatch.setattr(trainers.ppo.envs, "make_vec_env", no_env)
    assert run(["eval", str(SHIPPED_GRASP), "--commands", "0.3"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("unilab eval: --commands") and "UniLab/UR5Grasp-v0 takes no velocity command" in line, line
    assert "UniLab/Go1Joystick-v0, UniLab/G1Joystick-v0, UniLab/Go1JoystickRough-v0" in line, line
    assert "Leave out --commands" in line


def test_the_joystick_tasks_are_the_ones_that_take_commands():
    from trainers.ppo.joystick_eval import check_command_task, velocity_command_tasks

    assert velocity_command_tasks() == ("UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/Go1JoystickRough-v0",
                                        "UniLab/Go1JoystickDepth-v0", "UniLab/Go2Joystick-v0")
    check_command_task("UniLab/Go1JoystickRough-v0")  # accepted
    for task in ("UniLab/UR5Reach-v0", POINT_REACH_ID, "HalfCheetah-v5"):
        with pytest.raises(ValueError, match=f"but {task} takes no velocity command"):
            check_command_task(task)
