"""One simulated robot under the policy: :class:`Player`, the loop ``unilab play`` steps."""

from __future__ import annotations

import mujoco
import numpy as np

from unilab_envs.config import ConfigError
from unilab_envs.core.model import servo_joint_actuators
from unilab_robot.deploy import PolicyIO, SpecError
from unilab_robot.deploy.episodes import fell, reset_episode, sample_command, show_target
from unilab_robot.deploy.grasp import LiftRule
from unilab_robot.deploy.history import HistoryStack
from unilab_robot.deploy.safety import SafetyGuard, gain_scales, remembered_action
from unilab_robot.deploy.sim2real import PlaySim2Real, load_play_profile
from unilab_robot.model import load_play_model
from unilab_robot.policy import OnnxPolicy, PlayError, PolicyBundle
from unilab_robot.policy_state import reset_policy_state

from .gains import apply_spec_gains, gain_notes
from .safety_section import play_safety


class Player:
    """Plain ``MjModel``/``MjData`` stepped at the spec's rates with the reference I/O path.

    ``model_path``: another MJCF with the spec's joint, actuator and body names (a
    Menagerie robot); ``sim2real``: a profile name or YAML whose link and sensor sections
    act around the loop (:class:`unilab_robot.deploy.sim2real.PlaySim2Real`); ``safety``: which
    safety section the guard runs (:func:`play_safety`; by default the profile's or the spec's);
    ``model_gains``: keep the model's own servo gains where they differ from the spec's (by default
    the model is driven with the spec's Kp / Kd, as a robot's motor drivers are: :mod:`.gains`), and
    the guard estimates torque with the gains that drive the model either way; ``clip``: a motion-tracking
    spec's clip every episode plays (a name; ``None``: each episode draws one, as ``unilab eval`` does).

    A control step is :meth:`act` (the robot computer's half) then :meth:`simulate` (the
    world's half); :meth:`control_step` runs both.
    """

    def __init__(self, bundle: PolicyBundle, model_path: str | None = None, sim2real: str | None = None,
                 seed: int = 0, safety: str | None = None, model_gains: bool = False, clip: str | None = None) -> None:
        self.spec = spec = bundle.spec
        self.policy = OnnxPolicy(bundle.onnx, spec)
        self.model = load_play_model(spec, model_path)
        self.data = mujoco.MjData(self.model)
        try:
            # play runs the guard itself, before the link; a task's own groups are built by the builders it declares
            self.io = PolicyIO(spec, self.model, safety=False, builders=bundle.builders)
            # torque (<motor>) actuators become the PD servos the policy was trained with, with the spec's gains
            servo_joint_actuators(self.model, self.io.actuators, spec.action.kp, spec.action.kd,
                                  gains="the deploy spec's action.kp / action.kd")
            #: how the model's actuators differ from training's, read before play changes its gains (and
            #: before a profile's motor-strength draw does)
            self.model_differences = self.io.actuator_differences()
            #: the notes about Kp / Kd, and whether the model keeps its own gains (else it gets the spec's)
            self.gain_notes, self.model_gains = gain_notes(self.model_differences), bool(model_gains)
            if self.gain_notes and not self.model_gains:
                apply_spec_gains(self.model, self.io.actuators, spec.action.kp, spec.action.kd)
            profile = load_play_profile(sim2real) if sim2real else None
            self.sim2real = PlaySim2Real(profile, spec, seed + 1, str(sim2real)) if profile is not None else None
            section, self.safety_source = play_safety(safety, spec, profile, sim2real)
            self.guard = (SafetyGuard.from_spec(spec, self.model, section, gains="model" if model_gains else "spec")
                          if section is not None else None)
            if clip is not None and self.io.motion is None:
                raise SpecError(f"--clip names a clip of a motion-tracking policy; {spec.task.id} follows none")
            self.clip = None if clip is None else self.io.motion.names[self.io.motion.clip_index(clip)]
        except (SpecError, ConfigError, ValueError) as e:  # ValueError: an actuator the policy cannot drive
            raise PlayError(str(e)) from None
        self._nominal_gains: tuple[np.ndarray, np.ndarray] | None = None  # the gains before the safe mode
        self.rng = np.random.default_rng(seed)
        # a pick task's episode ends on success or with the object off the table, as in the env
        self.lift = LiftRule(self.io.grasp) if self.io.grasp is not None else None
        self.history = HistoryStack.from_spec(spec)  # the policy's past frames (the spec's history), or None
        self.resample_steps = (max(1, round(spec.command.resample_time / spec.timing.control_dt))
                               if spec.command.resample_time else 0)
        #: the sim-to-real profile in the loop, in words (``none`` without one)
        self.profile_label = str(sim2real) if sim2real else "none"
        self.state = self.reset()

    def reset(self, command: np.ndarray | None = None):
        """A new episode, randomized as in training (``command``: keep this one)."""
        if self._nominal_gains is not None:  # leave the safe mode's gains
            self.model.actuator_gainprm[self.io.actuators], self.model.actuator_biasprm[self.io.actuators] = self._nominal_gains
            self._nominal_gains = None
        self.state = reset_episode(self.io, self.model, self.data, self.rng, command, clip=self.clip)
        if self.lift is not None:
            self.lift.reset()
        self.step_count = 0
        if self.history is not None:
            self.history.reset()
        reset_policy_state(self.policy)  # a recurrent policy's hidden state (unilab_robot.policy_state)
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
        self.last_obs = obs  # what the policy saw (the film shows a depth camera's frame from it)
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
        # the controller remembers what the policy sent (clipped), not what the link and motors made of
        # it: the training stack's wrappers.ControllerState writes the same into last_action
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
        return fell(self.io, self.data, self.state)

    @property
    def clip_done(self) -> bool:
        """A motion-tracking episode at its clip's last frame (the reference holds it from here)."""
        return self.state.motion is not None and self.io.motion.at_end(self.state.motion)

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
