"""Evaluation and ONNX export of an off-policy run (``unilab train --algo sac|td3``).

The deterministic actor (SAC: ``tanh`` of the Gaussian's mean; TD3: the actor) with the
observation normalizer folded in and its ``[-1, 1]`` output mapped to the env's action box:
:func:`load_actor`. ``unilab eval`` runs it through the shared frame
(:func:`trainers.common.evaluation.run_episodes`, as PPO's and SB3's runs), ``unilab export``
writes it as ONNX (:func:`trainers.common.onnx_export.export_policy`); the deploy spec and ``unilab
play`` then treat the run as any other.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch
from torch import nn

from trainers.common.checkpoint import CheckpointError, load_checkpoint
from trainers.common.envs import AS_TRAINED, Sim2RealSpec, make_vec_env, resolve_sim2real
from trainers.common.evaluation import EvalResult, run_episodes, video_fps
from trainers.common.onnx_export import bounds_text, export_policy
from trainers.common.video import VideoRecorder
from trainers.offpolicy.action_box import to_box
from trainers.offpolicy.config import OffPolicyConfig
from trainers.offpolicy.learner import OffPolicyLearner
from trainers.offpolicy.runner import CKPT_FORMAT, CKPT_VERSION
from unilab_envs.config import from_dict


class DeterministicActor(nn.Module):
    """Raw observation -> the action the env executes: normalize, the actor's ``[-1, 1]`` action, to the box."""

    def __init__(self, learner: OffPolicyLearner, obs_dim: int, low: np.ndarray, high: np.ndarray) -> None:
        super().__init__()
        self.obs_norm, self.actor, self.obs_dim = learner.obs_norm, learner.actor, obs_dim
        self.register_buffer("low", torch.as_tensor(np.asarray(low, np.float32)))
        self.register_buffer("high", torch.as_tensor(np.asarray(high, np.float32)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return to_box(self.actor(self.obs_norm(obs)), self.low, self.high)


def load_actor(checkpoint: str | Path, device: str = "cpu") -> tuple[DeterministicActor, OffPolicyConfig]:
    """The run's deterministic actor (eval mode) and its config."""
    path = Path(checkpoint)
    path = path / "checkpoint.pt" if path.is_dir() else path
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "learner"), map_location=device)
    cfg = from_dict(OffPolicyConfig, ckpt["config"])
    dims = ckpt["dims"]
    acting = dataclasses.replace(cfg.algo, bf16_cpu=False)  # acting is float32: no bf16 check (or warning) here
    learner = OffPolicyLearner(int(dims["obs"]), int(dims["critic_extra"]), int(dims["action"]), acting, cfg.nets,
                               torch.device(device))
    try:
        learner.load_state_dict(ckpt["learner"])
    except RuntimeError as e:
        raise CheckpointError(f"checkpoint {path} has inconsistent weights: {str(e).splitlines()[0]}") from None
    return DeterministicActor(learner, int(dims["obs"]), dims["low"].numpy(), dims["high"].numpy()).eval(), cfg


def evaluate_offpolicy(run: str | Path, episodes: int = 10, num_envs: int | None = None, task: str | None = None,
                       video: str | Path | None = None, seed: int = 12345, device: str = "cpu",
                       sim2real: Sim2RealSpec = AS_TRAINED, progress: bool = True, max_video_frames: int = 1000,
                       env_kwargs: dict | None = None, skip_first: bool = True) -> EvalResult:
    """The deterministic actor of ``run`` on its task (the run's keywords and, ``AS_TRAINED``, its profile);
    ``env_kwargs`` on top of the run's, ``skip_first`` as :func:`trainers.common.evaluation.run_episodes`."""
    actor, cfg = load_actor(run, device)
    num_envs = num_envs or max(1, min(cfg.num_envs, episodes))
    kwargs = {**cfg.env_kwargs, **(env_kwargs or {})}
    env = make_vec_env(task or cfg.task, num_envs, kwargs, render_mode="rgb_array" if video is not None else None,
                       sim2real=resolve_sim2real(sim2real, cfg.sim2real))
    try:
        recorder = VideoRecorder(video, video_fps(env), max_video_frames, progress) if video is not None else None

        @torch.no_grad()
        def act(obs: np.ndarray) -> np.ndarray:
            return actor(torch.as_tensor(np.asarray(obs, np.float32), device=device)).cpu().numpy()

        return run_episodes(env, act, episodes, seed, recorder, skip_first)
    finally:
        env.close()


def export_offpolicy_onnx(run: str | Path, out: str | Path | None = None, opset: int = 17) -> Path:
    """``policy.onnx`` of the run's deterministic actor (beside its checkpoint unless ``out``)."""
    actor, cfg = load_actor(run)
    folder = Path(run) if Path(run).is_dir() else Path(run).parent
    low, high = actor.low.numpy(), actor.high.numpy()
    meaning = (f"{cfg.algo.kind.upper()} deterministic action of {cfg.task}: the actor's tanh output mapped to the "
               f"action space, {bounds_text(low, high)}")
    return export_policy(actor, actor.obs_dim, out or folder / "policy.onnx", meaning, action_low=low, action_high=high,
                         opset=opset)
