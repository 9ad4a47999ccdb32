"""What the safety guard costs a policy: the evaluator and ``unilab play``, each without and with the guard.

    python benchmarks/safety_layer.py policies/go1_joystick policies/g1_joystick
    python benchmarks/safety_layer.py policies/go1_joystick --safety '{"max_target_step": 0.3}'
    python benchmarks/safety_layer.py policies/go1_joystick_real --profile go1_real

For each policy folder: ``trainers.ppo.evaluate`` (batched envs, ``--episodes`` episodes on
``--envs`` envs for each of ``--eval-seeds``, the same seeds for both rows) on the profile
(``--profile``; default the bare task) and on the profile plus a ``safety`` section
(``--safety``, JSON; default ``{}``: the defaults), then ``unilab play --headless`` (plain
MuJoCo, the ONNX policy, the NumPy guard) for ``--play-episodes`` episodes per ``--play-seeds``,
``--safety off`` and with the same section. Prints one markdown table: falls (pooled, and the
count per seed: a guard changes the trajectories, so single seeds differ by chance),
planar velocity tracking (evaluator: share of the tracking reward's maximum, mean over seeds;
play: mean exp(-|v_cmd - v|^2 / sigma)), how often each limit moved a target (share of
joint-steps) and how often the safe mode latched.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)
import trainers.ppo.evaluate as evaluation
from trainers.play import Player, find_policy, run_headless
from wrappers.sim2real import Sim2Real, load_profile


def sim2real_under(env: Any) -> Sim2Real | None:
    """The ``Sim2Real`` stack in ``env``'s wrapper chain (``env`` itself, or under outer wrappers such as the
    ``ObservationHistory`` a run's ``obs_history`` adds), or ``None`` on a bare env."""
    while not isinstance(env, Sim2Real):
        env = getattr(env, "env", None)
        if env is None:
            return None
    return env


def _evaluate(run: str, episodes: int, envs: int, profile: dict | None, seed: int) -> tuple[Any, np.ndarray | None, int]:
    """The evaluation, and, under a guard, its totals (COUNTS over every env and step) and the joint-steps."""
    built, steps = [], [0]
    make = evaluation.make_vec_env

    def keep(*args, **kwargs):
        env = make(*args, **kwargs)
        built.append(env)
        step = env.step

        def counted(actions):
            steps[0] += 1
            return step(actions)

        env.step = counted
        return env

    evaluation.make_vec_env = keep
    try:
        result = evaluation.evaluate(run, episodes=episodes, num_envs=envs, sim2real=profile, progress=False,
                                     seed=seed)
    finally:
        evaluation.make_vec_env = make
    stack = sim2real_under(built[0]) if built else None
    layer = stack.layers.get("safety") if stack is not None else None
    if layer is None:
        return result, None, 0
    return result, layer.counts.sum(axis=0), steps[0] * layer.counts.shape[0] * layer.limits.size


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--episodes", type=int, default=256, help="evaluator episodes per seed (default 256)")
    p.add_argument("--envs", type=int, default=128, help="evaluator envs (default 128)")
    p.add_argument("--eval-seeds", type=int, nargs="+", default=[12345, 1000, 5000, 1],
                   help="evaluator seeds (env i of seed s is seeded s + i: keep them --envs apart)")
    p.add_argument("--play-episodes", type=int, default=128, help="play episodes per seed (default 128)")
    p.add_argument("--play-seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--profile", default=None, help="a sim-to-real profile both rows run under (default: the bare task)")
    p.add_argument("--safety", default="{}", help="the safety section, JSON (default {}: the defaults)")
    args = p.parse_args(argv)
    section = json.loads(args.safety)
    base = load_profile(args.profile) if args.profile else {}
    guarded = {**base, "safety": section}
    print("| policy | path | guard | episodes | falls (per seed) | tracking | targets moved: position / rate / torque "
          "(share of joint-steps) | safe mode latched |")
    print("|---|---|---|---:|---|---:|---|---:|")
    for run in args.runs:
        for label, profile in (("off", base or None), ("on", guarded)):
            falls, episodes, tracking, counts, joint_steps = [], 0, [], np.zeros(4, np.int64), 0
            for seed in args.eval_seeds:
                r, c, n = _evaluate(run, args.episodes, args.envs, profile, seed)
                falls.append(int(round(r.fall_rate * r.episodes)))
                episodes += r.episodes
                tracking.append(r.tracking_share)
                if c is not None:
                    counts += c
                    joint_steps += n
            moved = (" / ".join(f"{c / joint_steps:.2%}" for c in counts[:3]) if joint_steps else "-")
            latched = f"{counts[3]} trips" if joint_steps else "-"
            print(f"| {run} | eval | {label} | {episodes} | {sum(falls) / episodes:.2%} "
                  f"({' / '.join(map(str, falls))}) | {np.mean(tracking):.2%} | {moved} | {latched} |", flush=True)
        for label, flag in (("off", "off"), ("on", json_profile(section))):
            falls, episodes, lin, yaw, moved, latched = [], 0, [], [], np.zeros(3), 0
            joint_steps = 0
            for seed in args.play_seeds:
                player = Player(find_policy(run), sim2real=args.profile, seed=seed, safety=flag)
                res = run_headless(player, args.play_episodes, progress=False)
                falls.append(int(round(res.fall_rate * res.episodes)))
                episodes += res.episodes
                lin.append(res.tracking_lin_vel)
                yaw.append(res.tracking_ang_vel)
                if player.guard is not None:
                    c = player.guard.counts
                    moved += [c["position_clips"], c["rate_limits"], c["torque_limits"]]
                    joint_steps += int(round(res.mean_length * res.episodes)) * player.guard.limits.size
                    latched += int(res.safety.rsplit("latched in ", 1)[1].split(" of ")[0])
            text = " / ".join(f"{m / joint_steps:.2%}" for m in moved) if joint_steps else "-"
            print(f"| {run} | play | {label} | {episodes} | {sum(falls) / episodes:.2%} ({' / '.join(map(str, falls))}) "
                  f"| lin {np.mean(lin):.3f}, yaw {np.mean(yaw):.3f} | {text} | "
                  f"{f'{latched} episodes' if joint_steps else '-'} |", flush=True)


def json_profile(section: dict) -> str:
    """``--safety`` for play: ``default`` for the defaults, else a temporary profile YAML holding the section."""
    if not section:
        return "default"
    import tempfile

    import yaml

    path = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    yaml.safe_dump({"safety": section}, path)
    path.close()
    return path.name


if __name__ == "__main__":
    main()
