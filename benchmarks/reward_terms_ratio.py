"""Step kernel generated from named reward terms and observation groups vs the hand-fused kernel it
replaced, side by side in one process.

(a) For each legged task at ``--num-envs`` (1024): two vector envs of the same task, seed and
threads: one as shipped (its step kernel generated from the task's reward terms and observation
groups, :mod:`unilab_envs.locomotion.reward_kernel`) and one whose task's ``compute`` calls the
pre-refactor fused kernel (``benchmarks/legacy_locomotion_kernel.py``, writing the observation
at an offsets record, ``benchmarks/legacy_observation.py``) with the task's own records and the
same ``(17,)`` weights. First checked: both give the same observations,
privileged observations, rewards, reward terms and terminations, bit for bit, after each of a
few steps at two seeds; both then step the same fixed random action batch, so they stay
identical (checked again after every round) and every round times like with like. Timed in
rounds, alternating between the two step by step and call by call (the order flipping each
pair): ``env.step`` (env steps/s), and ``task.compute`` alone (the kernel, on the env's live
arrays). A round's value is the median of its steps (calls); reported is new/old speed, the
median of the per-round ratios. Budget: >= 0.97 for both.

(b) At ``--extra-envs`` (4096) envs: Go1Joystick-v0 with one more term from the config
(``reward_terms={"foot_clearance": {"weight": -0.5}}``, registered below: the example term of
:mod:`unilab_envs.core.reward_terms`) against the plain task, same seed and actions (a reward
term changes no state, so both stay identical but for the reward), timed the same way:
(extra - plain) / plain of the env step time, median of per-round values. Budget: <= 2%. The
kernel is well under 1% of an env step, so this row bounds the term's cost within the noise
rather than resolving it; the kernel alone is printed beside it, unbudgeted.

The machines are shared and noisy, hence ratios of interleaved rounds, never two runs.

    python benchmarks/reward_terms_ratio.py [--num-envs 1024] [--extra-envs 4096] [--threads 2] [--rounds 15]

Takes ~2.5 min on 2 busy cores (plus a one-time Numba compile of both kernels per task).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import numba as nb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import unilab_envs  # noqa: E402,F401  (registers UniLab/*)
from benchmarks import legacy_locomotion_kernel as legacy  # noqa: E402
from benchmarks import legacy_observation  # noqa: E402
from unilab_envs.core.reward_terms import RewardTerm, register_reward_term  # noqa: E402
from unilab_envs.locomotion.rewards import REWARD_NAMES  # noqa: E402
from unilab_envs.threads import numba_threads  # noqa: E402

TASKS = ("UniLab/Go1Joystick-v0", "UniLab/G1Joystick-v0", "UniLab/Go1JoystickRough-v0")
EXTRA = {"foot_clearance": {"weight": -0.5}}
BUDGET_RATIO, BUDGET_EXTRA = 0.97, 0.02


@nb.njit(inline="always")
def foot_clearance(weight, i, legs, moving, target_height):
    if not moving:
        return 0.0
    short = 0.0
    for f in range(legs.foot_height.shape[1]):
        short += max(0.0, target_height - legs.foot_height[i, f])
    return weight * short


register_reward_term("locomotion", RewardTerm("foot_clearance", foot_clearance, "feet below the target height while moving",
                                              params={"target_height": 0.08}))  # fmt: skip


def make(task_id: str, n: int, threads: int, **config):
    env = gym.make_vec(task_id, num_envs=n, num_threads=threads, copy=False, **config).unwrapped
    env.reset(seed=0)
    return env


def use_legacy_kernel(env) -> None:
    """Override ``env.task.compute`` with the pre-refactor kernel on the task's own arrays and weights."""
    task = env.task
    assert task.reward_names == REWARD_NAMES and task._weights.shape == (len(REWARD_NAMES),), task.reward_names
    layout = legacy_observation.obs_layout(task.obs_groups, task.privileged_obs_groups, task.action_size,
                                           len(task.legged.foot_names), task.ground.scan_points.shape[0])

    def compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng) -> None:
        legacy.compute(obs, privileged_obs, reward_terms, reward, terminated, episode_step, rng, layout, task.physics,
                       task.robot, task.legs, task.ground, task.params, task.commands, task._weights)  # fmt: skip

    task.compute = compute


def kernel_args(env) -> tuple:
    return env._obs, env._privileged_obs, env._reward_terms, env._reward, env._terminated, env._episode_step, env._rng


def outputs(env, columns=slice(None)) -> dict:
    return {"obs": env._obs, "privileged_obs": env._privileged_obs, "reward_terms": env._reward_terms[:, columns],
            "reward": env._reward, "terminated": env._terminated}  # fmt: skip


def assert_same(a, b, what: str, columns=slice(None), keys=None) -> None:
    out_a, out_b = outputs(a, columns), outputs(b, columns)
    for key in keys or out_a:
        assert np.array_equal(out_a[key], out_b[key]), f"{what}: {key} differs"


def check_identical(new, old, actions, seeds=(1, 0), steps=5) -> None:
    """Same seeds, same actions: bit-identical outputs after each step (the last seed is left running)."""
    for seed in seeds:
        new.reset(seed=seed), old.reset(seed=seed)
        assert_same(new, old, f"reset seed {seed}")
        for t in range(steps):
            new.step(actions), old.step(actions)
            assert_same(new, old, f"seed {seed} step {t}")


def paired(a, b, reps: int, run) -> tuple[float, float]:
    """``run(env)`` ``reps`` times for each of ``a`` and ``b``, alternating (the order flips each pair):
    the median seconds of each."""
    times = {id(a): [], id(b): []}
    for k in range(reps):
        for env in (a, b) if k % 2 == 0 else (b, a):
            start = time.perf_counter()
            run(env)
            times[id(env)].append(time.perf_counter() - start)
    return statistics.median(times[id(a)]), statistics.median(times[id(b)])


def interleaved(a, b, actions, rounds: int, steps: int, calls: int, check) -> dict:
    """Per round: ``(a, b)`` median seconds of an env step (``steps`` each) and of ``task.compute``
    alone (``calls`` each, on the env's live arrays), steps and calls alternating between them."""
    out = {"step": [], "kernel": []}
    for r in range(rounds):
        out["step"].append(paired(a, b, steps, lambda env: env.step(actions)))
        with numba_threads(a.num_threads):
            out["kernel"].append(paired(a, b, calls, lambda env: env.task.compute(*kernel_args(env))))
        check(a, b, f"after round {r}")  # same actions, same kernels' math: still identical
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num-envs", type=int, default=1024, help="N of the new-vs-old rows")
    p.add_argument("--extra-envs", type=int, default=4096, help="N of the one-extra-term row")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--steps", type=int, default=4, help="env steps of each per round (new vs old)")
    p.add_argument("--extra-steps", type=int, default=2, help="env steps of each per round (extra term vs plain)")
    p.add_argument("--calls", type=int, default=40, help="kernel calls of each per round")
    p.add_argument("--tasks", nargs="+", default=list(TASKS))
    args = p.parse_args()
    start = time.perf_counter()

    # every env built and checked first (this compiles what is not cached yet), then timed
    pairs = {}
    for task_id in args.tasks:
        new, old = make(task_id, args.num_envs, args.threads), make(task_id, args.num_envs, args.threads)
        use_legacy_kernel(old)
        actions = np.random.default_rng(0).uniform(-1, 1, (args.num_envs, new.task.action_size)).astype(np.float32) * 0.3
        check_identical(new, old, actions)
        pairs[task_id] = new, old, actions
    n = args.extra_envs
    plain = make("UniLab/Go1Joystick-v0", n, args.threads)
    extra = make("UniLab/Go1Joystick-v0", n, args.threads, reward_terms=EXTRA)
    assert extra.reward_names == (*REWARD_NAMES[:-1], "foot_clearance", REWARD_NAMES[-1]), extra.reward_names
    builtin = slice(0, len(REWARD_NAMES) - 1)  # the columns both have (the clip differs: it sees the extra term)
    extra_actions = np.random.default_rng(0).uniform(-1, 1, (n, plain.task.action_size)).astype(np.float32) * 0.3

    def same_state(a, b, what):  # a reward term changes no state: both stay identical
        assert_same(a, b, what, builtin, keys=("obs", "privileged_obs", "reward_terms", "terminated"))

    for _ in range(2):
        plain.step(extra_actions), extra.step(extra_actions)
        same_state(plain, extra, "warm-up")
    assert np.any(extra._reward_terms[:, builtin.stop] != 0.0), "foot_clearance never fired"
    print(f"new and old kernels: identical obs, privileged obs, rewards, reward terms, terminations "
          f"(seeds 1, 0; 5 steps each; again after every round)  [{time.perf_counter() - start:.0f} s]\n")  # fmt: skip

    print(f"threads={args.threads}  rounds={args.rounds}  steps/round={args.steps}  kernel calls/round={args.calls}  "
          f"(ratios: median of per-round ratios; sps, ms: medians)")  # fmt: skip
    header = f"{'task':<22} {'N':>5} {'new sps':>9} {'old sps':>9} {'new/old':>7}   {'new ms':>7} {'old ms':>7} {'new/old':>7}"
    print(f"{'':<29}{'env step':^27}   {'task.compute alone':^23}")
    print(header)
    print("-" * len(header))
    met = True
    for task_id, (new, old, actions) in pairs.items():
        t = interleaved(new, old, actions, args.rounds, args.steps, args.calls, assert_same)
        step_ratio = statistics.median(t_old / t_new for t_new, t_old in t["step"])
        kernel_ratio = statistics.median(t_old / t_new for t_new, t_old in t["kernel"])
        met &= step_ratio >= BUDGET_RATIO and kernel_ratio >= BUDGET_RATIO
        sps = [args.num_envs / statistics.median(x[k] for x in t["step"]) for k in (0, 1)]
        ms = [1e3 * statistics.median(x[k] for x in t["kernel"]) for k in (0, 1)]
        print(f"{task_id.split('/')[-1]:<22} {args.num_envs:>5} {sps[0]:>9.0f} {sps[1]:>9.0f} {step_ratio:>7.3f}   "
              f"{ms[0]:>7.3f} {ms[1]:>7.3f} {kernel_ratio:>7.3f}", flush=True)  # fmt: skip
        new.close(), old.close()
    print(f"budget new/old >= {BUDGET_RATIO} (env step and kernel): {'met' if met else 'MISSED'}\n")

    t = interleaved(plain, extra, extra_actions, args.rounds, args.extra_steps, args.calls, same_state)
    step_extra = statistics.median(t_extra / t_plain - 1 for t_plain, t_extra in t["step"])
    kernel_extra = statistics.median(t_extra / t_plain - 1 for t_plain, t_extra in t["kernel"])
    plain_ms, extra_ms = (1e3 * statistics.median(x[k] for x in t["step"]) for k in (0, 1))
    plain.close(), extra.close()
    print(f"one extra term (Go1Joystick-v0 + foot_clearance, N={n}): env step {plain_ms:.1f} -> {extra_ms:.1f} ms, "
          f"extra {100 * step_extra:+.2f}% (kernel alone {100 * kernel_extra:+.2f}%)")  # fmt: skip
    print(f"budget extra env step time <= {100 * BUDGET_EXTRA:.0f}%: {'met' if step_extra <= BUDGET_EXTRA else 'MISSED'}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
