"""Held-out simulated episodes on the wire, and the gate that keeps a worse candidate off the robot.

:func:`lockstep_pair` builds what ``unilab robot lockstep`` runs: the simulated robot (plain
MuJoCo, under a :class:`World`: floor friction, payload, wire latency and loss) and the runtime
with a policy folder, on one virtual clock. :func:`held_out_falls` counts falls over episodes
drawn from a seed, and :func:`gate` scores a candidate and the running policy on the same
episodes under the world a robot's log was identified to be (``unilab robot identify --summary``):
``unilab robot swap CANDIDATE --port P --gate FIT.json`` hands the candidate to the runtime only
when it falls no more often than the policy it would replace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping


@dataclass(frozen=True)
class World:
    """The simulated robot's conditions: the floor's sliding friction (``None``: the model's), a payload on the root
    body (kg), the wire's latency each way (ms) and its loss (fraction, each way)."""

    floor_friction: float | None = None
    payload_kg: float = 0.0
    latency_ms: float = 0.0
    loss: float = 0.0

    def __post_init__(self) -> None:
        if self.floor_friction is not None and not self.floor_friction > 0:
            raise ValueError(f"the floor friction must be > 0, got {self.floor_friction}")
        if not (self.latency_ms >= 0 and 0 <= self.loss < 1):
            raise ValueError(f"latency must be >= 0 ms and loss in [0, 1), got {self.latency_ms} ms and {self.loss}")

    @classmethod
    def from_fit(cls, fit: Mapping[str, Any]) -> "World":
        """The world an identification found: its friction and payload, and its loop latency split evenly between
        the two directions of the wire (the loop is the state's way in plus the command's way out)."""
        return cls(floor_friction=float(fit["friction"]), payload_kg=float(fit.get("payload_kg") or 0.0),
                   latency_ms=float(fit.get("latency_ms") or 0.0) / 2)

    def describe(self) -> str:
        floor = "the model's floor" if self.floor_friction is None else f"floor friction {self.floor_friction:g}"
        extra = [f"payload {self.payload_kg:+g} kg"] * bool(self.payload_kg) + \
                [f"latency {self.latency_ms:g} ms each way"] * bool(self.latency_ms) + [f"loss {self.loss:.0%}"] * bool(self.loss)
        return ", ".join([floor, *extra])


def lockstep_pair(bundle, world: World, episode_s: float | None, seed: int, quiet: bool = False,
                  clip: str | None = None):
    """``(runtime, sim)``: ``bundle``'s policy (:func:`unilab_robot.policy.find_policy`) driving the simulated robot
    under ``world`` in lock step (commands drawn as training draws them; the controller restarts each episode); the
    simulated robot publishes ``rt/unilab/odom`` only for a policy that reads the base velocity.
    ``episode_s``: episode length (``None``: the spec's); ``quiet``: neither says a line (a guard tripping at each
    fall, ...); ``clip``: a motion-tracking policy's clip, every episode from its start (``None``: the spec's first).
    Raises ``ValueError`` / ``NameMapError`` in one line."""
    from unilab_robot.model import load_play_model
    from unilab_robot.policy import OnnxPolicy
    from unilab_robot.identify import add_payload, set_floor_friction
    from unilab_robot.motors import robot_for_joints
    from unilab_robot.runtime import RobotRuntime, RuntimeConfig
    from unilab_robot.sim import SimConfig, SimRobot
    from unilab_robot.state_io import needs_odometry
    from unilab_robot.wire import LocalBus

    spec = bundle.spec
    robot = robot_for_joints(spec.action.joint_names)
    episode_s = episode_s or spec.episode.max_steps * spec.timing.control_dt
    bus = LocalBus()
    model = load_play_model(spec)
    if world.floor_friction is not None:
        set_floor_friction(model, world.floor_friction)
    if world.payload_kg:
        add_payload(spec, model, world.payload_kg)
    say = {"say": lambda line: None} if quiet else {}
    odom = needs_odometry(spec)  # else no rt/unilab/odom at all, as a real robot
    sim = SimRobot(spec, model, robot, bus.endpoint(),
                   SimConfig(latency_s=world.latency_ms / 1e3, loss=world.loss, episode_s=episode_s, seed=seed, odom=odom,
                             clip=clip),
                   **say)
    runtime = RobotRuntime(spec, load_play_model(spec), OnnxPolicy(bundle.onnx, spec), robot, bus.endpoint(),
                           RuntimeConfig(command="script", follow_episodes=True, seed=seed, clip=clip), **say)
    return runtime, sim


def held_out_falls(folder: str | Path, world: World, episodes: int, seed: int, episode_s: float | None = None) -> dict:
    """Falls of ``folder``'s policy over ``episodes`` lock-step episodes under ``world`` from ``seed``: the simulated
    robot's summary with ``fall_rate`` and ``wall_s``."""
    from unilab_robot.policy import find_policy
    from unilab_robot.lockstep import run_lockstep

    start = time.perf_counter()
    runtime, sim = lockstep_pair(find_policy(folder), world, episode_s, seed, quiet=True)
    run_lockstep(runtime, sim, 1e9, until=lambda: sim.stats.episodes >= episodes)
    return {**sim.summary(), "fall_rate": round(sim.stats.falls / max(1, sim.stats.episodes), 4),
            "wall_s": round(time.perf_counter() - start, 1)}


@dataclass(frozen=True)
class Verdict:
    """The gate's decision: the candidate's and the running policy's falls on the same held-out episodes."""

    accepted: bool
    candidate_falls: int
    running_falls: int
    episodes: int
    line: str


def decide(candidate_falls: int, running_falls: int, episodes: int, world: str, seed: int) -> Verdict:
    """Accept a candidate that falls no more often than the running policy on the same ``episodes`` (pure)."""
    c, r = candidate_falls / episodes, running_falls / episodes
    said = (f"the candidate falls in {c:.1%} of {episodes} held-out simulated episodes ({world}; seed {seed}), the "
            f"running policy in {r:.1%}")
    if candidate_falls <= running_falls:
        return Verdict(True, candidate_falls, running_falls, episodes, f"gate passed: {said}")
    return Verdict(False, candidate_falls, running_falls, episodes, f"rejected: {said}; not swapped, the running "
                                                                     f"policy keeps running")


def gate(candidate: str | Path, running: str | Path, world: World, episodes: int = 32, seed: int = 90000) -> Verdict:
    """Score ``candidate`` and ``running`` (policy folders) on the same held-out lock-step episodes under ``world``."""
    if episodes < 1:
        raise ValueError(f"the gate needs >= 1 episode, got {episodes}")
    got = {name: held_out_falls(folder, world, episodes, seed)
           for name, folder in (("candidate", candidate), ("running", running))}
    return decide(got["candidate"]["falls"], got["running"]["falls"], episodes, world.describe(), seed)


def acting_folder(status_line: str) -> str:
    """The acting policy's folder from the runtime's ``status`` answer (``policy N (FOLDER) acting at step ...``);
    ``ValueError`` when the runtime did not say (it was started without a folder)."""
    head, sep, _ = status_line.partition(") acting at step")
    folder = head.partition(" (")[2] if sep else ""
    if not folder or folder == "started with":
        raise ValueError(f"the runtime's status does not name its policy's folder ({status_line[:80]!r}): pass "
                         f"--against FOLDER")
    return folder
