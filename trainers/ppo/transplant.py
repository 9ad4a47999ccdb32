"""Move a trained actor onto a state estimator: ``--init-from RUN`` into a run with ``policy.estimator``.

A policy trained reading ``linvel`` walks well; a robot without odometry needs one that reads an
estimate of it instead (:mod:`trainers.ppo.estimator`: ``env_kwargs.critic_only_groups: [linvel]``
takes it out of the actor's observation, the actor reads ``[obs_n, estimate]``). The new actor's
first layer is built from the old one's, so that with the true values in place of the estimate it
computes exactly what the old actor did. Column by column (matched by observation group name,
:mod:`trainers.ppo.obs_layout`), with ``W``, ``b`` the old first layer, ``mean``, ``var`` the old
observation normalizer's statistics and ``s = sqrt(var + eps)``:

* an observation column ``j`` that was old column ``i``: weight ``W[:, i]``, and the new normalizer
  takes column ``i``'s statistics, so its normalized input is the old one;
* an estimate column ``k`` that was old column ``i`` (the old actor read ``(x - mean[i]) / s[i]``, the new
  one reads the raw estimate ``x``, in the target's units): weight ``W[:, i] / s[i]``, and the first
  layer's bias ``b - sum_k W[:, i_k] * mean[i_k] / s[i_k]``;
* an estimate column the old actor did not read: weight 0.

Then ``W' [obs_n', x] + b' = W obs_n + b`` (up to rounding) whenever no old input was clipped by the
normalizer (``policy.obs_clip`` standard deviations), and the rest of the actor, its std and the
log-std ceiling are the old ones. The critic is carried when its new input is a permutation of its
old one (each column and its normalizer statistics moved to where its group now sits), else it starts
fresh. The estimator itself starts fresh. Pure functions on checkpoint tensors.
"""

from __future__ import annotations

import torch

__all__ = ["estimator_first_layer", "permute_columns", "take_statistics", "transplant_for_estimator"]


def estimator_first_layer(weight: torch.Tensor, bias: torch.Tensor, obs_src: torch.Tensor, estimate_src: torch.Tensor,
                          mean: torch.Tensor, std: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The first layer ``[H, O' + K]``, ``[H]`` of an actor reading ``[obs_n', estimate]`` from an old one's
    ``weight`` ``[H, O]`` and ``bias`` (module docstring). ``obs_src`` ``[O']``: the old column of each new
    observation column; ``estimate_src`` ``[K]``: the old column of each estimate column, ``-1`` for none;
    ``mean``, ``std`` ``[O]``: what the old normalizer subtracted and divided by (``0`` and ``1`` without one)."""
    read = estimate_src >= 0
    src = estimate_src.clamp_min(0)
    scaled = weight[:, src] / std[src]
    moved = torch.where(read, scaled, torch.zeros_like(scaled))
    shift = (moved * mean[src]).sum(dim=1)
    return torch.cat([weight[:, obs_src], moved], dim=1), bias - shift


def take_statistics(state: dict, src: torch.Tensor) -> dict:
    """An :class:`~trainers.common.normalizers.EmpiricalNormalizer` state whose column ``j`` has the mean and
    variance of column ``src[j]`` of ``state`` (the count is unchanged)."""
    out = dict(state)
    for key in ("mean", "var"):
        out[key] = state[key][src.to(state[key].device)]
    return out


def permute_columns(weight: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """``weight`` ``[out, in]`` whose column ``j`` is column ``src[j]``."""
    return weight[:, src.to(weight.device)]


def transplant_for_estimator(ckpt: dict, obs_src, estimate_src, critic_src=None, normalized: bool = True,
                             eps: float = 1e-8) -> dict:
    """A copy of a PPO checkpoint (``dims``, ``algo``) of a plain MLP actor whose ``algo`` fits an
    :class:`~trainers.ppo.estimator.EstimatorActorCritic` reading ``len(obs_src)`` observation columns and
    ``len(estimate_src)`` estimate columns (module docstring): the actor's layers move under ``actor.head``,
    its first layer and the observation normalizer are rebuilt, the estimator is left out (it starts fresh).

    ``critic_src``: the old critic-input column of each new one (a permutation), or ``None``: the critic and
    its normalizer are left out. ``normalized``: whether the old actor read normalized observations.
    """
    algo = dict(ckpt["algo"])
    saved = algo["policy"]
    old_norm = algo["obs_normalizer"]
    obs_src = torch.as_tensor(obs_src, dtype=torch.long)
    estimate_src = torch.as_tensor(estimate_src, dtype=torch.long)
    if normalized:
        mean, std = old_norm["mean"].double(), torch.sqrt(old_norm["var"].double() + eps)
    else:
        mean, std = torch.zeros_like(old_norm["mean"].double()), torch.ones_like(old_norm["var"].double())
    policy = {}
    for key, value in saved.items():
        if key.startswith("actor."):
            policy["actor.head." + key[len("actor."):]] = value
        elif not key.startswith("critic.") or critic_src is not None:
            policy[key] = value
    weight, bias = saved["actor.0.weight"], saved["actor.0.bias"]
    w, b = estimator_first_layer(weight.double(), bias.double(), obs_src.to(weight.device),
                                 estimate_src.to(weight.device), mean.to(weight.device), std.to(weight.device))
    policy["actor.head.0.weight"], policy["actor.head.0.bias"] = w.to(weight.dtype), b.to(bias.dtype)
    algo["obs_normalizer"] = take_statistics(old_norm, obs_src)
    dims = {**ckpt["dims"], "obs": len(obs_src)}
    if critic_src is not None:
        critic_src = torch.as_tensor(critic_src, dtype=torch.long)
        policy["critic.0.weight"] = permute_columns(saved["critic.0.weight"], critic_src)
        # a critic that read the policy observation was normalized by the observation normalizer
        old_critic_norm = algo.get("critic_normalizer") or old_norm
        algo["critic_normalizer"] = take_statistics(old_critic_norm, critic_src)
        dims["privileged"] = len(critic_src)
    else:
        algo["critic_normalizer"] = None
    algo["policy"] = policy
    return {**ckpt, "dims": dims, "algo": algo}
