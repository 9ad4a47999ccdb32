"""A short G1 run with the committed config learns something (a regression guard, not a walking test).

The test trains ``UniLab/G1Joystick-v0`` with ``trainers/configs/g1_joystick.yaml`` as committed,
overriding only its size (``num_envs``, ``total_steps``), then compares the trained policy with the
same run's initial policy on the same starts and the same exploration noise.

Why this comparison and no simpler one (each measured, see the numbers below):

- The deterministic policy already stands at iteration 0: the actor head starts near zero (gain
  0.01), so its joint targets sit at the standing pose and the PD holds the body up. After 98k steps
  (256 envs) its 4 s return moved no more than at learning rate 1e-9 (13.52 vs 13.59).
- An untrained *checkpoint* (normalizer from the reset observations alone) does fall more than the
  trained one, but a run at learning rate 1e-9 improves just as much: the observation normalizer
  did it, not the gradient. So the baseline here is the initial actor with the trained run's
  normalizer.
- What PPO learns first is to stay up while it explores: the return of the *stochastic* policy
  (its own std, 0.2) over a fixed horizon rises, and its falls drop. Training's own episode
  statistics show the same but are too noisy at this size (start-up transient, few episodes).

Measured (128 envs, 256 eval envs, 2 s horizon; initial actor -> trained, both with the trained
normalizer), at this test's 246k steps: return 2.60 -> 3.57 / 2.57 -> 3.41 / 2.58 -> 3.23 and the
share that fell 0.74 -> 0.48 / 0.75 -> 0.51 / 0.76 -> 0.57 (seeds 0 / 1 / 2); at 197k the return
gains only +0.47..+0.58 and falls drop 7-14 points, at 295k +0.90..+1.09 and 29-32 points.
Controls at 246k, seed 0: learning rate 1e-9 gives 2.513 -> 2.513 (falls unchanged); the reward
with every term's sign flipped (positive_clip off) teaches it to fall: 2.53 -> -0.89, falls
0.79 -> 1.00.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import unilab_envs  # noqa: F401  (registers UniLab/*)
from trainers.common.envs import make_vec_env
from trainers.ppo import Runner, load_config
from trainers.ppo.models import ActorCritic, EmpiricalNormalizer

G1 = "UniLab/G1Joystick-v0"
NUM_ENVS = 128            # fewer envs, more updates per env step: 128 learned faster than 64 or 256
ITERATIONS = 80           # x 128 envs x the config's 24 steps = 245,760 env steps
EVAL_ENVS = 256
EVAL_HORIZON = 100        # control steps (2 s): most exploring episodes end in a fall before that
EVAL_SEED = 1234
MIN_RETURN_GAIN = 0.4     # over the 2 s horizon; measured gains below
MIN_FALL_DROP = 0.10      # share of envs
QUIET = ["log.progress=false", "log.plot=false", "log.tensorboard=false", "log.csv=false",
         "log.save_interval=100000"]


def exploring_return(policy: ActorCritic, normalizer: EmpiricalNormalizer, num_envs: int, horizon: int,
                     seed: int) -> tuple[float, float]:
    """Mean undiscounted return over ``horizon`` steps, and the share of envs that fell, of the
    *stochastic* policy on the committed task, each env counted until its first fall.

    ``seed`` fixes the env starts and commands and the action noise, so two policies compared with
    the same seed meet the same situations and the same noise draws (common random numbers).
    """
    env = make_vec_env(G1, num_envs, {}, None)
    generator = torch.Generator().manual_seed(seed)
    up = np.ones(num_envs, bool)
    total = np.zeros(num_envs)
    try:
        obs, _ = env.reset(seed=seed)
        for _ in range(horizon):
            with torch.no_grad():
                actions, _ = policy.sample(normalizer(torch.as_tensor(obs)), generator)
            obs, reward, terminated, _, _ = env.step(actions.clamp(-1.0, 1.0).numpy())
            total += np.where(up, reward, 0.0)
            up &= ~np.asarray(terminated)
    finally:
        env.close()
    return float(total.mean()), float(1.0 - up.mean())


@pytest.mark.slow
def test_g1_committed_config_learns_to_stay_up_while_exploring(tmp_path):
    """In float32: that a bf16 run learns is tests/trainers/test_ppo_bf16_cpu.py's (a G1 bf16 twin of this
    test cost ~50 s of CI for the same claim)."""
    committed = load_config(G1)
    cfg = load_config(G1, out=str(tmp_path / "run"), num_envs=NUM_ENVS, seed=0, overrides=[*QUIET, "algo.amp=false"],
                      total_steps=NUM_ENVS * committed.algo.num_steps * ITERATIONS)
    runner = Runner(cfg)
    try:
        initial = copy.deepcopy(runner.algo.policy)
        runner.learn()
        trained, normalizer = runner.algo.policy, runner.algo.obs_normalizer
    finally:
        runner.close()
    before = exploring_return(initial, normalizer, EVAL_ENVS, EVAL_HORIZON, EVAL_SEED)
    after = exploring_return(trained, normalizer, EVAL_ENVS, EVAL_HORIZON, EVAL_SEED)
    report = f"initial actor: return {before[0]:.3f}, fell {before[1]:.1%}; trained: return {after[0]:.3f}, fell {after[1]:.1%}"
    assert after[0] > before[0] + MIN_RETURN_GAIN, report
    assert after[1] < before[1] - MIN_FALL_DROP, report
