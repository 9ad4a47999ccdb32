"""A task's flat observation as SB3's ``Dict`` observation: the state vector and each image group.

UniLab's envs give one flat vector whatever their groups (an image group is ``C * H * W`` columns,
its declared ``ObsGroup.shape`` flattened in C order). SB3's ``MultiInputPolicy`` takes a ``Dict``
observation and gives each key its own feature extractor. :class:`DictObservation` wraps an SB3
``VecEnv`` over such a task and hands SB3 ``{"state": <every column that is no image>,
<image group>: (C, H, W)}``, ``terminal_observation`` included::

    env = DictObservation(make_sb3_env("UniLab/Go1JoystickDepth-v0", 64, normalize=False))
    PPO("MultiInputPolicy", env).learn(1_000_000)

SB3 puts its ``NatureCNN`` on uint8 images of at least 36 x 36 only; a float depth image goes through
its ``Flatten`` extractor unless you pass ``policy_kwargs={"features_extractor_class": ...}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from trainers.sb3.callbacks import find_adapter

STATE = "state"


@dataclass(frozen=True)
class ImageLayout:
    """Where an observation's image groups are: ``images`` name -> (columns, shape), ``state`` the other columns."""

    images: dict[str, tuple[np.ndarray, tuple[int, int, int]]]
    state: np.ndarray


def image_layout(env: Any) -> ImageLayout:
    """The image groups of ``env``'s policy observation (a UniLab vector env, wrapped or not, or an SB3 adapter over one);
    ``ValueError`` when it has none."""
    adapter = find_adapter(env) if isinstance(env, VecEnv) else None
    base = (adapter.venv if adapter is not None else env).unwrapped
    groups = getattr(base, "obs_groups", None) or {}
    declared = getattr(getattr(base, "task", None), "declared_groups", {}) or {}
    size = int(np.prod(base.single_observation_space.shape))
    images = {name: (np.arange(size)[cols], declared[name].shape) for name, cols in groups.items()
              if name in declared and declared[name].shape is not None}
    if not images:
        raise ValueError(f"{type(base).__name__} has no image observation group (a group with a declared shape, e.g. "
                         f"UniLab/Go1JoystickDepth-v0's depth): its flat observation is already SB3's MlpPolicy input")
    taken = np.concatenate([cols for cols, _ in images.values()])
    return ImageLayout(images, np.setdiff1d(np.arange(size), taken))


def observation_dict(obs: np.ndarray, layout: ImageLayout) -> dict[str, np.ndarray]:
    """``(B, O)`` flat observations as ``{"state": (B, S), image: (B, C, H, W)}`` (fresh arrays)."""
    obs = np.asarray(obs)
    out = {STATE: obs[..., layout.state]}
    for name, (cols, shape) in layout.images.items():
        out[name] = obs[..., cols].reshape(*obs.shape[:-1], *shape)
    return out


class DictObservation(VecEnvWrapper):
    """SB3 ``VecEnv`` wrapper: the flat observation as a ``Dict`` of the state and each image (module docstring)."""

    def __init__(self, venv: VecEnv) -> None:
        self.layout = image_layout(venv)
        flat = venv.observation_space
        low, high = np.broadcast_to(flat.low, flat.shape), np.broadcast_to(flat.high, flat.shape)
        space = {STATE: spaces.Box(low[self.layout.state], high[self.layout.state], dtype=flat.dtype)}
        for name, (cols, shape) in self.layout.images.items():
            space[name] = spaces.Box(low[cols].reshape(shape), high[cols].reshape(shape), dtype=flat.dtype)
        super().__init__(venv, observation_space=spaces.Dict(space))

    def reset(self):
        return observation_dict(self.venv.reset(), self.layout)

    def step_wait(self):
        obs, reward, done, infos = self.venv.step_wait()
        for i in np.flatnonzero(done).tolist():
            if "terminal_observation" in infos[i]:
                infos[i] = dict(infos[i])
                infos[i]["terminal_observation"] = observation_dict(infos[i]["terminal_observation"], self.layout)
        return observation_dict(obs, self.layout), reward, done, infos
