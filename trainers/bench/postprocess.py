"""Row 1: post-processing (obs + 15 reward terms + terminations) at G1 humanoid sizes.

A representative fused kernel of the G1 joystick task's shape: 8192 envs, 29 joints,
2 feet, observation 98 (gyro 3, gravity 3, command 3, joint pos 29, joint vel 29,
last action 29, gait phase 2), 15 named reward terms, tilt / height terminations, read
from live-like ``(N, ...)`` float64 arrays (a free-joint ``qpos`` / ``qvel``, actuator
forces, foot positions). Three implementations compute the same numbers:

- ``numpy``:  vectorized NumPy over the whole batch, one thread (the baseline);
- ``threads``: the same NumPy function on row shards in a ``ThreadPoolExecutor``;
- ``numba``:  one fused Numba ``prange`` pass (what UniLab's tasks do).

Outputs are checked to agree before anything is timed. A fourth, ``stream``, reads
every input and writes every output once with no math: the machine's memory floor
for this data, so the table shows how close the fused kernel gets to it (the 12x
budget cannot be met where the floor itself is under 12x the baseline).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from unilab_envs.core.quat import exp_f32, sin_cos_f32

J, F, OBS, TERMS = 29, 2, 98, 15
# weights (signed scale * control dt) and shaping constants
WEIGHTS = np.array([1.0, 0.5, -2.0, -0.05, -5.0, -10.0, -1e-5, -0.01, -0.1, 0.5, 1.0, -0.1, -1.0, -0.5, -20.0]) * 0.02
SIGMA, HEIGHT_T, AIR_T, SWING, DT, COS_TILT, MIN_H = 0.25, 0.75, 0.3, 0.08, 0.02, math.cos(1.0), 0.4


def make_inputs(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Synthetic arrays shaped and scaled like a G1 batch mid-episode."""
    r = np.random.default_rng(seed)
    qpos = np.zeros((n, 7 + J))
    qpos[:, 2] = r.uniform(0.3, 0.85, n)
    q = r.normal(size=(n, 4)) * np.array([1.0, 0.15, 0.15, 0.3])
    qpos[:, 3:7] = q / np.linalg.norm(q, axis=1, keepdims=True)
    qpos[:, 7:] = r.normal(0, 0.3, (n, J))
    offsets = np.array([0.0, math.pi])
    return {
        "qpos": qpos,
        "qvel": r.normal(0, 0.5, (n, 6 + J)),
        "force": r.normal(0, 20, (n, J)),
        "last_action": r.uniform(-1, 1, (n, J)),
        "prev_action": r.uniform(-1, 1, (n, J)),
        "command": r.uniform(-1, 1, (n, 3)) * (r.uniform(size=(n, 1)) > 0.1),
        "phase": r.uniform(0, 2 * math.pi, n),
        "foot_pos": np.concatenate([r.normal(0, 1, (n, F, 2)), r.uniform(0, 0.12, (n, F, 1))], 2),
        "prev_foot_pos": r.normal(0, 1, (n, F, 3)),
        "air_time": r.uniform(0, 0.5, (n, F)),
        "contact": r.uniform(size=(n, F)) > 0.5,
        "home": r.normal(0, 0.2, J),
        "low": np.full(J, -1.5),
        "high": np.full(J, 1.5),
        "phase_offsets": offsets,
        "phase_offsets_cos_sin": np.stack([np.cos(offsets), np.sin(offsets)], 1),  # as the G1 task keeps them
    }


def make_outputs(n: int) -> dict[str, np.ndarray]:
    return {"obs": np.zeros((n, OBS), np.float32), "terms": np.zeros((n, TERMS), np.float32),
            "reward": np.zeros(n, np.float32), "terminated": np.zeros(n, np.bool_)}


# --------------------------------------------------------------------------- NumPy


def numpy_post(x: dict, out: dict, lo: int = 0, hi: int | None = None) -> None:
    """Vectorized NumPy over rows ``lo:hi`` (read-only inputs: shard-safe)."""
    s = slice(lo, hi)
    qpos, qvel, cmd = x["qpos"][s], x["qvel"][s], x["command"][s]
    w, qx, qy, qz = qpos[:, 3], qpos[:, 4], qpos[:, 5], qpos[:, 6]
    # body-frame linear velocity (inverse rotation) and projected gravity
    v = qvel[:, 0:3]
    tx = 2 * (qy * v[:, 2] - qz * v[:, 1])
    ty = 2 * (qz * v[:, 0] - qx * v[:, 2])
    tz = 2 * (qx * v[:, 1] - qy * v[:, 0])
    vx = v[:, 0] - w * tx + (qy * tz - qz * ty)
    vy = v[:, 1] - w * ty + (qz * tx - qx * tz)
    vz = v[:, 2] - w * tz + (qx * ty - qy * tx)
    gx = -2 * (qx * qz - w * qy)
    gy = -2 * (qy * qz + w * qx)
    gz = -(1 - 2 * (qx * qx + qy * qy))
    wx, wy, wz = qvel[:, 3], qvel[:, 4], qvel[:, 5]
    height = qpos[:, 2]
    moving = (cmd[:, 0] ** 2 + cmd[:, 1] ** 2 > 0.01) | (np.abs(cmd[:, 2]) > 0.1)
    jq, jd = qpos[:, 7:], qvel[:, 6:]
    la, pa = x["last_action"][s], x["prev_action"][s]
    dq = jq - x["home"]
    torque = np.square(x["force"][s]).sum(1)
    rate = np.square(la - pa).sum(1)
    pose = np.square(dq).sum(1)
    stand = np.abs(dq).sum(1)
    limits = (np.maximum(0.0, jq - x["high"]) + np.maximum(0.0, x["low"] - jq)).sum(1)
    phase = x["phase"][s]
    fp, pfp, air, contact = x["foot_pos"][s], x["prev_foot_pos"][s], x["air_time"][s], x["contact"][s]
    h = fp[:, :, 2] - 0.03
    in_contact = h < 0.01
    first = in_contact & ~contact & (air > 0)
    air_reward = ((air + DT - AIR_T) * first).sum(1)
    fv = (fp[:, :, :2] - pfp[:, :, :2]) / DT
    slip = (np.square(fv).sum(2) * in_contact).sum(1)
    sn = np.sin(phase[:, None] + x["phase_offsets"])
    target = np.where(moving[:, None] & (sn > 0), SWING * sn * sn, 0.0)
    phase_err = np.square(h - target).sum(1)
    fell = (gz > -COS_TILT) | (height < MIN_H)
    lin_err = (cmd[:, 0] - vx) ** 2 + (cmd[:, 1] - vy) ** 2
    terms = np.stack([
        np.exp(-lin_err / SIGMA), np.exp(-(cmd[:, 2] - wz) ** 2 / SIGMA), vz * vz, wx * wx + wy * wy,
        gx * gx + gy * gy, (height - HEIGHT_T) ** 2, torque, rate, pose, np.where(moving, air_reward, 0.0),
        np.exp(-phase_err / 0.0025), slip, limits, np.where(moving, 0.0, stand), fell.astype(np.float64),
    ], 1) * WEIGHTS
    out["terms"][s] = terms
    out["reward"][s] = terms.sum(1)
    out["terminated"][s] = fell
    obs = out["obs"][s]
    obs[:, 0:3] = qvel[:, 3:6]
    obs[:, 3], obs[:, 4], obs[:, 5] = gx, gy, gz
    obs[:, 6:9] = cmd
    obs[:, 9:38] = dq
    obs[:, 38:67] = jd
    obs[:, 67:96] = la
    obs[:, 96], obs[:, 97] = np.sin(phase), np.cos(phase)


class ThreadedNumpy:
    """``numpy_post`` on ``workers`` row shards in a persistent thread pool."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool = ThreadPoolExecutor(workers)

    def __call__(self, x: dict, out: dict) -> None:
        n = x["qpos"].shape[0]
        bounds = np.linspace(0, n, self.workers + 1).astype(int)
        futs = [self.pool.submit(numpy_post, x, out, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
        for f in futs:
            f.result()

    def close(self) -> None:
        self.pool.shutdown()


# --------------------------------------------------------------------------- Numba


@nb.njit(parallel=True, cache=True, fastmath=True, error_model="numpy")
def _fused(qpos, qvel, force, la, pa, cmd, phase, fp, pfp, air, contact, home, low, high, offs_cos_sin, weights,
           obs, terms_out, reward, terminated):  # fmt: skip
    for i in nb.prange(qpos.shape[0]):
        w, qx, qy, qz = qpos[i, 3], qpos[i, 4], qpos[i, 5], qpos[i, 6]
        v0, v1, v2 = qvel[i, 0], qvel[i, 1], qvel[i, 2]
        tx = 2 * (qy * v2 - qz * v1)
        ty = 2 * (qz * v0 - qx * v2)
        tz = 2 * (qx * v1 - qy * v0)
        vx = v0 - w * tx + (qy * tz - qz * ty)
        vy = v1 - w * ty + (qz * tx - qx * tz)
        vz = v2 - w * tz + (qx * ty - qy * tx)
        gx = -2 * (qx * qz - w * qy)
        gy = -2 * (qy * qz + w * qx)
        gz = -(1 - 2 * (qx * qx + qy * qy))
        wx, wy, wz = qvel[i, 3], qvel[i, 4], qvel[i, 5]
        height = qpos[i, 2]
        moving = (cmd[i, 0] ** 2 + cmd[i, 1] ** 2 > 0.01) or abs(cmd[i, 2]) > 0.1
        torque = rate = pose = stand = limits = 0.0
        for j in range(la.shape[1]):
            qj = qpos[i, 7 + j]
            dq = qj - home[j]
            torque += force[i, j] * force[i, j]
            da = la[i, j] - pa[i, j]
            rate += da * da
            pose += dq * dq
            stand += abs(dq)
            limits += max(0.0, qj - high[j]) + max(0.0, low[j] - qj)
            obs[i, 9 + j] = dq
            obs[i, 38 + j] = qvel[i, 6 + j]
            obs[i, 67 + j] = la[i, j]
        air_reward = slip = phase_err = 0.0
        sin_phase, cos_phase = sin_cos_f32(phase[i])  # float32 like the outputs, as the G1 task does
        for f in range(fp.shape[1]):
            h = fp[i, f, 2] - 0.03
            c = h < 0.01
            if c and not contact[i, f] and air[i, f] > 0:
                air_reward += air[i, f] + 0.02 - 0.3
            if c:
                fvx = (fp[i, f, 0] - pfp[i, f, 0]) / 0.02
                fvy = (fp[i, f, 1] - pfp[i, f, 1]) / 0.02
                slip += fvx * fvx + fvy * fvy
            sn = sin_phase * offs_cos_sin[f, 0] + cos_phase * offs_cos_sin[f, 1]  # sin(phase + offset)
            target = 0.08 * sn * sn if (moving and sn > 0) else 0.0
            phase_err += (h - target) ** 2
        fell = gz > -0.5403023058681398 or height < 0.4
        lin_err = (cmd[i, 0] - vx) ** 2 + (cmd[i, 1] - vy) ** 2
        t = (exp_f32(-lin_err / 0.25), exp_f32(-(cmd[i, 2] - wz) ** 2 / 0.25), vz * vz, wx * wx + wy * wy,
             gx * gx + gy * gy, (height - 0.75) ** 2, torque, rate, pose, air_reward if moving else 0.0,
             exp_f32(-phase_err / 0.0025), slip, limits, 0.0 if moving else stand, 1.0 if fell else 0.0)
        total = 0.0
        for k in range(len(t)):
            value = weights[k] * t[k]
            terms_out[i, k] = value
            total += value
        reward[i] = total
        terminated[i] = fell
        obs[i, 0], obs[i, 1], obs[i, 2] = wx, wy, wz
        obs[i, 3], obs[i, 4], obs[i, 5] = gx, gy, gz
        obs[i, 6], obs[i, 7], obs[i, 8] = cmd[i, 0], cmd[i, 1], cmd[i, 2]
        obs[i, 96], obs[i, 97] = sin_phase, cos_phase


@nb.njit(parallel=True, cache=True, fastmath=True)
def _stream(qpos, qvel, force, la, pa, cmd, phase, fp, pfp, air, contact, obs, terms_out, reward, terminated):
    for i in nb.prange(qpos.shape[0]):
        s = phase[i] + cmd[i, 0] + cmd[i, 1] + cmd[i, 2]
        for j in range(qpos.shape[1]):
            s += qpos[i, j]
        for j in range(qvel.shape[1]):
            s += qvel[i, j]
        for j in range(force.shape[1]):
            s += force[i, j] + la[i, j] + pa[i, j]
        for f in range(fp.shape[1]):
            s += fp[i, f, 0] + fp[i, f, 1] + fp[i, f, 2] + pfp[i, f, 0] + pfp[i, f, 1] + pfp[i, f, 2] + air[i, f] + contact[i, f]
        for k in range(obs.shape[1]):
            obs[i, k] = s
        for k in range(terms_out.shape[1]):
            terms_out[i, k] = s
        reward[i] = s
        terminated[i] = s > 0.0


def stream_floor(x: dict, out: dict) -> None:
    """Move the fused kernel's bytes (every input read, every output written) with no math."""
    _stream(x["qpos"], x["qvel"], x["force"], x["last_action"], x["prev_action"], x["command"], x["phase"],
            x["foot_pos"], x["prev_foot_pos"], x["air_time"], x["contact"],
            out["obs"], out["terms"], out["reward"], out["terminated"])


def numba_post(x: dict, out: dict) -> None:
    _fused(x["qpos"], x["qvel"], x["force"], x["last_action"], x["prev_action"], x["command"], x["phase"],
           x["foot_pos"], x["prev_foot_pos"], x["air_time"], x["contact"], x["home"], x["low"], x["high"],
           x["phase_offsets_cos_sin"], WEIGHTS, out["obs"], out["terms"], out["reward"], out["terminated"])


# --------------------------------------------------------------------------- timing


def _best_ms(fn, reps: int, rounds: int) -> float:
    """Median over ``rounds`` of the mean per-call time of ``reps`` calls (ms)."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps * 1e3)
    return float(np.median(times))


def disagreements(x: dict, n: int, threaded: ThreadedNumpy) -> list[str]:
    """``"<implementation>: <output>"`` for every output that differs from single-thread NumPy."""
    ref, a, b = make_outputs(n), make_outputs(n), make_outputs(n)
    numpy_post(x, ref)
    threaded(x, a)
    numba_post(x, b)
    return [f"{name}: {k}" for k in ref for got, name in ((a, "threads"), (b, "numba"))
            if not np.allclose(ref[k], got[k], rtol=1e-4, atol=1e-5)]


G1_TASK = "UniLab/G1Joystick-v0"


def g1_kernel(num_envs: int, threads: int):
    """The registered G1 task's real fused ``compute`` on its own live arrays, or None if not registered."""
    import gymnasium as gym

    import unilab_envs

    if G1_TASK not in unilab_envs.TASKS:
        return None, None
    env = gym.make_vec(G1_TASK, num_envs=num_envs, num_threads=threads, copy=False)
    env.reset(seed=0)
    zeros = np.zeros((num_envs,) + env.single_action_space.shape, env.single_action_space.dtype)
    for _ in range(3):  # a few steps: live, mid-episode arrays
        env.step(zeros)
    e = env.unwrapped if hasattr(env, "unwrapped") else env

    def call() -> None:
        e.task.compute(e._obs, e._privileged_obs, e._reward_terms, e._reward, e._terminated, e._episode_step, e._rng)

    return call, env


def bench_postprocess(num_envs: int = 8192, threads: int = 2, reps: int = 10, rounds: int = 5,
                      real_g1: bool = True) -> list[dict]:
    """Rows for NumPy-in-threads and fused Numba vs single-thread NumPy (per-call ms)."""
    x, out = make_inputs(num_envs), make_outputs(num_envs)
    threaded = ThreadedNumpy(threads)
    real, env = g1_kernel(num_envs, threads) if real_g1 else (None, None)
    try:
        bad = disagreements(x, num_envs, threaded)  # also compiles / warms
        if bad:
            raise AssertionError(f"post-processing disagrees with NumPy: {bad}")
        stream_floor(x, out)
        if real is not None:
            real()
        # interleave so drifting load hits all alike
        base, thr, fused, floor, g1 = [], [], [], [], []
        for _ in range(rounds):
            base.append(_best_ms(lambda: numpy_post(x, out), reps, 1))
            thr.append(_best_ms(lambda: threaded(x, out), reps, 1))
            fused.append(_best_ms(lambda: numba_post(x, out), reps * 5, 1))
            floor.append(_best_ms(lambda: stream_floor(x, out), reps * 5, 1))
            if real is not None:
                g1.append(_best_ms(real, reps * 5, 1))
    finally:
        threaded.close()
        if env is not None:
            env.close()
    b, t, f, m = (float(np.median(v)) for v in (base, thr, fused, floor))
    shape = f"N={num_envs}, obs {OBS}, act {J}, {TERMS} terms"
    common = {"section": "postprocess", "unit": "ms/call", "baseline_label": "numpy 1 thread", "baseline": b}
    extra = []
    if g1:
        g = float(np.median(g1))
        extra.append({**common, "name": f"post-process G1Joystick real kernel (live arrays) vs NumPy ({shape})",
                      "ours_label": "G1 task.compute", "ours": g, "ratio": b / g, "budget": 12.0})
    return extra + [
        {**common, "name": f"post-process NumPy x{threads} threads vs NumPy ({shape})",
         "ours_label": f"numpy {threads} threads", "ours": t, "ratio": b / t, "budget": None},
        {**common, "name": f"post-process fused Numba vs NumPy ({shape})",
         "ours_label": "numba prange", "ours": f, "ratio": b / f, "budget": 12.0},
        {**common, "name": f"memory floor: read all inputs, write all outputs, no math (fused at {m / f:.0%} of it)",
         "ours_label": "numba stream", "ours": m, "ratio": b / m, "budget": None},
    ]
