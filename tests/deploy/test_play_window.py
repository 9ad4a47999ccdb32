"""``unilab play`` in a window (``mujoco.viewer.launch_passive``) under a virtual X server, checked on a screenshot."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None,
                                reason="Xvfb is not installed (.ci/run installs it with apt-get install xvfb)")


def read_xwd(path: Path) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 image of Xvfb's framebuffer file (XWD, 32 bits per pixel, TrueColor)."""
    raw = path.read_bytes()
    header = struct.unpack(">25I", raw[:100])
    size, byte_order, width, height, bits, stride, ncolors = header[0], header[7], header[4], header[5], header[11], header[12], header[19]
    assert bits == 32, f"expected a 32-bit framebuffer, got {bits}"
    pixels = np.frombuffer(raw, np.uint8, count=stride * height, offset=size + 12 * ncolors)
    pixels = pixels.reshape(height, stride)[:, :width * 4].reshape(height, width, 4)
    return pixels[..., [2, 1, 0]] if byte_order == 0 else pixels[..., [1, 2, 3]]


@pytest.fixture
def x_display(tmp_path):
    """A fresh Xvfb on a free display number; yields ``(DISPLAY, framebuffer file)``."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "800x600x24",
                               "-fbdir", str(tmp_path), "-nolisten", "tcp"],
                              pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 20)
        if not ready:
            pytest.skip("Xvfb did not start within 20 s")
        number = os.read(read_end, 16).decode().strip()
        yield f":{number}", tmp_path / "Xvfb_screen0"
    finally:
        os.close(read_end)
        server.terminate()
        server.wait(10)


def window_of(image: np.ndarray) -> np.ndarray:
    """The viewer window: the bounding box of the lit pixels (the rest of the screen stays black)."""
    lit = image.max(axis=2) > 0
    rows, cols = np.flatnonzero(lit.any(axis=1)), np.flatnonzero(lit.any(axis=0))
    if rows.size == 0:
        return image[:0, :0]
    return image[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]


def robot_pixels(image: np.ndarray) -> int:
    """Dark pixels (the robot's black links) in the window, below the text overlay."""
    scene = window_of(image)[170:].max(axis=2)
    return int(((scene < 45) & (scene > 0)).sum())


def overlay_text_pixels(image: np.ndarray) -> int:
    """White text pixels in the window's top-left corner, where the command overlay sits."""
    return int((window_of(image)[:160, :200].min(axis=2) > 200).sum())


def key_help_pixels(image: np.ndarray) -> int:
    """White text pixels in the window's top-right corner, where the key help sits."""
    return int((window_of(image)[:160, -260:].min(axis=2) > 200).sum())


@contextlib.contextmanager
def playing(policy: str, seconds: float, display: str, task: str):
    """``unilab play POLICY --duration SECONDS`` in a window on ``display``; yields ``(process, first line)``
    once it says it plays ``task``, and ends it (exit status 0 checked) when the block is done."""
    env = {**os.environ, "DISPLAY": display, "MUJOCO_GL": "glfw", "UNILAB_NUM_THREADS": "1"}
    play = subprocess.Popen([sys.executable, "-m", "trainers.cli", "play", policy, "--duration", str(seconds)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = play.stdout.readline()
        assert first.startswith(f"playing {task} in a window"), first + play.stderr.read()
        yield play, first
        _, err = play.communicate(timeout=120)
        assert play.returncode == 0, err
    finally:
        if play.poll() is None:
            play.kill()
            play.wait()


def test_window_shows_the_robot_the_command_overlay_and_the_keys(go1_run, x_display, tmp_path):
    display, framebuffer = x_display
    with playing(go1_run, 6, display, "UniLab/Go1Joystick-v0") as (play, first):
        best, shot = 0, None
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and play.poll() is None:
            time.sleep(0.5)
            image = read_xwd(framebuffer)
            count = robot_pixels(image)
            if count > best:
                best, shot = count, image
            if best > 2000 and overlay_text_pixels(shot) > 100 and key_help_pixels(shot) > 100:
                break
        assert shot is not None, "no frame was captured while the window was open"
        from PIL import Image

        Image.fromarray(np.ascontiguousarray(shot)).save(tmp_path / "window.png")
        assert best > 2000, f"the window shows no robot (dark pixels {best}); see {tmp_path / 'window.png'}"
        assert overlay_text_pixels(shot) > 100, f"no command overlay; see {tmp_path / 'window.png'}"
        assert key_help_pixels(shot) > 100, f"no key help in the window; see {tmp_path / 'window.png'}"
        assert "holds still until you press a key" in first, first


DEPTH_POLICY = "policies/go1_depth"


def depth_inset(image: np.ndarray) -> np.ndarray:
    """The window's bottom-right corner, where a depth policy's frame sits (grey levels, a white border)."""
    return window_of(image)[-200:, -200:]


def test_window_shows_a_depth_policys_frame_beside_the_robot(x_display, tmp_path):
    display, framebuffer = x_display
    with playing(DEPTH_POLICY, 1, display, "UniLab/Go1JoystickDepth-v0") as (play, _):
        shot, deadline = None, time.monotonic() + 40
        while time.monotonic() < deadline and play.poll() is None:
            time.sleep(0.5)
            corner = depth_inset(read_xwd(framebuffer))
            if corner.size == 0:  # the window is not drawn yet
                continue
            grey = (corner.max(axis=2) == corner.min(axis=2))  # the inset's pixels are grey
            levels = np.unique(corner[grey][:, 0])
            if grey.mean() > 0.3 and levels.size >= 8 and (corner.min(axis=2) == 255).sum() > 200:
                shot = corner
                break
        from PIL import Image

        Image.fromarray(np.ascontiguousarray(depth_inset(read_xwd(framebuffer)))).save(tmp_path / "corner.png")
        assert shot is not None, f"no depth inset (grey levels in a white border); see {tmp_path / 'corner.png'}"
