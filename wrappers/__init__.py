"""Sim-to-real wrappers: put the imperfections of real hardware back into UniLab envs.

Each wrapper is a ``gymnasium.vector.VectorWrapper`` over a batched env, with a
typed, validated config (a frozen dataclass; pass it, a dict, or keywords), and
per-env state in ``(N, ...)`` arrays updated by Numba kernels. Random draws come
from per-env streams seeded from the env's seeds, so a run is reproducible and
independent of ``N`` and of the thread count::

    import gymnasium as gym, unilab_envs, wrappers
    env = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=1024)
    env = wrappers.Sim2Real(env, profile="go1_real")           # the whole stack
    env = wrappers.ObservationNoise(env, scales={"gyro": 0.2})  # or one at a time

For a single ``gymnasium.Env`` wrap ``gym.make_vec(id, num_envs=1)`` and adapt
it with :class:`SingleEnv`. See ``_base`` for episode boundaries under both
autoreset modes.
"""

from wrappers._base import Sim2RealWrapper
from wrappers.camera_motion import CameraPose, CameraPoseConfig, MotionBlur, MotionBlurConfig
from wrappers.camera_noise import DepthNoise, DepthNoiseConfig
from wrappers.camera_timing import CameraLatency, CameraLatencyConfig, FrameDrop, FrameDropConfig
from wrappers.history import ObservationHistory
from wrappers.latency import ActionLatency, LatencyConfig, ObservationLatency
from wrappers.noise import ActionNoise, ActionNoiseConfig, ImuBiasDrift, ImuBiasDriftConfig, ObservationNoise, ObservationNoiseConfig
from wrappers.packet_loss import ChannelConfig, PacketLoss, PacketLossConfig
from wrappers.physics import (
    DomainRandomization,
    DomainRandomizationConfig,
    ModelFields,
    MotorStrength,
    MotorStrengthConfig,
    RandomPush,
    RandomPushConfig,
)
from wrappers.safety import Safety
from wrappers.sim2real import SECTIONS, Sim2Real, check_profile_fits, load_profile, profile_names, profiles_for
from wrappers.single import SingleEnv

__all__ = [
    "ActionLatency",
    "ActionNoise",
    "ActionNoiseConfig",
    "CameraLatency",
    "CameraLatencyConfig",
    "CameraPose",
    "CameraPoseConfig",
    "ChannelConfig",
    "DepthNoise",
    "DepthNoiseConfig",
    "DomainRandomization",
    "DomainRandomizationConfig",
    "FrameDrop",
    "FrameDropConfig",
    "ImuBiasDrift",
    "ImuBiasDriftConfig",
    "LatencyConfig",
    "ModelFields",
    "MotionBlur",
    "MotionBlurConfig",
    "MotorStrength",
    "MotorStrengthConfig",
    "ObservationHistory",
    "ObservationLatency",
    "ObservationNoise",
    "ObservationNoiseConfig",
    "PacketLoss",
    "PacketLossConfig",
    "RandomPush",
    "RandomPushConfig",
    "SECTIONS",
    "Safety",
    "Sim2Real",
    "Sim2RealWrapper",
    "SingleEnv",
    "check_profile_fits",
    "load_profile",
    "profile_names",
    "profiles_for",
]
