"""``unilab play``: an exported policy in plain MuJoCo, through the deploy spec's reference path.

The policy is ``policy.onnx`` run by onnxruntime; its observation is rebuilt from a plain
``mujoco.MjData`` by :class:`unilab_envs.deploy.PolicyIO` and its action mapped to
``ctrl`` the same way; physics is ``mujoco.mj_step`` at the spec's physics step, the
policy at its control rate. No ``mujoco.batch``, no Numba kernels, no torch: what runs
here is what a robot-side program runs, so a policy that survives ``play`` has had its
observation order, scaling, action mapping and control rate checked outside training.

* :func:`run_headless`: episodes as training draws them, with tracking, speed per
  command, falls and success, the play loop's cost per control step, and a video.
* :func:`run_window`: ``mujoco.viewer.launch_passive`` in real time; the robot starts
  still (:func:`idle_command`) and the keyboard sets the command (keys shown in the
  window, :func:`keys_overlay`, and in :data:`KEYS_HELP`).
"""

from __future__ import annotations

import dataclasses
import math
import queue
import sys
import time
from pathlib import Path

import unilab_envs.deploy  # noqa: F401  (first: picks MuJoCo's GL backend before mujoco loads)
import mujoco
import numpy as np

from unilab_envs.deploy import SPEC_FILENAME, DeploySpec, PolicyIO, SpecError, load_spec
from unilab_envs.deploy.history import HistoryStack
from unilab_envs.deploy.from_task import default_model_path
from unilab_envs.deploy.height_scan import play_model
from unilab_envs.core.model import servo_joint_actuators
from unilab_envs.deploy.episodes import distance_to_target, fell, reset_episode, sample_command, show_target
from unilab_envs.deploy.grasp import LiftRule
from unilab_envs.deploy.safety import REASONS, SafetyGuard, gain_scales, remembered_action
from unilab_envs.deploy.sim2real import PlaySim2Real, load_play_profile
from unilab_envs.config import ConfigError

POLICY_FILENAME = "policy.onnx"


class PlayError(ValueError):
    """What was given to ``unilab play`` cannot be played; the message says what to do."""


# --- the policy and its spec --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PolicyBundle:
    onnx: Path
    spec: DeploySpec
    folder: Path


def find_policy(path: str | Path, spec_path: str | Path | None = None) -> PolicyBundle:
    """The ``policy.onnx`` and deploy spec of a run folder (or an ``.onnx`` file); :class:`PlayError` if absent.

    The spec is ``spec_path`` when given, else ``deploy_spec.json`` beside the policy, else
    the copy in the ONNX metadata. A spec of another task than the policy's is refused.
    """
    path = Path(path)
    if not path.exists():
        raise PlayError(f"{path} does not exist: pass a folder holding policy.onnx (a run after `unilab export`, "
                        f"or policies/go1_joystick)")
    onnx = path if path.is_file() else path / POLICY_FILENAME
    if onnx.suffix != ".onnx" or not onnx.is_file():
        hint = f"run `unilab export {path}` first" if (path / "checkpoint.pt").exists() or (path / "model.zip").exists() \
            else "pass a run folder after `unilab export RUN`, or the .onnx file"
        raise PlayError(f"{path} holds no {POLICY_FILENAME}: {hint}")
    folder = onnx.parent
    try:
        if spec_path is not None:
            spec = load_spec(spec_path)
        elif (folder / SPEC_FILENAME).is_file():
            spec = load_spec(folder / SPEC_FILENAME)
        else:
            _require_deployable_task(folder)
            spec = load_spec(onnx)
        embedded = None
        try:
            embedded = load_spec(onnx)
        except SpecError:
            pass  # a policy exported before deploy specs: trust the given spec, sizes are checked below
        if embedded is not None:
            spec.require_task(embedded.task.id)
    except SpecError as e:
        raise PlayError(str(e)) from None
    return PolicyBundle(onnx, spec, folder)


def _require_deployable_task(folder: Path) -> None:
    """A run on a task without a deploy spec builder (its ONNX carries no spec) gets told so,
    rather than to re-export."""
    from unilab_envs.deploy.from_task import ROBOTS

    from .common.deploy_export import run_task

    found = run_task(folder)
    if found is not None and not any(found[0].startswith(prefix + "-v") for prefix in ROBOTS):
        raise SpecError(f"{found[0]} has no deploy spec yet (unilab play runs "
                        f"{', '.join(p + '-v0' for p in ROBOTS)}): watch this policy in the training stack "
                        f"with `unilab eval {folder} --video`")


SAFETY_OFF = ("off", "none", "no")


def play_safety(flag: str | None, spec: DeploySpec, profile: dict | None, profile_name=None) -> tuple:
    """``(safety section or None, where it came from)`` for ``unilab play --safety FLAG``.

    ``None`` (no ``--safety``): the ``--sim2real`` profile's section, else the deploy spec's,
    else no guard. ``"on"`` (a bare ``--safety``): the same, else the defaults. ``"default"``:
    the defaults. ``"off"``: no guard. Anything else: a profile name or YAML whose ``safety``
    section to run.
    """
    if flag is not None and flag.strip().lower() in SAFETY_OFF:
        return None, None
    if flag is None or flag == "on":
        if profile is not None and profile.get("safety") is not None:
            return profile["safety"], f"the --sim2real profile {profile_name}"
        if getattr(spec, "safety", None) is not None:
            return spec.safety, "the deploy spec"
        return (None, None) if flag is None else ({}, "defaults")
    if flag == "default":
        return {}, "defaults"
    section = load_play_profile(flag).get("safety")
    if section is None:
        raise SpecError(f"--safety {flag}: that profile has no safety section; give a profile with one, "
                        f"'default', or a bare --safety")
    return section, f"profile {flag}"


class OnnxPolicy:
    """``policy.onnx`` on onnxruntime (CPU, one thread): ``policy(obs) -> action``, float32."""

    def __init__(self, path: Path, spec: DeploySpec) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        inp, out = self.session.get_inputs()[0], self.session.get_outputs()[0]
        self.input_name, self.output_name = inp.name, out.name
        obs_dim, act_dim = inp.shape[-1], out.shape[-1]
        try:
            spec.require_sizes(int(obs_dim), int(act_dim), str(path))
        except SpecError as e:
            raise PlayError(str(e)) from None

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.session.run([self.output_name], {self.input_name: obs.reshape(1, -1)})[0][0]


# --- one simulated robot under the policy ---------------------------------------------------


class Player:
    """Plain ``MjModel``/``MjData`` stepped at the spec's rates with the reference I/O path.

    ``model_path``: another MJCF with the spec's joint, actuator and body names (a
    Menagerie robot); ``sim2real``: a profile name or YAML whose link and sensor sections
    act around the loop (:class:`unilab_envs.deploy.sim2real.PlaySim2Real`); ``safety``: which
    safety section the guard runs (:func:`play_safety`; by default the profile's or the spec's).
    """

    def __init__(self, bundle: PolicyBundle, model_path: str | None = None, sim2real: str | None = None,
                 seed: int = 0, safety: str | None = None) -> None:
        self.spec = spec = bundle.spec
        self.policy = OnnxPolicy(bundle.onnx, spec)
        xml = model_path or spec.model.mjcf
        if xml is None:
            try:
                xml = str(default_model_path(spec.task.id))
            except SpecError as e:
                raise PlayError(f"{e}; pass --model-path FILE.xml") from None
        if not Path(xml).is_file():
            raise PlayError(f"model {xml} does not exist; pass the path of an MJCF (.xml) file")
        try:
            self.model = play_model(spec, str(xml))  # with the spec's terrain in place of the floor, if it has one
        except SpecError as e:  # a terrain section this UniLab cannot build
            raise PlayError(str(e)) from None
        except ValueError as e:
            raise PlayError(f"could not compile MJCF {xml}: {' '.join(str(e).split())}") from None
        self.model.opt.timestep = spec.timing.physics_dt
        self.data = mujoco.MjData(self.model)
        try:
            self.io = PolicyIO(spec, self.model)
            # torque (<motor>) actuators become the PD servos the policy was trained with, with the spec's gains
            servo_joint_actuators(self.model, self.io.actuators, spec.action.kp, spec.action.kd,
                                  gains="the deploy spec's action.kp / action.kd")
            profile = load_play_profile(sim2real) if sim2real else None
            self.sim2real = PlaySim2Real(profile, spec, seed + 1, str(sim2real)) if profile is not None else None
            section, self.safety_source = play_safety(safety, spec, profile, sim2real)
            self.guard = SafetyGuard.from_spec(spec, self.model, section) if section is not None else None
        except (SpecError, ConfigError, ValueError) as e:  # ValueError: an actuator the policy cannot drive
            raise PlayError(str(e)) from None
        self._nominal_gains: tuple[np.ndarray, np.ndarray] | None = None  # the gains before the safe mode
        self.rng = np.random.default_rng(seed)
        # a pick task's episode ends on success or with the object off the table, as in the env
        self.lift = LiftRule(self.io.grasp) if self.io.grasp is not None else None
        self.history = HistoryStack.from_spec(spec)  # the policy's past frames (the spec's history), or None
        self.resample_steps = (max(1, round(spec.command.resample_time / spec.timing.control_dt))
                               if spec.command.resample_time else 0)
        self.state = self.reset()

    def reset(self, command: np.ndarray | None = None):
        """A new episode, randomized as in training (``command``: keep this one)."""
        if self._nominal_gains is not None:  # leave the safe mode's gains
            self.model.actuator_gainprm[self.io.actuators], self.model.actuator_biasprm[self.io.actuators] = self._nominal_gains
            self._nominal_gains = None
        self.state = reset_episode(self.io, self.model, self.data, self.rng, command)
        if self.lift is not None:
            self.lift.reset()
        self.step_count = 0
        if self.history is not None:
            self.history.reset()
        if self.sim2real is not None:
            # motor strength scales every actuator the policy drives (the grasp's gripper too, as the wrapper does)
            drives = self.io.actuators if self.io.grasp is None else np.append(self.io.actuators, self.io.grasp.gripper)
            self.sim2real.start_episode(self.model, drives)
        if self.guard is not None:
            self.guard.reset()
        return self.state

    @property
    def command(self) -> np.ndarray:
        """The velocity command, or the reach target."""
        return self.state.target if self.spec.command.kind == "reach_target" else self.state.command

    def set_command(self, value: np.ndarray) -> None:
        if self.spec.command.kind == "reach_target":
            self.state.target = np.asarray(value, dtype=np.float64)
            show_target(self.io, self.data, self.state.target)
        else:
            self.state.command = np.asarray(value, dtype=np.float64)

    def control_step(self, resample: bool = True) -> bool:
        """Observe, run the policy, act, step physics one control period; ``True`` when the robot fell."""
        self.act()
        return self.simulate(resample)

    def act(self) -> None:
        """The robot computer's half of a control step: observe, run the policy, guard, write ``ctrl``."""
        obs = self.io.observe(self.data, self.state)
        if self.sim2real is not None:
            obs = self.sim2real.observation(obs)
        action = sent = self.policy(obs if self.history is None else self.history(obs))  # frames as received
        if self.guard is not None:  # on the robot's computer, before the link (as wrappers.Safety)
            io, data = self.io, self.data
            action = self.guard.action(action, data.qpos[io.joint_q], data.qvel[io.joint_d],
                                       io.base_quat(data) if io.root_q >= 0 else None, obs,
                                       obs_new=not (self.sim2real is not None and self.sim2real.obs_lost))
            if self.guard.latched and self._nominal_gains is None:
                self._safe_gains()
        if self.sim2real is not None:
            action = self.sim2real.action(action)
        self.io.apply_action(action, self.state, self.data.ctrl, self.data)
        if self.guard is not None:  # the controller remembers what the policy sent, as in training
            self.state.last_action = remembered_action(sent, *self.io.clip).astype(np.float64)

    def simulate(self, resample: bool = True) -> bool:
        """The world's half: the physics substeps of one control period, the gait clock, the command
        resampling; ``True`` when the robot fell."""
        for _ in range(self.spec.timing.substeps):
            mujoco.mj_step(self.model, self.data)
        self.io.refresh(self.data)
        self.io.advance(self.state)
        self.step_count += 1
        if resample and self.resample_steps and self.step_count % self.resample_steps == 0:
            self.state.command = sample_command(self.io, self.rng)
        if self.lift is not None:  # the grasp: ends lifted (self.lift.success) or with the cube off the table
            return self.lift.step(self.data)
        return fell(self.io, self.data)

    def _safe_gains(self) -> None:
        """The safe mode's Kp and Kd on the actuators (until the next reset), as wrappers.Safety sets them."""
        acts, m = self.io.actuators, self.model
        self._nominal_gains = (m.actuator_gainprm[acts].copy(), m.actuator_biasprm[acts].copy())
        kp, kd = gain_scales(self.guard.limits, np.ones(1, bool))
        m.actuator_gainprm[acts, 0] *= kp[0]
        m.actuator_biasprm[acts, 1] *= kp[0]
        m.actuator_biasprm[acts, 2] *= kd[0]

    def base_velocity(self) -> np.ndarray:
        """``(vx, vy, yaw_rate)`` of the base in its frame."""
        return np.concatenate([self.io.base_linvel(self.data)[:2], self.io.base_gyro(self.data)[2:]])


# --- headless episodes ---------------------------------------------------------------------


@dataclasses.dataclass
class PlayResult:
    task: str
    episodes: int
    mean_length: float
    fall_rate: float
    success_rate: float | None
    tracking_lin_vel: float | None   # mean per step of exp(-|v_cmd - v|^2 / sigma), in [0, 1]
    tracking_ang_vel: float | None
    speed_per_command: list[tuple[float, float, float, int]]  # (cmd low, cmd high, mean vx, steps)
    final_distance: float | None
    step_us: float                   # wall time of one control step of the play loop
    control_dt: float
    video: Path | None = None
    sim2real: str | None = None
    safety: str | None = None        # the guard's counts, when it ran
    fall_name: str = "falls"         # what fall_rate counts (the grasp: "cube off the table")

    def summary(self) -> str:
        lines = [f"{self.task}: episodes {self.episodes}  length {self.mean_length:.1f}  {self.fall_name} {self.fall_rate:.1%}"
                 + (f"  success {self.success_rate:.1%}" if self.success_rate is not None else "")
                 + (f"  final distance {self.final_distance * 100:.1f} cm" if self.final_distance is not None else "")]
        if self.tracking_lin_vel is not None:
            lines.append(f"tracking (exp(-err^2/sigma), 1 = perfect): linear {self.tracking_lin_vel:.3f}  "
                         f"yaw {self.tracking_ang_vel:.3f}")
        if self.speed_per_command:
            lines.append("forward speed per command (settled steps, >= 1 s after a command change):")
            lines += [f"  cmd vx [{lo:+.2f}, {hi:+.2f}) m/s: vx {v:+.2f} m/s ({n} steps)"
                      for lo, hi, v, n in self.speed_per_command]
        period = self.control_dt * 1e6
        lines.append(f"play loop: {self.step_us:.0f} us per control step (policy + {self.control_dt * 1e3:.0f} ms of "
                     f"physics + I/O), {period / self.step_us:.0f}x faster than real time on one core")
        if self.sim2real:
            lines.append(self.sim2real)
        if self.safety:
            lines.append(self.safety)
        if self.video is not None:
            lines.append(f"video {self.video}")
        return "\n".join(lines)


def _speed_table(commands: list[np.ndarray], speeds: list[np.ndarray], low: float, high: float, width: float = 0.25):
    if not commands:
        return []
    cmd, vel = np.asarray(commands)[:, 0], np.asarray(speeds)[:, 0]
    edges = np.arange(math.floor(low / width) * width, high + width, width)
    table = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        mask = (cmd >= lo) & (cmd < hi)
        if mask.sum() >= 25:
            table.append((float(lo), float(hi), float(vel[mask].mean()), int(mask.sum())))
    return table


class _Filmer:
    """Frames of the first episode through ``mujoco.Renderer``, following the base."""

    def __init__(self, player: Player, path: Path, max_frames: int, progress: bool = False) -> None:
        from trainers.common.video import VideoRecorder

        self.player = player
        self.renderer = mujoco.Renderer(player.model, height=360, width=480)
        self.camera = _camera(player)
        self.recorder = VideoRecorder(path, round(1.0 / player.spec.timing.control_dt), max_frames, progress=progress)

    def add(self) -> None:
        self.renderer.update_scene(self.player.data, camera=self.camera)
        self.recorder.add(self.renderer.render())

    def write(self) -> Path | None:
        self.renderer.close()
        return self.recorder.write()


def _camera(player: Player) -> mujoco.MjvCamera:
    cam = mujoco.MjvCamera()
    root = player.spec.model.root_body
    body = mujoco.mj_name2id(player.model, mujoco.mjtObj.mjOBJ_BODY, root) if root else -1
    if body > 0:
        cam.type, cam.trackbodyid = mujoco.mjtCamera.mjCAMERA_TRACKING, body
        cam.distance, cam.elevation, cam.azimuth = 1.6 if player.spec.action.size < 20 else 3.0, -20.0, 120.0
    else:
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = (0.0, 0.0, 0.4)
        cam.distance, cam.elevation, cam.azimuth = 2.2, -25.0, 135.0
        if player.io.grasp is not None:  # the grasp: the table in front of the arm, as examples/film_grasp.py
            cam.lookat[:] = (-0.12, 0.48, 0.22)
            cam.distance, cam.elevation, cam.azimuth = 1.2, -18.0, -50.0
    return cam


def run_headless(player: Player, episodes: int, video: Path | None = None, video_frames: int = 250,
                 progress: bool = True) -> PlayResult:
    """``episodes`` whole episodes (reset and commands as in training); metrics as in ``unilab eval``."""
    spec = player.spec
    velocity = spec.command.kind == "velocity"
    sigma = spec.episode.tracking_sigma or 0.25
    settle = max(1, round(1.0 / spec.timing.control_dt))
    lengths, falls, successes, distances = [], [], [], []
    lin, ang, cmds, speeds = [], [], [], []
    filmer = _Filmer(player, video, video_frames, progress) if video is not None else None
    loop_time, loop_steps = 0.0, 0
    trips = dict.fromkeys(REASONS, 0)
    for episode in range(episodes):
        player.reset()
        since_change, last_cmd = 0, player.command.copy()
        if filmer is not None and episode == 0:
            filmer.add()
        fallen = False
        while player.step_count < spec.episode.max_steps:
            t0 = time.perf_counter()
            fallen = player.control_step()
            loop_time += time.perf_counter() - t0
            loop_steps += 1
            if filmer is not None and episode == 0 and not filmer.recorder.full:
                filmer.add()
            if velocity:
                v, c = player.base_velocity(), player.command
                lin.append(math.exp(-((c[0] - v[0]) ** 2 + (c[1] - v[1]) ** 2) / sigma))
                ang.append(math.exp(-((c[2] - v[2]) ** 2) / sigma))
                since_change = 0 if not np.array_equal(c, last_cmd) else since_change + 1
                last_cmd = c.copy()
                if since_change >= settle:
                    cmds.append(c.copy())
                    speeds.append(v)
            if fallen:
                break
        lengths.append(player.step_count)
        falls.append(fallen and not (player.lift is not None and player.lift.success))  # a lift ends it too
        if player.guard is not None and player.guard.latched:
            trips[player.guard.reason] += 1
        if spec.command.kind == "reach_target":
            d = distance_to_target(player.io, player.data, player.state)
            distances.append(d)
            successes.append(d < spec.episode.success_threshold)
        elif player.lift is not None:  # the grasp: lifted and held, which ended the episode
            successes.append(player.lift.success)
        if progress:
            print(f"\repisode {episode + 1}/{episodes}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    path = filmer.write() if filmer is not None else None
    lo, hi = spec.command.ranges[0] if velocity else (0.0, 0.0)
    return PlayResult(
        task=spec.task.id, episodes=episodes, mean_length=float(np.mean(lengths)), fall_rate=float(np.mean(falls)),
        success_rate=float(np.mean(successes)) if successes else None,
        tracking_lin_vel=float(np.mean(lin)) if lin else None, tracking_ang_vel=float(np.mean(ang)) if ang else None,
        speed_per_command=_speed_table(cmds, speeds, lo, hi), final_distance=float(np.mean(distances)) if distances else None,
        step_us=1e6 * loop_time / max(loop_steps, 1), control_dt=spec.timing.control_dt, video=path,
        sim2real=player.sim2real.describe() if player.sim2real is not None else None,
        safety=_safety_summary(player, trips, loop_steps, episodes),
        fall_name="cube off the table" if player.lift is not None else "falls")


def _safety_summary(player: Player, trips: dict[str, int], steps: int, episodes: int) -> str | None:
    """One line of the guard's counts over the run (joint-steps each limit moved; trips by watchdog)."""
    if player.guard is None:
        return None
    c, n = player.guard.counts, max(steps * player.guard.limits.size, 1)
    why = ", ".join(f"{k} {v}" for k, v in trips.items() if v)
    return (f"safety ({player.safety_source}): targets moved by position limits {c['position_clips']} "
            f"({c['position_clips'] / n:.2%} of joint-steps), rate limit {c['rate_limits']} ({c['rate_limits'] / n:.2%}), "
            f"torque limit {c['torque_limits']} ({c['torque_limits'] / n:.2%}); safe mode latched in "
            f"{sum(trips.values())} of {episodes} episodes" + (f" ({why})" if why else ""))


# --- the window ------------------------------------------------------------------------------

GLFW_KEYS = {"right": 262, "left": 263, "down": 264, "up": 265, "page_up": 266, "page_down": 267, "space": 32,
             "r": 82, "backspace": 259}
KEYS_HELP = ("joystick: Up/Down vx, Left/Right vy, PageUp/PageDown yaw rate, Space stop, R reset; "
             "reach: arrows move the target in x/y, PageUp/PageDown in z (or Ctrl + right-drag the target sphere), "
             "R reset; grasp: PageUp/PageDown the lift height, R a new cube")
VELOCITY_STEP = (0.1, 0.1, 0.2)
MAX_STEPS_PER_FRAME = 25  # control steps between two viewer frames, at most
MAX_LAG_S = 0.25
TARGET_STEP = 0.02


def apply_key(player: Player, key: int) -> None:
    """Change the command (or the target) for one key press; ``R`` resets keeping the command."""
    k = GLFW_KEYS
    if key in (k["r"], k["backspace"]):
        player.reset(command=player.command.copy())
        return
    c = player.command.copy()
    if player.spec.command.kind == "velocity":
        axis_step = {k["up"]: (0, 1), k["down"]: (0, -1), k["left"]: (1, 1), k["right"]: (1, -1),
                     k["page_up"]: (2, 1), k["page_down"]: (2, -1)}
        if key == k["space"]:
            c[:] = 0.0
        elif key in axis_step:
            axis, sign = axis_step[key]
            lo, hi = player.spec.command.ranges[axis]
            c[axis] = float(np.clip(round(c[axis] + sign * VELOCITY_STEP[axis], 3), lo, hi))
        else:
            return
    elif player.spec.command.kind == "lift":  # the grasp: PageUp/PageDown move the lift height
        if key not in (k["page_up"], k["page_down"]):
            return
        c[0] += TARGET_STEP if key == k["page_up"] else -TARGET_STEP
    else:
        moves = {k["up"]: (0, 1), k["down"]: (0, -1), k["left"]: (1, 1), k["right"]: (1, -1),
                 k["page_up"]: (2, 1), k["page_down"]: (2, -1)}
        if key not in moves:
            return
        axis, sign = moves[key]
        c[axis] += sign * TARGET_STEP
    player.set_command(c)


def idle_command(player: Player) -> np.ndarray:
    """The command the window starts on, so the robot waits for the keyboard: zero velocity
    (a legged robot stands), or a reach target where the end effector already is (the arm
    holds still)."""
    if player.spec.command.kind == "reach_target":
        return np.array(player.io.ee_pos(player.data), dtype=np.float64)
    if player.spec.command.kind == "lift":  # the grasp has no idle command: it picks the cube at training's height
        return np.array([player.spec.command.ranges[0][0]])
    return np.zeros(len(player.spec.command.names))


def start_idle(player: Player) -> None:
    """A new episode on :func:`idle_command` (training's reset randomization, no random command)."""
    player.reset()
    player.set_command(idle_command(player))


def keys_overlay(kind: str) -> tuple:
    """The window's key help, ``(font, gridpos, keys, what they do)`` for ``Handle.set_texts``,
    top right (the command and speeds are top left, the robot below); the step sizes are the
    ones :func:`apply_key` uses."""
    if kind == "reach_target":
        step = f"{TARGET_STEP * 100:.0f} cm"
        keys = "Up / Down\nLeft / Right\nPgUp / PgDn\nCtrl + right-drag\nR"
        does = f"target x +/- {step}\ntarget y +/- {step}\ntarget z +/- {step}\nmove the target sphere\nreset the arm"
    elif kind == "lift":
        keys, does = "PgUp / PgDn\nR", f"lift height +/- {TARGET_STEP * 100:.0f} cm\nnew cube, reset the arm"
    else:
        vx, vy, yaw = VELOCITY_STEP
        keys = "Up / Down\nLeft / Right\nPgUp / PgDn\nSpace\nR"
        does = (f"forward speed +/- {vx:g} m/s\nsideways speed +/- {vy:g} m/s\nyaw rate +/- {yaw:g} rad/s\n"
                f"stop (zero command)\nreset the robot")
    return (mujoco.mjtFontScale.mjFONTSCALE_100, mujoco.mjtGridPos.mjGRID_TOPRIGHT, keys, does)


def _overlay(player: Player, fallen: bool) -> tuple:
    c = player.command
    if player.spec.command.kind == "velocity":
        v = player.base_velocity()
        names = "command vx\ncommand vy\ncommand yaw\nbase vx\nbase vy\nbase yaw\nfallen"
        values = f"{c[0]:+.2f} m/s\n{c[1]:+.2f} m/s\n{c[2]:+.2f} rad/s\n{v[0]:+.2f} m/s\n{v[1]:+.2f} m/s\n{v[2]:+.2f} rad/s\n{'yes (R: reset)' if fallen else 'no'}"
    elif player.lift is not None:
        cube, lift = player.io.grasp.object_pos(player.data), player.lift
        names = "lift height\ncube height\nheld for\nresult"
        result = "lifted (R: reset)" if lift.success else "off the table (R: reset)" if lift.failed else "-"
        values = f"{c[0]:.3f} m\n{cube[2]:.3f} m\n{lift.hold_steps} steps\n{result}"
    else:
        d = distance_to_target(player.io, player.data, player.state)
        names = "target x\ntarget y\ntarget z\ndistance"
        values = f"{c[0]:+.3f} m\n{c[1]:+.3f} m\n{c[2]:+.3f} m\n{d * 100:.1f} cm"
    return (mujoco.mjtFontScale.mjFONTSCALE_150, mujoco.mjtGridPos.mjGRID_TOPLEFT, names, values)


def run_window(player: Player, duration: float | None = None, out=sys.stdout) -> int:
    """Real-time play in ``mujoco.viewer.launch_passive`` until the window closes (or ``duration`` s of sim time).

    The robot starts on :func:`idle_command` and waits for the keyboard; the window shows the
    command and the keys (:func:`keys_overlay`)."""
    import mujoco.viewer

    keys: queue.SimpleQueue[int] = queue.SimpleQueue()
    reach = player.spec.command.kind == "reach_target"
    help_text = keys_overlay(player.spec.command.kind)
    start_idle(player)
    with mujoco.viewer.launch_passive(player.model, player.data, key_callback=keys.put,
                                      show_left_ui=False, show_right_ui=False) as viewer:
        cam = _camera(player)
        viewer.cam.type, viewer.cam.trackbodyid = cam.type, cam.trackbodyid
        viewer.cam.distance, viewer.cam.elevation, viewer.cam.azimuth = cam.distance, cam.elevation, cam.azimuth
        viewer.cam.lookat[:] = cam.lookat
        waits = "the arm picks the cube at once" if player.lift is not None else "the robot holds still until you press a key"
        print(f"playing {player.spec.task.id} in a window; {waits} "
              f"(the keys are shown in the window): {KEYS_HELP}", file=out, flush=True)
        fallen, sim_time, start = False, 0.0, time.perf_counter()
        dt = player.spec.timing.control_dt
        while viewer.is_running() and (duration is None or sim_time < duration):
            behind = time.perf_counter() - start - sim_time
            if behind < 0:  # ahead of the wall clock
                time.sleep(min(-behind, dt))
                continue
            if behind > MAX_LAG_S:  # a slow renderer: run in slow motion rather than spiral
                start += behind - MAX_LAG_S
                behind = MAX_LAG_S
            steps = min(int(behind / dt) + 1, MAX_STEPS_PER_FRAME)
            with viewer.lock():
                while not keys.empty():
                    apply_key(player, keys.get())
                    fallen = False
                for _ in range(steps):
                    if reach and player.io.target_mocap >= 0:  # the target sphere may have been dragged
                        player.state.target = np.array(player.data.mocap_pos[player.io.target_mocap])
                    if not fallen:
                        fallen = player.control_step(resample=False)
                    sim_time += dt
                overlay = _overlay(player, fallen)
            viewer.set_texts([overlay, help_text])  # it takes the viewer's lock itself
            viewer.sync()  # the viewer renders at its own pace; control steps run between frames
    _join_viewer_thread()
    return 0


def _join_viewer_thread(timeout: float = 10.0) -> None:
    """Wait until the closed viewer's UI thread has torn down its window.

    ``launch_passive`` runs the UI in a daemon thread; returning while it still destroys
    its OpenGL context lets interpreter exit (``glfw.terminate`` at exit) race it, which
    crashes the process now and then.
    """
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and thread.name.endswith("(_launch_internal)"):
            thread.join(timeout)
