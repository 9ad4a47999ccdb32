"""A convolutional encoder for the image groups of a flat observation (a depth camera's frames).

Observations stay flat vectors everywhere (env, wrappers, storage, ONNX, the NumPy runtime): an
image group is ``C * H * W`` consecutive columns, its frame flattened in C order
(:class:`unilab_envs.core.obs_groups.ObsGroup`'s ``shape``). A network that reads such an
observation (:class:`ImageMLP`) cuts each image group's columns out, reshapes them to
``[B, K * C, H, W]`` (``K`` frames: the current one, then the ``obs_history`` frames of the group,
stacked as channels), runs that group's CNN (:class:`ConvEncoder`), and feeds the MLP the
other columns followed by every group's features::

    obs [B, O] -> (rest [B, O - sum K*C*H*W], image_g [B, K*C, H, W] ...) -> [rest, cnn_g(image_g) ...] -> MLP

Scaling: images do not pass through the running observation normalizer's statistics. Their
columns of the normalizer are fixed (:func:`fix_image_columns`: mean 0, variance ``scale**2``,
never updated), so the normalized pixel is ``value / scale`` (depth over the camera's ``far``:
``[near/far, 1]``); the exported policy folds the normalizer in as always, so the ONNX input is
the raw flat observation.

Where the groups are: :func:`with_image_groups` reads them from the env when a run starts
(the task's declared groups with a ``shape``, their slices, the history wrapper's columns) into
``policy.image_groups``, which the run's config records.
"""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from .config import ConfigError, ImageEncoderConfig, ImageGroupConfig, PolicyConfig

__all__ = ["ConvEncoder", "ImageMLP", "fix_image_columns", "image_groups_in", "resolve_image_groups",
           "with_image_groups"]


# --------------------------------------------------------------------------- where the images are


def resolve_image_groups(env: gym.vector.VectorEnv, scale: float | None = None) -> tuple[ImageGroupConfig, ...]:
    """The image groups of ``env``'s critic input (policy observation, then privileged extras), in column order.

    ``scale``: the fixed divisor of every group; ``None``: the task camera's ``far``
    (:class:`~trainers.ppo.config.ConfigError` for an image group of a task without a camera).
    An env without declared groups (a plain Gymnasium env) has none.
    """
    base = env.unwrapped
    task = getattr(base, "task", None)
    declared = getattr(task, "declared_groups", None) or {}
    policy = getattr(base, "obs_groups", None) or {}
    privileged = getattr(base, "privileged_obs_groups", None) or getattr(task, "privileged_obs_groups", None) or {}
    obs_dim = int(env.single_observation_space.shape[-1])
    sources = getattr(env, "history_sources", None)
    sources = np.zeros(0, dtype=np.int64) if sources is None else np.asarray(sources, dtype=np.int64)
    base_width = obs_dim - len(sources)
    found = []
    for offset, slices in ((0, policy), (obs_dim, privileged)):
        for name, cols in slices.items():
            shape = getattr(declared.get(name), "shape", None)
            if shape is None:
                continue
            size = int(np.prod(shape))
            if cols.stop - cols.start != size:
                raise ConfigError(f"image group {name!r}: its slice {cols} holds {cols.stop - cols.start} columns, "
                                  f"its shape {tuple(shape)} {size}")
            starts = [offset + cols.start]
            if offset == 0:  # obs_history frames of a policy group follow the observation
                starts += [base_width + int(j) for j in _history_starts(sources, cols.start, size)]
            found.append(ImageGroupConfig(name, tuple(int(d) for d in shape), tuple(starts),
                                          float(scale) if scale is not None else _camera_far(task, name)))
    return tuple(sorted(found, key=lambda g: g.starts[0]))


def _history_starts(sources: np.ndarray, start: int, size: int) -> list[int]:
    """History-block offsets ``j`` where ``sources[j : j + size]`` is a whole past frame of columns ``start...``."""
    frame = np.arange(start, start + size)
    heads = np.flatnonzero(sources == start)
    out = []
    for j in heads:
        if j + size > len(sources) or not np.array_equal(sources[j:j + size], frame):
            raise ConfigError(f"an obs_history frame of the image group at column {start} is not one contiguous block")
        out.append(int(j))
    return out


def _camera_far(task, name: str) -> float:
    far = getattr(getattr(getattr(task, "camera", None), "config", None), "far", None)
    if far is None:
        raise ConfigError(f"image group {name!r}: the task has no camera whose range (far) could scale it; "
                          "set policy.image_encoder.scale")
    return float(far)


def with_image_groups(cfg, env: gym.vector.VectorEnv):
    """``cfg`` (a config with ``policy``) with ``policy.image_groups`` read from ``env``; ``cfg`` itself when
    ``policy.image_encoder`` is null or nothing changes. A config that already names other groups (a
    checkpoint's, for another camera) is a :class:`~trainers.ppo.config.ConfigError`."""
    if cfg.policy.image_encoder is None:
        return cfg
    found = resolve_image_groups(env, cfg.policy.image_encoder.scale)
    if found == cfg.policy.image_groups:
        return cfg
    if cfg.policy.image_groups:
        raise ConfigError(f"policy.image_groups {_show(cfg.policy.image_groups)} differ from the env's "
                          f"{_show(found)}: the network was built for another camera or history")
    return dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, image_groups=found))


def _show(groups) -> str:
    return "[" + ", ".join(f"{g.name} {list(g.shape)} at {list(g.starts)} / {g.scale:g}" for g in groups) + "]"


def image_groups_in(cfg: PolicyConfig, width: int) -> tuple[ImageGroupConfig, ...]:
    """The image groups a network reading the first ``width`` columns sees (none without an encoder)."""
    if cfg.image_encoder is None:
        return ()
    groups = tuple(g for g in cfg.image_groups if max(g.starts) + g.size <= width)
    partial = [g.name for g in cfg.image_groups if g not in groups and min(g.starts) < width]
    if partial:
        raise ConfigError(f"image groups {partial} straddle column {width} of the network's input")
    return groups


def fix_image_columns(cfg: PolicyConfig, *normalizers) -> None:
    """Fix each normalizer's image columns to ``value / scale`` (never updated); ``None`` entries are skipped.

    A normalizer of width ``D`` fixes the groups within its first ``D`` columns (the policy's and the
    critic's normalizers share the policy observation's columns)."""
    for norm in normalizers:
        if norm is None:
            continue
        groups = image_groups_in(cfg, norm.mean.numel())
        if not groups:
            continue
        columns = torch.cat([torch.arange(s, s + g.size) for g in groups for s in g.starts])
        scales = torch.cat([torch.full((g.size,), g.scale, dtype=torch.float64) for g in groups for _ in g.starts])
        norm.fix_columns(columns, scales)


# --------------------------------------------------------------------------- networks


class ConvEncoder(nn.Module):
    """``[B, C, H, W] -> [B, features]``: strided convolutions, flatten, a linear layer (module docstring)."""

    def __init__(self, in_shape: tuple[int, int, int], cfg: ImageEncoderConfig, activation: type[nn.Module]):
        super().__init__()
        c, h, w = in_shape
        layers: list[nn.Module] = []
        for out, k, s in zip(cfg.channels, cfg.kernel, cfg.stride):
            layers += [nn.Conv2d(c, out, k, s, padding=k // 2), activation()]
            c, h, w = out, _conv_out(h, k, s), _conv_out(w, k, s)  # padding k // 2: never below 1 x 1
        self.out_shape = (c, h, w)
        self.features = int(cfg.features)
        self.convs = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, self.features), activation())

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.head(self.convs(image))


def _conv_out(n: int, k: int, s: int) -> int:
    return math.floor((n + 2 * (k // 2) - k) / s) + 1


def _rest_ranges(width: int, groups: tuple[ImageGroupConfig, ...]) -> list[tuple[int, int]]:
    """The ``[a, b)`` column ranges of ``[0, width)`` that no image frame covers."""
    taken = sorted((s, s + g.size) for g in groups for s in g.starts)
    out, at = [], 0
    for a, b in taken:
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < width:
        out.append((at, width))
    return out


class ImageMLP(nn.Module):
    """A network on a flat observation whose image groups go through CNNs first (module docstring).

    ``head(inp, out)`` builds the MLP on the concatenated features (``inp`` wide): the caller's
    :func:`trainers.ppo.models.mlp` with its sizes and init. Input ``[..., width]`` (normalized,
    image columns already divided by their scale), output ``[..., out]``.
    """

    def __init__(self, width: int, groups: tuple[ImageGroupConfig, ...], cfg: ImageEncoderConfig,
                 activation: type[nn.Module], head):
        super().__init__()
        self.width = int(width)
        self.rest = _rest_ranges(width, groups)
        self.frames = [(list(g.starts), g.size, (len(g.starts) * g.shape[0], g.shape[1], g.shape[2])) for g in groups]
        self.encoders = nn.ModuleDict({g.name: ConvEncoder(shape, cfg, activation)
                                       for g, (_, _, shape) in zip(groups, self.frames)})
        rest = sum(b - a for a, b in self.rest)
        self.mlp = head(rest + cfg.features * len(groups))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        lead = obs.shape[:-1]
        x = obs.reshape(-1, self.width)
        parts = [x[:, a:b] for a, b in self.rest]
        for encoder, (starts, size, shape) in zip(self.encoders.values(), self.frames):
            frames = [x[:, s:s + size] for s in starts]
            image = (frames[0] if len(frames) == 1 else torch.cat(frames, dim=1)).reshape(-1, *shape)
            parts.append(encoder(image))
        out = self.mlp(torch.cat(parts, dim=1))
        return out.reshape(*lead, out.shape[-1])
