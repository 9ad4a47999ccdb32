"""The depth camera's cost, and the env around it against the physics floor plus the camera alone.

For each N, side by side in rounds (same process, same states):

* ``env``: ``UniLab/Go1JoystickDepth-v0``'s ``step`` (a fixed action batch; a frame every step);
* ``floor``: ``mujoco.batch.Batch`` stepping the same model (same N, threads, substeps);
* ``camera``: ``DepthCamera.render`` of every env's frame alone (the Numba ray caster);
* ``blurred``: the same with motion blur on (every env's exposure half a control step: ``blur_samples`` poses a frame);
* ``batch.ray``: ``mujoco.batch.Batch.ray`` casting the same pixel rays (the other candidate; it also runs each
  simulation's kinematics and sees the robot's own geoms, so it is a cost, not an equal).

``overhead = env / (floor + camera) - 1``: the budget is <= 15%. The cost per image is the camera's time / N.

    python benchmarks/depth_camera_cost.py [--num-envs 256 1024] [--threads 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import mujoco
import mujoco.batch
import numpy as np

import unilab_envs  # noqa: F401
from unilab_envs.threads import resolve_num_threads

TASK = "UniLab/Go1JoystickDepth-v0"


def _time(fn, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def world_rays(task) -> tuple[np.ndarray, np.ndarray]:
    """Every env's pixel rays in the world frame, ``(N, P, 3)`` origins and directions (for ``batch.ray``)."""
    camera, qpos, q = task.camera, task.physics.qpos, task.robot.root_q
    n = qpos.shape[0]
    origins = np.empty((n, camera.directions.shape[0], 3))
    directions = np.empty_like(origins)
    for i in range(n):
        base = np.empty(9)
        mujoco.mju_quat2Mat(base, qpos[i, q + 3:q + 7])
        base = base.reshape(3, 3)
        mount = np.empty(9)
        mujoco.mju_quat2Mat(mount, camera.mount_quat[i])
        origins[i] = qpos[i, q:q + 3] + base @ camera.mount_pos[i]
        directions[i] = camera.directions @ (base @ mount.reshape(3, 3)).T
    return origins, directions


def measure(num_envs: int, threads: int, steps: int, rounds: int) -> dict[str, float]:
    env = gym.make_vec(TASK, num_envs=num_envs, num_threads=threads, copy=False)
    env.reset(seed=0)
    task = env.unwrapped.task
    camera = task.camera
    actions = np.random.default_rng(0).uniform(-0.3, 0.3, (num_envs, 12)).astype(np.float32)
    for _ in range(10):
        env.step(actions)  # walk off the reset pose
    floor = mujoco.batch.Batch(env.unwrapped.model, num_envs, nthread=threads)
    rays = mujoco.batch.Batch(env.unwrapped.model, num_envs, nthread=threads)
    origins, directions = world_rays(task)
    qpos = task.physics.qpos
    blur_exposure = np.full(num_envs, 0.5 * task.control_dt)
    nominal_exposure = camera.exposure.copy()

    def blurred():
        camera.exposure[:] = blur_exposure
        camera.render(qpos)
        camera.exposure[:] = nominal_exposure

    parts = {"env": lambda: env.step(actions), "floor": lambda: floor.step(nstep=env.unwrapped.frame_skip),
             "camera": lambda: camera.render(qpos), "blurred": blurred,
             "batch.ray": lambda: rays.ray(origins, directions, flg_static=True)}
    for fn in parts.values():
        fn()  # warm up
    times: dict[str, list[float]] = {name: [] for name in parts}
    overheads = []
    for _ in range(rounds):
        floor.state[:] = env.unwrapped.batch.state
        rays.state[:] = env.unwrapped.batch.state
        now = {name: _time(fn, steps) for name, fn in parts.items()}
        for name, value in now.items():
            times[name].append(value)
        overheads.append(now["env"] / (now["floor"] + now["camera"]) - 1.0)
    env.close()
    out = {name: statistics.median(values) for name, values in times.items()}
    out["overhead"] = statistics.median(overheads)
    out["pixels"] = camera.directions.shape[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    threads = resolve_num_threads(args.threads)
    print(f"{TASK}, threads={threads}, {args.rounds} rounds of {args.steps} calls (medians)")
    header = (f"{'N':>5} {'env sps':>9} {'floor sps':>10} {'camera us/img':>14} {'blurred us/img':>15} "
              f"{'batch.ray us/img':>17} {'overhead':>9}")
    print(header)
    print("-" * len(header))
    for n in args.num_envs:
        r = measure(n, threads, args.steps, args.rounds)
        print(f"{n:>5} {n / r['env']:>9.0f} {n / r['floor']:>10.0f} {1e6 * r['camera'] / n:>14.1f} "
              f"{1e6 * r['blurred'] / n:>15.1f} {1e6 * r['batch.ray'] / n:>17.1f} {100 * r['overhead']:>8.1f}%", flush=True)
    print(f"({r['pixels']} pixels an image; overhead = env / (floor + camera) - 1, budget <= 15%)")


if __name__ == "__main__":
    main()
