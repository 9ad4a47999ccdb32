"""Mirror augmentation of replay minibatches (``algo.symmetry: augment``).

A legged robot that is its own mirror image across its sagittal plane has a mirror-symmetric
task: the mirror image ``m(s, a, r, s')`` of a transition is a transition the robot could have
made, with the same reward and the same end. With ``augment`` every sampled minibatch is followed
by its mirror image (observation, action, bootstrap observation and the critic's privileged
extras mirrored; n-step return and discount unchanged), so the critic and the actor update on
twice ``algo.batch_size`` transitions, half of them never collected. The maps are the task's
(:class:`~unilab_envs.locomotion.mirror.MirrorMap`: ``task.mirror`` for the observation and
actions, ``task.privileged_mirror`` for its privileged observation); a sim-to-real profile's
``privileged_critic: [clean_obs]`` mirrors as the observation. The learner normalizes raw
observations inside its update, so the raw batch is mirrored and nothing is mapped back.

PPO's counterpart is a loss, ``algo.symmetry_coef`` (:mod:`trainers.ppo.symmetry`); the replay
buffer lets the off-policy learner use the mirrored data itself.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from trainers.offpolicy.config import SYMMETRY_MODES
from trainers.offpolicy.replay import Batch
from unilab_envs.config import ConfigError


class BatchMirror:
    """The mirror image of :class:`~trainers.offpolicy.replay.Batch`es on ``device``.

    ``obs``, ``action``: ``(perm, sign)`` pairs (``x' = x[..., perm] * sign``); ``critic``: the pair over
    the critic's privileged extras, or ``None`` when the critic has none.
    """

    def __init__(self, obs: tuple, action: tuple, critic: tuple | None = None,
                 device: torch.device | str = "cpu") -> None:
        def pair(p):
            return (torch.as_tensor(np.asarray(p[0]), dtype=torch.long, device=device),
                    torch.as_tensor(np.asarray(p[1]), dtype=torch.float32, device=device))

        self.obs, self.action = pair(obs), pair(action)
        self.critic = None if critic is None else pair(critic)

    @staticmethod
    def _apply(x: torch.Tensor | None, pair: tuple | None) -> torch.Tensor | None:
        if x is None or pair is None:
            return x
        perm, sign = pair
        return x[..., perm] * sign

    def mirror(self, batch: Batch) -> Batch:
        """``batch``'s mirror image: observations, actions and privileged extras mirrored; returns and discounts kept."""
        if batch.critic_obs is not None and self.critic is None:
            raise ValueError("the batch has privileged critic observations but this mirror has no map for them")
        return Batch(obs=self._apply(batch.obs, self.obs), action=self._apply(batch.action, self.action),
                     reward=batch.reward, next_obs=self._apply(batch.next_obs, self.obs), discount=batch.discount,
                     critic_obs=self._apply(batch.critic_obs, self.critic),
                     next_critic_obs=self._apply(batch.next_critic_obs, self.critic))

    def observations(self, obs: torch.Tensor, critic_obs: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The mirror images of observation rows and of their privileged extras (``None`` stays ``None``)."""
        return self._apply(obs, self.obs), self._apply(critic_obs, self.critic)

    def augment(self, batch: Batch) -> Batch:
        """``batch`` followed by its mirror image (twice the rows, the originals first)."""
        mirrored = self.mirror(batch)
        return Batch(**{f.name: None if getattr(batch, f.name) is None else
                        torch.cat([getattr(batch, f.name), getattr(mirrored, f.name)])
                        for f in dataclasses.fields(Batch)})


def _fail(task: str, why: str) -> ConfigError:
    return ConfigError(f"algo.symmetry: augment: {task} {why}; set algo.symmetry: none")


def critic_mirror(env, task_id: str, obs_map, critic_extra: int) -> tuple[np.ndarray, np.ndarray]:
    """``(perm, sign)`` over the critic's ``critic_extra`` privileged columns: the task's privileged observation
    (``task.privileged_mirror``), then a sim-to-real profile's ``clean_obs`` (mirrored by ``obs_map``, the task's
    map of its own observation); a :class:`~unilab_envs.config.ConfigError` for columns without a mirror image
    (the profile's perturbations)."""
    base = env.unwrapped
    space = getattr(base, "privileged_observation_space", None)
    task_size = int(space.shape[-1]) if space is not None else 0
    groups = dict(_privileged_critic_groups(env))
    if task_size + sum(s.stop - s.start for s in groups.values()) != critic_extra:
        raise _fail(task_id, f"has {critic_extra} privileged critic columns, of which {task_size} are the task's "
                    f"and {sorted(groups)} a profile's: the rest have no mirror map")
    perm, sign = np.arange(critic_extra), np.ones(critic_extra)
    if task_size:
        try:
            task_map = base.task.privileged_mirror
        except (AttributeError, ValueError) as e:
            raise _fail(task_id, f"has no mirror map of its privileged observation ({e}); or set "
                        f"nets.asymmetric_critic: false") from None
        perm[:task_size], sign[:task_size] = task_map.obs_perm, task_map.obs_sign
    if "clean_obs" in groups:
        cols = groups.pop("clean_obs")
        perm[cols], sign[cols] = cols.start + np.asarray(obs_map.obs_perm), obs_map.obs_sign
    if groups:
        raise _fail(task_id, f"cannot mirror the profile's privileged_critic perturbations {sorted(groups)}; use "
                    f"privileged_critic: [clean_obs] in the profile, or nets.asymmetric_critic: false")
    return perm, sign


def _privileged_critic_groups(env) -> dict[str, slice]:
    """The columns a sim-to-real stack's ``privileged_critic`` adds (``Sim2Real.critic.groups``), else none."""
    from wrappers._base import find_in_layers
    from wrappers.privileged import PrivilegedCritic

    critic = find_in_layers(env, "critic", lambda value: isinstance(value, PrivilegedCritic))
    return critic.groups if critic is not None else {}


def _box_is_symmetric(low, high, perm, sign) -> bool:
    """Whether ``u -> u[perm] * sign`` maps the box ``[low, high]`` onto itself by a map that is the same on the
    learner's ``[-1, 1]`` actions (equal half-widths of partners, centres mirrored)."""
    low, high = np.asarray(low, np.float64).reshape(-1), np.asarray(high, np.float64).reshape(-1)
    centre, half = (low + high) / 2, (high - low) / 2
    return bool(np.allclose(half[perm], half) and np.allclose(centre[perm] * sign, centre))


def env_batch_mirror(env, task_id: str, symmetry: str, critic_extra: int, device: torch.device) -> BatchMirror | None:
    """The :class:`BatchMirror` of ``env``'s task for ``algo.symmetry`` (``None`` when ``none``); a one-line
    :class:`~unilab_envs.config.ConfigError` for an unknown value or a task without a mirror map."""
    if symmetry not in SYMMETRY_MODES:
        raise ConfigError(f"algo.symmetry must be one of {SYMMETRY_MODES}, got {symmetry!r}")
    if symmetry == "none":
        return None
    try:
        task_map = env.unwrapped.task.mirror
    except (AttributeError, ValueError) as e:
        raise _fail(task_id, f"has no left/right mirror map ({e})") from None
    extend = getattr(env, "extend_mirror", None)  # an observation history: its columns mirror as their groups
    obs_map = task_map if extend is None else extend(task_map)
    space = env.single_action_space
    if not _box_is_symmetric(space.low, space.high, obs_map.act_perm, obs_map.act_sign):
        raise _fail(task_id, "has an action box that is not its own mirror image (the learner's [-1, 1] actions "
                    "would not mirror as the env's)")
    critic = critic_mirror(env, task_id, task_map, critic_extra) if critic_extra else None
    return BatchMirror((obs_map.obs_perm, obs_map.obs_sign), (obs_map.act_perm, obs_map.act_sign), critic, device)
