"""``unilab robot run``: an exported policy driving a robot over its low-level messages.

The runtime is the deploy spec's NumPy path (:class:`unilab_robot.deploy.PolicyIO` for the
observation and the action mapping, :class:`~unilab_robot.deploy.safety.SafetyGuard` for the
limits and watchdogs) between ``rt/lowstate`` and ``rt/lowcmd``; the policy is any callable
``obs -> action`` (``unilab robot run`` gives it ``policy.onnx`` on onnxruntime).

Each control period (:meth:`RobotRuntime.tick`) it takes the newest state (messages with a bad
CRC are dropped and counted; the first is reported; states with the CRC field 0, as Unitree's
simulator sends them, are taken or dropped by ``state_crc``: :mod:`unilab_robot.state_filter`),
and acts by mode:

1. ``wait``: no state yet; nothing is sent.
2. ``damping`` (``damping_s``): Kp 0, Kd of the spec, so the joints go soft on start-up.
3. ``move`` (``move_s``): joint targets interpolated linearly from where the joints are to the
   spec's home pose (a motion-tracking policy's: its clip's first pose), with the spec's Kp and Kd.
4. ``policy``: observation -> policy -> safety guard -> joint targets with the spec's gains (the
   guard's gains once one of its watchdogs latched its safe mode). A motion-tracking policy follows
   its clip (``RuntimeConfig.clip``) and, past the clip's end, holds its last frame.
5. ``fault``: damping, latched, after a watchdog of the runtime's own: no fresh state for
   ``state_timeout_s`` (a stale or dead robot). Each fault is reported in one line.

Every step goes into a :class:`~unilab_robot.steplog.StepLog` row when a log is given.

With a :class:`~unilab_robot.swap.HotSwap` attached (``runtime.swap``), each tick starts at a
step boundary where a ready candidate policy is swapped in (or the previous one rolled back), and
the log gets the acting policy's id and the swap event of each step.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Callable

import mujoco
import numpy as np

from unilab_robot.deploy import PolicyIO
from unilab_robot.deploy.episodes import sample_command
from unilab_robot.deploy.history import HistoryStack
from unilab_robot.deploy.safety import SafetyGuard, remembered_action
from unilab_robot.deploy.spec import DeploySpec
from unilab_robot import messages as M
from unilab_robot.crc import crc_ok, stamp_crc
from unilab_robot.state_filter import StateFilter, accepts_unstamped
from unilab_robot.motors import RobotDef, motor_map
from unilab_robot.keyboard import KeyboardCommand
from unilab_robot.policy_state import reset_policy_state
from unilab_robot.quiet_gc import QuietCollector
from unilab_robot.remote import unpack_remote, velocity_command
from unilab_robot.state_io import needs_odometry, read_state
from unilab_robot.steplog import MODES, StepLog
from unilab_robot.wire import Transport

COMMAND_SOURCES = ("remote", "fixed", "script", "keyboard")


class RuntimeFault(RuntimeError):
    """The runtime cannot go on (it has sent damping); the message says why, in one line."""


@dataclass(frozen=True)
class RuntimeConfig:
    """Start-up, watchdog and command source of the runtime.

    ``command``: ``remote`` (the state's wireless remote: left stick vx/vy, right stick yaw),
    ``fixed`` (``fixed_command``), ``script`` (drawn as training draws them, every
    ``command.resample_time`` of the spec, seeded by ``seed``) or ``keyboard`` (the runtime's
    ``keyboard``: :mod:`unilab_robot.keyboard`, whose ``x`` latches damping); ``damping_kd``: the damping
    mode's Kd (``None``: the spec's ``action.kd``); ``follow_episodes``: a simulated robot's new
    episode (the state's ``reserve[0]``) restarts the controller (for measuring falls); ``state_crc``:
    ``auto``, ``on`` or ``off``, what to do with states whose CRC field is 0 (:mod:`~unilab_robot.state_filter`;
    ``auto`` accepts them only when ``local_only``, the bridge on loopback). ``clip``: a motion-tracking
    spec's clip to play (a name; ``None``: its first): the move goes to the clip's first pose, the policy follows
    the clip from its start, the reference turned to the robot's heading then
    (:meth:`~unilab_robot.deploy.motion.MotionIO.align`), and holds its last frame after its end.
    """

    damping_s: float = 0.5
    move_s: float = 1.5
    state_timeout_s: float = 0.1
    connect_timeout_s: float = 5.0
    damping_kd: float | None = None
    command: str = "remote"
    fixed_command: tuple[float, ...] = (0.0, 0.0, 0.0)
    follow_episodes: bool = False
    seed: int = 0
    state_crc: str = "auto"
    local_only: bool = True
    clip: str | None = None

    def __post_init__(self) -> None:
        accepts_unstamped(self.state_crc, self.local_only)  # ValueError naming the modes
        if self.command not in COMMAND_SOURCES:
            raise ValueError(f"command source must be one of {', '.join(COMMAND_SOURCES)}, got {self.command!r}")
        if not (self.damping_s >= 0 and self.move_s >= 0 and self.state_timeout_s > 0 and self.connect_timeout_s > 0):
            raise ValueError("damping_s and move_s must be >= 0, state_timeout_s and connect_timeout_s > 0")


class RobotRuntime:
    """The policy of ``spec`` on ``robot`` through ``transport``; ``model``: the spec's MJCF (names, limits).

    ``keyboard``: a :class:`~unilab_robot.keyboard.KeyboardCommand` (required by, and only
    read under, the ``keyboard`` command source). Raises
    :class:`~unilab_robot.motors.NameMapError` when the spec's joints are not the robot's motors.
    """

    def __init__(self, spec: DeploySpec, model: mujoco.MjModel, policy: Callable[[np.ndarray], np.ndarray],
                 robot: RobotDef, transport: Transport, config: RuntimeConfig = RuntimeConfig(),
                 log: StepLog | None = None, say: Callable[[str], None] | None = None,
                 keyboard: KeyboardCommand | None = None) -> None:
        if config.command == "keyboard" and keyboard is None:
            raise ValueError("the keyboard command source needs a KeyboardCommand (keyboard=...)")
        self.spec, self.model, self.policy, self.robot, self.transport = spec, model, policy, robot, transport
        self.config, self.log = config, log
        self.keyboard = keyboard if config.command == "keyboard" else None
        self.say = say if say is not None else (lambda line: print(f"unilab robot run: {line}", file=sys.stderr, flush=True))
        self.slots = motor_map(robot, spec.action.joint_names)
        self.io = PolicyIO(spec, model, safety=False)  # the guard runs here, as in unilab play
        self.guard = SafetyGuard.from_spec(spec, model) if spec.safety is not None else None
        self.history = HistoryStack.from_spec(spec)
        self.data = mujoco.MjData(model)
        mujoco.mj_forward(model, self.data)
        a = spec.action
        self.kp, self.kd = np.asarray(a.kp, np.float64), np.asarray(a.kd, np.float64)
        self.damping_kd = self.kd if config.damping_kd is None else np.full_like(self.kd, config.damping_kd)
        self.needs_odom = needs_odometry(spec)
        if config.clip is not None and self.io.motion is None:
            raise ValueError(f"a clip is played by a motion-tracking policy; {spec.task.id} follows none")
        self.clip = self.io.motion.clip_index(config.clip) if self.io.motion is not None else None  # SpecError: one line
        self._move_to = self.io.home if self.clip is None else self.io.motion.start_joints(self.clip)
        self._end_said = False
        self.rng = np.random.default_rng(config.seed)
        self.resample_steps = (max(1, round(spec.command.resample_time / spec.timing.control_dt))
                               if spec.command.resample_time else 0)
        self.cmd_msg = M.new_cmd(robot.family)
        self.state: np.ndarray | None = None
        self.odom: np.ndarray | None = None
        self.mode = "wait"
        self.states = StateFilter(robot.family.state, config.state_crc, config.local_only, self.say)
        self.fault_reason: str | None = None
        self._mode_since = 0.0
        self._fresh_at: float | None = None
        self._move_from: np.ndarray | None = None
        self._episode = None
        self._guard_reported = False
        self.ctl = None
        self.steps = 0
        self.swap = None  # a HotSwap: new weights between two steps (unilab_robot.swap)
        self.policy_id, self._swap_event = 0, 0

    # --- inputs ----------------------------------------------------------------------------
    def _receive(self, now: float) -> bool:
        fresh = False
        for msg in self.transport.take(M.TOPIC_STATE):
            if self.states.accept(msg):
                self.state, fresh = msg, True
        for msg in self.transport.take(M.TOPIC_ODOM):
            if crc_ok(msg):
                self.odom = msg
        if fresh:
            self._fresh_at = now
        return fresh

    @property
    def bad_crc(self) -> int:
        """States dropped for a bad CRC."""
        return self.states.counts.bad_crc

    def _arrived(self, counts) -> str:
        """What arrived on rt/lowstate (``counts``), with the writers matched there when the transport knows."""
        matched = getattr(self.transport, "matched", None)
        writers = f", {matched(M.TOPIC_STATE)} writers of {self.robot.family.state_type} matched" if matched else ""
        return f"on rt/lowstate: {counts.describe()}{writers}"

    def _command(self) -> np.ndarray:
        c = self.config
        if self.clip is not None:  # motion tracking: the clip is the command
            return np.zeros(0)
        if c.command == "fixed":
            return np.asarray(c.fixed_command, dtype=np.float64)
        if c.command == "keyboard":
            return self.keyboard.command()
        if c.command == "remote":
            return velocity_command(unpack_remote(self.state["wireless_remote"]), self.spec.command.ranges)
        if self.ctl is None or (self.resample_steps and self.steps > 0 and self.steps % self.resample_steps == 0):
            return sample_command(self.io, self.rng)
        return self.ctl.command

    # --- modes -----------------------------------------------------------------------------
    def _enter(self, mode: str, now: float) -> None:
        self.mode, self._mode_since = mode, now

    def fault(self, reason: str, now: float) -> None:
        """Latch the damping fault mode, saying why once."""
        if self.mode != "fault":
            self.say(f"{reason}: damping")
            self.fault_reason = reason
            self._enter("fault", now)

    def _start_policy(self, now: float) -> None:
        self._read()
        self.ctl = None
        command = self._command()  # (with no controller state yet, the script source draws a new command)
        self.ctl = self.io.initial_state(self.data, command=command)
        if self.clip is not None:  # the clip from its start, turned to the robot's heading
            self.ctl.motion = self.io.motion.start(self.clip)
            self.io.motion.align(self.ctl.motion, self.io.base_quat(self.data))
            self._end_said = False
        self.steps = 0
        if self.guard is not None:
            self.guard.reset()
            self._guard_reported = False
        if self.history is not None:
            self.history.reset()
        reset_policy_state(self.policy)  # a recurrent policy starts its episode from a zero state
        self._enter("policy", now)

    def _read(self) -> None:
        io = self.io
        read_state(self.state, self.odom, self.slots, self.data, io.joint_q, io.joint_d, io.root_q, io.root_d)

    # --- one control step ------------------------------------------------------------------
    def tick(self, now: float, lateness: float = 0.0) -> str:
        """One control period at time ``now`` (s): read, decide, send, log. Returns the mode it ran."""
        start = time.perf_counter()
        if self.swap is not None:  # the step boundary: one policy acts for the whole step
            self.policy, self.policy_id, self._swap_event = self.swap.boundary()
        fresh = self._receive(now)
        if self.state is None:
            return "wait"
        if self.mode == "wait":
            self._enter("damping", now)
        if self.keyboard is not None and self.keyboard.damp_requested:
            self.fault("damping asked from the keyboard (x)", now)
        if self.mode != "fault" and now - self._fresh_at > self.config.state_timeout_s:
            self.fault(f"no fresh rt/lowstate for {now - self._fresh_at:.2f} s (limit {self.config.state_timeout_s:g} s; "
                       f"last tick {int(self.state['tick'])}; since then {self._arrived(self.states.since_last_accepted())})",
                       now)
        episode = M.get_tag(self.state)
        if self.config.follow_episodes and self._episode is not None and episode != self._episode and fresh:
            self._start_policy(now)  # a new simulated episode: the controller starts over
        self._episode = episode
        if self.mode == "policy" and self.needs_odom and self.odom is None:
            self.fault("the policy observes the base velocity, which rt/lowstate does not carry, and no "
                       "rt/unilab/odom arrived (a state estimator publishes it on a robot)", now)
        self._read()
        q = self.data.qpos[self.io.joint_q].copy()
        obs = np.zeros(self.spec.observation.size)
        action = np.zeros(self.spec.action.size)
        if self.mode == "damping":
            q_des, kp, kd = q, np.zeros_like(self.kp), self.damping_kd
            if now - self._mode_since >= self.config.damping_s:
                self._move_from = q.copy()
                self._enter("move", now)
        if self.mode == "move":
            alpha = 1.0 if self.config.move_s == 0 else min(1.0, (now - self._mode_since) / self.config.move_s)
            q_des, kp, kd = self._move_from + alpha * (self._move_to - self._move_from), self.kp, self.kd
            if alpha >= 1.0:
                self._start_policy(now)
        if self.mode == "policy":
            q_des, kp, kd, obs, action = self._policy_step(fresh, now)
        if self.mode == "fault":
            q_des, kp, kd = q, np.zeros_like(self.kp), self.damping_kd
        self._send(q_des, kp, kd)
        compute = time.perf_counter() - start
        if self.log is not None:
            self._log(now, lateness, compute, fresh, q, obs, action, q_des, kp, kd)
        return self.mode

    def _policy_step(self, fresh: bool, now: float):
        io, ctl = self.io, self.ctl
        ctl.command = self._command()
        obs = io.observe(self.data, ctl)
        action = sent = np.asarray(self.policy(obs if self.history is None else self.history(obs)), dtype=np.float64)
        kp, kd = self.kp, self.kd
        if self.guard is not None:
            base = io.base_quat(self.data) if io.root_q >= 0 else None
            action = self.guard.action(action, self.data.qpos[io.joint_q], self.data.qvel[io.joint_d], base, obs,
                                       obs_new=fresh)
            kp, kd = self.guard.gains()
            if self.guard.latched and not self._guard_reported:
                self._guard_reported = True
                self.say(f"the safety guard's {self.guard.reason} watchdog tripped: {'damping' if self.guard.limits.damping else 'hold'}")
        targets = io.apply_action(action, ctl, self.data.ctrl, self.data)
        ctl.last_action = remembered_action(sent, *io.clip).astype(np.float64)
        io.advance(ctl)
        if ctl.motion is not None and not self._end_said and io.motion.at_end(ctl.motion):
            self._end_said = True
            if not self.config.follow_episodes:
                self.say(f"clip {io.motion.names[ctl.motion.clip]} reached its end: the policy holds its last frame")
        self.steps += 1
        return targets, kp, kd, obs, sent

    def _send(self, q_des, kp, kd) -> None:
        msg, s = self.cmd_msg, self.slots
        mc = msg["motor_cmd"]
        mc["mode"][s] = M.MOTOR_ENABLE
        mc["q"][s], mc["dq"][s], mc["tau"][s], mc["kp"][s], mc["kd"][s] = q_des, 0.0, 0.0, kp, kd
        if self.robot.family.name == "hg":
            msg["mode_machine"] = self.state["mode_machine"]  # answer in the robot's own machine mode
        M.set_tag(msg, int(self.state["tick"]))  # the state this command answers
        stamp_crc(msg)
        self.transport.publish(M.TOPIC_CMD, msg)

    def damp(self) -> None:
        """Send one damping command (all the robot's motors: Kp 0, Kd of the damping mode)."""
        if self.state is None:
            self.state = M.new_state(self.robot.family)
        q = self.state["motor_state"]["q"][self.slots]
        self._send(q, np.zeros_like(self.kp), self.damping_kd)

    def _log(self, now, lateness, compute, fresh, q, obs, action, q_des, kp, kd) -> None:
        imu = self.state["imu_state"]
        self.log.write(t=now, lateness_s=lateness, compute_s=compute, missed=float(lateness + compute > self.spec.timing.control_dt),
                       state_tick=int(self.state["tick"]), fresh=float(fresh), mode=MODES.index(self.mode),
                       command=self.ctl.command if self.ctl is not None and self.ctl.command.size == 3 else np.zeros(3), quat=imu["quaternion"],
                       gyro=imu["gyroscope"], q=q, dq=self.data.qvel[self.io.joint_d], obs=obs, action=action,
                       q_des=q_des, kp=kp, kd=kd,
                       **({"policy": self.policy_id, "swap": self._swap_event} if self.swap is not None else {}))

    def log_groups(self) -> dict[str, int]:
        """The log's column groups and widths for this spec."""
        j, o, a = len(self.spec.action.joint_names), self.spec.observation.size, self.spec.action.size
        groups = {"command": 3, "quat": 4, "gyro": 3, "q": j, "dq": j, "obs": o, "action": a, "q_des": j, "kp": j, "kd": j}
        return {**groups, "policy": 1, "swap": 1} if self.swap is not None else groups

    # --- the real-time loop ----------------------------------------------------------------
    def wait_for_robot(self, clock=time.monotonic, sleep=time.sleep) -> None:
        """Block until the first valid state (and odometry, when the policy needs it) arrives;
        :class:`RuntimeFault` after ``connect_timeout_s``."""
        t0 = clock()
        while clock() - t0 < self.config.connect_timeout_s:
            self._receive(clock())
            if self.state is not None and (self.odom is not None or not self.needs_odom):
                return
            sleep(0.005)
        wait = f"{self.config.connect_timeout_s:g} s"
        if self.state is None:
            valid = "" if self.states.counts.messages == 0 else "valid "
            raise RuntimeFault(f"no {valid}rt/lowstate from the robot in {wait}: {self.states.hint()} "
                               f"({self._arrived(self.states.counts)})")
        raise RuntimeFault(f"no rt/unilab/odom (the base velocity the policy observes) from the robot in {wait}: is "
                           f"its state estimator (or `unilab robot sim`) running on the same DDS domain and interface?")

    def run(self, duration_s: float | None = None, clock=time.monotonic, sleep=time.sleep) -> dict:
        """Tick at the spec's control period until ``duration_s`` (or Ctrl-C); returns the timing summary.

        Python's garbage collector runs only in the slack before a deadline
        (:class:`~unilab_robot.quiet_gc.QuietCollector`); the summary gives its collections and
        the longest one."""
        dt = self.spec.timing.control_dt
        k, missed, lat, comp = 0, 0, [], []
        with QuietCollector() as collector:  # (its full collection first, before the clock starts)
            t0 = clock()
            try:
                while duration_s is None or clock() - t0 < duration_s:
                    deadline = t0 + k * dt
                    wait = deadline - clock()
                    if wait > 0:
                        sleep(wait)
                    start = clock()
                    before = time.perf_counter()
                    self.tick(start - t0, lateness=start - deadline)
                    spent = time.perf_counter() - before
                    lat.append(start - deadline)
                    comp.append(spent)
                    if start - deadline + spent > dt:
                        missed += 1
                    k += 1
                    behind = int((clock() - t0) / dt)
                    if behind > k:  # more than a period late: skip to the next deadline, the skipped count as missed
                        missed += behind - k
                        k = behind
                    collector.slack(t0 + k * dt - clock())
            except KeyboardInterrupt:
                self.say("stopped (Ctrl-C): damping")
                self.damp()
        c = np.array(comp) if comp else np.zeros(1)
        return {"steps": len(comp), "missed_deadlines": missed, "compute_ms_p50": round(float(np.percentile(c, 50)) * 1e3, 3),
                "compute_ms_p99": round(float(np.percentile(c, 99)) * 1e3, 3),
                "compute_ms_max": round(float(c.max()) * 1e3, 3),
                "lateness_ms_p99": round(float(np.percentile(np.array(lat) if lat else np.zeros(1), 99)) * 1e3, 3),
                "gc_collections": collector.collections, "gc_ms_max": round(collector.max_ms, 3),
                "bad_crc": self.bad_crc, "mode": self.mode, "fault": self.fault_reason}
