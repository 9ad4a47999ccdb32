"""How a Go1JoystickRough-v0 policy walks: on flat ground, and on each terrain type by level.

    python benchmarks/rough_terrain_eval.py runs/go1_rough [--episodes 32] [--levels 0 3 5 7 9] [--sim2real PROFILE]
    python benchmarks/rough_terrain_eval.py runs/go1_rough --skip-flat --pooled 0 5 --episodes 256 [--seed 5000]

Deterministic policy, bare task (no sim-to-real wrappers; ``--sim2real`` names a profile to evaluate
under instead, e.g. ``go1_depth_real`` for a depth student), evaluation seed 12345. The run may be
of UniLab/Go1JoystickRough-v0 or of UniLab/Go1JoystickDepth-v0 (the same terrain, seen by a camera):

* flat ground (every tile flat: ``terrain={"types": ["flat"]}``): what the flat task's
  target is stated in (forward tracking as a share of its maximum, falls over 64
  episodes of 20 s, the measured speed at 0.3 / 0.6 / 1.0 m/s commands);
* each terrain type at each of ``--levels`` (every env starts there: ``init_levels=(L, L)``):
  falls and forward tracking over ``--episodes`` episodes.

The curriculum's own measure, the mean terrain level of the training envs, is the run's
``env/terrain_level`` column in ``progress.csv``; the last value is printed too.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import unilab_envs  # noqa: F401  (registers the tasks)
from trainers.ppo.evaluate import evaluate, load_policy
from trainers.ppo.joystick_eval import measure_commands
from unilab_envs.terrain import TerrainConfig

FLAT = {"terrain": {"types": ["flat"]}}


def last_training_level(run: Path) -> str:
    """The last ``env/terrain_level`` of the run's progress log, or '?' when there is none."""
    log = run / "progress.csv"
    if not log.is_file():
        return "?"
    rows = list(csv.DictReader(log.open()))
    values = [r["env/terrain_level"] for r in rows if r.get("env/terrain_level")]
    return f"{float(values[-1]):.2f} after {rows[-1]['step']} steps" if values else "?"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, help="run directory (bundled PPO, UniLab/Go1JoystickRough-v0 or Go1JoystickDepth-v0)")
    p.add_argument("--episodes", type=int, default=32, help="episodes per terrain type and level")
    p.add_argument("--levels", type=int, nargs="+", default=[0, 3, 5, 7, 9])
    p.add_argument("--skip-flat", action="store_true")
    p.add_argument("--sim2real", default=None, help="a sim-to-real profile to evaluate under (default: the bare task)")
    p.add_argument("--seed", type=int, default=12345, help="evaluation seed (env i gets seed + i)")
    p.add_argument("--pooled", type=int, nargs=2, metavar=("LO", "HI"),
                   help="instead of the table: --episodes episodes on every terrain type, each env starting on a "
                        "level drawn from LO..HI (the headline number of a terrain policy)")
    args = p.parse_args()
    profile = None if args.sim2real in (None, "none") else args.sim2real
    _, cfg, _ = load_policy(args.run)
    types = cfg.env_kwargs.get("terrain", {}).get("types") or list(TerrainConfig().types)
    print(f"run {args.run}: training terrain level {last_training_level(args.run)}; evaluated under "
          f"{profile or 'the bare task'}, seed {args.seed}")
    if not args.skip_flat:
        flat = evaluate(args.run, episodes=64, num_envs=64, env_kwargs=FLAT, sim2real=profile, progress=False, seed=args.seed)
        print(f"flat ground: {flat.summary()}")
        for line in measure_commands(args.run, [0.3, 0.6, 1.0], env_kwargs=FLAT):
            print(f"flat ground: {line.line()}")
    if args.pooled:
        lo, hi = args.pooled
        r = evaluate(args.run, episodes=args.episodes, num_envs=args.episodes, env_kwargs={"init_levels": (lo, hi)},
                     sim2real=profile, progress=False, skip_first=False, seed=args.seed)
        print(f"levels {lo}-{hi}, every type: falls {r.fall_rate:.1%}, forward tracking {r.tracking_share or 0.0:.1%} "
              f"({args.episodes} episodes)")
        return
    print(f"{'type':<12} " + " ".join(f"{'L' + str(lv) + ' falls/track':>16}" for lv in args.levels))
    for kind in types:
        cells = []
        for level in args.levels:
            kwargs = {"terrain": {"types": [kind]}, "init_levels": (level, level)}
            r = evaluate(args.run, episodes=args.episodes, num_envs=args.episodes, env_kwargs=kwargs, sim2real=profile,
                         progress=False, skip_first=False, seed=args.seed)
            cells.append(f"{r.fall_rate:>7.0%}/{r.tracking_share or 0.0:>6.0%}  ")
        print(f"{kind:<12} " + " ".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
