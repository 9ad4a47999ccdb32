"""A folder that holds only a checkpoint still exports with its deploy spec (the task comes
from the checkpoint's own config)."""

import unilab_envs  # noqa: F401
from trainers import cli
from trainers.ppo import train
from trainers.ppo.config import TrainConfig, from_dict
from unilab_robot.deploy import load_spec


def test_export_of_a_checkpoint_only_folder_writes_the_spec(tmp_path):
    cfg = from_dict(TrainConfig, {"task": "UniLab/UR5Reach-v0", "num_envs": 2, "total_steps": 32, "out": str(tmp_path / "run"),
                                  "algo": {"num_steps": 16, "num_minibatches": 2},
                                  "policy": {"actor_hidden": [8], "critic_hidden": [8]},
                                  "log": {"tensorboard": False, "progress": False, "plot": False, "csv": False}})
    run = train(cfg)
    only = tmp_path / "only"
    only.mkdir()
    (only / "checkpoint.pt").write_bytes(run.checkpoint.read_bytes())
    assert cli.main(["export", str(only)]) == 0
    assert load_spec(only / "deploy_spec.json").task.id == "UniLab/UR5Reach-v0"
