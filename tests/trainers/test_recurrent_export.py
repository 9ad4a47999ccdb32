"""``unilab export`` of a GRU run on a UniLab task: the deploy spec says the policy has a hidden state, and the
robot side's policy runs it, zeroing the state where an episode starts."""

import subprocess
import sys

import numpy as np

from trainers.ppo import train
from trainers.ppo.config import TrainConfig, from_dict


def test_export_of_a_gru_run_writes_the_recurrent_section_and_the_runtime_policy_runs_it(tmp_path):
    cfg = from_dict(TrainConfig, {
        "task": "UniLab/Go1Joystick-v0", "num_envs": 8, "total_steps": 8 * 8, "seed": 0, "out": str(tmp_path),
        "algo": {"num_steps": 8, "num_minibatches": 2},
        "policy": {"recurrent": "gru", "recurrent_hidden": 24, "actor_hidden": [32], "critic_hidden": [32]},
        "log": {"tensorboard": False, "progress": False, "plot": False}})
    train(cfg)
    done = subprocess.run([sys.executable, "-m", "trainers.cli", "export", str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "input  h_in float32 [batch, 24]: the recurrent policy's hidden state" in done.stdout

    from unilab_robot.policy import OnnxPolicy, find_policy

    bundle = find_policy(tmp_path)
    assert (bundle.spec.recurrent.kind, bundle.spec.recurrent.size, bundle.spec.recurrent.reset) == ("gru", 24, "episode")
    policy = OnnxPolicy(bundle.onnx, bundle.spec)
    obs = np.zeros(bundle.spec.input_size, np.float32)
    first = policy(obs)
    assert policy.state.h.any()
    policy.reset()
    np.testing.assert_array_equal(policy(obs), first)  # from a zero state again: the episode's first action
