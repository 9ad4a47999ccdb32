"""Falls of the shipped policies in ``unilab play --headless`` with the deploy spec's safety guard and without it.

    python benchmarks/safety_guard_falls.py [--episodes 64] [--seed 0] [--policies g1_joystick_real go1_rough ...]

For every shipped policy whose spec the guard maps (home_offset actions), on our model, on the
stiff-servo variant of it (:mod:`benchmarks.stiff_servos`: G1 Kp 500 / Kd 10, Go1 and Go2 Kp 100 / Kd 2)
driven with the spec's gains (``unilab play``'s default) and on that variant keeping its own gains
(``--model-gains``), the same episodes (``--seed``) run with the spec's guard and with ``--safety
off``; a markdown row each: falls on / off, their difference, the joint-steps the guard's torque
limit moved. Each row is ``unilab play POLICY --headless --episodes N --seed S [--model-path
STIFF.xml [--model-gains]] [--safety off]``; the guard's counts of the guarded run (every limit, the
watchdog trips) go to stderr, one line a row.

The shipped policies the guard does not map are the UR5 grasps (``ur5_grasp``, ``ur5_grasp_real``: ``ee_delta``
actions and no safety section in their specs); ``go1_depth`` renders its depth camera every control step
(7-17 ms a step on a shared 2-vCPU VM: 14-15 min a row, on + off): last in :data:`SHIPPED`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.stiff_servos import write_stiff_model  # noqa: E402
from trainers.play import Player, find_policy, run_headless  # noqa: E402
from unilab_robot.model import packaged_model_path  # noqa: E402

POLICIES = Path(__file__).resolve().parents[1] / "policies"
SHIPPED = ("g1_joystick", "g1_joystick_real", "g1_track", "go1_joystick", "go1_joystick_fast", "go1_joystick_real",
           "go1_rough", "go2_joystick_real", "go1_depth")
MODELS = ("ours", "stiff", "stiff --model-gains")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--policies", nargs="+", default=list(SHIPPED))
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="stiff_servos_"))
    print("| policy | model | falls, guard on | falls, --safety off | on - off (points) | torque-limited joint-steps |")
    print("|---|---|---|---|---|---|")
    for name in args.policies:
        robot = packaged_model_path(find_policy(POLICIES / name).spec).parent.name  # g1, go1, go2: the assets' folder
        stiff = str(write_stiff_model(robot, folder))
        for model in args.models:
            path = None if model == "ours" else stiff
            gains = model.endswith("--model-gains")
            t0 = time.perf_counter()
            on = Player(find_policy(POLICIES / name), model_path=path, seed=args.seed, model_gains=gains)
            res_on = run_headless(on, args.episodes, progress=False)
            off = Player(find_policy(POLICIES / name), model_path=path, seed=args.seed, model_gains=gains, safety="off")
            res_off = run_headless(off, args.episodes, progress=False)
            steps = max(1, round(res_on.mean_length * args.episodes)) * on.spec.action.size
            torque = on.guard.counts["torque_limits"] / steps if on.guard is not None else float("nan")
            label = {"ours": "ours", "stiff": f"{robot} stiff (spec's gains)", "stiff --model-gains": f"{robot} stiff, --model-gains"}[model]
            print(f"| {name} | {label} | {res_on.fall_rate:.1%} | {res_off.fall_rate:.1%} | "
                  f"{100 * (res_on.fall_rate - res_off.fall_rate):+.1f} | {torque:.2%} |  <!-- {time.perf_counter() - t0:.0f} s -->",
                  flush=True)
            print(f"{name} | {label}: {res_on.safety}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
