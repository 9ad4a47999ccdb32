"""Deterministic evaluation of a checkpoint, with an optional video of env 0, and ONNX export.

The evaluation itself (episode selection, video, metrics) is :mod:`trainers.common.evaluation`,
shared with SB3 runs; ``EvalResult`` is re-exported here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from ..common.checkpoint import CheckpointError, load_checkpoint
from ..common.envs import AS_TRAINED, Sim2RealSpec, resolve_sim2real
from ..common.evaluation import EvalResult, run_episodes, video_fps
from ..common.onnx_export import NORMALIZED_INPUT, ClipToBox, bounds_text, export_policy
from ..common.video import VideoRecorder
from .config import TrainConfig, from_dict
from .envs import env_dims, make_vec_env
from .models import InferencePolicy
from .runner import CKPT_FORMAT, CKPT_VERSION, build_learner, check_compatible, env_mirror

__all__ = ["EvalResult", "evaluate", "export_onnx", "load_policy"]


def load_policy(checkpoint: str | Path, device: str = "cpu") -> tuple[InferencePolicy, TrainConfig, dict]:
    """The deterministic policy (normalizer folded in), the run's config and the checkpoint."""
    ckpt = load_checkpoint(checkpoint, CKPT_FORMAT, CKPT_VERSION, required=("config", "dims", "algo"),
                           map_location=device)
    cfg = from_dict(TrainConfig, ckpt["config"])
    dims = _Dims(**ckpt["dims"])
    algo = build_learner(dims, cfg, torch.device(device))
    try:
        algo.policy.load_state_dict(ckpt["algo"]["policy"])
        algo.obs_normalizer.load_state_dict(ckpt["algo"]["obs_normalizer"])
    except (RuntimeError, KeyError) as e:
        raise CheckpointError(f"checkpoint {checkpoint} has inconsistent weights: {str(e).splitlines()[0]}") from None
    if algo.policy.hidden_size:  # policy(obs, h) -> (action, h') (trainers.ppo.recurrent)
        from .recurrent import RecurrentInferencePolicy
        return RecurrentInferencePolicy(algo.obs_normalizer, algo.policy.actor).eval(), cfg, ckpt
    mirror = _mirror(cfg) if cfg.policy.mirror_average else None
    if cfg.policy.estimator is not None:  # policy(obs) -> action, policy.estimate(obs) (trainers.ppo.estimator)
        from .estimator import EstimatingInferencePolicy
        return EstimatingInferencePolicy(algo.obs_normalizer, algo.policy.actor, mirror).eval(), cfg, ckpt
    return InferencePolicy(algo.obs_normalizer, algo.policy.actor, mirror).eval(), cfg, ckpt


def _mirror(cfg: TrainConfig):
    """The mirror map of the run's task and observation history (``policy.mirror_average``)."""
    env = make_vec_env(cfg.task, 1, cfg.env_kwargs, cfg.vectorization_mode, obs_history=cfg.obs_history)
    try:
        return env_mirror(env, cfg.task, "policy.mirror_average", "set it to false")
    finally:
        env.close()


@dataclasses.dataclass(frozen=True)
class _Dims:
    obs: int
    act: int
    privileged: int | None


def evaluate(checkpoint: str | Path, episodes: int = 10, num_envs: int | None = None, task: str | None = None,
             video: str | Path | None = None, seed: int = 12345, device: str = "cpu",
             max_video_frames: int = 1000, env_kwargs: dict | None = None, skip_first: bool = True,
             sim2real: Sim2RealSpec = AS_TRAINED, progress: bool = True) -> EvalResult:
    """Run the deterministic policy for at least ``episodes`` episodes; optionally film env 0.

    Each env contributes ``ceil(episodes / num_envs)`` whole episodes (so the count can
    exceed ``episodes``), which keeps short, failed episodes from being over-counted
    (:func:`trainers.common.evaluation.run_episodes`, which SB3 runs' evaluation shares).

    The video (``.mp4`` needs ``imageio-ffmpeg``; otherwise, or for ``.gif``, a GIF is
    written) shows one whole episode of env 0 through ``render_mode="rgb_array"``.
    ``skip_first``: leave out each env's first episode, which may be partial when the
    env spreads episode start times at reset. ``sim2real``: the run's sim-to-real
    wrappers (:data:`~trainers.common.envs.AS_TRAINED`), ``None`` for the bare env, or
    another profile; the run's ``obs_history`` is the policy's and applies whatever
    ``sim2real`` is. ``progress``: a progress bar on stderr while filming.
    """
    policy, cfg, ckpt = load_policy(checkpoint, device)
    task = task or cfg.task
    num_envs = num_envs or min(cfg.num_envs, max(episodes, 1))
    env = make_vec_env(task, num_envs, {**cfg.env_kwargs, **(env_kwargs or {})}, cfg.vectorization_mode,
                       render_mode="rgb_array" if video is not None else None,
                       sim2real=resolve_sim2real(sim2real, cfg.sim2real), obs_history=cfg.obs_history)
    try:
        check_compatible(ckpt, env_dims(env), checkpoint, critic=False)
        recorder = VideoRecorder(video, video_fps(env), max_video_frames, progress) if video is not None else None
        meter = _estimator_meter(policy, cfg, env, task, device)
        result = run_episodes(env, meter or _action_fn(policy, device, env.num_envs), episodes, seed, recorder,
                              skip_first)
        if meter is not None:
            result.estimator_rmse = meter.rmse()
        return result
    finally:
        env.close()


def _estimator_meter(policy, cfg: TrainConfig, env, task: str, device: str):
    """``policy``'s actions that also measure its state estimator's error against ``env``'s privileged observation
    (:class:`~trainers.ppo.estimator.MeteredActions`); ``None`` without an estimator, or where the evaluated
    env's privileged observation lacks the targets (another task or ``critic_only_groups``: nothing to compare)."""
    est = cfg.policy.estimator
    if est is None:
        return None
    from .config import ConfigError
    from .estimator import MeteredActions, axis_labels, resolve_targets

    try:
        columns, sizes = resolve_targets(env, est.targets, task)
    except ConfigError:
        return None
    obs_dim = int(env.single_observation_space.shape[-1])
    return MeteredActions(policy, np.asarray(columns) - obs_dim, axis_labels(est.targets, sizes), device)


def _action_fn(policy: InferencePolicy, device: str, num_envs: int = 1):
    """``obs -> actions`` (NumPy) of the deterministic ``policy`` on ``device``; a recurrent one keeps each of
    the ``num_envs`` envs' state and zeroes it where an episode starts (``reset_rows``, called by the episodes' loop)."""
    if getattr(policy, "hidden_size", 0):
        from .recurrent import StatefulActions
        return StatefulActions(policy, num_envs, device)

    def act(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return policy(torch.as_tensor(obs, dtype=torch.float32, device=device)).cpu().numpy()
    return act


def export_onnx(checkpoint: str | Path, path: str | Path | None = None, opset: int = 17) -> Path:
    """Write the deterministic policy, observation normalizer folded in, as ONNX.

    Input ``obs`` ``[batch, obs_dim]`` float32 (raw observations, with the run's
    ``obs_history`` frames after them when it has one), output ``actions``
    ``[batch, act_dim]``: the Gaussian mean clipped to the action space bounds, i.e. the
    action the env executes (it clips the same way). ``describe_onnx(path)`` reads the
    names, shapes and this meaning back from the file.
    """
    policy, cfg, ckpt = load_policy(checkpoint, "cpu")
    run_dir = Path(checkpoint) if Path(checkpoint).is_dir() else Path(checkpoint).parent
    path = Path(path) if path else run_dir / "policy.onnx"
    env = make_vec_env(cfg.task, 1, cfg.env_kwargs, cfg.vectorization_mode)  # for the action bounds only
    try:
        space = env.single_action_space
        low, high = space.low.astype(np.float32), space.high.astype(np.float32)
    finally:
        env.close()
    mean = ("the average of the Gaussian policy's mean and the mirror image of its mean on the mirrored "
            "observation (policy.mirror_average)" if cfg.policy.mirror_average else "the Gaussian policy's mean")
    meaning = f"deterministic action: {mean}, clipped to the action space {bounds_text(low, high)} as the env clips it"
    inputs = NORMALIZED_INPUT
    if cfg.obs_history is not None:
        h = cfg.obs_history
        inputs += (f", then the last {h.length - 1} frames of {', '.join(h.groups)} (obs_history; the deploy spec's "
                   f"history section lays them out)")
    if cfg.policy.estimator is not None:  # obs -> actions, estimate (trainers.ppo.estimator)
        from ..common.onnx_export import ClipToBoxWithEstimate
        est = cfg.policy.estimator
        what = ", ".join(f"{name} ({size} columns)" for name, size in zip(est.targets, est.sizes))
        return export_policy(ClipToBoxWithEstimate(policy, low, high), ckpt["dims"]["obs"], path, meaning,
                             action_low=low, action_high=high, opset=opset, input_meaning=inputs,
                             estimate_size=est.size,
                             estimate_meaning=f"the learned state estimator's estimate of {what}, in their units: "
                                              "the action already reads it (policy.estimator); for logging")
    if getattr(policy, "hidden_size", 0):  # obs, h_in -> actions, h_out (trainers.ppo.recurrent)
        from ..common.onnx_export import ClipToBoxRecurrent
        return export_policy(ClipToBoxRecurrent(policy, low, high), ckpt["dims"]["obs"], path, meaning,
                             action_low=low, action_high=high, opset=opset, input_meaning=inputs,
                             state_size=policy.hidden_size)
    return export_policy(ClipToBox(policy, low, high), ckpt["dims"]["obs"], path, meaning,
                         action_low=low, action_high=high, opset=opset, input_meaning=inputs)
