"""Stable-Baselines3 on UniLab's batched envs.

- ``SB3VecEnv``: an SB3 ``VecEnv`` over any batched Gymnasium ``VectorEnv`` (ours or
  Gymnasium's, SAME_STEP / NEXT_STEP autoreset), vectorized, with DummyVecEnv-exact
  ``terminal_observation`` / ``TimeLimit.truncated`` infos;
- ``make_sb3_env``: task id -> batched env -> wrappers -> adapter -> VecNormalize;
- ``RewardTermsCallback``: ``reward/<term>`` means into SB3's logger;
- ``cli.train_sb3``: the ``unilab train --algo sb3-*`` entry point.
"""

from trainers.sb3.adapter import EMPTY_INFO, SB3VecEnv

__all__ = ["EMPTY_INFO", "SB3VecEnv"]
