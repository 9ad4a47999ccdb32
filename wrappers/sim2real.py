"""``Sim2Real``: the whole sim-to-real stack from a named profile or a YAML file.

A profile is a mapping from wrapper section to that wrapper's config::

    extends: go1_real            # optional: start from another profile
    observation_noise: {distribution: uniform, scales: {gyro: 0.2, joint_vel: 1.5}}
    action_latency: {delay: [0, 1]}
    random_push: null            # null removes a section
    privileged_critic: true      # optional: the critic also sees the clean observation and
                                 # the perturbations (wrappers.privileged)
    curriculum: {start: 0.0}     # optional: every section grows from nothing as the policy
                                 # copes (wrappers.curriculum)

Packaged profiles (``unilab_robot/profiles/*.yaml``): ``go1_real``, ``g1_real``,
``ur5_real``, ``ur5_grasp_real``, ``go1_depth_real``. The sections nest in a fixed order, innermost first, so that the
signal meets the imperfections in the order hardware applies them::

    env <- domain_randomization <- random_push <- motor_strength <- action_noise
        <- action_latency <- camera_pose <- motion_blur <- depth_noise <- frame_drop
        <- camera_latency <- imu_bias_drift <- observation_noise
        <- observation_latency <- packet_loss <- safety <- policy

(an action is lost on the link, then delayed, then executed noisily by a motor
of random strength; a reading is biased and noisy at the sensor, then delayed,
then lost on the link; a camera frame is rendered from a mount that is a little
off and blurred over its exposure, then corrupted by the stereo matcher, then
lost or delayed on its way to the policy: :mod:`wrappers.camera_motion`,
:mod:`wrappers.camera_noise`, :mod:`wrappers.camera_timing`). ``safety`` (:mod:`wrappers.safety`) is the controller's guard, not an
imperfection: it meets the policy's action first and sees the observation the policy saw.

Only sensor readings go through the observation pipeline: the groups the controller
knows itself (its last action, the command, the gait phase:
:data:`~unilab_robot.deploy.controller_groups.CONTROLLER_GROUPS`) reach the policy exact,
and ``last_action`` is the action the policy sent, as on the robot
(:mod:`wrappers.controller_state`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from gymnasium.vector import VectorEnv, VectorWrapper

from unilab_envs.config import ConfigError
from unilab_envs.core.state import StateError
from unilab_robot.profiles import META_KEYS, OPTION_KEYS, SECTION_KEYS, Profile, profile_names, profiles_for, resolve
from wrappers.camera_motion import CameraPose, MotionBlur
from wrappers.camera_noise import DepthNoise
from wrappers.camera_timing import CameraLatency, FrameDrop
from wrappers.latency import ActionLatency, ObservationLatency
from wrappers.noise import ActionNoise, ImuBiasDrift, ObservationNoise
from wrappers.packet_loss import PacketLoss
from wrappers.physics import DomainRandomization, MotorStrength, RandomPush
from wrappers.controller_state import ControllerState
from wrappers.curriculum import ProfileCurriculum
from wrappers.privileged import CleanObservationTap, PrivilegedCritic, privileged_parts
from wrappers.safety import Safety

#: section name -> wrapper, innermost first: the order of the one key table (unilab_robot.profiles.SECTION_KEYS)
_WRAPPERS = {cls.SECTION: cls for cls in (
    DomainRandomization, RandomPush, MotorStrength, ActionNoise, ActionLatency, CameraPose, MotionBlur, DepthNoise,
    FrameDrop, CameraLatency, ImuBiasDrift, ObservationNoise, ObservationLatency, PacketLoss, Safety)}
SECTIONS: dict[str, type] = {name: _WRAPPERS[name] for name in SECTION_KEYS}  # a section without a wrapper fails at import
__all__ = ["SECTIONS", "META_KEYS", "OPTION_KEYS", "Sim2Real", "load_profile", "profiles_for", "check_profile_fits",
           "profile_names"]


def load_profile(profile: str | Path | Mapping[str, Any] | Profile, overrides: Mapping[str, Any] | None = None) -> Profile:
    """The resolved, typed profile (:func:`unilab_robot.profiles.resolve`): ``extends`` chains followed,
    ``overrides`` merged (a section set to ``None`` is removed), sections and keys checked.

    Args:
        profile: a packaged profile name, a YAML path, a mapping, or a ``Profile`` (returned as it is).
        overrides: sections (or keys within them) merged on top.
    """
    return resolve(profile, overrides)


def check_profile_fits(profile: Mapping[str, Any] | Profile, env_id: str | None, name: Any = None) -> None:
    """Raise ``ConfigError`` (a ``ValueError``) when ``profile`` declares an ``env_id`` other than ``env_id``
    (:meth:`unilab_robot.profiles.Profile.check_fits`); ``name`` labels a mapping that is not a ``Profile``."""
    if not isinstance(profile, Profile):
        profile = resolve(name if isinstance(name, (str, Path)) else profile)
    profile.check_fits(env_id)


class Sim2Real(VectorWrapper):
    """The profile's wrappers stacked on ``env``, in :data:`SECTIONS` order.

    ``Sim2Real(gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1024), profile="go1_real")``.
    ``layers`` maps each section present to its wrapper instance; ``profile``
    is the resolved :class:`~unilab_robot.profiles.Profile`. With the profile's ``privileged_critic``, ``critic`` is the
    :class:`~wrappers.privileged.PrivilegedCritic` that extends ``info["privileged_obs"]``
    (and ``privileged_observation_space``; ``critic.groups`` names its columns), else ``None`` (and
    ``privileged_observation_space`` is the task's own, its ``info["privileged_obs"]`` passing through).
    With the profile's ``curriculum``, ``curriculum`` is the
    :class:`~wrappers.curriculum.ProfileCurriculum` that scales every layer, else ``None``.
    """

    def __init__(self, env: VectorEnv, profile: str | Path | Mapping[str, Any] | Profile = "go1_real",
                 overrides: Mapping[str, Any] | None = None) -> None:
        self.profile = resolve(profile, overrides)  # a Profile is taken as it is: resolved once, by its caller
        spec = getattr(env.unwrapped, "spec", None)
        self.profile.check_fits(getattr(spec, "id", None))
        parts = privileged_parts(self.profile.get("privileged_critic"))
        self.layers: dict[str, VectorWrapper] = {}
        tap = top = CleanObservationTap(env)
        for name, cls in SECTIONS.items():
            if name in self.profile:
                config = self.profile[name]
                if not isinstance(config, Mapping):
                    raise ConfigError(f"profile section {name!r} must be a mapping of {cls.__name__} settings, got {config!r}")
                try:
                    top = cls(top, dict(config))
                except (TypeError, ValueError) as error:
                    raise type(error)(f"profile section {name!r}: {error}") from error
                self.layers[name] = top
        super().__init__(top)
        self.tap = tap  # the env's own observation before the wrappers (tap.obs), for critics and teachers
        self.controller = ControllerState(env, tap, guarded="safety" in self.layers)
        self.critic = PrivilegedCritic(env, parts, tap, list(self.layers.values())) if parts else None
        # the critic's extended space, else the task's own: its info["privileged_obs"] passes through unchanged, and a
        # trainer reading the attribute off the stack must not lose it (the off-policy critic did, under any profile)
        self.privileged_observation_space = (self.critic.observation_space if self.critic is not None
                                             else getattr(env, "privileged_observation_space", None))
        curriculum = self.profile.get("curriculum")
        curriculum = {} if curriculum is True else (None if curriculum is False else curriculum)
        self.curriculum = ProfileCurriculum(curriculum, self.layers.values(), self.num_envs) if curriculum is not None else None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        obs = self.controller.after_reset(obs, (options or {}).get("reset_mask"))
        if self.critic is not None:
            self.critic.fill(info)
        return obs, info

    def step(self, actions):
        self.controller.remember(actions)
        if self.critic is not None:
            self.critic.before_step()
        obs, reward, terminated, truncated, info = self.env.step(actions)
        obs = self.controller.after_step(obs, terminated, truncated, info)
        if self.critic is not None:
            self.critic.fill(info)
        if self.curriculum is not None:
            self.curriculum.update(terminated, truncated, info)
        return obs, reward, terminated, truncated, info

    def get_state(self) -> dict[str, Any]:
        """The state of the whole stack (each layer's and the base env's); see ``Sim2RealWrapper.get_state``."""
        state = self.env.get_state()
        if self.curriculum is not None:
            state = {**state, "curriculum": self.curriculum.get_state()}
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        """Load a :meth:`get_state` result into a stack built from the same profile."""
        self.env.set_state(state)
        if self.curriculum is not None:
            if "curriculum" not in state:
                raise StateError("the saved state has no profile curriculum, this profile has one: build the "
                                 "same profile as the saved run (or start a new run with --init-from)")
            self.curriculum.set_state(state["curriculum"])

    def __repr__(self) -> str:
        return f"<Sim2Real[{', '.join(self.layers)}], {self.unwrapped}>"
