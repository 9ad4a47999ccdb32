"""Which sim-to-real layer topples a policy? Its deterministic evaluation, one profile section at a time.

    python benchmarks/sim2real_ablation.py policies/g1_joystick --profile g1_real
    python benchmarks/sim2real_ablation.py runs/g1_real --leave-one-out     # the profile it trained with
    python benchmarks/sim2real_ablation.py runs/g1_real --profile g1_real --push-magnitudes 0.5 1 1.5 2
    python benchmarks/sim2real_ablation.py runs/g1_real --profile g1_real --frictions 0.2 0.3 0.4

Evaluates the run's deterministic policy (``trainers.ppo.evaluate``, the same episodes and
seed for every row) on the bare task, under each section of the profile alone (its
domain randomization only, its pushes only, ...), optionally under the whole profile less
each section (``--leave-one-out``), and under the whole profile; prints one markdown table
of falls (share of episodes that end terminated), forward tracking (joystick tasks: share of
the tracking reward's maximum), return and episode length. A section whose row alone falls
far more than the bare row is what stands between the policy and the hardware the profile
describes; a leave-one-out row that falls far less than the whole profile says the same
from the other side. ``--push-magnitudes M ...`` adds one row per magnitude: the profile's
pushes alone (same interval and mode), each of exactly ``M`` (m/s, or N in force mode), so the
rows read as how hard a push the policy survives. ``--nearby`` adds rows beyond the profile,
each the whole profile with one thing outside the range it trained with (a robust policy is
judged there too): no latency at all, 2 control steps of latency on both sides, a slippery
floor (friction 0.2-0.4), a payload on the base (2-3x the profile's largest added mass), motors
at 80% strength, PD gains at 80%. ``--frictions F ...`` adds one row per floor friction: that
friction on every geom and nothing else perturbed (no other randomization, no pushes), so a
row that falls says the floor alone topples the policy.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Mapping, Sequence

import unilab_envs  # noqa: F401  (thread policies first, registers the tasks)
from trainers.ppo.evaluate import evaluate, load_policy
from wrappers.physics import DomainRandomizationConfig
from wrappers.sim2real import META_KEYS, SECTIONS, load_profile

#: every domain-randomization range but friction, switched off for a friction row
_NOT_FRICTION = {f.name: None for f in dataclasses.fields(DomainRandomizationConfig)
                 if f.name not in ("friction", "base_body")}


def _meta(profile: Mapping[str, Any]) -> dict:
    """The profile's meta keys (``env_id``, ``robot``...) that every row keeps; ``extends`` is resolved already."""
    return {k: v for k, v in profile.items() if k in META_KEYS and k != "extends"}


def ablation_profiles(profile: Mapping[str, Any], leave_one_out: bool = False,
                      push_magnitudes: Sequence[float] = ()) -> list[tuple[str, dict | None]]:
    """``(row label, profile or None for the bare task)`` for each row of the table, in order.

    ``profile`` is a resolved profile (:func:`wrappers.sim2real.load_profile`); each row
    keeps its meta keys (``env_id``...) and the sections named, in the stack's own order.
    ``push_magnitudes`` adds a row of the profile's ``random_push`` alone per magnitude,
    every push exactly that strong (no curriculum).
    """
    meta = _meta(profile)
    sections = [name for name in SECTIONS if name in profile]
    rows: list[tuple[str, dict | None]] = [("bare task", None)]
    rows += [(f"{name} alone", {**meta, name: profile[name]}) for name in sections]
    if push_magnitudes and "random_push" not in profile:
        raise ValueError("--push-magnitudes needs a profile with a random_push section")
    for m in push_magnitudes:
        push = {**profile["random_push"], "magnitude": [float(m), float(m)], "levels": 0}
        rows.append((f"random_push of {float(m):g} alone", {**meta, "random_push": push}))
    if leave_one_out:
        rows += [(f"all but {name}", {**meta, **{s: profile[s] for s in sections if s != name}})
                 for name in sections]
    rows.append(("whole profile", {**meta, **{s: profile[s] for s in sections}}))
    return rows


def nearby_profiles(profile: Mapping[str, Any]) -> list[tuple[str, dict]]:
    """``(label, profile)`` rows: the whole ``profile`` with one condition moved outside its ranges
    (only for the sections the profile has)."""
    meta = _meta(profile)
    whole = {**meta, **{s: profile[s] for s in SECTIONS if s in profile}}
    dr = dict(profile.get("domain_randomization") or {})
    rows = []
    if "action_latency" in profile or "observation_latency" in profile:
        rows.append(("nearby: no latency", {**whole, "action_latency": {"delay": 0}, "observation_latency": {"delay": 0}}))
        rows.append(("nearby: 2 steps of latency each way", {**whole, "action_latency": {"delay": 2},
                                                              "observation_latency": {**profile.get("observation_latency", {}), "delay": 2}}))
    if dr.get("friction") is not None:
        rows.append(("nearby: slippery floor (friction 0.2-0.4)", {**whole, "domain_randomization": {**dr, "friction": [0.2, 0.4]}}))
    if dr.get("added_mass") is not None:
        high = float(dr["added_mass"][1])
        rows.append((f"nearby: payload {2 * high:g}-{3 * high:g} kg", {**whole, "domain_randomization": {**dr, "added_mass": [2 * high, 3 * high]}}))
    if "motor_strength" in profile:
        rows.append(("nearby: motors at 80%", {**whole, "motor_strength": {**profile["motor_strength"], "strength": [0.8, 0.8]}}))
    if dr.get("kp_scale") is not None:
        rows.append(("nearby: PD gains at 80%", {**whole, "domain_randomization": {**dr, "kp_scale": [0.8, 0.8], "kd_scale": [0.8, 0.8]}}))
    return rows


def friction_profiles(profile: Mapping[str, Any], frictions: Sequence[float]) -> list[tuple[str, dict]]:
    """``(label, profile)`` rows: floor friction exactly ``F`` and nothing else, one per ``F``."""
    meta = _meta(profile)
    return [(f"floor friction {float(f):g} alone",
             {**meta, "domain_randomization": {**_NOT_FRICTION, "friction": [float(f), float(f)]}})
            for f in frictions]


def table(results: list[tuple[str, Any]]) -> str:
    """Markdown table of ``(label, EvalResult)`` rows."""
    if any(r.success_rate is not None for _, r in results):  # reach, grasp: a success ends the episode too
        lines = ["| wrappers | success | ended early | return | length |", "|---|---|---|---|---|"]
        for label, r in results:
            lines.append(f"| {label} | {r.success_rate:.1%} | {r.fall_rate:.1%} | {r.mean_return:.1f} | {r.mean_length:.0f} |")
        return "\n".join(lines)
    lines = ["| wrappers | falls | forward tracking | return | length |", "|---|---|---|---|---|"]
    for label, r in results:
        track = "-" if r.tracking_share is None else f"{r.tracking_share:.1%}"
        lines.append(f"| {label} | {r.fall_rate:.1%} | {track} | {r.mean_return:.1f} | {r.mean_length:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="run directory or checkpoint (bundled PPO)")
    p.add_argument("--profile", help="profile name or YAML path (default: the one the run trained with)")
    p.add_argument("--leave-one-out", action="store_true", help="also the whole profile less each section")
    p.add_argument("--push-magnitudes", type=float, nargs="+", default=(), metavar="M",
                   help="also the profile's pushes alone at exactly each magnitude (m/s in velocity mode)")
    p.add_argument("--nearby", action="store_true",
                   help="also the whole profile with one condition outside its ranges (latency, friction, payload, motors, gains)")
    p.add_argument("--frictions", type=float, nargs="+", default=(), metavar="F",
                   help="also the floor friction F alone, nothing else perturbed, one row per F (e.g. 0.2 0.3 0.4)")
    p.add_argument("--only-nearby", action="store_true", help="the bare task, the whole profile and the --nearby rows only")
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--seed", type=int, default=12345)
    args = p.parse_args(argv)
    _, cfg, _ = load_policy(args.run, "cpu")
    name = args.profile or cfg.sim2real
    if name is None:
        p.error(f"{args.run} trained on the bare task: name the profile to take apart with --profile (e.g. g1_real)")
    results = []
    try:
        profile = load_profile(name)
        rows = ablation_profiles(profile, args.leave_one_out, args.push_magnitudes)
    except ValueError as e:
        p.error(str(e))
    if args.only_nearby:
        rows = [rows[0], rows[-1]]
    if args.nearby or args.only_nearby:
        rows += nearby_profiles(profile)
    rows += friction_profiles(profile, args.frictions)
    for label, profile in rows:
        r = evaluate(args.run, episodes=args.episodes, num_envs=args.num_envs, seed=args.seed,
                     sim2real=profile, progress=False)
        print(f"[ablation] {label}: {r.summary()}", flush=True)
        results.append((label, r))
    print(f"{args.run} under {name} ({results[0][1].episodes} episodes a row, seed {args.seed}):")
    print(table(results))


if __name__ == "__main__":
    main()
