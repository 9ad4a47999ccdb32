"""Stable-Baselines3 on UniLab's batched envs.

- ``SB3VecEnv``: an SB3 ``VecEnv`` over any batched Gymnasium ``VectorEnv`` (ours or
  Gymnasium's; SAME_STEP, NEXT_STEP or DISABLED autoreset), vectorized, with
  DummyVecEnv-exact ``terminal_observation`` / ``TimeLimit.truncated`` infos;
- ``make_sb3_env``: task id -> batched env -> vector wrappers -> adapter -> VecNormalize;
- ``RewardTermsCallback``: ``reward/<term>`` means into SB3's logger;
- ``ProgressCallback``: a progress bar (env steps, steps per second, recent return);
- ``BatchedNormalActionNoise``: TD3/SAC exploration noise drawn for all envs at once;
- ``DictObservation``: a task with image groups (a depth camera) as SB3's ``Dict`` observation
  (the state vector and each image) for ``MultiInputPolicy``;
- ``trainers.sb3.cli.train_sb3``: ``unilab train --algo sb3-ppo|sb3-sac|sb3-td3``.

    import unilab_envs
    from stable_baselines3 import PPO
    from trainers.sb3 import make_sb3_env, ProgressCallback, RewardTermsCallback

    env = make_sb3_env("UniLab/UR5Reach-v0", 64, seed=0, normalize=True)
    PPO("MlpPolicy", env, n_steps=32).learn(1_000_000, callback=[RewardTermsCallback(), ProgressCallback()])
"""

import unilab_envs  # noqa: F401  (first: sets the OpenMP wait policy before torch runs; registers UniLab/*)
from trainers.sb3.adapter import EMPTY_INFO, SB3VecEnv, supports_reset_mask
from trainers.sb3.callbacks import (CheckpointCallback, ProgressCallback, RewardTermsCallback, find_adapter, save_model,
                                    sb3_logger)
from trainers.sb3.dict_obs import DictObservation
from trainers.sb3.env import make_batched_env, make_sb3_env
from trainers.sb3.noise import BatchedNormalActionNoise

__all__ = [
    "EMPTY_INFO",
    "BatchedNormalActionNoise",
    "CheckpointCallback",
    "DictObservation",
    "ProgressCallback",
    "RewardTermsCallback",
    "SB3VecEnv",
    "find_adapter",
    "make_batched_env",
    "make_sb3_env",
    "save_model",
    "sb3_logger",
    "supports_reset_mask",
]
