"""Golden trajectories of the tasks: record them once, replay them after a refactor.

A case is a task (bare or under its sim-to-real profile), a seed and a number of envs;
its rollout steps a fixed sequence of random actions (from ``numpy``'s generator seeded
with the case seed) for :data:`STEPS` control steps in ``SAME_STEP`` autoreset, crossing
falls, time limits (episode starts are spread) and, on the legged tasks, command resamples.
The arm tasks (UR5) add that noise to a scripted controller's actions
(:mod:`arm_policies`, so that the rollout reaches, grasps and lifts); they have no velocity
command (their ``command_changes`` is 0), and a task without a privileged observation
(UR5Reach) records an empty ``(num_envs, 0)`` one.

Per step the rollout keeps a fingerprint of every output the learner sees (observation,
privileged observation, reward, each reward term in ``env.reward_names`` order,
terminated, truncated): the first 8 bytes of BLAKE2b over the float32 / bool bytes, with
``-0.0`` folded into ``0.0`` first, so two fingerprints are equal exactly when the arrays
are ``np.array_equal`` (NaN aside). It also keeps, in full, the reward, terminated and
truncated of every step and the full arrays of a few :data:`SNAPSHOT_STEPS`, so that a
mismatch shows its values. Files stay a few tens of KB each.

Record (only when a behaviour change is intended and explained, or after a ``mujoco`` /
``numba`` / ``numpy`` upgrade changed the bits and nothing else)::

    python tests/envs/golden/trajectories.py                          # every case
    python tests/envs/golden/trajectories.py ur5_reach_n1_s0 ...      # only these file stems

Bit equality holds for one set of library versions: every file keeps the versions it was
recorded with (key ``versions``), and recording every case also writes them to
:data:`VERSIONS_PATH` (``versions.json``, the versions of files older than that key);
recording a subset leaves ``versions.json`` alone. A golden that differs while the running
versions are others than its own fails with one message naming both and the record command.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from importlib.metadata import version
from pathlib import Path

import gymnasium as gym
import numpy as np

import unilab_envs  # noqa: F401  (registers the tasks)

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location("golden_arm_policies", HERE / "arm_policies.py")
arm_policies = importlib.util.module_from_spec(_SPEC)  # the sibling, also when this file is loaded by path
_SPEC.loader.exec_module(arm_policies)
VERSIONS_PATH = HERE / "versions.json"
#: the libraries whose version can change a bit of a trajectory
PACKAGES = ("mujoco", "numba", "numpy")
RECORD_COMMAND = "python tests/envs/golden/trajectories.py"
STEPS = 300
SNAPSHOT_STEPS = (0, 1, 2, 150, 299)
ARRAYS = ("obs", "privileged_obs", "reward", "reward_terms", "terminated", "truncated")
# (file stem, task id, sim-to-real profile or None, seed, num_envs, action amplitude): full
# amplitude falls often (many resets); small amplitude survives to time limits and resamples
CASES = (
    ("go1_n1_s0", "UniLab/Go1Joystick-v0", None, 0, 1, 1.0),
    ("go1_n7_s3", "UniLab/Go1Joystick-v0", None, 3, 7, 0.2),
    ("go1_real_n7_s1", "UniLab/Go1Joystick-v0", "go1_real", 1, 7, 0.2),
    ("go1_real_n1_s5", "UniLab/Go1Joystick-v0", "go1_real", 5, 1, 1.0),
    ("g1_n1_s0", "UniLab/G1Joystick-v0", None, 0, 1, 1.0),
    ("g1_n7_s3", "UniLab/G1Joystick-v0", None, 3, 7, 0.2),
    ("g1_real_n7_s1", "UniLab/G1Joystick-v0", "g1_real", 1, 7, 0.2),
    ("g1_real_n1_s5", "UniLab/G1Joystick-v0", "g1_real", 5, 1, 1.0),
    ("go1_rough_n1_s0", "UniLab/Go1JoystickRough-v0", None, 0, 1, 1.0),
    ("go1_rough_n7_s3", "UniLab/Go1JoystickRough-v0", None, 3, 7, 0.2),
    ("ur5_reach_n1_s0", "UniLab/UR5Reach-v0", None, 0, 1, 1.0),
    ("ur5_reach_n7_s3", "UniLab/UR5Reach-v0", None, 3, 7, 0.2),
    ("ur5_grasp_n1_s0", "UniLab/UR5Grasp-v0", None, 0, 1, 1.0),
    ("ur5_grasp_n7_s3", "UniLab/UR5Grasp-v0", None, 3, 7, 0.2),
    ("ur5_grasp_real_n7_s1", "UniLab/UR5Grasp-v0", "ur5_grasp_real", 1, 7, 0.2),
    ("ur5_grasp_real_n1_s5", "UniLab/UR5Grasp-v0", "ur5_grasp_real", 5, 1, 1.0),
)


def fingerprint(array: np.ndarray) -> np.uint64:
    """64 bits of BLAKE2b over ``array``'s bytes (float arrays with -0.0 folded into 0.0)."""
    a = np.ascontiguousarray(array)
    if np.issubdtype(a.dtype, np.floating):
        a = a + a.dtype.type(0.0)  # -0.0 + 0.0 == +0.0: equal values give equal bytes
    return np.frombuffer(hashlib.blake2b(a.tobytes(), digest_size=8).digest(), dtype=np.uint64)[0]


def make_env(task_id: str, profile: str | None, num_envs: int):
    env = gym.make_vec(task_id, num_envs=num_envs, num_threads=1)
    if profile is not None:
        from wrappers import Sim2Real

        env = Sim2Real(env, profile=profile)
    return env


def rollout(task_id: str, profile: str | None, seed: int, num_envs: int, amplitude: float) -> dict[str, np.ndarray]:
    """The golden record of one case (see the module docstring)."""
    env = make_env(task_id, profile, num_envs)
    try:
        names = env.unwrapped.reward_names
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        act = env.single_action_space.shape[0]
        scripted = arm_policies.controller(task_id, env, num_envs)  # None: the legged tasks step the noise alone
        prints = {k: np.zeros(STEPS + 1, dtype=np.uint64) for k in ARRAYS}
        full = {k: np.zeros((STEPS, num_envs), dtype=np.float32 if k == "reward" else bool) for k in ("reward", "terminated", "truncated")}
        snaps: dict[str, list[np.ndarray]] = {k: [] for k in ARRAYS}
        zeros = np.zeros(num_envs, dtype=np.float32)
        no_privileged = np.zeros((num_envs, 0), dtype=np.float32)  # a task without one (UR5Reach)
        command_slice = env.unwrapped.obs_groups.get("command")  # None: no command (the arm tasks)
        command_changes = 0  # mid-episode command resamples seen (a check that the rollout crosses them)
        last_command = None if command_slice is None else np.array(obs[:, command_slice])
        step_out = {"obs": obs, "privileged_obs": info.get("privileged_obs", no_privileged), "reward": zeros,
                    "reward_terms": np.zeros((num_envs, len(names)), np.float32),
                    "terminated": zeros.astype(bool), "truncated": zeros.astype(bool)}  # fmt: skip
        for t in range(STEPS + 1):
            if t > 0:
                actions = (amplitude * rng.uniform(-1.0, 1.0, size=(num_envs, act))).astype(np.float32)
                if scripted is not None:
                    actions = np.clip(scripted(obs) + actions, -1.0, 1.0).astype(np.float32)
                obs, reward, terminated, truncated, info = env.step(actions)
                if scripted is not None:
                    scripted.restart(terminated | truncated)
                terms = np.stack([np.asarray(info["reward_terms"][n], dtype=np.float32) for n in names], axis=1)
                step_out = {"obs": obs, "privileged_obs": info.get("privileged_obs", no_privileged), "reward": reward,
                            "reward_terms": terms, "terminated": terminated, "truncated": truncated}  # fmt: skip
                for k, series in full.items():
                    series[t - 1] = step_out[k]
                if command_slice is not None:
                    live = ~(terminated | truncated)
                    command_changes += int((np.any(obs[:, command_slice] != last_command, axis=1) & live).sum())
                    last_command = np.array(obs[:, command_slice])
            for k in ARRAYS:
                prints[k][t] = fingerprint(np.asarray(step_out[k]))
                if t in SNAPSHOT_STEPS:
                    snaps[k].append(np.array(step_out[k], copy=True))
    finally:
        env.close()
    record = {f"print_{k}": v for k, v in prints.items()}
    record.update({f"full_{k}": v for k, v in full.items()})
    record.update({f"snap_{k}": np.stack(v) for k, v in snaps.items()})
    record["snapshot_steps"] = np.array(SNAPSHOT_STEPS)
    record["command_changes"] = np.array(command_changes)
    return record


def path_of(stem: str) -> Path:
    return HERE / f"{stem}.npz"


def running_versions() -> dict[str, str]:
    """The installed versions of :data:`PACKAGES`."""
    return {name: version(name) for name in PACKAGES}


def recorded_versions(stem: str | None = None) -> dict[str, str]:
    """The versions golden ``stem`` was recorded with: its own ``versions`` key, else (and for
    ``stem=None``) ``versions.json``'s (``{}`` when that is missing)."""
    if stem is not None and path_of(stem).is_file():
        with np.load(path_of(stem)) as record:
            if "versions" in record:
                return json.loads(str(record["versions"]))
    if not VERSIONS_PATH.is_file():
        return {}
    return {name: str(v) for name, v in json.loads(VERSIONS_PATH.read_text())["versions"].items()}


def write_versions() -> None:
    """Write :func:`running_versions` to ``versions.json`` (done by :func:`main` after recording)."""
    record = {"note": f"library versions the goldens here reproduce bit for bit with; written by {RECORD_COMMAND}",
              "versions": running_versions()}
    VERSIONS_PATH.write_text(json.dumps(record, indent=2) + "\n")


def version_drift(recorded: dict[str, str], running: dict[str, str]) -> str | None:
    """``None`` when ``running`` has the ``recorded`` versions, else one line naming both."""
    if recorded == running:
        return None
    names = sorted(set(recorded) | set(running))
    return ("the goldens were recorded with " + ", ".join(f"{n} {recorded.get(n, '?')}" for n in names)
            + " and this run has " + ", ".join(f"{n} {running.get(n, '?')}" for n in names))


def main(stems: list[str]) -> None:
    """Record the cases named by ``stems`` (every case when empty); ``versions.json`` only for every case."""
    unknown = sorted(set(stems) - {c[0] for c in CASES})
    if unknown:
        sys.exit(f"no golden case {unknown}; the cases are {[c[0] for c in CASES]}")
    for stem, *case in CASES:
        if stems and stem not in stems:
            continue
        record = rollout(*case)
        record["versions"] = np.array(json.dumps(running_versions()))
        np.savez_compressed(path_of(stem), **record)
        ends = int(record["full_terminated"].sum()), int(record["full_truncated"].sum())
        print(f"{stem}: {path_of(stem).stat().st_size / 1024:.1f} KB, terminated {ends[0]}, truncated {ends[1]}, "
              f"mid-episode command changes {int(record['command_changes'])}", file=sys.stderr)
    if not stems:
        write_versions()
    print(f"versions: {running_versions()} -> {'the files' if stems else VERSIONS_PATH.name}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
