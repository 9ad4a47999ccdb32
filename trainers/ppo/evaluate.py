"""Deterministic evaluation of a checkpoint, with an optional video of env 0, and ONNX export."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from ..common.checkpoint import CheckpointError, load_checkpoint
from ..common.envs import AS_TRAINED, Sim2RealSpec, resolve_sim2real
from ..common.onnx_export import ClipToBox, bounds_text, export_policy
from ..common.video import VideoRecorder
from .collector import autoreset_mode
from .config import TrainConfig, from_dict
from .envs import env_dims, make_vec_env
from .joystick_eval import tracking_share
from .models import InferencePolicy
from .runner import CKPT_FORMAT, CKPT_VERSION, build_learner, check_compatible


@dataclasses.dataclass
class EvalResult:
    episodes: int
    mean_return: float
    std_return: float
    mean_length: float
    success_rate: float | None
    fall_rate: float           # fraction of episodes that ended terminated (not truncated)
    video: Path | None
    reward_terms: dict = dataclasses.field(default_factory=dict)  # per-step means over the counted episodes
    tracking_share: float | None = None  # joystick tasks: planar (vx, vy) tracking reward / its maximum

    def summary(self) -> str:
        """One line: return, length, how episodes ended, tracking and success, the video.

        How episodes ended depends on whether the task reports success: where it does (reach,
        grasp), a success may end the episode, so the share that ended before the time limit is
        "ended early", printed beside the success rate; elsewhere a termination is a failure
        (a fall, for the joystick tasks) and is printed as "terminated".
        """
        s = (f"episodes {self.episodes}  return {self.mean_return:.3f} +- {self.std_return:.3f}  "
             f"length {self.mean_length:.1f}")
        if self.success_rate is None:
            s += f"  terminated {self.fall_rate:.1%}"
        if self.tracking_share is not None:
            s += f"  planar velocity tracking {self.tracking_share:.1%} of max"
        if self.success_rate is not None:
            s += f"  success {self.success_rate:.1%}  ended early {self.fall_rate:.1%} (a success can end an episode)"
        if self.video is not None:
            s += f"  video {self.video}"
        return s


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
    policy = InferencePolicy(algo.obs_normalizer, algo.policy.actor).eval()
    return policy, cfg, ckpt


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
    exceed ``episodes``), which keeps short, failed episodes from being over-counted.

    The video (``.mp4`` needs ``imageio-ffmpeg``; otherwise, or for ``.gif``, a GIF is
    written) shows one whole episode of env 0 through ``render_mode="rgb_array"``.
    ``skip_first``: leave out each env's first episode, which may be partial when the
    env spreads episode start times at reset. ``sim2real``: the run's sim-to-real
    wrappers (:data:`~trainers.common.envs.AS_TRAINED`), ``None`` for the bare env, or
    another profile. ``progress``: a progress bar on stderr while filming.
    """
    policy, cfg, ckpt = load_policy(checkpoint, device)
    task = task or cfg.task
    num_envs = num_envs or min(cfg.num_envs, max(episodes, 1))
    env = make_vec_env(task, num_envs, {**cfg.env_kwargs, **(env_kwargs or {})}, cfg.vectorization_mode,
                       render_mode="rgb_array" if video is not None else None,
                       sim2real=resolve_sim2real(sim2real, cfg.sim2real))
    recorder = VideoRecorder(video, _fps(env), max_video_frames, progress) if video is not None else None
    try:
        check_compatible(ckpt, env_dims(env), checkpoint, critic=False)
        space = env.single_action_space
        low, high = space.low.astype(np.float32), space.high.astype(np.float32)
        obs, info = env.reset(seed=seed)
        ret = np.zeros(num_envs)
        length = np.zeros(num_envs, np.int64)
        # envs may spread episode start times at reset: each env's first episode can be a
        # partial one, so it is skipped (and env 0's second episode is filmed)
        seen = np.zeros(num_envs, np.int64) if skip_first else np.ones(num_envs, np.int64)
        # every env contributes the same number of episodes, so short (failed) episodes are
        # not over-represented by finishing first
        per_env = -(-episodes // num_envs)
        stop_at = per_env + 1
        returns, lengths, terms, successes = [], [], [], []
        term_acc: dict[str, np.ndarray] = {}   # per-env running sums of each reward term
        term_tot: dict[str, float] = {}
        filming = recorder is not None and not skip_first
        pending = np.zeros(num_envs, bool)  # NEXT_STEP: the next step resets these rows
        same_step = autoreset_mode(env) == gym.vector.AutoresetMode.SAME_STEP
        if filming:
            recorder.add(env.render())
        while seen.min() < stop_at:
            with torch.no_grad():
                act = policy(torch.as_tensor(obs, dtype=torch.float32, device=device)).cpu().numpy()
            obs, reward, term, trunc, info = env.step(np.clip(act, low, high).astype(space.dtype))
            valid = ~pending
            ret += np.where(valid, reward, 0.0)
            length += valid
            done = (np.asarray(term) | np.asarray(trunc)) & valid
            for k, v in info.get("reward_terms", {}).items():
                acc = term_acc.setdefault(k, np.zeros(num_envs))
                acc += np.where(valid, v, 0.0)
            if filming:
                if not (done[0] and same_step):  # SAME_STEP: env 0 already shows the next episode
                    recorder.add(env.render())
                if done[0] or recorder.full:
                    filming = False
            for i in np.flatnonzero(done):
                if 0 < seen[i] < stop_at:
                    returns.append(ret[i])
                    lengths.append(length[i])
                    terms.append(bool(term[i]))
                    if "is_success" in info:
                        successes.append(bool(info["is_success"][i]))
                    for k, acc in term_acc.items():
                        term_tot[k] = term_tot.get(k, 0.0) + acc[i]
            for acc in term_acc.values():
                acc[done] = 0.0
            seen += done
            if recorder is not None and done[0] and seen[0] == 1 and not recorder.frames:
                filming = True
                recorder.add(env.render())
            ret[done] = 0.0
            length[done] = 0
            if not same_step:
                pending = done
        per_step_terms = {k: v / max(sum(lengths), 1) for k, v in term_tot.items()}
        share = tracking_share(env, per_step_terms)
    except BaseException:
        if recorder is not None:
            recorder.close()
        raise
    finally:
        env.close()
    video_path = recorder.write() if recorder is not None else None
    returns = np.asarray(returns)
    return EvalResult(episodes=len(returns), mean_return=float(returns.mean()), std_return=float(returns.std()),
                      mean_length=float(np.mean(lengths)),
                      success_rate=float(np.mean(successes)) if successes else None,
                      fall_rate=float(np.mean(terms)), video=video_path,
                      reward_terms=per_step_terms, tracking_share=share)


def _fps(env) -> int:
    return int(env.metadata.get("render_fps") or 30)


def export_onnx(checkpoint: str | Path, path: str | Path | None = None, opset: int = 17) -> Path:
    """Write the deterministic policy, observation normalizer folded in, as ONNX.

    Input ``obs`` ``[batch, obs_dim]`` float32 (raw observations), output ``actions``
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
    meaning = (f"deterministic action: the Gaussian policy's mean, clipped to the action space "
               f"{bounds_text(low, high)} as the env clips it")
    return export_policy(ClipToBox(policy, low, high), ckpt["dims"]["obs"], path, meaning,
                         action_low=low, action_high=high, opset=opset)
