"""``unilab play`` in a window: ``mujoco.viewer.launch_passive`` in real time, steered by the keyboard."""

from __future__ import annotations

import queue
import sys
import time

import numpy as np

from .camera import play_camera
from .depth_view import window_depth_overlay
from .ghost import ghost_for
from .keys import KEYS_HELP, apply_key, start_idle
from .overlays import keys_overlay, status_overlay
from .player import Player

MAX_STEPS_PER_FRAME = 25  # control steps between two viewer frames, at most
MAX_LAG_S = 0.25


def window_intro(player: Player) -> str:
    """The line a window starts with: the task, the sim-to-real profile, what the robot does first, the keys."""
    waits = ("the arm picks the cube at once" if player.lift is not None
             else "the robot follows the clip at once, its reference beside it as a ghost" if player.io.motion is not None
             else "the robot holds still until you press a key")
    return (f"playing {player.spec.task.id} in a window; sim2real: {player.profile_label}; {waits} "
            f"(the keys are shown in the window): {KEYS_HELP}")


def run_window(player: Player, duration: float | None = None, out=sys.stdout, intro: bool = True) -> int:
    """Real-time play in ``mujoco.viewer.launch_passive`` until the window closes (or ``duration`` s of sim time).

    The robot starts on :func:`~trainers.play.keys.idle_command` and waits for the keyboard;
    the window shows the command and the keys (:func:`~trainers.play.overlays.keys_overlay`).
    ``intro``: print :func:`window_intro` to ``out`` once the window is open (``unilab play`` prints
    it itself, as its first line)."""
    import mujoco.viewer

    keys: queue.SimpleQueue[int] = queue.SimpleQueue()
    reach = player.spec.command.kind == "reach_target"
    help_text = keys_overlay(player.spec.command.kind)
    start_idle(player)
    ghost = ghost_for(player)  # a motion-tracking policy's reference, beside the robot
    with mujoco.viewer.launch_passive(player.model, player.data, key_callback=keys.put,
                                      show_left_ui=False, show_right_ui=False) as viewer:
        cam = play_camera(player)
        viewer.cam.type, viewer.cam.trackbodyid = cam.type, cam.trackbodyid
        viewer.cam.distance, viewer.cam.elevation, viewer.cam.azimuth = cam.distance, cam.elevation, cam.azimuth
        viewer.cam.lookat[:] = cam.lookat
        if intro:
            print(window_intro(player), file=out, flush=True)
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
                overlay = status_overlay(player, fallen)
                if ghost is not None:  # the user scene holds the ghost alone: drawn anew each frame
                    viewer.user_scn.ngeom = 0
                    ghost.pose(player.state)
                    ghost.draw(viewer.user_scn)
            viewer.set_texts([overlay, help_text])  # it takes the viewer's lock itself
            depth = _depth_overlay(player, viewer)
            if depth is not None:  # the depth frame the policy saw, bottom right
                viewer.set_images(depth)
            viewer.sync()  # the viewer renders at its own pace; control steps run between frames
    _join_viewer_thread()
    return 0


def _depth_overlay(player: Player, viewer):
    """The policy's depth frame for the window's bottom-right corner (a depth-camera policy), else ``None``."""
    if player.spec.camera is None:
        return None
    rect = viewer.viewport
    return None if rect is None else window_depth_overlay(player.spec, getattr(player, "last_obs", None), rect.height,
                                                          rect.width)


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
