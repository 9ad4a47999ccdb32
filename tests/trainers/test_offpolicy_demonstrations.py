"""algo.demonstrations: the task's scripted controller drives the first envs early on; their episodes stay out."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers.offpolicy.action_box import to_box, to_unit
from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.runner import OffPolicyRunner
from unilab_envs.config import ConfigError

TINY = ["num_envs=4", "algo.learning_starts=64", "algo.batch_size=32", "algo.buffer_size=2000", "nets.actor_hidden=[16]",
        "nets.critic_hidden=[16]", "log.progress=false", "log.tensorboard=false", "log.plot=false", "log.every_steps=160",
        "log.checkpoint_every_steps=100000", "torch_threads=1", "log.save_replay=true", "algo.exploration_correlation=0.9"]
GRASP = "UniLab/UR5Grasp-v0"


def _runner(tmp_path, *extra: str) -> OffPolicyRunner:
    return OffPolicyRunner(load_offpolicy_config("sac", GRASP, overrides=[*TINY, f"out={tmp_path}", *extra]))


def test_to_unit_by_hand_and_to_box_undoes_it():
    low, high = np.array([0.0, -1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(to_unit(np.array([0.0, 3.0]), low, high), [-1.0, 1.0])
    np.testing.assert_allclose(to_box(np.array([0.0, 0.5]), low, high), [1.0, 2.0])  # mid-box; 3/4 of the way
    np.testing.assert_allclose(to_box(to_unit(np.array([0.5, -0.2]), low, high), low, high), [0.5, -0.2])


def test_the_script_drives_its_envs_while_asked_and_the_actor_the_rest(tmp_path):
    runner = _runner(tmp_path, "algo.demonstrations={envs: 2, steps: 96, noise: 0}")
    task = runner.env.unwrapped.task
    try:
        for _ in range(40):  # 160 env steps: the script for the first 24 batch steps (96 env steps), then not
            before, steps = runner.obs.copy(), runner.env_steps
            runner.collect()
            stored = runner.replay.action[(runner.replay.cursor - 1) % runner.replay.rows].numpy()
            scripted = task.scripted_action(before)
            if steps < 96:
                np.testing.assert_allclose(stored[:2], scripted[:2], atol=1e-6)  # through to_unit and back
            else:
                assert not np.allclose(stored[:2], scripted[:2])
            assert not np.allclose(stored[2:], scripted[2:])  # uniform random, then the actor
    finally:
        runner.env.close()


def test_the_scripts_episodes_stay_out_of_the_statistics(tmp_path):
    """By hand: envs 0-1 demonstrate until env step 96 (batch steps of 4 envs)."""
    runner = _runner(tmp_path, "algo.demonstrations={envs: 2, steps: 96, noise: 0}")
    runner.env.close()
    assert runner.counted.tolist() == [False, False, True, True]
    runner.ep_ret[:] = [1.0, 2.0, 3.0, 4.0]
    info = {"is_success": np.array([True, False, False, True])}
    runner._episodes(np.zeros(4), np.array([True, False, True, False]), info, slice(2, None))
    assert list(runner.finished) == [(3.0, 1, False)] and runner.episodes_done == 1  # env 2's; env 0 demonstrated
    assert runner.counted.tolist() == [False, False, True, True]  # env 0's next episode is the script's too
    runner.env_steps = 92  # the next batch step (96) is the actor's: episodes that start now count
    runner._episodes(np.zeros(4), np.array([True, False, False, False]), info, slice(2, None))
    assert len(runner.finished) == 1 and runner.counted.tolist() == [True, False, True, True]
    runner.env_steps = 96  # env 1's episode, started by the script and finished by the actor, counts nowhere
    runner._episodes(np.zeros(4), np.array([True, True, False, False]), info, slice(None))
    assert [row[2] for row in runner.finished] == [False, True] and runner.episodes_done == 2
    assert runner.counted.all()


def test_a_resumed_run_with_demonstrations_continues_bit_for_bit(tmp_path):
    demos = "algo.demonstrations={envs: 2, steps: 400, noise: 0.3}"  # still demonstrating at the resume (320)
    whole = _runner(tmp_path / "whole", demos, "total_steps=480")
    whole.train()
    OffPolicyRunner(load_offpolicy_config("sac", GRASP, overrides=[*TINY, f"out={tmp_path / 'half'}", demos,
                                                                    "total_steps=320"])).train()
    resumed = OffPolicyRunner(load_offpolicy_config("sac", GRASP, overrides=[*TINY, f"out={tmp_path / 'half'}", demos,
                                                                              "total_steps=480"]),
                              resume=tmp_path / "half" / "checkpoint.pt")
    resumed.train()
    for key, value in whole.learner.state_dict().items():
        torch.testing.assert_close(resumed.learner.state_dict()[key], value, rtol=0, atol=0, msg=key)
    torch.testing.assert_close(resumed.replay.action, whole.replay.action, rtol=0, atol=0)
    assert resumed.counted.tolist() == whole.counted.tolist()


def test_bad_settings_say_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match=r"algo.demonstrations.envs \(4\) must be below num_envs \(4\)"):
        load_offpolicy_config("sac", GRASP, overrides=[*TINY, "algo.demonstrations={envs: 4}"])
    with pytest.raises(ConfigError, match="noise must be >= 0"):
        load_offpolicy_config("sac", GRASP, overrides=[*TINY, "algo.demonstrations={noise: -1}"])
    with pytest.raises(ConfigError, match="UR5Reach-v0 has no scripted controller .* remove algo.demonstrations"):
        OffPolicyRunner(load_offpolicy_config("sac", "UniLab/UR5Reach-v0",
                                              overrides=[*TINY, f"out={tmp_path}", "algo.demonstrations={envs: 1}"]))
