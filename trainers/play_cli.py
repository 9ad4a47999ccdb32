"""``unilab play RUN``'s options and entry point (the loop itself is :mod:`trainers.play`).

    unilab play policies/go1_joystick                       # a window: arrows/PageUp/PageDown steer, R resets
    unilab play runs/go1 --headless --episodes 64           # metrics only (fast: no filming)
    unilab play runs/go1 --headless --video                 # ... and film the first episode: runs/play/go1.mp4
    unilab play runs/go1 --headless --sim2real go1_real     # the profile's noise, latency and loss in the loop
    unilab play runs/go1 --headless --safety                # the safety guard (spec's or profile's section, else defaults)
    unilab play runs/go1 --model-path ~/mujoco_menagerie/unitree_go1/scene.xml   # driven with the spec's Kp / Kd
    unilab play runs/go1 --model-path ~/mujoco_menagerie/unitree_go1/scene.xml --model-gains   # its own servos

Mistakes end in one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from trainers.cli_checks import positive_int

DESCRIPTION = ("Run an exported policy (policy.onnx + deploy_spec.json, as `unilab export` writes them) in plain "
               "MuJoCo at the spec's physics step and control rate, with the observation rebuilt from the deploy "
               "spec outside the training stack (no mujoco.batch, Numba or torch). A window by default when there "
               "is a display; --headless runs episodes as training draws them and prints tracking, speed per "
               "command, falls, success and the loop's cost per control step.")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``unilab play`` options."""
    p.add_argument("run", help="folder holding policy.onnx and deploy_spec.json (a run after `unilab export RUN`, "
                               "or policies/go1_joystick), or the .onnx file itself")
    p.add_argument("--headless", action="store_true",
                   help="no window: run --episodes episodes and print the metrics (the default without a display)")
    p.add_argument("--episodes", type=positive_int, default=10, help="headless: episodes to run (default 10)")
    p.add_argument("--model-path", metavar="FILE.xml",
                   help="play on another MJCF with the same joint, actuator and body names (e.g. a Menagerie robot); "
                        "its servos are driven with the deploy spec's Kp / Kd, as a robot's motor drivers are by the "
                        "gains the runtime sends (--model-gains keeps the model's own)")
    p.add_argument("--model-gains", action="store_true",
                   help="keep the model's own servo gains where they differ from the deploy spec's (the safety guard "
                        "then estimates torque with them); by default the spec's drive the model")
    from unilab_robot.profiles import profile_names  # the packaged profiles (no Numba, unlike wrappers)

    p.add_argument("--sim2real", metavar="PROFILE",
                   help="add a sim-to-real profile's sensor noise, IMU drift, latency, packet loss, action noise and "
                        f"motor strength in the play loop: a packaged name ({', '.join(profile_names())}) or a YAML "
                        "path")
    p.add_argument("--safety", nargs="?", const="on", metavar="SOURCE",
                   help="run the safety guard (limits on the targets, watchdogs that latch a damping safe mode; "
                        "docs/deploy.md): bare, the --sim2real profile's safety section, else the deploy spec's, else "
                        "the defaults; 'default': the defaults; a profile name or YAML: its safety section; 'off': no "
                        "guard. Without --safety the guard runs when the profile or the spec has a safety section. "
                        "Put it after the policy folder")
    p.add_argument("--spec", metavar="PATH", help="deploy spec to use instead of the one exported with the policy")
    p.add_argument("--clip", metavar="NAME",
                   help="motion tracking: play this clip of the spec (CMU_016_22) every episode (default: each "
                        "episode draws one); the reference is drawn beside the robot as a ghost")
    p.add_argument("--seed", type=int, default=0, help="seed of resets, commands and sim-to-real draws (default 0)")
    p.add_argument("--video", nargs="?", const="", metavar="PATH",
                   help="headless: also film the first episode (off by default: MuJoCo's software renderer takes "
                        "~0.15-0.2 s a frame on a CPU). PATH: .mp4 (needs imageio-ffmpeg, else a .gif is written) "
                        "or .gif; without PATH runs/play/<policy folder name>.mp4 under the working directory, never "
                        "into the policy folder. Put it after the policy folder")
    p.add_argument("--no-video", action="store_true", help=argparse.SUPPRESS)  # the old opt-out; now the default
    p.add_argument("--video-frames", type=positive_int, default=250,
                   help="headless: frames to film at the control rate (default 250; MuJoCo's software renderer takes "
                        "~0.15-0.2 s a frame on a CPU)")
    p.add_argument("--duration", type=_positive_float, metavar="SECONDS",
                   help="window: close after this many seconds of simulated time (default: when the window is closed)")
    p.add_argument("--no-progress", action="store_true", help="headless: no episode counter on stderr")


def _fail(message: object) -> int:
    print(f"unilab play: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def onnx_load_error(error: BaseException) -> bool:
    """Whether ``error`` is onnxruntime refusing a model file (truncated, not ONNX: ``InvalidProtobuf``,
    ``InvalidArgument``, ``Fail``, ...); they live in ``onnxruntime.capi`` and derive from ``Exception`` only."""
    return type(error).__module__.startswith("onnxruntime")


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def video_path(args: argparse.Namespace, policy_folder: Path) -> Path | None:
    """The video ``unilab play --headless`` writes: none unless ``--video`` is given; a bare
    ``--video`` writes ``runs/play/<policy folder name>.mp4`` under the working directory, so
    playing a shipped ``policies/*`` folder never adds files to it."""
    if args.video is None or args.no_video:
        return None
    from trainers.common.video import default_video_path

    return Path(args.video) if args.video else default_video_path("play", policy_folder)


def _existing_parent(path: Path) -> Path:
    """The nearest folder of ``path`` that exists (where its missing folders would be made)."""
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    return parent


def run(args: argparse.Namespace) -> int:
    """``unilab play``: window or headless; returns the exit status."""
    from trainers.play import Player, PlayError, find_policy, run_headless, run_window
    from trainers.play.gains import gains_line
    from trainers.play.safety_section import guard_line
    from unilab_robot.deploy import SpecError

    headless = args.headless or not has_display()
    try:
        bundle = find_policy(args.run, args.spec)
        player = Player(bundle, model_path=args.model_path, sim2real=args.sim2real, seed=args.seed,
                        safety=getattr(args, "safety", None), model_gains=getattr(args, "model_gains", False),
                        clip=getattr(args, "clip", None))
    except (PlayError, SpecError, FileNotFoundError) as e:
        return _fail(e)
    except Exception as e:  # noqa: BLE001 - onnxruntime's load errors share no base class but Exception
        if not onnx_load_error(e):
            raise
        return _fail(f"the policy is corrupt or not an ONNX model ({e}): export it again with `unilab export RUN` "
                     f"(or copy policy.onnx again)")
    if not args.headless and headless:
        print("unilab play: no display, running headless (--headless)", file=sys.stderr)
    from trainers.play.window import window_intro

    episodes = f"{args.episodes} episode{'s' * (args.episodes != 1)}"
    print(f"playing {player.spec.task.id} headless, {episodes}; sim2real: {player.profile_label}" if headless
          else window_intro(player), flush=True)  # the first line: what plays, under which profile
    print(f"unilab play: {guard_line(getattr(args, 'safety', None), player.safety_source, player.spec.action.mode)}")
    for note in player.model_differences:  # read before the profile's motor-strength draw changes the gains
        if note not in player.gain_notes:
            print(f"unilab play: note: this model differs from the training model: {note}", file=sys.stderr)
    gains_said = gains_line(player.gain_notes, player.model_gains)
    if gains_said:
        print(f"unilab play: {gains_said}", file=sys.stderr)
    gains = player.sim2real.gain_note() if player.sim2real is not None else None
    if gains:
        print(f"unilab play: note: {gains}", file=sys.stderr)
    if not headless:
        if args.video is not None:
            print("unilab play: note: --video films headless runs only (add --headless); the window is not filmed",
                  file=sys.stderr)
        try:
            return run_window(player, args.duration, intro=False)
        except Exception as e:  # noqa: BLE001 - GLFW / OpenGL could not open a window
            return _fail(f"could not open the viewer window ({type(e).__name__}: {e}); "
                         f"use --headless, or check DISPLAY and OpenGL (MUJOCO_GL=glfw)")
    video = video_path(args, bundle.folder)
    if video is not None and not os.access(_existing_parent(video), os.W_OK):
        return _fail(f"cannot write the video to {video}: pass --video PATH somewhere writable, or leave out --video")
    result = run_headless(player, args.episodes, video, args.video_frames, progress=not args.no_progress)
    print(result.summary())
    return 0
