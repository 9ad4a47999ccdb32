"""Runs shared by the deploy tests: a UR5 reach policy trained to its target, a Go1 policy of a few iterations.

Both are exported with ``unilab export`` (``policy.onnx`` + ``deploy_spec.json``) once per session.
"""

from __future__ import annotations

import pytest

import unilab_envs  # noqa: F401  (registers UniLab/*)
from trainers import cli

QUIET = ["log.progress=false", "log.plot=false", "log.tensorboard=false"]


def _train_and_export(out, task: str, total_steps: int | None, num_envs: int, overrides: list[str]) -> str:
    from trainers.ppo import train
    from trainers.ppo.config import load_config

    kwargs = {"total_steps": total_steps} if total_steps else {}
    cfg = load_config(task, out=str(out), num_envs=num_envs, seed=0, overrides=QUIET + overrides, **kwargs)
    train(cfg)
    assert cli.main(["export", str(out)]) == 0
    return str(out)


@pytest.fixture(scope="session")
def ur5_run(tmp_path_factory) -> str:
    """UR5 reach with its default config: the stop rule ends it at >= 97% training success (~180k steps, ~30 s)."""
    return _train_and_export(tmp_path_factory.mktemp("ur5") / "run", "UniLab/UR5Reach-v0", None, 64, [])


@pytest.fixture(scope="session")
def go1_run(tmp_path_factory) -> str:
    """Go1 after two tiny PPO iterations: it does not walk, it must still play without NaN."""
    return _train_and_export(tmp_path_factory.mktemp("go1") / "run", "UniLab/Go1Joystick-v0", 16 * 24 * 2, 16,
                             ["algo.num_steps=24", "policy.actor_hidden=[32,32]", "policy.critic_hidden=[32,32]"])


def run(argv):
    """``unilab ARGV``'s exit status (argparse's ``SystemExit`` included)."""
    from trainers import cli

    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


def one_error_line(capsys) -> str:
    """What the command wrote to stderr, asserted to be one line and no traceback."""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]
