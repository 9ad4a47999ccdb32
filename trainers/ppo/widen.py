"""Give a run trained without an observation history one: ``--init-from RUN`` with ``obs_history``.

A history's columns follow the observation's (:mod:`unilab_envs.deploy.history`), and the
critic reads the policy's observation followed by its privileged extras, so adding a history
inserts columns into each network's input: at the end of the actor's, between the
observation and the extras in the critic's. Each inserted column starts

* with zero weight in the first layer, so the widened actor and critic compute exactly what
  the given run's did (the fine-tune starts from a walking policy, not from scratch), and
* with the normalizer statistics of the current-frame column it is a past frame of (the
  same distribution), so its normalized input has the scale it will keep.

PPO then learns what the past frames are worth. Pure functions on checkpoint tensors.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["insert_zero_columns", "insert_statistics", "widen_for_history"]


def insert_zero_columns(weight: torch.Tensor, at: int, count: int) -> torch.Tensor:
    """``weight`` ``[out, in]`` with ``count`` zero columns inserted before column ``at``."""
    zeros = weight.new_zeros((weight.shape[0], count))
    return torch.cat([weight[:, :at], zeros, weight[:, at:]], dim=1)


def insert_statistics(state: dict, at: int, sources: torch.Tensor) -> dict:
    """An :class:`~trainers.ppo.models.EmpiricalNormalizer` state with the mean and variance of
    columns ``sources`` inserted before column ``at`` (the count is unchanged)."""
    out = dict(state)
    for key in ("mean", "var"):
        v = state[key]
        out[key] = torch.cat([v[:at], v[sources.to(v.device)], v[at:]])
    return out


def widen_for_history(ckpt: dict, sources: np.ndarray) -> dict:
    """A copy of a PPO checkpoint (``dims``, ``algo``) whose networks read ``len(sources)`` more
    observation columns: history column ``j`` is a past frame of current-frame column ``sources[j]``.

    Only the first layer of each network and the normalizers change; the actor's and the
    critic's outputs on the old columns are unchanged whatever the new columns hold.
    """
    count = len(sources)
    if count == 0:
        return ckpt
    src = torch.as_tensor(np.asarray(sources, dtype=np.int64))
    dims = dict(ckpt["dims"])
    obs = int(dims["obs"])
    if src.min() < 0 or src.max() >= obs:
        raise ValueError(f"history sources must be columns of the {obs}-column observation, got {src.min()}..{src.max()}")
    algo = dict(ckpt["algo"])
    policy = dict(algo["policy"])
    if "actor.estimator.0.weight" in policy:  # trainers.ppo.estimator: two first layers read the observation
        raise ValueError("--init-from cannot give an observation history to a run whose actor has a state estimator "
                         "(policy.estimator) yet; train with obs_history from the start, or init from the run without a history")
    if "actor.0.weight" not in policy:  # an image encoder's network (trainers.ppo.image_encoder) starts elsewhere
        raise ValueError("--init-from cannot give an observation history to a run whose networks have an image encoder "
                         "(their first layers read the image's columns through a CNN); train with obs_history from the "
                         "start, or init from the run without a history")
    # the first Linear of each network (``actor.0`` / ``critic.0``, :func:`trainers.ppo.models.mlp`)
    for name in ("actor.0.weight", "critic.0.weight"):
        policy[name] = insert_zero_columns(policy[name], obs, count)
    algo["policy"] = policy
    algo["obs_normalizer"] = insert_statistics(algo["obs_normalizer"], obs, src)
    if algo.get("critic_normalizer") is not None:  # the critic's input: observation, then privileged extras
        algo["critic_normalizer"] = insert_statistics(algo["critic_normalizer"], obs, src)
    dims["obs"] = obs + count
    if dims.get("privileged"):
        dims["privileged"] = int(dims["privileged"]) + count
    return {**ckpt, "dims": dims, "algo": algo}
