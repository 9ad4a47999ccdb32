"""``unilab robot sim``: a MuJoCo robot on the wire, as the robot's own low-level interface behaves.

Each physics step (:meth:`SimRobot.step`) it takes the ``rt/lowcmd`` messages that arrived,
drops those whose CRC is wrong and those the motors do not accept (non-finite values, gains or
modes out of range: :mod:`~unilab_robot.cmd_check`; each kind counted, its first reported in
one line), passes the rest
through the wire's latency and loss (:class:`~unilab_robot.wire.Link`), loads the newest
into the motor driver (:class:`~unilab_robot.driver.MotorDriver`: the per-motor
``tau_ff + kp (q_des - q) + kd (dq_des - dq)`` law, clipped to the force limit), steps the
physics, and publishes ``rt/lowstate`` (joints, IMU, wireless remote; CRC stamped) and
``rt/unilab/odom`` (base velocity) through the link the other way.

Safety as a robot's: with no valid command for ``cmd_timeout_s`` the motors go to damping
(Kp 0, Kd ``damping_kd``; reported once). A gantry (``gantry_s``) holds the base in place from
the start until that long after the first command, as a humanoid hangs on its gantry while the
controller starts. With ``episode_s`` the robot is reset (as ``unilab play`` draws a reset) when
it falls or the episode ends, and the state's ``reserve[0]`` carries the episode number (a
convention of this simulator; a robot leaves it 0). A motion-tracking spec's episode (``clip``, the
spec's first by default) starts on the clip's first frame, also the first one off the gantry, and
ends at the clip's end (counted in ``reached_end``) or at the task's termination (a fall).

A built-in controller (``built_in``, e.g. ``"normal"``) emulates a robot fresh from boot: the
``motion_switcher`` service (:mod:`~unilab_robot.motion_service`) reports it active, it holds
the joints at the start pose, and ``rt/lowcmd`` is ignored (counted, the first said in one line)
until a client releases it; then the motors go to damping until a valid command arrives. Without
it the service still answers (no mode active), as in the robot's low-level mode.

Sim-only conventions on the wire (the robot's messages have room for them): the state's
``reserve[0]`` is the episode number; a command's ``reserve[0]`` (hg; go: ``reserve``) echoes the
``tick`` of the state it answers, from which the simulator measures the round trip.
"""

from __future__ import annotations

import math
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

import mujoco
import numpy as np

from unilab_robot.deploy import PolicyIO
from unilab_robot.deploy.episodes import fell, reset_episode
from unilab_robot.deploy.spec import DeploySpec
from unilab_robot import messages as M
from unilab_robot.cmd_check import command_problem
from unilab_robot.crc import crc_ok, stamp_crc
from unilab_robot.driver import MotorDriver
from unilab_robot.motion_service import MotionSwitcherService
from unilab_robot.motors import NameMapError, RobotDef, motor_map
from unilab_robot.remote import Remote, pack_remote
from unilab_robot.state_io import BaseSensors, write_state
from unilab_robot.wire import Link, Transport

NOISE_GROUPS = ("gyro", "gravity", "joint_pos", "joint_vel", "linvel")


@dataclass(frozen=True)
class SimConfig:
    """How the simulated robot behaves on the wire.

    ``latency_s`` / ``loss``: each way, per message; ``noise``: additive sensor noise scale per
    group of :data:`NOISE_GROUPS` (a profile's ``observation_noise.scales``; ``gravity`` tilts the
    IMU quaternion by up to that angle), drawn ``uniform`` in +-scale or ``gaussian`` with that
    std; ``state_every``: publish the state every this many physics steps; ``remote``: the
    wireless remote the state carries; ``built_in``: the name of a built-in controller active at
    start (``None``: none, the robot in low-level mode), released ``release_delay_s`` after a
    ``motion_switcher`` ReleaseMode; ``odom``: also publish ``rt/unilab/odom`` (a real Unitree robot does
    not: ``False`` is the robot as it is).
    """

    latency_s: float = 0.0
    loss: float = 0.0
    noise: tuple[tuple[str, float], ...] = ()
    noise_distribution: str = "uniform"
    gantry_s: float = 2.0
    cmd_timeout_s: float = 0.1
    damping_kd: float = 1.0
    episode_s: float | None = None
    state_every: int = 1
    seed: int = 0
    remote: Remote = field(default_factory=Remote)
    built_in: str | None = None
    release_delay_s: float = 0.5
    odom: bool = True
    clip: str | None = None  # a motion-tracking spec's clip each episode plays (None: the spec's first)

    def __post_init__(self) -> None:
        unknown = [g for g, _ in self.noise if g not in NOISE_GROUPS]
        if unknown:
            raise ValueError(f"no sensor noise group {unknown}; the simulated robot's are {', '.join(NOISE_GROUPS)}")
        if self.noise_distribution not in ("uniform", "gaussian"):
            raise ValueError(f"noise distribution must be uniform or gaussian, got {self.noise_distribution!r}")
        if self.cmd_timeout_s <= 0 or self.gantry_s < 0 or self.state_every < 1:
            raise ValueError("cmd_timeout_s must be > 0, gantry_s >= 0 and state_every >= 1")


@dataclass
class SimStats:
    """What the simulated robot counted."""

    steps: int = 0
    commands: int = 0
    bad_crc: int = 0
    bad_cmd: int = 0
    ignored: int = 0
    cmd_lost: int = 0
    state_lost: int = 0
    timeouts: int = 0
    episodes: int = 0
    falls: int = 0
    round_trip_s: list = field(default_factory=list)
    fall_log: list = field(default_factory=list)  # (s into the episode, base height m, tilt rad) of each fall
    reached_end: list = field(default_factory=list)  # motion tracking: per episode, whether it reached the clip's end


class SimRobot:
    """``robot`` (motor order) simulated on ``model`` with the spec's reset, fall rule and IMU body."""

    def __init__(self, spec: DeploySpec, model: mujoco.MjModel, robot: RobotDef, transport: Transport,
                 config: SimConfig = SimConfig(), say: Callable[[str], None] | None = None) -> None:
        self.spec, self.model, self.robot, self.transport, self.config = spec, model, robot, transport, config
        self.say = say if say is not None else (lambda line: print(f"unilab robot sim: {line}", file=sys.stderr, flush=True))
        self.data = mujoco.MjData(model)
        self.io = PolicyIO(spec, model, safety=False)  # the spec's reset draws and fall rule (names bound here)
        self.driver = MotorDriver(model, robot.motors)
        self.slots = np.arange(len(robot.motors))
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, spec.model.root_body) if spec.model.root_body else -1
        self.sensors = BaseSensors(model, self.io.root_q, self.io.root_d, body) if self.io.root_q >= 0 else None
        rng = np.random.default_rng(config.seed)
        self.rng, self.noise = rng, dict(config.noise)
        self.cmd_link = Link(config.latency_s, config.loss, np.random.default_rng(config.seed + 1))
        self.state_link = Link(config.latency_s, config.loss, np.random.default_rng(config.seed + 2))
        self.stats = SimStats()
        self.state_msg, self.odom_msg = M.new_state(robot.family), np.zeros((), M.ODOM)
        self.state_msg["wireless_remote"] = pack_remote(config.remote)
        self.dt = float(model.opt.timestep)
        self.time = 0.0
        self._first_cmd: float | None = None
        self._last_cmd: float | None = None
        self._damping = False
        self._down = False
        self._sent_at: deque = deque(maxlen=4096)  # (tick, time) of published states
        self.episode = 0
        self._clip = self.io.motion.clip_index(config.clip) if self.io.motion is not None else None
        self._ctl = None  # a motion-tracking episode's place in its clip (a ControllerState)
        self._reset()
        self.service = MotionSwitcherService(transport, config.built_in, config.release_delay_s,
                                             on_change=self._built_in_changed)
        if self.service.active:
            self._hold_joints()

    # --- the built-in controller ---------------------------------------------------------
    def _hold_joints(self) -> None:
        """The built-in controller: every joint held where it is, with the spec's gains (their mean where the
        spec's joints are not the robot's motors)."""
        n = len(self.slots)
        kp, kd = np.full(n, float(np.mean(self.spec.action.kp))), np.full(n, float(np.mean(self.spec.action.kd)))
        try:
            at = motor_map(self.robot, self.spec.action.joint_names)
            kp[at], kd[at] = self.spec.action.kp, self.spec.action.kd
        except NameMapError:
            pass
        self.driver.command(self.data, self.data.qpos[self.driver.qadr].copy(), np.zeros(n), np.zeros(n), kp, kd)

    def _built_in_changed(self, name: str) -> None:
        n = len(self.slots)
        if name:
            self.say(f"motion_switcher: built-in controller {name!r} selected: it holds the robot, rt/lowcmd ignored")
            self._hold_joints()
            return
        self.driver.command(self.data, np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n),
                            np.full(n, self.config.damping_kd))
        self._last_cmd = None
        self.say(f"motion_switcher: built-in controller released: motors in damping (Kp 0, Kd "
                 f"{self.config.damping_kd:g}) until a valid rt/lowcmd")

    # --- episodes ------------------------------------------------------------------------
    def _reset(self) -> None:
        if self.episode == 0:  # the first: the keyframe pose, still (it hangs on the gantry)
            key = (mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, self.spec.model.home_keyframe)
                   if self.spec.model.home_keyframe else -1)
            mujoco.mj_resetDataKeyframe(self.model, self.data, key) if key >= 0 else mujoco.mj_resetData(self.model, self.data)
            if key < 0:
                self.data.qpos[self.io.joint_q] = self.io.home
            mujoco.mj_forward(self.model, self.data)
        else:
            self._ctl = reset_episode(self.io, self.model, self.data, self.rng, clip=self._clip)
        self._hold = self.data.qpos[self.io.root_q:self.io.root_q + 7].copy() if self.io.root_q >= 0 else None
        self._episode_start, self._episode_step = self.time, self.stats.steps
        M.set_tag(self.state_msg, self.episode)

    @property
    def on_gantry(self) -> bool:
        if self.io.root_q < 0 or self.episode > 0 or self.config.gantry_s == 0:
            return False
        return self._first_cmd is None or self.time < self._first_cmd + self.config.gantry_s

    # --- one physics step ----------------------------------------------------------------
    def step(self, now: float | None = None) -> None:
        """Take commands, step the physics once, publish the state. ``now``: the wire's clock (default: sim time)."""
        now = self.time if now is None else now
        if self.stats.steps % 5 == 0:  # the service, every 5 physics steps (20 ms at 250 Hz)
            self.service.step(now)
        self._receive(now)
        self._watch(now)
        if self.on_gantry:
            q, d = self.io.root_q, self.io.root_d
            self.data.qpos[q:q + 7] = self._hold
            self.data.qvel[d:d + 6] = 0.0
        mujoco.mj_step(self.model, self.data)
        self.time += self.dt
        self.stats.steps += 1
        if self.stats.steps % self.config.state_every == 0:
            self._publish(now)
        self._episodes(now)

    def _receive(self, now: float) -> None:
        for msg in self.transport.take(M.TOPIC_CMD):
            if not crc_ok(msg):
                self.stats.bad_crc += 1
                if self.stats.bad_crc == 1:
                    self.say(f"rt/lowcmd with a bad CRC (0x{int(msg['crc']):08x}): dropped; further ones are "
                             f"counted, not reported")
                continue
            problem = command_problem(msg)
            if problem is not None:
                self.stats.bad_cmd += 1
                if self.stats.bad_cmd == 1:
                    self.say(f"rt/lowcmd the motors do not accept ({problem}): dropped, as a bad CRC is; further ones "
                             f"are counted; no valid command for {self.config.cmd_timeout_s:g} s: damping")
                continue
            if self.service.active:
                self.stats.ignored += 1
                if self.stats.ignored == 1:
                    self.say(f"rt/lowcmd while the built-in controller {self.service.mode!r} holds the robot: ignored "
                             f"(release it first: motion_switcher ReleaseMode); further ones are counted")
                continue
            self.cmd_link.push(now, msg)
        arrived = self.cmd_link.ready(now)
        self.stats.cmd_lost = self.cmd_link.lost
        if not arrived:
            return
        cmd = arrived[-1]
        self.stats.commands += len(arrived)
        mc = cmd["motor_cmd"][self.slots]
        self.driver.command(self.data, mc["q"], mc["dq"], mc["tau"], mc["kp"], mc["kd"], enabled=mc["mode"] == M.MOTOR_ENABLE)
        if self._first_cmd is None:
            self._first_cmd = now
        self._last_cmd = now
        if self._damping:
            self._damping = False
            self.say("rt/lowcmd again: motors follow it")
        echo = M.get_tag(cmd)
        for tick, sent in reversed(self._sent_at):
            if tick == echo:
                self.stats.round_trip_s.append(now - sent)
                break

    def _watch(self, now: float) -> None:
        if self._last_cmd is not None and not self._damping and now - self._last_cmd > self.config.cmd_timeout_s:
            self._damping = True
            self.stats.timeouts += 1
            n = len(self.slots)
            self.driver.command(self.data, np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n),
                                np.full(n, self.config.damping_kd))
            self.say(f"no valid rt/lowcmd for {self.config.cmd_timeout_s:g} s: motors in damping (Kp 0, "
                     f"Kd {self.config.damping_kd:g})")

    def _publish(self, now: float) -> None:
        st, d = self.state_msg, self.data
        st["tick"] = (int(st["tick"]) + 1) & 0xFFFFFFFF
        q, dq = d.qpos[self.driver.qadr].copy(), d.qvel[self.driver.dadr].copy()
        tau = self.driver.torque(d)
        if self.sensors is not None:
            quat, gyro, accel, linvel, pos = self.sensors.read(d)
        else:
            quat, gyro, accel, linvel, pos = np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)
        if self.noise:
            q, dq, gyro, linvel, quat = self._noisy(q, dq, gyro, linvel, quat)
        write_state(st, self.odom_msg, self.slots, q, dq, tau, quat, gyro, accel, linvel, pos)
        stamp_crc(st)
        stamp_crc(self.odom_msg)
        self._sent_at.append((int(st["tick"]), now))
        self.state_link.push(now, (st.copy(), self.odom_msg.copy()))
        for state, odom in self.state_link.ready(now):
            self.transport.publish(M.TOPIC_STATE, state)
            if self.config.odom:
                self.transport.publish(M.TOPIC_ODOM, odom)
        self.stats.state_lost = self.state_link.lost

    def _noisy(self, q, dq, gyro, linvel, quat):
        draw = ((lambda s, n: self.rng.uniform(-s, s, n)) if self.config.noise_distribution == "uniform"
                else (lambda s, n: self.rng.normal(0.0, s, n)))
        g = self.noise.get
        q = q + draw(g("joint_pos", 0.0), q.shape[0])
        dq = dq + draw(g("joint_vel", 0.0), dq.shape[0])
        gyro = gyro + draw(g("gyro", 0.0), 3)
        linvel = linvel + draw(g("linvel", 0.0), 3)
        tilt = g("gravity", 0.0)
        if tilt:  # a small rotation about a random horizontal axis of the base
            angle, axis = draw(tilt, 1)[0], self.rng.uniform(-math.pi, math.pi)
            dqt = np.array([math.cos(angle / 2), math.sin(angle / 2) * math.cos(axis), math.sin(angle / 2) * math.sin(axis), 0.0])
            out = np.zeros(4)
            mujoco.mju_mulQuat(out, quat, dqt)
            quat = out
        return q, dq, gyro, linvel, quat

    def _episodes(self, now: float) -> None:
        if self.on_gantry or self._damping:  # no controller on the wire: neither episodes nor falls count
            return
        if self.config.episode_s is None:  # one run: a fall under command counts (not the slump after damping)
            down = self._fell()
            if down and not self._down and not self._damping:
                self.stats.falls += 1
                self.say(f"the robot fell at {self.time:.2f} s")
            self._down = down
            return
        if self.episode == 0:  # off the gantry: episode 1 starts from here, as it stands
            self.episode = 1
            if self._clip is not None:  # (a motion-tracking episode: on its clip's first frame)
                self.episode = 0 if self._restart_motion(now) is None else 1
                return
            self._episode_start = self.time
            M.set_tag(self.state_msg, 1)
            return
        down = self._fell()
        if down or self.time - self._episode_start >= self._episode_s() - 1e-9:
            self.stats.episodes += 1
            self.stats.falls += int(down)
            if self._clip is not None:  # (an episode cut short by episode_s did not reach the end)
                self.stats.reached_end.append(not down and self.io.motion.at_end(self._ctl.motion))
            if down:  # when into its episode, and how: base height and tilt
                q = self.io.root_q
                self.stats.fall_log.append((round(self.time - self._episode_start, 2), round(float(self.data.qpos[q + 2]), 3),
                                            round(math.acos(max(-1.0, min(1.0, -self.io.gravity(self.data)[2]))), 2)))
            self.episode += 1
            if self._clip is not None:
                self._restart_motion(now)
                return
            self._reset()

    def _fell(self) -> bool:
        """The spec's fall rule; a motion-tracking episode's is the task's termination against its clip's frame,
        checked at control steps, as the task does (outside an episode: the tilt the task ends one at)."""
        if self._clip is None:
            return fell(self.io, self.data)
        if self._ctl is None:
            return bool(self.io.gravity(self.data)[2] > -math.cos(self.spec.episode.max_tilt))
        sub = self.spec.timing.substeps
        steps = self.stats.steps - self._episode_step
        if steps % sub:
            return False
        motion = self._ctl.motion
        motion.frame = min(steps // sub, self.io.motion.length(motion.clip) - 1)
        return fell(self.io, self.data, self._ctl)

    def _restart_motion(self, now: float):
        """A motion-tracking episode starts at a control step's end (the physics steps count whole control periods
        from it, so its frames are the controller's), and its state goes out at once: the controller's next tick
        starts the clip on the placed robot, as an env's reset does. ``None`` while waiting for that step."""
        if self.stats.steps % self.spec.timing.substeps:
            return None
        self._reset()
        self._publish(now)
        return self._ctl

    def _episode_s(self) -> float:
        """The episode's length: ``episode_s``; a motion-tracking episode's: to its clip's end at the most, in whole
        control periods (it ends where a control step does, as it started)."""
        limit = self.config.episode_s
        if self._clip is not None and self._ctl is not None:
            dt = self.spec.timing.control_dt
            clip = (self.io.motion.length(self._ctl.motion.clip) - 1) * dt
            limit = clip if limit is None else math.ceil(min(limit, clip) / dt - 1e-6) * dt
        return limit

    def summary(self) -> dict:
        """The counts and the round trip (state published -> command answering it applied), for the report."""
        s = self.stats
        rt = np.array(s.round_trip_s) if s.round_trip_s else np.zeros(1)
        return {"steps": s.steps, "sim_time_s": round(self.time, 3), "commands": s.commands, "bad_crc": s.bad_crc,
                "bad_cmd": s.bad_cmd, "ignored_cmd": s.ignored, "built_in": self.service.mode or None,
                "cmd_lost": s.cmd_lost, "state_lost": s.state_lost, "cmd_timeouts": s.timeouts,
                "episodes": s.episodes, "falls": s.falls,
                "round_trip_ms_p50": round(float(np.percentile(rt, 50)) * 1e3, 3),
                "round_trip_ms_p99": round(float(np.percentile(rt, 99)) * 1e3, 3), "falls_at": s.fall_log,
                **({"clip": self.io.motion.names[self._clip], "reached_end": sum(s.reached_end),
                    "reached_end_rate": round(sum(s.reached_end) / max(1, len(s.reached_end)), 4),
                    "episode_ends": "".join("1" if r else "0" for r in s.reached_end)} if self._clip is not None else {})}

    def run(self, duration_s: float | None = None, clock=time.monotonic, sleep=time.sleep) -> dict:
        """Step in real time (one physics step per ``timestep`` of wall clock) until ``duration_s`` or Ctrl-C;
        returns :meth:`summary` with the steps that ran late (more than one step behind)."""
        t0, k, late = clock(), 0, 0
        try:
            while duration_s is None or k * self.dt < duration_s:
                wait = t0 + k * self.dt - clock()
                if wait > 0:
                    sleep(wait)
                elif wait < -self.dt:
                    late += 1
                self.step(clock() - t0)
                k += 1
        except KeyboardInterrupt:
            pass
        return {**self.summary(), "late_steps": late}
