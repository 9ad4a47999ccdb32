"""One evaluation frame for both trainers: which episodes count, what is filmed, what is reported.

:func:`run_episodes` steps a Gymnasium ``VectorEnv`` with a deterministic action function
(``obs -> actions``) and returns an :class:`EvalResult`. ``trainers.ppo.evaluate.evaluate``
(the bundled PPO) and ``trainers.sb3.evaluate.evaluate_sb3`` (SB3 runs, on the Gymnasium
env under our SB3 adapter) both call it, so their numbers are measured the same way:

- **episode selection**: every env contributes the same number of whole episodes,
  ``ceil(episodes / num_envs)`` (:func:`episodes_per_env`), so the count can exceed
  ``episodes``. Taking the first ``episodes`` to finish instead would over-count short
  (often failed) episodes. With ``skip_first`` each env's first episode is left out: it may
  be partial when the env spreads episode start times at reset.
- **metrics**: mean / std return and mean length over the counted episodes (the raw env
  reward), success rate (where the env reports ``info["is_success"]``), fall rate (the
  share that ended ``terminated`` rather than truncated), per-step means of
  ``info["reward_terms"]`` over the counted episodes, and the joystick tasks' planar
  velocity tracking share, also per episode (with each episode's fall: ``walk_rate``); the mean over each
  episode of the task's ``episode_metrics`` (``info`` keys), and per group of the task's ``episode_group``
  (G1Track: per clip) the episodes, success and metrics (:meth:`EvalResult.group_lines`).
- **video**: one whole episode of env 0 (its second when ``skip_first``, the first counted).

Both autoreset modes are handled: SAME_STEP (a done row already holds the next episode) and
NEXT_STEP (the step after a done resets that row; its reward is not counted).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

import gymnasium as gym
import numpy as np

from .envs import autoreset_mode
from .video import VideoRecorder

#: the reward term whose share of its maximum is the joystick tasks' tracking score
TRACKING_TERM = "tracking_lin_vel"

__all__ = ["EvalResult", "episodes_per_env", "run_episodes", "video_fps"]

#: ``obs (N, *obs_shape) -> actions (N, *act_shape)``: the deterministic policy, raw observations in
ActionFn = Callable[[np.ndarray], np.ndarray]
#: :meth:`EvalResult.walk_rate`'s default: an episode tracking less than 80% of the maximum did not do its
#: job even upright (the shipped joystick policies track 88-96% on average)
WALK_TRACKING = 0.8


@dataclasses.dataclass
class EvalResult:
    """What an evaluation measured over its counted episodes (see the module docstring)."""

    episodes: int
    mean_return: float
    std_return: float
    mean_length: float
    success_rate: float | None
    fall_rate: float           # fraction of episodes that ended terminated (not truncated)
    video: Path | None
    reward_terms: dict = dataclasses.field(default_factory=dict)  # per-step means over the counted episodes
    tracking_share: float | None = None  # joystick tasks: planar (vx, vy) tracking reward / its maximum
    #: per counted episode, in the order they ended: whether it ended terminated, and (joystick tasks) its
    #: own tracking share; what :meth:`walk_rate` reads (left out of ``==``: the summary numbers compare)
    episode_falls: tuple[bool, ...] = dataclasses.field(default=(), compare=False, repr=False)
    episode_tracking: tuple[float, ...] | None = dataclasses.field(default=None, compare=False, repr=False)
    #: per counted episode: whether it succeeded (tasks that report success), the mean over its steps of each of
    #: the task's ``episode_metrics``, and the name of its ``episode_group`` (``None``: the task has none)
    episode_success: tuple[bool, ...] = dataclasses.field(default=(), compare=False, repr=False)
    episode_metrics: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    episode_groups: tuple[str, ...] | None = dataclasses.field(default=None, compare=False, repr=False)
    #: a policy with a learned state estimator (trainers.ppo.estimator): ``estimator/rmse_<target>_<axis>`` over
    #: every evaluated step, against the env's privileged observation; empty otherwise (:func:`estimator_rmse_line`)
    estimator_rmse: dict = dataclasses.field(default_factory=dict, compare=False)

    def walk_rate(self, min_tracking: float = WALK_TRACKING) -> float | None:
        """Joystick tasks: the share of counted episodes that did not fall and tracked the commanded
        planar velocity at least ``min_tracking`` of the maximum over the episode (a walk that did its
        job); ``None`` for tasks without a tracking share."""
        if self.episode_tracking is None or not self.episode_falls:
            return None
        ok = [not fell and share >= min_tracking for fell, share in zip(self.episode_falls, self.episode_tracking)]
        return float(np.mean(ok))

    def group_lines(self) -> list[str]:
        """Per episode group (the task's ``episode_group``: G1Track's clips), in name order, one line: its episodes,
        their success (or falls) and the means of the task's metrics; then one line over the groups. Empty
        without groups."""
        if not self.episode_groups:
            return []
        outcome = self.episode_success if self.episode_success else tuple(not f for f in self.episode_falls)
        word = "success" if self.episode_success else "no fall"
        lines, rates = [], []
        for name in sorted(set(self.episode_groups)):
            rows = [k for k, g in enumerate(self.episode_groups) if g == name]
            rate = float(np.mean([outcome[k] for k in rows]))
            rates.append(rate)
            metrics = "".join(f"  {m} {np.mean([v[k] for k in rows]):.3g}" for m, v in self.episode_metrics.items())
            lines.append(f"  {name}: {len(rows)} episodes  {word} {rate:.1%}{metrics}")
        lines.append(f"{len(rates)} groups: {word} {np.mean(rates):.1%} averaged over them, {sum(r == 1.0 for r in rates)} "
                     f"with every episode a {word}, the worst {min(rates):.1%}")
        return lines

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
        for name, values in self.episode_metrics.items():
            s += f"  {name} {np.mean(values):.3g}"
        if self.video is not None:
            s += f"  video {self.video}"
        return s


def estimator_rmse_line(stats: Mapping[str, float]) -> str | None:
    """The one line a learned state estimator's error is printed as, at the end of training and by ``unilab eval``:
    ``estimator RMSE in the targets' units: linvel_x 0.0812  linvel_y 0.0634`` from the ``estimator/rmse_<label>``
    entries of ``stats`` (others ignored), three significant digits; ``None`` when there are none."""
    prefix = "estimator/rmse_"
    found = {k[len(prefix):]: v for k, v in stats.items() if k.startswith(prefix)}
    if not found:
        return None
    return "estimator RMSE in the targets' units: " + "  ".join(f"{k} {v:.3g}" for k, v in found.items())


def episodes_per_env(episodes: int, num_envs: int) -> int:
    """Whole episodes each env contributes: ``ceil(episodes / num_envs)``."""
    return -(-episodes // num_envs)


def tracking_share(env, reward_terms: dict[str, float]) -> float | None:
    """Mean per-step ``tracking_lin_vel`` reward / its maximum, or None for tasks without it."""
    base = env.unwrapped
    names = tuple(getattr(base, "reward_names", ()))
    if TRACKING_TERM not in names or TRACKING_TERM not in reward_terms:
        return None
    weight = float(base.task.reward_weights[names.index(TRACKING_TERM)])
    return float(reward_terms[TRACKING_TERM]) / weight if weight > 0 else None


def video_fps(env: gym.vector.VectorEnv) -> int:
    """The env's ``render_fps`` (30 when it states none): the frame rate of its video."""
    return int(env.metadata.get("render_fps") or 30)


def _same_step(env: gym.vector.VectorEnv) -> bool:
    """Whether ``env`` autoresets in SAME_STEP mode; ``ValueError`` for one that does not autoreset."""
    return autoreset_mode(env) == gym.vector.AutoresetMode.SAME_STEP


def _as_env_actions(actions: np.ndarray, space: gym.Space) -> np.ndarray:
    """``actions`` as the env takes them: clipped to a Box's bounds (as the env clips) in its dtype."""
    if isinstance(space, gym.spaces.Box):
        low, high = space.low.astype(np.float32), space.high.astype(np.float32)
        return np.clip(np.asarray(actions), low, high).astype(space.dtype)
    return np.asarray(actions)


def _final_value(info: dict, key: str, i: int):
    """``info[key]`` of row ``i`` at the step its episode ended, ``None`` when not reported.

    Gymnasium's SAME_STEP ``SyncVectorEnv`` puts a done row's step info in ``info["final_info"]``
    (``info`` then holds the next episode's reset info); our envs report it in ``info`` itself.
    """
    final = info.get("final_info")
    source = final if isinstance(final, dict) and ("_final_info" not in info or info["_final_info"][i]) else info
    if key not in source:
        return None
    mask = source.get(f"_{key}")
    return None if mask is not None and not mask[i] else source[key][i]


@dataclasses.dataclass
class _Counted:
    """The counted episodes, one entry each, and the reward-term sums over their steps."""

    returns: list = dataclasses.field(default_factory=list)
    lengths: list = dataclasses.field(default_factory=list)
    terminated: list = dataclasses.field(default_factory=list)
    successes: list = dataclasses.field(default_factory=list)
    term_sums: dict = dataclasses.field(default_factory=dict)
    episode_terms: list = dataclasses.field(default_factory=list)  # per episode: {term: per-step mean}
    metrics: dict = dataclasses.field(default_factory=dict)  # task episode_metrics: name -> per-episode means
    groups: list = dataclasses.field(default_factory=list)  # per episode: its episode_group value


def _summarize(counted: _Counted, env: gym.vector.VectorEnv, video: Path | None) -> EvalResult:
    """The :class:`EvalResult` of the counted episodes (reward terms per step over all their steps)."""
    per_step_terms = {k: float(v / max(sum(counted.lengths), 1)) for k, v in counted.term_sums.items()}
    returns = np.asarray(counted.returns)
    share = tracking_share(env, per_step_terms)
    episodes = None if share is None else tuple(tracking_share(env, t) for t in counted.episode_terms)
    task = getattr(env.unwrapped, "task", None)
    names = getattr(task, "episode_group_names", ())
    groups = tuple(names[int(g)] for g in counted.groups) if counted.groups else None
    return EvalResult(episodes=len(returns), mean_return=float(returns.mean()), std_return=float(returns.std()),
                      mean_length=float(np.mean(counted.lengths)),
                      success_rate=float(np.mean(counted.successes)) if counted.successes else None,
                      fall_rate=float(np.mean(counted.terminated)), video=video,
                      reward_terms=per_step_terms, tracking_share=share,
                      episode_falls=tuple(counted.terminated), episode_tracking=episodes,
                      episode_success=tuple(counted.successes),
                      episode_metrics={k: tuple(v) for k, v in counted.metrics.items()}, episode_groups=groups)


def run_episodes(env: gym.vector.VectorEnv, act: ActionFn, episodes: int, seed: int,
                 recorder: VideoRecorder | None = None, skip_first: bool = True) -> EvalResult:
    """Evaluate the deterministic ``act`` on ``env`` (reset with ``seed``): each of the
    ``env.num_envs`` envs contributes :func:`episodes_per_env` whole episodes.

    ``act`` maps the env's raw observation batch to actions (any observation normalization
    is its own); Box actions are clipped to the action space before the step. ``skip_first``
    leaves out each env's first episode (partial when the env spreads episode starts). An ``act``
    with a ``reset_rows(mask)`` method (a recurrent policy's state per env) is told after each step
    which rows start an episode at their next observation; one with an ``observe(obs, info)`` method
    (a state estimator's error meter) is shown each observation and the info it came with, before
    ``act`` acts on it.
    ``recorder``: film one whole episode of env 0 (the first counted one) and write it; the
    env must render ``rgb_array``. The caller owns ``env`` and closes it.
    """
    num_envs = env.num_envs
    space = env.single_action_space
    same_step = _same_step(env)
    obs, info = env.reset(seed=seed)
    ret = np.zeros(num_envs)
    length = np.zeros(num_envs, np.int64)
    # envs may spread episode start times at reset: each env's first episode can be a
    # partial one, so it is skipped (and env 0's second episode is filmed)
    seen = np.zeros(num_envs, np.int64) if skip_first else np.ones(num_envs, np.int64)
    # every env contributes the same number of episodes, so short (failed) episodes are
    # not over-represented by finishing first
    stop_at = episodes_per_env(episodes, num_envs) + 1
    counted = _Counted()
    term_acc: dict[str, np.ndarray] = {}   # per-env running sums of each reward term
    filming = recorder is not None and not skip_first
    task = getattr(env.unwrapped, "task", None)
    metric_acc = {k: np.zeros(num_envs) for k in getattr(task, "episode_metrics", ())}  # per-env sums over steps
    group_key = getattr(task, "episode_group", None)
    pending = np.zeros(num_envs, bool)  # NEXT_STEP: the next step resets these rows
    reset_rows = getattr(act, "reset_rows", None)  # a recurrent policy's state: zeroed where an episode starts
    observe = getattr(act, "observe", None)  # a state estimator's meter: each observation and its info
    try:
        if filming:
            recorder.add(env.render())
        while seen.min() < stop_at:
            if observe is not None:
                observe(obs, info)
            obs, reward, term, trunc, info = env.step(_as_env_actions(act(obs), space))
            valid = ~pending
            ret += np.where(valid, reward, 0.0)
            length += valid
            term = np.asarray(term, bool)
            done = (term | np.asarray(trunc, bool)) & valid
            for k, v in info.get("reward_terms", {}).items():
                acc = term_acc.setdefault(k, np.zeros(num_envs))
                acc += np.where(valid, v, 0.0)
            for k, acc in metric_acc.items():
                acc += np.where(valid, info[k], 0.0)
            if filming:
                if not (done[0] and same_step):  # SAME_STEP: env 0 already shows the next episode
                    recorder.add(env.render())
                if done[0] or recorder.full:
                    filming = False
            for i in np.flatnonzero(done):
                if 0 < seen[i] < stop_at:
                    counted.returns.append(ret[i])
                    counted.lengths.append(length[i])
                    counted.terminated.append(bool(term[i]))
                    success = _final_value(info, "is_success", i)
                    if success is not None:
                        counted.successes.append(bool(success))
                    for k, acc in term_acc.items():
                        counted.term_sums[k] = counted.term_sums.get(k, 0.0) + acc[i]
                    steps = max(int(length[i]), 1)
                    counted.episode_terms.append({k: float(acc[i]) / steps for k, acc in term_acc.items()})
                    for k, acc in metric_acc.items():
                        counted.metrics.setdefault(k, []).append(float(acc[i]) / steps)
                    if group_key is not None:
                        counted.groups.append(_final_value(info, group_key, i))
            for acc in (*term_acc.values(), *metric_acc.values()):
                acc[done] = 0.0
            seen += done
            if recorder is not None and done[0] and seen[0] == 1 and not recorder.frames:
                filming = True
                recorder.add(env.render())
            ret[done] = 0.0
            length[done] = 0
            if reset_rows is not None:  # SAME_STEP: the next obs starts an episode; NEXT_STEP: the one after
                reset_rows(term | np.asarray(trunc, bool) | pending)
            if not same_step:
                pending = done
    except BaseException:
        if recorder is not None:
            recorder.close()
        raise
    video = recorder.write() if recorder is not None else None
    return _summarize(counted, env, video)
