"""A sim-to-real profile's curriculum under the off-policy runner: it moves inside the wrappers as the runner steps
the env (nothing in the learner drives it), the runner logs its level as PPO's does, and the checkpoint keeps it."""

from __future__ import annotations

import csv

import torch

from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.runner import OffPolicyRunner

# 8-step episodes that random actions survive (a time limit goes well): every window of 4 episodes raises the
# profile's level, and every survived episode its env's push level (the push curriculum, 4 levels)
PROFILE = "sim2real={extends: go1_real, curriculum: {start: 0.0, step: 0.25}, random_push: {levels: 4}}"
OVERRIDES = ["num_envs=4", "total_steps=160", "algo.learning_starts=128", "algo.batch_size=16", "algo.buffer_size=400",
             "nets.actor_hidden=[16]", "nets.critic_hidden=[16]", "log.progress=false", "log.tensorboard=false",
             "log.plot=false", "log.every_steps=16", "log.checkpoint_every_steps=100000", "torch_threads=1",
             "env_kwargs={num_threads: 1, max_episode_steps: 8}", PROFILE]


def test_the_curricula_advance_under_the_offpolicy_runner(tmp_path):
    runner = OffPolicyRunner(load_offpolicy_config("sac", "UniLab/Go1Joystick-v0", overrides=[*OVERRIDES, f"out={tmp_path}"]))
    curriculum = runner.env.curriculum
    # a profile without privileged_critic keeps the task's privileged observation for the critic (Go1's 25 columns)
    assert runner.critic_extra == runner.env.unwrapped.privileged_observation_space.shape[-1] == 25
    assert curriculum.level == 0.0 and all(layer.profile_level == 0.0 for layer in runner.env.layers.values())
    result = runner.train()
    assert result.updates > 0 and curriculum.level == 1.0  # 40 steps of 4 envs: many windows, each raised it
    assert all(layer.profile_level == 1.0 for layer in runner.env.layers.values())
    rows = list(csv.DictReader(open(tmp_path / "progress.csv")))
    levels = [float(r["env/profile_level"]) for r in rows]
    assert levels[0] < levels[-1] == 1.0 and levels == sorted(levels)
    assert float(rows[0]["env/push_level"]) < float(rows[-1]["env/push_level"])  # the push curriculum, logged too
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=False)["env_state"]["curriculum"]
    assert float(saved["level"]) == 1.0
    resumed = OffPolicyRunner(runner.cfg, resume=tmp_path / "checkpoint.pt")
    assert resumed.env.curriculum.level == 1.0  # a resumed run goes on from the level it reached
    resumed.env.close()
