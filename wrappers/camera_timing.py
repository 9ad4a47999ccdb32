"""A camera's timing on the robot: ``FrameDrop`` (frames that never arrive) and ``CameraLatency`` (frames
that arrive late).

The camera's own frame rate, lower than the control loop's, is the sensor's
(``DepthCameraConfig.update_every``): between frames the policy sees the last one again.

* ``FrameDrop``: each new frame (:mod:`wrappers.camera_common`) of an env is lost with probability
  ``drop_rate`` (a USB transfer that fails, a frame the driver skips when the host is late); the
  policy keeps the last delivered frame until the next one arrives. The first frame of an episode is
  always delivered, so nothing leaks from the previous episode. ``info["frame_dropped"]`` is the
  ``(N,)`` mask of the step (in SAME_STEP mode, for a row that finished, the terminal frame's).
* ``CameraLatency``: the policy sees at control step ``t`` the image of step ``t - k`` of the same
  episode, ``k`` fixed or drawn per env at each episode start; the image group only, the rest of the
  observation is untouched. It is :class:`~wrappers.latency.ObservationLatency` on the camera's
  group (the same delay line and kernel, its own RNG stream): before ``k`` steps have passed the
  policy sees the episode's first frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import uniform
from wrappers._base import as_range, make_config, require, row_kernel
from wrappers.camera_common import FrameWrapper, camera_columns, camera_of, put_frame
from wrappers.latency import MAX_DELAY, LatencyConfig, ObservationLatency


@nb.njit(inline="always", cache=True)
def _deliver(src, i, cols, delivered, rng, rate, draw):
    """A new frame of env ``i`` (``draw``) is lost with probability ``rate``; an episode's first frame (``not
    draw``) always arrives. Returns whether it was lost."""
    if draw and uniform(rng, i) < rate:
        return True
    for k in range(cols.shape[0]):
        delivered[i, k] = src[i, cols[k]]
    return False


@row_kernel
def _drop_frames(obs, out, final_in, final_out, touch, started, final, fresh, rng, cols, delivered, dropped, rate):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        dropped[i] = False
        if final[i]:  # the old episode's last frame, if the camera rendered a new one
            if fresh:
                dropped[i] = _deliver(final_in, i, cols, delivered, rng, rate, True)
            put_frame(final_out, final_in, i, cols, delivered)
        if started[i]:
            _deliver(obs, i, cols, delivered, rng, rate, False)
        elif fresh:
            dropped[i] = _deliver(obs, i, cols, delivered, rng, rate, True)
        put_frame(out, obs, i, cols, delivered)


@dataclass(frozen=True)
class FrameDropConfig:
    """Lost camera frames (module docstring).

    Attributes:
        drop_rate: probability that a new frame never reaches the policy.
        group: the camera's image group in the observation.
    """

    drop_rate: float = 0.05
    group: str = "depth"

    def validate(self) -> None:
        require(math.isfinite(self.drop_rate) and 0.0 <= self.drop_rate <= 1.0,
                f"drop_rate must be a probability in [0, 1], got {self.drop_rate}")


class FrameDrop(FrameWrapper):
    """Each new camera frame is lost with probability ``drop_rate``; the policy keeps the last one delivered.

    ``FrameDrop(env, drop_rate=0.05)``; ``info["frame_dropped"]`` marks the rows whose frame was lost this step.
    """

    SECTION = "frame_drop"
    CONFIG = FrameDropConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_delivered", "dropped", "_out", "_final_out")

    def __init__(self, env: VectorEnv, config: FrameDropConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        cfg = make_config(FrameDropConfig, config, kwargs)
        super().__init__(env, cfg.group)
        self.config = cfg
        n = self.num_envs
        self._delivered = np.zeros((n, self._cols.size), np.float32)
        self.dropped = np.zeros(n, bool)
        self._rate = cfg.drop_rate

    def _apply_profile_level(self, level):
        self._rate = self.config.drop_rate * level

    def _observe(self, obs, info, touch, started, final):
        final_in = self._final_in(info, obs)
        _drop_frames(obs, self._out, final_in, self._final_out, touch, started, final, self._fresh, self._rng, self._cols,
                     self._delivered, self.dropped, self._rate)
        info["frame_dropped"] = self.dropped.copy()
        return self._outputs(info, final)


@dataclass(frozen=True)
class CameraLatencyConfig:
    """The camera image's delay in control steps.

    Attributes:
        delay: ``k`` (fixed) or ``(low, high)``: drawn per env at each episode start, uniformly among ``low..high``.
        group: the camera's image group in the observation (the only columns delayed).
    """

    delay: Any = 1
    group: str = "depth"

    def __post_init__(self) -> None:
        object.__setattr__(self, "delay", as_range(self.delay, "delay", integer=True))

    def validate(self) -> None:
        require(self.delay is not None, "delay must be a whole number of control steps or a (low, high) pair")
        low, high = self.delay
        require(0 <= low <= high <= MAX_DELAY, f"delay must satisfy 0 <= low <= high <= {MAX_DELAY} control steps, got {self.delay}")


class CameraLatency(ObservationLatency):
    """The policy sees the camera image of ``k`` control steps earlier (module docstring).

    ``CameraLatency(env, delay=(1, 2))``; ``delay`` holds each env's current ``k``.
    """

    SECTION = "camera_latency"
    CONFIG = CameraLatencyConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)

    def __init__(self, env: VectorEnv, config: CameraLatencyConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        cfg = make_config(CameraLatencyConfig, config, kwargs)
        camera_columns(env, camera_of(env, "CameraLatency"), cfg.group, "CameraLatency")
        super().__init__(env, LatencyConfig(delay=cfg.delay, groups=(cfg.group,)))
        self.config = cfg

    def critic_groups(self):
        return {"camera_delay": self.delay[:, None]}
