"""The ``stop:`` config section: training ends once the rolling success rate holds its threshold."""

from __future__ import annotations

import pytest
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.ppo.config import ConfigError, StopConfig, TrainConfig, from_dict, load_config
from trainers.ppo.early_stop import SuccessStop, stop_callback


def stats(success, finished):
    return {"episode/success": success, "episode/finished": float(finished)}


def test_success_stop_waits_for_episodes_and_patience():
    stop = SuccessStop(StopConfig(success_rate=0.9, min_episodes=100, patience=2))
    assert not stop(None, stats(1.0, 99))           # too few finished episodes
    assert not stop(None, stats(0.95, 150))         # first iteration over the threshold
    assert not stop(None, stats(0.5, 200))          # the streak breaks
    assert not stop(None, stats(0.95, 250))
    assert stop(None, stats(0.9, 300))              # two in a row
    assert "success 90.0% >= stop.success_rate 90%" in stop.reason
    assert not SuccessStop(StopConfig(success_rate=0.5, min_episodes=1))(None, {"episode/finished": 10.0})


def test_stop_config_is_typed_and_off_by_default():
    assert stop_callback(TrainConfig()) is None
    cfg = from_dict(TrainConfig, {"stop": {"success_rate": 0.95, "min_episodes": 50}})
    assert isinstance(stop_callback(cfg), SuccessStop)
    with pytest.raises(ConfigError, match=r"stop.success_rate must be in \(0, 1\]"):
        from_dict(TrainConfig, {"stop": {"success_rate": 1.5}})
    with pytest.raises(ConfigError, match="unknown config key 'stop.succes_rate'"):
        from_dict(TrainConfig, {"stop": {"succes_rate": 0.9}})


def test_ur5_defaults_stop_on_success_within_a_bounded_run():
    cfg = load_config("UniLab/UR5Reach-v0")
    assert cfg.stop.success_rate is not None and cfg.stop.success_rate >= 0.95
    assert cfg.total_steps <= 1_000_000


def test_cli_train_stops_when_the_task_is_learned(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["train", "--task", POINT_REACH_ID, "--num-envs", "16", "--no-progress", "--total-steps", "2e5",
            "--out", str(out), "algo.num_steps=32", "policy.actor_hidden=[32,32]", "policy.critic_hidden=[32,32]",
            "log.tensorboard=false", "log.plot=false", "stop.success_rate=0.5", "stop.min_episodes=32"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "stopped early: success" in text
    steps = int(text.split("done: ")[1].split(" steps")[0])
    assert steps < 200_000
