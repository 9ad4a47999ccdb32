"""ONNX export of an SB3 run (``unilab export`` on a folder with ``model.zip``).

The graph is what ``model.predict(vec_normalize.normalize_obs(obs), deterministic=True)``
computes: the ``VecNormalize`` observation statistics folded in (``(obs - mean) /
sqrt(var + eps)`` clipped to ``clip_obs``), the deterministic actor (PPO: the Gaussian
mean; SAC: the tanh-squashed mean; TD3: the actor), rescaled from [-1, 1] when the
policy squashes its output, and clipped to the action space as the env clips.

    from trainers.sb3.export import export_sb3_onnx
    export_sb3_onnx("runs/ur5_sb3")            # runs/ur5_sb3/policy.onnx
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch
import yaml
from gymnasium import spaces
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.policies import BasePolicy
from torch import nn

from trainers.common.onnx_export import NORMALIZED_INPUT, ClipToBox, bounds_text, export_policy
from trainers.common.runs import RunError, sb3_model

__all__ = ["ExportError", "export_sb3_onnx"]

_CLASSES = {"sb3-ppo": PPO, "sb3-sac": SAC, "sb3-td3": TD3}
_ACTOR = {"sb3-ppo": "the Gaussian policy's mean (PPO actor mean)", "sb3-sac": "the SAC actor's tanh-squashed mean",
          "sb3-td3": "the TD3 actor's output"}


class ExportError(ValueError):
    """This run cannot be exported to ONNX; the message says why."""


class _DeterministicSB3(nn.Module):
    """Raw observation -> VecNormalize (frozen) -> SB3 deterministic action, rescaled if squashed."""

    def __init__(self, policy: BasePolicy, obs_rms=None, epsilon: float = 1e-8, clip_obs: float = 10.0) -> None:
        super().__init__()
        self.policy = policy
        self.normalize = obs_rms is not None
        if self.normalize:
            self.register_buffer("mean", torch.as_tensor(np.asarray(obs_rms.mean, np.float32)))
            self.register_buffer("inv_std", torch.as_tensor((1.0 / np.sqrt(obs_rms.var + epsilon)).astype(np.float32)))
            self.clip_obs = float(clip_obs)
        space = policy.action_space
        self.squash = bool(policy.squash_output)
        self.register_buffer("low", torch.as_tensor(space.low.astype(np.float32)))
        self.register_buffer("high", torch.as_tensor(space.high.astype(np.float32)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.normalize:
            obs = torch.clamp((obs - self.mean) * self.inv_std, -self.clip_obs, self.clip_obs)
        actions = self.policy._predict(obs, deterministic=True)
        if self.squash:  # BasePolicy.unscale_action: [-1, 1] -> [low, high]
            actions = self.low + 0.5 * (actions + 1.0) * (self.high - self.low)
        return actions


def _obs_statistics(model_path: Path):
    """The frozen ``VecNormalize`` of the run (``None`` when it did not normalize observations)."""
    stats = model_path.with_name(model_path.stem + "_vecnormalize.pkl")
    if not stats.exists():
        return None
    with open(stats, "rb") as f:
        norm = pickle.load(f)  # noqa: S301 - the run's own file, as VecNormalize.load reads it
    if not norm.norm_obs:
        return None
    if isinstance(norm.obs_rms, dict):
        raise ExportError("this run normalizes a Dict observation; ONNX export supports flat Box observations")
    return norm


def export_sb3_onnx(run: str | Path, path: str | Path | None = None, opset: int = 17) -> Path:
    """Write the deterministic policy of the SB3 run ``run`` (folder or model zip) as ONNX.

    Input ``obs`` float32 ``[batch, obs_dim]`` (raw observations), output ``actions``
    float32 ``[batch, act_dim]`` (the action ``predict(..., deterministic=True)`` returns
    on the normalized observation, within the action space). Raises
    :class:`ExportError` for a run that cannot be exported (image or Dict observations,
    a non-Box action space), saying which and why.
    """
    model_path = sb3_model(Path(run))
    if model_path is None:
        raise RunError(f"{run} is not an SB3 run (no model.zip beside a config.yaml naming an sb3-* algo)")
    cfg = yaml.safe_load((model_path.parent / "config.yaml").read_text())
    algo = str(cfg["algo"])
    if algo not in _CLASSES:
        raise ExportError(f"cannot export {algo} runs: ONNX export supports {', '.join(_CLASSES)}")
    model = _CLASSES[algo].load(model_path, device="cpu")
    obs_space, act_space = model.observation_space, model.action_space
    if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
        raise ExportError(f"cannot export this {algo} run: its observation space is {obs_space}; ONNX export "
                          f"supports flat Box observations (policy MlpPolicy), not images or Dict observations")
    if not isinstance(act_space, spaces.Box):
        raise ExportError(f"cannot export this {algo} run: its action space is {act_space}; ONNX export "
                          f"supports continuous Box actions")
    norm = _obs_statistics(model_path)
    module = _DeterministicSB3(model.policy.eval(), norm.obs_rms if norm else None,
                               norm.epsilon if norm else 1e-8, norm.clip_obs if norm else 10.0)
    low, high = act_space.low.astype(np.float32), act_space.high.astype(np.float32)
    how = "rescaled from [-1, 1] to" if model.policy.squash_output else "clipped to"
    meaning = (f"deterministic action: {_ACTOR[algo]}, {how} the action space {bounds_text(low, high)} "
               f"(what model.predict(obs, deterministic=True) returns)")
    inputs = NORMALIZED_INPUT if norm else "raw observation (the run did not normalize observations)"
    path = Path(path) if path else model_path.parent / "policy.onnx"
    try:
        return export_policy(ClipToBox(module, low, high), int(obs_space.shape[0]), path, meaning,
                             action_low=low, action_high=high, opset=opset, input_meaning=inputs)
    except (RuntimeError, TypeError) as e:  # a custom policy torch cannot trace
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ExportError(f"cannot trace the {algo} policy ({model.policy.__class__.__name__}) to ONNX: {first}") from None
