"""``DepthNoise``: a stereo depth camera's noise, holes and edge dropout on the depth image.

Each new frame (:mod:`wrappers.camera_common`: a camera that holds its frame holds the corrupted
frame too) of the camera's image group, ``height x width`` depths ``d`` in metres, is corrupted
per pixel, in this order:

1. **edge dropout**: a pixel at a depth discontinuity is dropped with probability ``edge_drop``
   (stereo matching fails there: occlusion shadows, flying pixels). A discontinuity is measured in
   inverse depth, which is proportional to a stereo camera's disparity and, on any plane, an affine
   function of the pixel coordinates: a pixel is an edge pixel when, along its row or its column,
   ``|1/d_prev - 2/d + 1/d_next| > edge_threshold`` (1/m). A plane (the ground, a stair's tread or
   riser, even at grazing angles where neighbouring depths differ by half a metre) has none; a step
   from 0.6 m to 0.9 m has 0.56 1/m on both of its sides; the image's border pixels are edge pixels
   only along the axis where they have two neighbours;
2. **blob holes**: each pixel seeds, with probability ``blob_rate``, a ``blob_size x blob_size``
   square of dropped pixels centred on it (textureless or specular patches); the expected share
   of dropped pixels away from the border is ``1 - (1 - blob_rate) ** (blob_size ** 2)``;
3. **noise**: ``d + (std_floor + std_quadratic * d**2) * n``, ``n`` a standard normal, clipped to the
   camera's ``[near, far]``. The standard deviation grows with the square of the distance, as a stereo
   camera's does: a disparity error of ``s`` pixels gives a depth error of ``d**2 s / (f B)`` (focal
   length ``f`` in pixels, baseline ``B``). A pixel at ``far`` (nothing within range) stays at ``far``:
   what lies beyond the range still reads beyond it;
4. **random holes**: any pixel is dropped with probability ``hole_rate``.

A dropped pixel reads ``invalid_value`` (0 by default: a RealSense reports no data as 0).

Default numbers (the profile ``go1_depth_real`` uses them). ``std_quadratic = 0.004`` 1/m: Intel's
"Tuning depth cameras for best performance" (Grunnet-Jepsen, Sweetser, Woodfill) gives the D4xx RMS
depth error as ``d**2 * subpixel / (f * B)``; the D435 at its recommended 848 x 480 (HFOV ~90 deg,
``f = 424`` px), baseline 50 mm and a typical subpixel of 0.08 give ``0.08 / (424 * 0.05) = 0.0038``
1/m, 15 mm at 2 m. ``std_floor = 0.001`` m: the constant term of Nguyen, Izadi and Lovell's depth noise
model (3DIMPVT 2012, 1.2 mm). Holes and edge dropout (0 by default here; set by the profile) are
not data-sheet numbers: the profile's are chosen to cover the few per cent of invalid pixels reported
for D400 cameras on flat targets (Lourenco and Araujo, VISAPP 2021) and the dropout along edges seen
in any D435 stream; the learning-from-depth papers (Agarwal et al. 2022; Cheng et al. 2023, Extreme
Parkour; Zhuang et al. 2023, Robot Parkour Learning) inject the same kinds of artefacts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numba as nb
import numpy as np
from gymnasium.vector import VectorEnv

from unilab_envs.core.rng import normal, uniform
from wrappers._base import make_config, require, row_kernel
from wrappers.camera_common import FrameWrapper, put_frame

#: ``params`` columns of the kernel: the magnitudes the profile level scales
STD_FLOOR, STD_QUADRATIC, HOLE_RATE, BLOB_RATE, EDGE_DROP = range(5)


@nb.njit(inline="always", cache=True)
def _kink(src, i, cols, k, step, threshold):
    """Whether the inverse depth at pixel ``k`` departs from the line through its neighbours ``k -+ step`` (a pixel
    already invalid, <= 0, is no edge)."""
    a, b, c = src[i, cols[k - step]], src[i, cols[k]], src[i, cols[k + step]]
    if a <= 0.0 or b <= 0.0 or c <= 0.0:
        return False
    return abs(1.0 / a - 2.0 / b + 1.0 / c) > threshold


@nb.njit(inline="always", cache=True)
def is_edge(src, i, cols, k, r, c, width, height, threshold):
    """Whether pixel ``k`` (row ``r``, column ``c``) of env ``i``'s clean frame is at a depth discontinuity: along its
    row or its column the inverse depth is not locally straight (module docstring)."""
    if 0 < c < width - 1 and _kink(src, i, cols, k, 1, threshold):
        return True
    return 0 < r < height - 1 and _kink(src, i, cols, k, width, threshold)


@nb.njit(inline="always", cache=True)
def corrupt_frame(src, i, cols, frame, drop, rng, width, height, params, edge_threshold, blob_size, near, far, invalid):
    """Env ``i``'s new frame: the clean depths ``src[i, cols]`` (row-major ``height x width``) corrupted into
    ``frame[i]`` (module docstring); ``drop[i]`` is scratch (the dropped pixels)."""
    pixels = cols.shape[0]
    for k in range(pixels):
        drop[i, k] = False
    if params[EDGE_DROP] > 0.0:
        for r in range(height):
            for c in range(width):
                k = r * width + c
                if is_edge(src, i, cols, k, r, c, width, height, edge_threshold) and uniform(rng, i) < params[EDGE_DROP]:
                    drop[i, k] = True
    if params[BLOB_RATE] > 0.0:
        lo = (blob_size - 1) // 2
        for r in range(height):
            for c in range(width):
                if uniform(rng, i) < params[BLOB_RATE]:
                    for rr in range(max(r - lo, 0), min(r - lo + blob_size, height)):
                        for cc in range(max(c - lo, 0), min(c - lo + blob_size, width)):
                            drop[i, rr * width + cc] = True
    noisy = params[STD_FLOOR] > 0.0 or params[STD_QUADRATIC] > 0.0
    for k in range(pixels):
        d = np.float64(src[i, cols[k]])
        if noisy:
            n = normal(rng, i)
            if 0.0 < d < far:  # <= 0: already invalid (another stage dropped it), left as it is
                d = min(max(d + (params[STD_FLOOR] + params[STD_QUADRATIC] * d * d) * n, near), far)
        if params[HOLE_RATE] > 0.0 and uniform(rng, i) < params[HOLE_RATE]:
            drop[i, k] = True
        frame[i, k] = invalid if drop[i, k] else d


@row_kernel
def _depth_noise(obs, out, final_in, final_out, touch, started, final, fresh, rng, cols, frame, drop, width, height, params,
                 edge_threshold, blob_size, near, far, invalid):
    for i in nb.prange(obs.shape[0]):
        if not touch[i]:
            continue
        if final[i]:  # the old episode's last frame: new if the camera rendered one, else the held one
            if fresh:
                corrupt_frame(final_in, i, cols, frame, drop, rng, width, height, params, edge_threshold, blob_size, near,
                              far, invalid)
            put_frame(final_out, final_in, i, cols, frame)
        if started[i] or fresh:
            corrupt_frame(obs, i, cols, frame, drop, rng, width, height, params, edge_threshold, blob_size, near, far, invalid)
        put_frame(out, obs, i, cols, frame)


@dataclass(frozen=True)
class DepthNoiseConfig:
    """A stereo depth camera's imperfections per new frame (module docstring: the model, the defaults' sources).

    Attributes:
        std_floor: m, the noise std at zero distance (``a`` of ``std = a + b d^2``).
        std_quadratic: 1/m, the growth of the std with the squared distance (``b``).
        hole_rate: probability that a pixel is dropped, independently of the others.
        blob_rate: probability that a pixel seeds a square hole of ``blob_size`` pixels a side.
        blob_size: pixels, the side of a blob hole (odd sizes are centred on their seed).
        edge_threshold: 1/m, the second difference of the inverse depth along a row or column above which a pixel is
            at a discontinuity (0.1: a 0.1 m step at 1 m, 2.5 cm at 0.5 m, 0.4 m at 2 m).
        edge_drop: probability that an edge pixel is dropped.
        invalid_value: what a dropped pixel reads (m; 0: no data, as a RealSense).
        group: the camera's image group in the observation.
    """

    std_floor: float = 0.001
    std_quadratic: float = 0.004
    hole_rate: float = 0.0
    blob_rate: float = 0.0
    blob_size: int = 3
    edge_threshold: float = 0.1
    edge_drop: float = 0.0
    invalid_value: float = 0.0
    group: str = "depth"

    def validate(self) -> None:
        for name in ("std_floor", "std_quadratic"):
            value = getattr(self, name)
            require(math.isfinite(value) and value >= 0, f"{name} must be >= 0, got {value}")
        for name in ("hole_rate", "blob_rate", "edge_drop"):
            value = getattr(self, name)
            require(math.isfinite(value) and 0.0 <= value <= 1.0, f"{name} must be a probability in [0, 1], got {value}")
        require(isinstance(self.blob_size, int) and self.blob_size >= 1, f"blob_size must be a whole number of pixels >= 1, got {self.blob_size}")
        require(math.isfinite(self.edge_threshold) and self.edge_threshold > 0, f"edge_threshold must be > 0 (1/m), got {self.edge_threshold}")
        require(math.isfinite(self.invalid_value), f"invalid_value must be a finite number, got {self.invalid_value}")

    def params(self) -> np.ndarray:
        """The magnitudes the profile level scales, in the kernel's order."""
        return np.array([self.std_floor, self.std_quadratic, self.hole_rate, self.blob_rate, self.edge_drop])


class DepthNoise(FrameWrapper):
    """Distance-dependent noise, holes and edge dropout on each new depth frame (module docstring).

    ``DepthNoise(env, std_quadratic=0.004, hole_rate=0.01, edge_drop=0.5)``. A frame the camera holds
    keeps its corruption; SAME_STEP's ``info["final_obs"]`` gets the old episode's frame corrupted.
    """

    SECTION = "depth_noise"
    CONFIG = DepthNoiseConfig  # the section's keys: its fields (unilab_robot.profiles.SECTION_KEYS)
    STATE = ("_frame", "_out", "_final_out")

    def __init__(self, env: VectorEnv, config: DepthNoiseConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        cfg = make_config(DepthNoiseConfig, config, kwargs)
        super().__init__(env, cfg.group)
        self.config = cfg
        n, pixels = self.num_envs, self._cols.size
        self._frame = np.zeros((n, pixels), np.float32)
        self._drop = np.zeros((n, pixels), bool)
        self._params = cfg.params()

    def _apply_profile_level(self, level):
        self._params = self.config.params() * level

    def _observe(self, obs, info, touch, started, final):
        cfg, cam = self.config, self.camera.config
        final_in = self._final_in(info, obs)
        _depth_noise(obs, self._out, final_in, self._final_out, touch, started, final, self._fresh, self._rng, self._cols,
                     self._frame, self._drop, cam.width, cam.height, self._params, cfg.edge_threshold, cfg.blob_size,
                     cam.near, cam.far, cfg.invalid_value)
        return self._outputs(info, final)
