"""``unilab ship`` of a SAC / TD3 run: a slim policy folder that eval reads as the run and --resume continues."""

from __future__ import annotations

import pytest

from tests.trainers.test_offpolicy import TINY
from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.offpolicy.evaluate import evaluate_offpolicy
from trainers.offpolicy.runner import CKPT_FORMAT, CKPT_VERSION
from trainers.offpolicy.ship import RESUME_ONLY


@pytest.mark.parametrize("kind", ["sac", "td3"])
def test_ship_writes_a_slim_folder_that_evaluates_as_the_run_and_resumes(kind, tmp_path, capsys):
    run, shipped = tmp_path / "run", tmp_path / "policies" / "reach"
    assert cli.main(["train", "--algo", kind, "--task", "UniLab/UR5Reach-v0", "--out", str(run), *TINY,
                     "total_steps=480", "log.plot=true"]) == 0
    assert cli.main(["ship", str(run), "--out", str(shipped)]) == 0
    for name in ("checkpoint.pt", "config.yaml", "learning_curve.png", "policy.onnx", "deploy_spec.json"):
        assert (shipped / name).exists(), name
    full = load_checkpoint(run, CKPT_FORMAT, CKPT_VERSION)
    slim = load_checkpoint(shipped, CKPT_FORMAT, CKPT_VERSION)
    assert {"optimizers", "env_state", "rng"} <= full.keys()
    assert slim["slim"] and not set(RESUME_ONLY) & slim.keys() and slim["env_steps"] == 480
    for key, value in full["learner"].items():  # every weight and normalizer statistic as trained
        assert slim["learner"][key].equal(value), key
    assert (shipped / "checkpoint.pt").stat().st_size < (run / "checkpoint.pt").stat().st_size

    same = dict(episodes=4, num_envs=4, seed=7, progress=False)
    assert evaluate_offpolicy(shipped, **same) == evaluate_offpolicy(run, **same)
    capsys.readouterr()
    resumed = tmp_path / "resumed"
    assert cli.main(["train", "--algo", kind, "--resume", str(shipped), "--total-steps", "640", "--no-progress",
                     "--out", str(resumed)]) == 0
    said = capsys.readouterr().out
    assert "slim (shipped) checkpoint" in said and "holds no replay buffer" in said
    after = load_checkpoint(resumed, CKPT_FORMAT, CKPT_VERSION)
    assert after["env_steps"] == 640 and "optimizers" in after


def test_a_checkpoint_without_optimizer_state_that_is_not_slim_is_refused(tmp_path, capsys):
    from trainers.common.checkpoint import save_checkpoint

    run = tmp_path / "run"
    assert cli.main(["train", "--algo", "sac", "--task", "UniLab/UR5Reach-v0", "--out", str(run), *TINY,
                     "total_steps=320"]) == 0
    ckpt = load_checkpoint(run, CKPT_FORMAT, CKPT_VERSION)
    del ckpt["optimizers"]
    save_checkpoint({k: v for k, v in ckpt.items() if k not in ("format", "version")}, run / "checkpoint.pt",
                    CKPT_FORMAT, CKPT_VERSION)
    capsys.readouterr()
    assert cli.main(["train", "--algo", "sac", "--resume", str(run), "--total-steps", "480", "--no-progress",
                     "--out", str(tmp_path / "again")]) == 2
    err = capsys.readouterr().err
    assert "no optimizer state and is not marked slim" in err and "Traceback" not in err
