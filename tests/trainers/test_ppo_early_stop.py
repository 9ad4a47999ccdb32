"""The ``stop:`` config section: training ends once the rolling success rate holds its threshold."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.ppo.collector import EpisodeTracker
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


def through_a_checkpoint_file(state):
    """``state`` saved and read back as a checkpoint is (``weights_only``: tensors and plain values)."""
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def test_the_streak_survives_a_checkpoint_unless_the_threshold_changed():
    rule = StopConfig(success_rate=0.9, min_episodes=10, patience=2)
    straight = SuccessStop(rule)
    assert not straight(None, stats(0.95, 20))
    resumed = SuccessStop(rule)
    resumed.load_state_dict(through_a_checkpoint_file(straight.state_dict()))
    assert resumed(None, stats(0.95, 30)) and straight(None, stats(0.95, 30))  # both fire at the second iteration
    assert resumed.reason == straight.reason
    stricter = SuccessStop(StopConfig(success_rate=0.99, min_episodes=10, patience=2))
    stricter.load_state_dict(straight.state_dict())
    assert stricter.streak == 0  # counted against 90%, not 99%: starts over


def finish_episodes(tracker, rewards, success):
    """One step where every env gets ``rewards`` and its episode ends (successful where ``success``)."""
    n = len(rewards)
    tracker.step(np.asarray(rewards, dtype=np.float64), np.ones(n, bool), np.zeros(n, bool), np.ones(n, bool),
                 np.asarray(success))


def test_the_episode_windows_and_count_survive_a_checkpoint():
    straight = EpisodeTracker(num_envs=3, window=4)
    finish_episodes(straight, [0.1, 0.2, 1 / 3], [True, False, True])
    finish_episodes(straight, [0.7, 0.8, 0.9], [False, False, True])  # the window keeps the last 4 of 6
    resumed = EpisodeTracker(num_envs=3, window=4)
    resumed.load_state_dict(through_a_checkpoint_file(straight.state_dict()))
    assert resumed.finished == straight.finished == 6
    assert resumed.stats() == straight.stats()
    for name in ("returns", "lengths", "terminated", "successes"):
        assert list(getattr(resumed, name)) == list(getattr(straight, name))
        assert getattr(resumed, name).maxlen == 4
    for tracker in (straight, resumed):
        finish_episodes(tracker, [0.5, 0.5, 0.5], [True, True, True])
    assert resumed.stats() == straight.stats()  # and they roll on alike


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
