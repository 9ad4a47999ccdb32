"""``unilab play --headless``: whole episodes as training draws them, measured, optionally filmed."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import mujoco
import numpy as np

from unilab_robot.deploy.episodes import distance_to_target
from unilab_robot.deploy.safety import REASONS

from .camera import play_camera
from .depth_view import with_depth_inset
from .ghost import ghost_for
from .metrics import PlayResult, VelocityTracking, safety_summary
from .player import Player


class Filmer:
    """Frames of the first episode through ``mujoco.Renderer``, following the base (a motion-tracking policy's
    reference beside it as a ghost: :mod:`.ghost`)."""

    def __init__(self, player: Player, path: Path, max_frames: int, progress: bool = False) -> None:
        from trainers.common.video import VideoRecorder

        self.player = player
        self.renderer = mujoco.Renderer(player.model, height=360, width=480)
        self.camera = play_camera(player)
        self.recorder = VideoRecorder(path, round(1.0 / player.spec.timing.control_dt), max_frames, progress=progress)
        self.ghost = ghost_for(player)

    def add(self) -> None:
        self.renderer.update_scene(self.player.data, camera=self.camera)
        if self.ghost is not None:
            self.ghost.pose(self.player.state)
            self.ghost.draw(self.renderer.scene)
        frame = self.renderer.render()
        camera, obs = self.player.spec.camera, getattr(self.player, "last_obs", None)
        if camera is not None and obs is not None:  # the policy's depth image beside the robot
            group = next(g for g in self.player.spec.observation.groups if g.name == camera.group)
            frame = with_depth_inset(frame, obs[group.start:group.stop], camera.height, camera.width, camera.near, camera.far)
        self.recorder.add(frame)

    def write(self) -> Path | None:
        self.renderer.close()
        return self.recorder.write()


def run_headless(player: Player, episodes: int, video: Path | None = None, video_frames: int = 250,
                 progress: bool = True) -> PlayResult:
    """``episodes`` whole episodes (reset and commands as in training); metrics as in ``unilab eval``.

    A motion-tracking episode ends at its clip's last frame (success) or at the task's termination (a fall).

    ``video``: film the first episode there (at most ``video_frames`` frames); ``progress``:
    an episode counter on stderr.
    """
    spec = player.spec
    velocity = spec.command.kind == "velocity"
    tracking = (VelocityTracking(spec.episode.tracking_sigma or 0.25, max(1, round(1.0 / spec.timing.control_dt)))
                if velocity else None)
    lengths, falls, successes, distances = [], [], [], []
    filmer = Filmer(player, video, video_frames, progress) if video is not None else None
    loop_time, loop_steps = 0.0, 0
    trips = dict.fromkeys(REASONS, 0)
    for episode in range(episodes):
        player.reset()
        if tracking is not None:
            tracking.start_episode(player.command)
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
            if tracking is not None:
                tracking.add(player.command, player.base_velocity())
            if fallen or player.clip_done:
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
        elif player.io.motion is not None:  # motion tracking: the clip's end reached without a termination
            successes.append(player.clip_done and not fallen)
        if progress:
            print(f"\repisode {episode + 1}/{episodes}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    path = filmer.write() if filmer is not None else None
    lo, hi = spec.command.ranges[0] if velocity else (0.0, 0.0)
    return PlayResult(
        task=spec.task.id, episodes=episodes, mean_length=float(np.mean(lengths)), fall_rate=float(np.mean(falls)),
        success_rate=float(np.mean(successes)) if successes else None,
        tracking_lin_vel=tracking.linear() if tracking is not None else None,
        tracking_ang_vel=tracking.yaw() if tracking is not None else None,
        speed_per_command=tracking.speed_per_command(lo, hi) if tracking is not None else [],
        final_distance=float(np.mean(distances)) if distances else None,
        step_us=1e6 * loop_time / max(loop_steps, 1), control_dt=spec.timing.control_dt, video=path,
        sim2real=player.sim2real.describe() if player.sim2real is not None else None,
        safety=safety_summary(player, trips, loop_steps, episodes),
        fall_name="cube off the table" if player.lift is not None else "falls")
