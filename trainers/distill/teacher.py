"""The teacher: a bundled-PPO run's deterministic policy, and the groups its observation is made of."""

from __future__ import annotations

from pathlib import Path

import torch

from ..common.envs import make_vec_env
from ..ppo.evaluate import load_policy
from .observations import GroupError, env_groups


class Teacher:
    """``Teacher(run, device)(obs)`` -> the teacher's action means ``[B, A]`` (normalizer folded in,
    unclipped, as the deterministic policy of ``unilab eval`` before the env clips it).

    ``groups``: its observation's ``(name, size)`` groups in column order, read from a one-env
    copy of the task it was trained on (its ``env_kwargs``); ``task``: that task's id.
    """

    def __init__(self, run: str | Path, device: torch.device | str = "cpu"):
        self.policy, cfg, ckpt = load_policy(run, str(device))
        self.task, self.run = cfg.task, str(run)
        if cfg.policy.recurrent is not None:
            raise GroupError(f"teacher {run} is recurrent (policy.recurrent: {cfg.policy.recurrent}); distilling from "
                             "a recurrent teacher is not supported yet: distill from a feed-forward one")
        if cfg.obs_history is not None:
            raise GroupError(f"teacher {run} reads an obs_history ({cfg.obs_history.to_dict()}), whose frames no env "
                             "observation holds; distill from a teacher without one")
        env = make_vec_env(cfg.task, 1, cfg.env_kwargs, cfg.vectorization_mode)
        try:
            policy, _ = env_groups(env)
        finally:
            env.close()
        ordered = sorted(policy.items(), key=lambda kv: kv[1].start)
        self.groups = tuple((name, s.stop - s.start) for name, s in ordered)
        covered = [c for _, s in ordered for c in range(s.start, s.stop)]
        if covered != list(range(int(ckpt["dims"]["obs"]))):
            raise GroupError(f"teacher {run}: the groups of {cfg.task} ({[g for g, _ in self.groups]}) do not lay out "
                             f"its {ckpt['dims']['obs']}-column observation")

    @torch.no_grad()
    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        return self.policy(obs)
