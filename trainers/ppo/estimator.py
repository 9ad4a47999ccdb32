"""A learned state estimator in the actor (``policy.estimator``): the field's "concurrent state estimator".

A real robot does not measure everything the simulator knows: a Unitree reports no base linear
velocity (``linvel``). With ``env_kwargs.critic_only_groups: [linvel]`` the actor no longer reads it
(the critic still does); the estimator gives the actor an estimate of it instead::

    estimate = E(obs_n)                  [B, K]  an MLP (policy.estimator.hidden) on the normalized observation
    mean     = A([obs_n, sg(estimate)])  [B, A]  the actor's MLP reads the observation, then the estimate

``E`` is trained in the same PPO update, by the supervised loss ``coef * MSE(E(obs_n), y)`` with ``y``
the targets' true values, raw (in their own units: m/s for ``linvel``), cut from the privileged
observation's columns of those groups (``policy.estimator.columns``, indices into the critic's input:
the policy observation, then the privileged one). ``sg``: the estimate the actor reads is detached, so
the policy gradient does not reach ``E``, which only learns to estimate (as the field does: the
actor learns to use an estimate, not to shape it). The two gradients are then disjoint; each is
clipped to ``algo.max_grad_norm`` on its own, so the estimator does not shrink the policy's steps
(one Adam over both, the adaptive learning rate shared). The estimate is not normalized: the actor
reads it in the targets' units.

What a run logs: ``loss/estimator`` (the update's mean squared error) and, per target column,
``estimator/rmse_<target>_<axis>`` (``x``, ``y``, ``z`` for a 3-wide group): the error of the
rollout's estimates, from the estimator that acted, on data it had not yet trained on.
``unilab eval`` measures the same RMSE of the exported policy against the eval env's privileged
observation (:class:`MeteredActions`). The estimate leaves the ONNX as its second output,
``estimate`` (:mod:`trainers.common.onnx_export`); the deploy spec's ``estimator`` section names it.
"""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from ..common.envs import env_groups
from ..common.mlp import mlp
from .config import ConfigError, PolicyConfig, TrainConfig
from .models import ActorCritic, InferencePolicy
from .warmup import over_after, warmup_span

__all__ = ["EstimatingActor", "EstimatingInferencePolicy", "EstimatorActorCritic", "MeteredActions", "axis_labels",
           "resolve_targets", "rmse_stats", "truth_mirror", "warmup_line", "with_estimator"]

_AXES = ("x", "y", "z")


# --------------------------------------------------------------------------- where the targets are


def resolve_targets(env: gym.vector.VectorEnv, targets: tuple[str, ...], task: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(columns, sizes)``: the critic-input columns of the privileged groups ``targets`` (the policy
    observation's width, then the group's slice of the privileged observation) and each group's width.

    :class:`~trainers.ppo.config.ConfigError` (one line) for a task without a privileged observation,
    a target the actor already reads, or one the privileged observation does not hold.
    """
    policy, privileged = env_groups(env)
    has_privileged = (getattr(env, "privileged_observation_space", None) or
                      getattr(env.unwrapped, "privileged_observation_space", None)) is not None
    if not has_privileged or not privileged:
        raise ConfigError(f"policy.estimator: {task} has no named privileged observation groups to take the targets' "
                          f"true values from; set policy.estimator: null")
    obs_dim = int(env.single_observation_space.shape[-1])
    columns: list[int] = []
    sizes: list[int] = []
    for name in targets:
        if name in policy:
            raise ConfigError(f"policy.estimator.targets: the actor already reads {name!r} (a policy observation group "
                              f"of {task}); move it to the critic (env_kwargs.critic_only_groups: [{name}]) or drop it "
                              f"from the targets")
        if name not in privileged:
            raise ConfigError(f"policy.estimator.targets: {name!r} is not in {task}'s privileged observation (its groups: "
                              f"{list(privileged)}); a legged task's policy group moves there with "
                              f"env_kwargs.critic_only_groups: [{name}]")
        cols = privileged[name]
        columns += range(obs_dim + cols.start, obs_dim + cols.stop)
        sizes.append(cols.stop - cols.start)
    return tuple(columns), tuple(sizes)


def truth_mirror(env: gym.vector.VectorEnv, targets: tuple[str, ...], task: str) -> tuple[np.ndarray, np.ndarray]:
    """``(perm, sign)`` over the estimate's columns: the mirror image of the targets' true values is
    ``truth[..., perm] * sign`` (the task's privileged mirror map, cut to the targets' columns). What the warm-up of
    a mirror-averaged actor (``policy.symmetric_actor``) reads in its mirrored pass; :class:`ConfigError` (one line)
    where the task has no such map."""
    owner = getattr(env.unwrapped, "task", None)
    privileged = getattr(owner, "privileged_obs_groups", None) or {}
    fix = "set policy.symmetric_actor: false or policy.estimator.warmup_iterations: 0"
    try:
        mirror = owner.privileged_mirror
    except (AttributeError, ValueError) as e:
        raise ConfigError(f"policy.estimator.warmup_iterations with policy.symmetric_actor: {task} has no mirror map of "
                          f"its privileged observation to mirror the true {list(targets)} with ({e}); {fix}") from None
    columns = [c for name in targets for c in range(privileged[name].start, privileged[name].stop)]
    where = {c: k for k, c in enumerate(columns)}
    partners = [int(mirror.obs_perm[c]) for c in columns]
    if any(p not in where for p in partners):
        raise ConfigError(f"policy.estimator.warmup_iterations with policy.symmetric_actor: the mirror image of "
                          f"{list(targets)} lies outside them in {task}'s privileged observation; {fix}")
    return np.array([where[p] for p in partners], np.int64), np.asarray(mirror.obs_sign, np.float32)[columns]


def with_estimator(cfg: TrainConfig, env: gym.vector.VectorEnv) -> TrainConfig:
    """``cfg`` with ``policy.estimator``'s columns and sizes read from ``env`` (``cfg`` as is without an estimator)."""
    est = cfg.policy.estimator
    if est is None:
        return cfg
    columns, sizes = resolve_targets(env, est.targets, cfg.task)
    est = dataclasses.replace(est, columns=columns, sizes=sizes)
    return dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, estimator=est))


def axis_labels(targets: tuple[str, ...], sizes: tuple[int, ...]) -> tuple[str, ...]:
    """One label per estimate column: ``linvel_x``, ``linvel_y``, ``linvel_z`` for a 3-wide group, the name for a
    1-wide one, ``name_0``, ``name_1``... otherwise."""
    out: list[str] = []
    for name, size in zip(targets, sizes):
        if size == 1:
            out.append(name)
        else:
            out += [f"{name}_{_AXES[i] if size == 3 else i}" for i in range(size)]
    return tuple(out)


# --------------------------------------------------------------------------- networks


class EstimatingActor(nn.Module):
    """``mean = head([obs, estimator(obs).detach()])`` on normalized observations ``[B, O]`` -> ``[B, A]``."""

    def __init__(self, obs_dim: int, act_dim: int, cfg: PolicyConfig):
        super().__init__()
        est = cfg.estimator
        if est is None or not est.size:
            raise ValueError("policy.estimator's columns are not filled in: build the learner through the Runner "
                             "(trainers.ppo.estimator.with_estimator reads them from the env)")
        self.estimator = mlp(obs_dim, est.hidden, est.size, cfg.activation, out_gain=0.01, ortho_init=cfg.ortho_init)
        self.head = mlp(obs_dim + est.size, cfg.actor_hidden, act_dim, cfg.activation, out_gain=0.01,
                        ortho_init=cfg.ortho_init)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.mean_and_estimate(obs)[0]

    def mean_reading(self, obs: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """``head([obs, values])`` ``[B, A]``: the mean when the actor reads ``values`` ``[B, K]`` (the targets' true
        values, raw) in place of the estimate (the estimator warm-up)."""
        return self.head(torch.cat([obs, values.to(obs.dtype)], dim=-1))

    def mean_and_estimate(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mean [B, A], estimate [B, K])``; the mean reads the estimate detached (no policy gradient into it)."""
        estimate = self.estimator(obs)
        read = estimate.detach()
        if read.dtype != obs.dtype:  # bf16 autocast: the estimate joins the float32 observation as float32
            read = read.to(obs.dtype)
        return self.head(torch.cat([obs, read], dim=-1)), estimate


class EstimatorActorCritic(ActorCritic):
    """:class:`~trainers.ppo.models.ActorCritic` whose actor is an :class:`EstimatingActor` (the critic, the log-std
    and its ceiling as there). ``target_columns``: the critic-input columns the estimator regresses."""

    def __init__(self, obs_dim: int, critic_obs_dim: int, act_dim: int, cfg: PolicyConfig):
        super().__init__(obs_dim, critic_obs_dim, act_dim, cfg)
        # the MLP actor ActorCritic drew is replaced: the critic and the log-std keep their initial draws
        self.actor = EstimatingActor(obs_dim, act_dim, cfg)
        self.target_columns = tuple(cfg.estimator.columns)
        self.estimator_coef = float(cfg.estimator.coef)  # the supervised loss's weight in the PPO update
        self.estimator_labels = axis_labels(cfg.estimator.targets, cfg.estimator.sizes)  # one per estimate column

    def action_mean(self, obs: torch.Tensor, truth: torch.Tensor | None = None) -> torch.Tensor:
        """The mean ``[B, A]`` of normalized observations ``[B, O]``; with ``truth`` ``[B, K]`` (the targets' raw true
        values) the actor reads it in place of the estimate (``policy.estimator.warmup_iterations``)."""
        return self.actor(obs) if truth is None else self.actor.mean_reading(obs, truth)

    def estimate(self, obs: torch.Tensor) -> torch.Tensor:
        """The estimate ``[B, K]`` of normalized observations ``[B, O]`` (with gradient: the supervised loss's)."""
        return self.actor.estimator(obs)

    def estimator_parameters(self) -> list[nn.Parameter]:
        return list(self.actor.estimator.parameters())


class EstimatingInferencePolicy(InferencePolicy):
    """The deployed policy of an estimator run: ``policy(raw obs) -> action`` as :class:`InferencePolicy`, and
    :meth:`estimate` ``(raw obs) -> estimate`` (the normalizer folded in), which the action already reads."""

    def estimate(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor.estimator(self.normalized(obs))

    def action_and_estimate(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(policy(obs), estimate(obs))`` with the estimator run once on ``obs`` (the action reads that estimate)."""
        mean, estimate = self.actor.mean_and_estimate(self.normalized(obs))
        return self._mirror_averaged(mean, obs), estimate


# --------------------------------------------------------------------------- its error


def rmse_stats(estimate: torch.Tensor, truth: torch.Tensor, mask: torch.Tensor | None,
               labels: tuple[str, ...]) -> dict[str, float]:
    """``{"estimator/rmse_<label>": RMSE}`` per column of ``estimate`` / ``truth`` ``[B, K]`` over rows where
    ``mask`` ``[B]`` is 1 (all rows without one); one device sync."""
    err = (estimate.float() - truth.float()).square()
    if mask is None:
        mse = err.mean(0)
    else:
        mse = (err * mask.unsqueeze(-1)).sum(0) / mask.sum().clamp_min(1.0)
    return {f"estimator/rmse_{label}": value for label, value in zip(labels, mse.sqrt().tolist())}


def warmup_line(targets: tuple[str, ...], iteration: int, warmup: int, held: bool = False) -> str | None:
    """What a run says at the start of iteration ``iteration + 1`` about ``policy.estimator.warmup_iterations``
    (``warmup``): the warm-up line at its first iteration (or a resume inside it), the end line once it is
    over (``held``: a longer critic warm-up still holds the actor), ``None`` otherwise."""
    truth = ", ".join(targets)
    if iteration == warmup and warmup > 0:
        then = "(held on by algo.critic_warmup_iterations)" if held else "and learns"
        return f"[unilab] estimator warm-up {over_after(warmup)}: the actor reads the estimate of {truth} {then}"
    if iteration < warmup:
        span = warmup_span(iteration, warmup)
        return (f"[unilab] estimator warm-up (actor held, it reads the true {truth}) for {span}: the critic and the "
                f"estimator learn (an adaptive learning rate is held)")
    return None


class MeteredActions:
    """An evaluation's ``obs -> actions`` that also measures the estimator's error, from the estimate the action
    read (one estimator pass per step): :func:`run_episodes <trainers.common.evaluation.run_episodes>` calls
    :meth:`observe` with each observation's info before acting on it; :meth:`rmse` is the per-column RMSE over
    every acted-on row. ``policy``: an :class:`EstimatingInferencePolicy` (its :meth:`action_and_estimate
    <EstimatingInferencePolicy.action_and_estimate>`)."""

    def __init__(self, policy: EstimatingInferencePolicy, privileged_columns: np.ndarray,
                 labels: tuple[str, ...], device: str = "cpu"):
        self.policy, self.device = policy, device
        self.columns, self.labels = np.asarray(privileged_columns, np.int64), labels
        self.sq = np.zeros(len(labels))
        self.rows = 0
        self._truth: np.ndarray | None = None  # the targets' true values of the observation acted on next

    def observe(self, obs: np.ndarray, info: dict) -> None:
        """Keep the targets' true values that came with ``obs`` (``info["privileged_obs"]``) for the next action."""
        self._truth = np.asarray(info["privileged_obs"], np.float64)[:, self.columns]

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            action, est = self.policy.action_and_estimate(torch.as_tensor(obs, dtype=torch.float32, device=self.device))
        if self._truth is not None:
            self.sq += np.square(est.cpu().numpy().astype(np.float64) - self._truth).sum(0)
            self.rows += len(self._truth)
            self._truth = None
        return action.cpu().numpy()

    def rmse(self) -> dict[str, float]:
        """``{"estimator/rmse_<label>": RMSE}`` over every observed row (empty before any)."""
        if not self.rows:
            return {}
        return {f"estimator/rmse_{label}": math.sqrt(v / self.rows) for label, v in zip(self.labels, self.sq)}
