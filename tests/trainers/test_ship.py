"""``unilab ship``: a run as a policy folder with a slim checkpoint that eval reads and --resume continues."""

from pathlib import Path

import pytest

from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.ppo.ship import RESUME_ONLY
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

#: the shipped policies' checkpoints (policies/wip/ is not shipped)
SHIPPED = sorted((Path(__file__).resolve().parents[2] / "policies").glob("*/checkpoint.pt"))

TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--no-progress", "algo.num_steps=16",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false"]


def test_ship_writes_a_slim_policy_folder(tmp_path, capsys):
    run, shipped = tmp_path / "run", tmp_path / "policies" / "reach"
    assert cli.main(["train", *TINY, "--total-steps", "384", "--out", str(run)]) == 0
    assert cli.main(["ship", str(run), "--out", str(shipped)]) == 0
    for name in ("checkpoint.pt", "config.yaml", "learning_curve.png", "policy.onnx"):
        assert (shipped / name).exists(), name
    full = load_checkpoint(run, CKPT_FORMAT, CKPT_VERSION)
    slim = load_checkpoint(shipped, CKPT_FORMAT, CKPT_VERSION)
    assert "optimizer" in full["algo"] and "env_state" in full
    assert slim["slim"] and "optimizer" not in slim["algo"] and "env_state" not in slim and "collector" not in slim
    assert (shipped / "checkpoint.pt").stat().st_size < (run / "checkpoint.pt").stat().st_size
    capsys.readouterr()

    assert cli.main(["eval", str(shipped), "--episodes", "4"]) == 0
    resumed_dir = tmp_path / "resumed"
    assert cli.main(["train", "--resume", str(shipped), "--total-steps", "640", "--no-progress",
                     "--out", str(resumed_dir)]) == 0
    assert "slim (shipped) checkpoint: it has no optimizer state" in capsys.readouterr().err
    resumed = load_checkpoint(resumed_dir, CKPT_FORMAT, CKPT_VERSION)
    assert resumed["iteration"] == 5 and "optimizer" in resumed["algo"]  # went on from iteration 3
    assert cli.main(["train", *TINY, "--total-steps", "128", "--out", str(tmp_path / "ft"), "--init-from", str(shipped)]) == 0


def test_ship_of_a_missing_run_is_one_line(tmp_path, capsys):
    assert cli.main(["ship", str(tmp_path / "nope"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err


@pytest.mark.parametrize("checkpoint", SHIPPED, ids=lambda p: p.parent.name)
def test_every_shipped_checkpoint_is_slim(checkpoint):
    ckpt = load_checkpoint(checkpoint, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"))
    extra = sorted({*RESUME_ONLY} & ckpt.keys()) + (["algo.optimizer"] if "optimizer" in ckpt["algo"] else [])
    assert ckpt.get("slim") is True and not extra, (
        f"{checkpoint} is not slim (carries {extra or 'no slim mark'}): re-slim it with "
        "trainers.ppo.ship.slim_checkpoint (what `unilab ship` writes)")
    assert {"policy", "obs_normalizer"} <= ckpt["algo"].keys()
