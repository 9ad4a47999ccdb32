"""Rollout collection: env <-> policy, into a :class:`RolloutStorage` on the learner device.

Works with any Gymnasium ``VectorEnv`` with flat Box observations and actions:

- SAME_STEP autoreset (UniLab's default): a done row already holds the next episode's
  first observation; the true final observation is in ``info["final_obs"]`` (dense
  ``(N, O)`` array, or Gymnasium's object array of per-env observations) with the
  ``info["_final_obs"]`` mask, and ``info["final_privileged_obs"]`` for the critic.
- NEXT_STEP autoreset (Gymnasium's default): a done row returns its final observation;
  the next ``step`` resets that row and its transition is masked out of training
  (``mask = 0``); the value computed on the final observation bootstraps the truncation.

Per step, environment arrays go to the device once (through pinned host buffers on
CUDA); the only Python over envs is vectorized NumPy on ``(N,)`` arrays for episode
bookkeeping. ``info["reward_terms"]`` are logged as ``reward/<term>``: the mean per
env step over the rollout (so they sum to ``reward/total``).
"""

from __future__ import annotations

from collections import deque

import gymnasium as gym
import numpy as np
import torch

from .algorithm import PPO
from .models import EmpiricalNormalizer
from .storage import RolloutStorage


class HostToDevice:
    """Copies NumPy arrays to the device through preallocated (pinned on CUDA) host buffers."""

    def __init__(self, device: torch.device):
        self.device = device
        self.pinned = device.type == "cuda"
        self._bufs: dict[str, torch.Tensor] = {}

    def __call__(self, name: str, arr: np.ndarray, dtype=np.float32) -> torch.Tensor:
        src = torch.from_numpy(np.ascontiguousarray(arr, dtype=dtype))
        buf = self._bufs.get(name)
        if buf is None or buf.shape != src.shape:
            buf = torch.empty(src.shape, dtype=src.dtype, pin_memory=self.pinned)
            self._bufs[name] = buf
        buf.copy_(src)
        return buf.to(self.device, non_blocking=True) if self.pinned else buf


class EpisodeTracker:
    """Per-env running return / length; a rolling window of finished episodes."""

    def __init__(self, num_envs: int, window: int):
        self.ret = np.zeros(num_envs, dtype=np.float64)
        self.len = np.zeros(num_envs, dtype=np.int64)
        self.returns: deque = deque(maxlen=window)
        self.lengths: deque = deque(maxlen=window)
        self.terminated: deque = deque(maxlen=window)
        self.successes: deque = deque(maxlen=window)
        self.finished = 0

    def step(self, reward, term, trunc, valid, success) -> None:
        self.ret += np.where(valid, reward, 0.0)
        self.len += valid
        done = (term | trunc) & valid
        if done.any():
            idx = np.flatnonzero(done)
            self.returns.extend(self.ret[idx].tolist())
            self.lengths.extend(self.len[idx].tolist())
            self.terminated.extend(term[idx].tolist())
            if success is not None:
                self.successes.extend(np.asarray(success)[idx].astype(bool).tolist())
            self.finished += idx.size
            self.ret[idx] = 0.0
            self.len[idx] = 0

    def stats(self) -> dict[str, float]:
        nan = float("nan")
        mean = lambda d: float(np.mean(d)) if len(d) else nan  # noqa: E731
        out = {"episode/return": mean(self.returns), "episode/length": mean(self.lengths),
               "episode/terminated_frac": mean(self.terminated)}
        if self.successes:
            out["episode/success"] = mean(self.successes)
        return out


def _final_rows(final: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` of a dense ``(N, D)`` array or of Gymnasium's object array of per-env arrays."""
    if final.dtype == object:
        return np.stack([np.asarray(final[i], dtype=np.float32) for i in idx])
    return final[idx]


def critic_input(obs: np.ndarray, privileged_obs: np.ndarray) -> np.ndarray:
    """The critic's observation: the policy observation followed by the privileged extras, ``(N, O + P)``.

    A task's privileged observation holds what only the simulator knows (contacts, base
    height, forces...); the critic also needs what the policy sees (command, phase...).
    """
    return np.concatenate([np.asarray(obs, dtype=np.float32), np.asarray(privileged_obs, dtype=np.float32)], axis=1)


def autoreset_mode(env: gym.vector.VectorEnv) -> gym.vector.AutoresetMode:
    mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
    mode = gym.vector.AutoresetMode(mode) if not isinstance(mode, gym.vector.AutoresetMode) else mode
    if mode == gym.vector.AutoresetMode.DISABLED:
        raise ValueError("PPO needs an autoresetting vector env (SAME_STEP or NEXT_STEP), got DISABLED")
    return mode


class Collector:
    def __init__(self, env: gym.vector.VectorEnv, algo: PPO, device: torch.device,
                 generator: torch.Generator, privileged: bool, episode_window: int = 200):
        self.env, self.algo, self.device, self.generator = env, algo, device, generator
        self.num_envs = env.num_envs
        self.privileged = privileged
        self.same_step = autoreset_mode(env) == gym.vector.AutoresetMode.SAME_STEP
        space = env.single_action_space
        self.act_dtype = space.dtype
        self.low = torch.as_tensor(space.low, dtype=torch.float32, device=device)
        self.high = torch.as_tensor(space.high, dtype=torch.float32, device=device)
        self.h2d = HostToDevice(device)
        self._act_host = None
        self.episodes = EpisodeTracker(self.num_envs, max(episode_window, self.num_envs))
        self.pending = np.zeros(self.num_envs, dtype=bool)  # NEXT_STEP: next step resets these rows
        self.obs: torch.Tensor | None = None
        self.critic_obs: torch.Tensor | None = None

    # ------------------------------------------------------------------ env I/O

    def _set_obs(self, obs: np.ndarray, info: dict) -> None:
        self.obs = self.h2d("obs", obs)
        if self.privileged:
            if "privileged_obs" not in info:
                raise KeyError("the env declared a privileged_observation_space but info has no 'privileged_obs'")
            self.critic_obs = self.h2d("privileged_obs", critic_input(obs, info["privileged_obs"]))

    def reset(self, seed: int | None) -> None:
        obs, info = self.env.reset(seed=seed)
        self._set_obs(obs, info)
        self.pending[:] = False
        self.episodes.ret[:] = 0.0
        self.episodes.len[:] = 0

    def _to_env(self, actions: torch.Tensor) -> np.ndarray:
        clipped = torch.clamp(actions, self.low, self.high)
        if self.device.type == "cpu":
            out = clipped.numpy()
        else:
            if self._act_host is None:
                self._act_host = torch.empty(clipped.shape, dtype=clipped.dtype, pin_memory=True)
            self._act_host.copy_(clipped, non_blocking=True)
            torch.cuda.current_stream(self.device).synchronize()
            out = self._act_host.numpy()
        return out if out.dtype == self.act_dtype else out.astype(self.act_dtype)

    def initial_moments(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Moments of the current observations (used to seed the normalizer before iteration 1)."""
        m = EmpiricalNormalizer.moments(self.obs)
        return m, (EmpiricalNormalizer.moments(self.critic_obs) if self.privileged else None)

    # ------------------------------------------------------------------ rollout

    @torch.no_grad()
    def collect(self, storage: RolloutStorage) -> dict[str, float]:
        """Fill ``storage`` with ``T`` steps; update the normalizers; return rollout statistics."""
        algo, env = self.algo, self.env
        T, N = storage.num_steps, self.num_envs
        obs_mom = torch.zeros(1 + 2 * self.obs.shape[1], dtype=torch.float64, device=self.device)
        crit_mom = (torch.zeros(1 + 2 * self.critic_obs.shape[1], dtype=torch.float64, device=self.device)
                    if self.privileged else None)
        term_sums: dict[str, float] = {}
        reward_sum, valid_steps, diverged = 0.0, 0, 0
        any_masked = False
        storage.final_values.zero_()
        for t in range(T):
            obs_n, crit_n = algo.normalize(self.obs, self.critic_obs)
            actions, means, log_probs, values = algo.act(obs_n, crit_n, self.generator)
            storage.obs[t].copy_(obs_n)
            if storage.critic_obs is not None:
                storage.critic_obs[t].copy_(crit_n)
            storage.actions[t].copy_(actions)
            storage.action_means[t].copy_(means)
            storage.log_probs[t].copy_(log_probs)
            storage.values[t].copy_(values)
            valid = ~self.pending
            if not self.same_step and self.pending.any():
                any_masked = True
                storage.mask[t].copy_(torch.from_numpy(valid))
                if t > 0:  # V(final obs) of rows truncated at t-1 is this step's value
                    rows = torch.from_numpy(self.pending).to(self.device)
                    storage.final_values[t - 1] = torch.where(rows, values, storage.final_values[t - 1])
            else:
                storage.mask[t].fill_(1.0)

            obs, reward, term, trunc, info = env.step(self._to_env(actions))
            term = np.asarray(term, dtype=bool)
            trunc = np.asarray(trunc, dtype=bool)

            storage.rewards[t].copy_(self.h2d("reward", reward))
            storage.terminated[t].copy_(self.h2d("term", term, dtype=bool))
            storage.truncated[t].copy_(self.h2d("trunc", trunc, dtype=bool))
            if self.same_step:
                boot = np.flatnonzero(trunc & ~term)
                if boot.size:
                    storage.final_values[t, torch.from_numpy(boot).to(self.device)] = self._final_values(info, boot)

            # bookkeeping on (N,) NumPy arrays
            reward = np.asarray(reward)
            self.episodes.step(reward, term, trunc, valid, info.get("is_success"))
            n_valid = int(valid.sum())
            valid_steps += n_valid
            all_valid = n_valid == N
            reward_sum += float(reward.sum() if all_valid else reward[valid].sum())
            for k, v in info.get("reward_terms", {}).items():
                v = np.asarray(v)
                term_sums[k] = term_sums.get(k, 0.0) + float(v.sum() if all_valid else v[valid].sum())
            if "diverged" in info:
                diverged += int(np.count_nonzero(info["diverged"]))

            self._set_obs(obs, info)
            obs_mom += EmpiricalNormalizer.moments(self.obs)
            if crit_mom is not None:
                crit_mom += EmpiricalNormalizer.moments(self.critic_obs)
            if not self.same_step:
                self.pending = term | trunc

        obs_n, crit_n = algo.normalize(self.obs, self.critic_obs)
        storage.last_values.copy_(algo.value(crit_n))
        if not self.same_step and self.pending.any():  # rows done at T-1: their final obs is the current obs
            rows = torch.from_numpy(self.pending).to(self.device)
            storage.final_values[T - 1] = torch.where(rows, storage.last_values, storage.final_values[T - 1])
        storage.has_masked_rows = any_masked
        storage.old_log_std.copy_(algo.policy.log_std.detach())
        algo.update_normalizers(obs_mom, crit_mom)

        stats = self.episodes.stats()
        denom = max(valid_steps, 1)
        stats["reward/total"] = reward_sum / denom
        for k, v in term_sums.items():
            stats[f"reward/{k}"] = v / denom
        stats["episode/finished"] = float(self.episodes.finished)
        if diverged:
            stats["env/diverged"] = float(diverged)
        return stats

    def _final_values(self, info: dict, rows: np.ndarray) -> torch.Tensor:
        """V(true final observation) of ``rows`` (SAME_STEP)."""
        if "final_obs" not in info:
            raise KeyError("SAME_STEP env truncated an episode without info['final_obs']")
        final_np = _final_rows(info["final_obs"], rows)
        final = torch.from_numpy(np.ascontiguousarray(final_np, dtype=np.float32)).to(self.device)
        crit = None
        if self.privileged:
            crit_np = critic_input(final_np, _final_rows(info["final_privileged_obs"], rows))
            crit = torch.from_numpy(crit_np).to(self.device)
        _, crit_n = self.algo.normalize(final, crit)
        return self.algo.value(crit_n)

    # ------------------------------------------------------------------ state (exact resume)

    def state_dict(self) -> dict:
        return {"obs": self.obs.cpu().clone(),
                "critic_obs": None if self.critic_obs is None else self.critic_obs.cpu().clone(),
                "pending": torch.from_numpy(self.pending.copy()),
                "ep_ret": torch.from_numpy(self.episodes.ret.copy()),
                "ep_len": torch.from_numpy(self.episodes.len.copy())}

    def load_state_dict(self, state: dict) -> None:
        self.obs = state["obs"].to(self.device)
        self.critic_obs = None if state["critic_obs"] is None else state["critic_obs"].to(self.device)
        self.pending = state["pending"].cpu().numpy().copy()
        self.episodes.ret[:] = state["ep_ret"].cpu().numpy()
        self.episodes.len[:] = state["ep_len"].cpu().numpy()
