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
env step over the rollout (so they sum to ``reward/total``). Under a safety guard
(``info["safety"]``, :class:`wrappers.Safety`) each iteration logs ``safety/<count>``: the
joint-steps each limit moved and the watchdog trips over the rollout, and
``safety/latched``, the share of env steps in the safe mode.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
import torch

from ..common.envs import autoreset_mode, final_rows
from .algorithm import PPO
from .models import EmpiricalNormalizer
from .reward_norm import RewardNormalizer
from .storage import RolloutStorage


class HostToDevice:
    """Copies NumPy arrays to the device through preallocated host buffers.

    On CUDA the buffers are pinned and the copies run on a side stream: the current
    (compute) stream waits for them instead of the host, so a copy can overlap kernels
    already queued. A buffer is rewritten only once its previous copy has finished (an
    event per buffer), and each returned tensor is recorded on the compute stream so
    the caching allocator keeps it alive there. On CPU the buffer itself is returned
    (valid until the next call with the same name).
    """

    def __init__(self, device: torch.device):
        self.device = device
        self.pinned = device.type == "cuda"
        self.stream = torch.cuda.Stream(device) if self.pinned else None
        self._bufs: dict[str, torch.Tensor] = {}
        self._copied: dict[str, torch.cuda.Event] = {}

    def __call__(self, name: str, arr: np.ndarray, dtype=np.float32) -> torch.Tensor:
        src = torch.from_numpy(np.ascontiguousarray(arr, dtype=dtype))
        buf = self._bufs.get(name)
        if buf is None or buf.shape != src.shape:
            buf = torch.empty(src.shape, dtype=src.dtype, pin_memory=self.pinned)
            self._bufs[name] = buf
        if not self.pinned:
            buf.copy_(src)
            return buf
        copied = self._copied.get(name)
        if copied is not None:
            copied.synchronize()  # the last copy out of this pinned buffer has finished
        buf.copy_(src)
        compute = torch.cuda.current_stream(self.device)
        with torch.cuda.stream(self.stream):
            out = buf.to(self.device, non_blocking=True)
            event = torch.cuda.Event()
            event.record(self.stream)
        self._copied[name] = event
        compute.wait_event(event)
        out.record_stream(compute)
        return out


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

    def step(self, reward, term, trunc, valid, success, rows: slice = slice(None)) -> None:
        """One step of envs ``rows`` (all by default); the arrays hold those rows only."""
        self.ret[rows] += np.where(valid, reward, 0.0)
        self.len[rows] += valid
        done = (term | trunc) & valid
        if done.any():
            local = np.flatnonzero(done)
            idx = local + (rows.start or 0)
            self.returns.extend(self.ret[idx].tolist())
            self.lengths.extend(self.len[idx].tolist())
            self.terminated.extend(term[local].tolist())
            if success is not None:
                self.successes.extend(np.asarray(success)[local].astype(bool).tolist())
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

    def state_dict(self) -> dict:
        """The finished episodes: the rolling windows and how many have finished (what :meth:`stats` and
        the ``stop:`` rule read). The running sums of unfinished episodes belong with the env state
        (:meth:`Collector.state_dict`)."""
        state = {name: torch.tensor(list(getattr(self, name)), dtype=dtype) for name, dtype in _WINDOWS.items()}
        state["finished"] = int(self.finished)
        return state

    def load_state_dict(self, state: dict) -> None:
        """Go on from a :meth:`state_dict` (each window keeps its own length limit)."""
        for name in _WINDOWS:
            window = getattr(self, name)
            window.clear()
            window.extend(state[name].tolist())
        self.finished = int(state["finished"])


#: EpisodeTracker's rolling windows and the dtype each is saved as (exact: float64 returns, int lengths, flags)
_WINDOWS = {"returns": torch.float64, "lengths": torch.int64, "terminated": torch.bool, "successes": torch.bool}


def critic_input(obs: np.ndarray, privileged_obs: np.ndarray) -> np.ndarray:
    """The critic's observation: the policy observation followed by the privileged extras, ``(N, O + P)``.

    A task's privileged observation holds what only the simulator knows (contacts, base
    height, forces...); the critic also needs what the policy sees (command, phase...).
    """
    return np.concatenate([np.asarray(obs, dtype=np.float32), np.asarray(privileged_obs, dtype=np.float32)], axis=1)


class _Shard:
    """One vector env, its rows ``[lo, lo + num_envs)`` of the rollout, and what is carried between its steps."""

    def __init__(self, env: gym.vector.VectorEnv, lo: int, device: torch.device):
        self.env = env
        self.lo = lo
        self.rows = slice(lo, lo + env.num_envs)
        self.same_step = autoreset_mode(env) == gym.vector.AutoresetMode.SAME_STEP
        self.h2d = HostToDevice(device)
        self.act_host: torch.Tensor | None = None
        self.pending = np.zeros(env.num_envs, dtype=bool)  # NEXT_STEP: next step resets these rows
        self.obs: torch.Tensor | None = None
        self.critic_obs: torch.Tensor | None = None


#: per-env curriculum levels an env reports in ``info``, logged as ``env/<key>`` (their mean):
#: a terrain task's level, a push curriculum's level (``wrappers.RandomPush(levels=...)``, 0-1),
#: a whole-profile curriculum's level (a profile's ``curriculum``, :mod:`wrappers.curriculum`, 0-1)
CURRICULUM_KEYS = ("terrain_level", "push_level", "profile_level")


class _RolloutSums:
    """What one rollout adds up over its steps and shards (for the statistics and normalizers)."""

    def __init__(self, obs_dim: int, critic_dim: int | None, device: torch.device):
        self.obs_mom = torch.zeros(1 + 2 * obs_dim, dtype=torch.float64, device=device)
        self.crit_mom = (torch.zeros(1 + 2 * critic_dim, dtype=torch.float64, device=device)
                         if critic_dim is not None else None)
        self.terms: dict[str, float] = {}
        self.reward, self.valid_steps, self.diverged = 0.0, 0, 0
        self.reports_diverged = False  # the env flags diverged rows: log their count, 0 included
        self.any_masked = False
        # curriculum key (CURRICULUM_KEYS) -> {shard's first row -> its mean level at its last step}
        self.levels: dict[str, dict[int, float]] = {}
        # the safety guard's counts over the rollout (info["safety"]): COUNTS + "latched" -> total; None: no guard
        self.safety: dict[str, float] | None = None


def _add_safety(sums: _RolloutSums, safety: dict) -> None:
    """Add one step's ``info["safety"]`` (per-env counts, ``latched``) to the rollout's totals."""
    from unilab_robot.deploy.safety import COUNTS

    totals = sums.safety if sums.safety is not None else dict.fromkeys((*COUNTS, "latched"), 0.0)
    for key in totals:
        totals[key] += float(np.sum(safety[key]))
    sums.safety = totals


class Collector:
    """Steps one vector env, or several side by side (each owning a block of rollout rows).

    ``overlap=True`` (two envs): while a worker thread steps one env (``mujoco.batch``
    releases the GIL), the main thread runs the policy for the other, then they swap, so
    physics and policy inference overlap. Policy calls and the generator's draws happen in
    the same order as without overlap, so the rollout is bit-identical to the sequential one.
    """

    def __init__(self, env: gym.vector.VectorEnv | Sequence[gym.vector.VectorEnv], algo: PPO,
                 device: torch.device, generator: torch.Generator, privileged: bool,
                 episode_window: int = 200, overlap: bool = False):
        envs = list(env) if isinstance(env, (list, tuple)) else [env]
        if overlap and len(envs) != 2:
            raise ValueError(f"overlapped collection steps two envs (two halves), got {len(envs)}")
        self.envs, self.algo, self.device, self.generator = envs, algo, device, generator
        self.shards, lo = [], 0
        for e in envs:
            self.shards.append(_Shard(e, lo, device))
            lo += e.num_envs
        self.num_envs = lo
        self.privileged = privileged
        space = envs[0].single_action_space
        self.act_dtype = space.dtype
        self.low = torch.as_tensor(space.low, dtype=torch.float32, device=device)
        self.high = torch.as_tensor(space.high, dtype=torch.float32, device=device)
        self.episodes = EpisodeTracker(self.num_envs, max(episode_window, self.num_envs))
        cfg = algo.cfg
        self.reward_norm = (RewardNormalizer(self.num_envs, cfg.gamma, cfg.reward_clip)
                            if cfg.reward_normalization else None)
        # a recurrent actor's state per env row, and the rows whose state is zeroed before their next step
        # (their episode ended: terminated, truncated, or a NEXT_STEP reset step) (trainers.ppo.recurrent)
        H = algo.policy.hidden_size
        self.hidden = torch.zeros(self.num_envs, H, device=device) if H else None
        self.starts = torch.zeros(self.num_envs, dtype=torch.bool, device=device) if H else None
        # a state estimator's targets: these columns of the raw critic input (trainers.ppo.estimator)
        cols = algo.policy.target_columns
        self.target_columns = torch.as_tensor(cols, dtype=torch.long, device=device) if cols else None
        self.overlap = overlap
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="unilab-physics") if overlap else None

    @property
    def env(self) -> gym.vector.VectorEnv:
        """The env (one-env collectors)."""
        if len(self.envs) != 1:
            raise AttributeError("this collector steps several envs: use .envs")
        return self.envs[0]

    @property
    def obs(self) -> torch.Tensor:
        return torch.cat([sh.obs for sh in self.shards]) if len(self.shards) > 1 else self.shards[0].obs

    @property
    def critic_obs(self) -> torch.Tensor | None:
        if not self.privileged:
            return None
        return torch.cat([sh.critic_obs for sh in self.shards]) if len(self.shards) > 1 else self.shards[0].critic_obs

    @property
    def pending(self) -> np.ndarray:
        return np.concatenate([sh.pending for sh in self.shards])

    # ------------------------------------------------------------------ env I/O

    def _set_obs(self, sh: _Shard, obs: np.ndarray, info: dict) -> None:
        sh.obs = sh.h2d("obs", obs)
        if self.privileged:
            if "privileged_obs" not in info:
                raise KeyError("the env declared a privileged_observation_space but info has no 'privileged_obs'")
            sh.critic_obs = sh.h2d("privileged_obs", critic_input(obs, info["privileged_obs"]))

    def reset(self, seed: int | None) -> None:
        """Reset every env; env ``k`` gets ``seed + (its first row)`` so rows keep seed ``seed + row``."""
        for sh in self.shards:
            obs, info = sh.env.reset(seed=None if seed is None else seed + sh.lo)
            self._set_obs(sh, obs, info)
            sh.pending[:] = False
        self.episodes.ret[:] = 0.0
        self.episodes.len[:] = 0
        if self.hidden is not None:
            self.hidden.zero_()
            self.starts.fill_(False)
        if self.reward_norm is not None:
            self.reward_norm.returns[:] = 0.0  # new episodes (the running scale is kept)

    def _to_env(self, sh: _Shard, actions: torch.Tensor) -> np.ndarray:
        clipped = torch.clamp(actions, self.low, self.high)
        if self.device.type == "cpu":
            out = clipped.numpy()
        else:
            if sh.act_host is None:
                sh.act_host = torch.empty(clipped.shape, dtype=clipped.dtype, pin_memory=True)
            sh.act_host.copy_(clipped, non_blocking=True)
            torch.cuda.current_stream(self.device).synchronize()
            out = sh.act_host.numpy()
        return out if out.dtype == self.act_dtype else out.astype(self.act_dtype)

    def initial_moments(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Moments of the current observations (used to seed the normalizer before iteration 1)."""
        m = EmpiricalNormalizer.moments(self.obs)
        return m, (EmpiricalNormalizer.moments(self.critic_obs) if self.privileged else None)

    # ------------------------------------------------------------------ rollout

    @torch.no_grad()
    def collect(self, storage: RolloutStorage) -> dict[str, float]:
        """Fill ``storage`` with ``T`` steps; update the normalizers; return rollout statistics."""
        algo, T = self.algo, storage.num_steps
        first = self.shards[0]
        sums = _RolloutSums(first.obs.shape[1], first.critic_obs.shape[1] if self.privileged else None, self.device)
        storage.final_values.zero_()
        if self.overlap:
            a, b = self.shards
            acts_a = self._act(a, t=0, storage=storage)
            for t in range(T):
                future = self._pool.submit(a.env.step, acts_a)      # physics of half A ...
                acts_b = self._act(b, t, storage)                   # ... while the policy runs on half B
                self._record(a, t, future.result(), storage, sums)
                future = self._pool.submit(b.env.step, acts_b)      # physics of half B ...
                if t + 1 < T:
                    acts_a = self._act(a, t + 1, storage)           # ... while the policy runs on half A
                self._record(b, t, future.result(), storage, sums)
        else:
            for t in range(T):
                actions = [self._act(sh, t, storage) for sh in self.shards]
                for sh, act in zip(self.shards, actions):
                    self._record(sh, t, sh.env.step(act), storage, sums)

        for sh in self.shards:
            _, crit_n = algo.normalize(sh.obs, sh.critic_obs)
            storage.last_values[sh.rows] = algo.value(crit_n)
            if not sh.same_step and sh.pending.any():  # rows done at T-1: their final obs is the current obs
                rows = torch.from_numpy(sh.pending).to(self.device)
                tail = storage.final_values[T - 1, sh.rows]
                storage.final_values[T - 1, sh.rows] = torch.where(rows, storage.last_values[sh.rows], tail)
        storage.has_masked_rows = sums.any_masked
        storage.old_log_std.copy_(algo.policy.log_std.detach())
        algo.update_normalizers(sums.obs_mom, sums.crit_mom)

        stats = self.episodes.stats()
        denom = max(sums.valid_steps, 1)
        stats["reward/total"] = sums.reward / denom
        for k, v in sums.terms.items():
            stats[f"reward/{k}"] = v / denom
        stats["episode/finished"] = float(self.episodes.finished)
        if sums.reports_diverged:  # every iteration, so progress.csv has the column from its first row
            stats["env/diverged"] = float(sums.diverged)
        for key, by_shard in sums.levels.items():
            stats[f"env/{key}"] = float(np.mean(list(by_shard.values())))
        if sums.safety is not None:  # every iteration under a guard, zeros included
            for key, total in sums.safety.items():
                stats[f"safety/{key}"] = total / max(sums.valid_steps, 1) if key == "latched" else total
        return stats

    def _act(self, sh: _Shard, t: int, storage: RolloutStorage) -> np.ndarray:
        """Policy on shard ``sh`` at step ``t``: writes its rollout rows, returns the env's actions."""
        r = sh.rows
        obs_n, crit_n = self.algo.normalize(sh.obs, sh.critic_obs)
        truth = None
        if self.target_columns is not None:  # the true values, raw: not the normalized critic input
            truth = sh.critic_obs.index_select(1, self.target_columns)
            storage.targets[t, r] = truth
        if self.hidden is None:  # the actor reads the truth only in an estimator warm-up (PPO.action_mean)
            actions, means, log_probs, values = self.algo.act(obs_n, crit_n, self.generator, truth)
        else:
            actions, means, log_probs, values = self._act_recurrent(sh, t, storage, obs_n, crit_n)
        storage.obs[t, r] = obs_n
        if storage.critic_obs is not None:
            storage.critic_obs[t, r] = crit_n
        storage.actions[t, r] = actions
        storage.action_means[t, r] = means
        storage.log_probs[t, r] = log_probs
        storage.values[t, r] = values
        if not sh.same_step and sh.pending.any():
            storage.mask[t, r] = torch.from_numpy(~sh.pending).to(self.device, torch.float32)
            if t > 0:  # V(final obs) of rows truncated at t-1 is this step's value
                rows = torch.from_numpy(sh.pending).to(self.device)
                storage.final_values[t - 1, r] = torch.where(rows, values, storage.final_values[t - 1, r])
        else:
            storage.mask[t, r] = 1.0
        return self._to_env(sh, actions)

    def _act_recurrent(self, sh: _Shard, t: int, storage: RolloutStorage, obs_n, crit_n):
        """The recurrent actor's step on shard ``sh``: its rows' states (zeroed where an episode starts) in,
        the next states kept; the storage gets the rollout's first states and the resets."""
        r = sh.rows
        if t == 0:
            storage.hidden0[r] = self.hidden[r]
        starts = self.starts[r]
        storage.starts[t, r] = starts.float()
        h = torch.where(starts.unsqueeze(1), 0.0, self.hidden[r])
        actions, means, log_probs, values, h = self.algo.act_recurrent(obs_n, crit_n, h, self.generator)
        self.hidden[r] = h
        return actions, means, log_probs, values

    def _record(self, sh: _Shard, t: int, result: tuple, storage: RolloutStorage, sums: _RolloutSums) -> None:
        """Write one env step's outcome for shard ``sh`` at step ``t`` and do its episode bookkeeping."""
        obs, reward, term, trunc, info = result
        r = sh.rows
        term = np.asarray(term, dtype=bool)
        trunc = np.asarray(trunc, dtype=bool)
        valid = ~sh.pending
        learned = reward if self.reward_norm is None else self.reward_norm(reward, term | trunc, valid, rows=r)
        storage.rewards[t, r] = sh.h2d("reward", learned)
        storage.terminated[t, r] = sh.h2d("term", term, dtype=bool)
        storage.truncated[t, r] = sh.h2d("trunc", trunc, dtype=bool)
        if sh.same_step:
            boot = np.flatnonzero(trunc & ~term)
            if boot.size:
                rows = torch.from_numpy(boot + sh.lo).to(self.device)
                storage.final_values[t, rows] = self._final_values(info, boot)

        if not sh.same_step and sh.pending.any():
            sums.any_masked = True
        reward = np.asarray(reward)
        self.episodes.step(reward, term, trunc, valid, info.get("is_success"), rows=r)
        n_valid = int(valid.sum())
        sums.valid_steps += n_valid
        all_valid = n_valid == valid.size
        sums.reward += float(reward.sum() if all_valid else reward[valid].sum())
        for k, v in info.get("reward_terms", {}).items():
            v = np.asarray(v)
            sums.terms[k] = sums.terms.get(k, 0.0) + float(v.sum() if all_valid else v[valid].sum())
        if "diverged" in info:
            sums.reports_diverged = True
            sums.diverged += int(np.count_nonzero(info["diverged"]))
        for key in CURRICULUM_KEYS:
            if key in info:
                sums.levels.setdefault(key, {})[sh.lo] = float(np.mean(info[key]))
        if "safety" in info:
            _add_safety(sums, info["safety"])

        self._set_obs(sh, obs, info)
        sums.obs_mom += EmpiricalNormalizer.moments(sh.obs)
        if sums.crit_mom is not None:
            sums.crit_mom += EmpiricalNormalizer.moments(sh.critic_obs)
        if self.starts is not None:  # a NEXT_STEP reset step's row starts its episode at the next step
            ended = term | trunc if sh.same_step else term | trunc | sh.pending
            self.starts[r] = torch.from_numpy(ended).to(self.device)
        if not sh.same_step:
            sh.pending = term | trunc

    def _final_values(self, info: dict, rows: np.ndarray) -> torch.Tensor:
        """V(true final observation) of ``rows`` (SAME_STEP)."""
        if "final_obs" not in info:
            raise KeyError("SAME_STEP env truncated an episode without info['final_obs']")
        final_np = final_rows(info["final_obs"], rows)
        final = torch.from_numpy(np.ascontiguousarray(final_np, dtype=np.float32)).to(self.device)
        crit = None
        if self.privileged:
            crit_np = critic_input(final_np, final_rows(info["final_privileged_obs"], rows))
            crit = torch.from_numpy(crit_np).to(self.device)
        _, crit_n = self.algo.normalize(final, crit)
        return self.algo.value(crit_n)

    def close(self) -> None:
        """Stop the physics worker thread (overlapped collection)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    # ------------------------------------------------------------------ state (exact resume)

    def state_dict(self) -> dict:
        state = {"obs": self.obs.cpu().clone(),
                 "critic_obs": None if self.critic_obs is None else self.critic_obs.cpu().clone(),
                 "pending": torch.from_numpy(self.pending.copy()),
                 "ep_ret": torch.from_numpy(self.episodes.ret.copy()),
                 "ep_len": torch.from_numpy(self.episodes.len.copy())}
        if self.hidden is not None:  # the recurrent actor's states and the resets due at the next step
            state.update(hidden=self.hidden.cpu().clone(), starts=self.starts.cpu().clone())
        return state

    def load_state_dict(self, state: dict) -> None:
        obs, crit = state["obs"].to(self.device), state["critic_obs"]
        pending = state["pending"].cpu().numpy()
        for sh in self.shards:
            sh.obs = obs[sh.rows].clone()
            sh.critic_obs = None if crit is None else crit.to(self.device)[sh.rows].clone()
            sh.pending = pending[sh.rows].copy()
        self.episodes.ret[:] = state["ep_ret"].cpu().numpy()
        self.episodes.len[:] = state["ep_len"].cpu().numpy()
        if self.hidden is not None:
            if "hidden" not in state:
                raise KeyError("hidden: the checkpoint's collector holds no recurrent state (a feed-forward run?)")
            self.hidden.copy_(state["hidden"].to(self.device))
            self.starts.copy_(state["starts"].to(self.device))
