"""``unilab motion retarget|check``: reference motions for the G1 (:mod:`unilab_envs.motion`).

    unilab motion retarget --out runs/motion/g1                 # the 37 CMU clips of envpool-assets -> the G1
    unilab motion retarget --clip CMU_016_22 --out /tmp/m       # one clip
    unilab motion retarget --model-path my_g1.xml --out /tmp/m  # another model with the G1's names
    unilab motion check unilab_envs/assets/motions/g1/*.npz     # load against the G1 and play kinematically

``retarget`` needs the ``motion`` extra (``pip install -e ".[motion]"``: the envpool-assets wheel);
``check`` does not. Mistakes end in one line on stderr and exit status 2 (docs/motion.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

DESCRIPTION = ("Retarget the CMU motion-capture clips of the envpool-assets wheel (dm_control's CMU humanoid) to the "
               "G1, writing BeyondMimic/mjlab-layout .npz clips (`retarget`), or load motion files against a model and "
               "play them kinematically (`check`). The layout is in docs/motion.md.")

NOTICE = """# Retargeted CMU motion capture clips

Derived from the CMU Graphics Lab Motion Capture Database (http://mocap.cs.cmu.edu; "may be copied,
modified and redistributed", http://mocap.cs.cmu.edu/faqs.php), as fitted to dm_control's CMU humanoid
by the dm_control authors and shipped in the envpool-assets 0.4.1 wheel (Apache License 2.0),
retargeted by `unilab motion retarget` (UniLab, Apache License 2.0).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``unilab motion`` subcommands."""
    sub = p.add_subparsers(dest="motion_command", required=True,
                           help="retarget: CMU clips -> the G1; check: load and play motion files")
    r = sub.add_parser("retarget", help="retarget the CMU clips of envpool-assets to the G1 (the `motion` extra)")
    r.add_argument("--clip", action="append", metavar="ID", help="a clip id (CMU_016_22; repeatable; default: all 37)")
    r.add_argument("--out", default="runs/motion/g1", help="folder of the .npz clips (default runs/motion/g1)")
    r.add_argument("--model-path", metavar="FILE.xml", help="retarget to this MJCF (the G1's joint and body names) "
                                                            "instead of the G1")
    r.add_argument("--report", metavar="PATH.json", help="also write the per-clip measurements as JSON")
    c = sub.add_parser("check", help="load motion files against a model and play them kinematically")
    c.add_argument("files", nargs="+", help="motion .npz files")
    c.add_argument("--model-path", metavar="FILE.xml", help="the model (default: the G1)")
    c.add_argument("--tolerance-m", type=float, default=1e-3,
                   help="largest body-position error of the playback (default 0.001 m)")


def _fail(message: object) -> int:
    print(f"unilab motion: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def _model(path: str | None):
    import mujoco

    from unilab_robot.assets.g1 import MJCF_PATH

    path = Path(path) if path else MJCF_PATH
    if not path.is_file():
        raise ValueError(f"--model-path {path}: no such file")
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise ValueError(f"--model-path {path}: MuJoCo cannot load it ({e})") from None


def run(args: argparse.Namespace) -> int:
    """Run ``unilab motion <retarget|check>``; returns the exit status."""
    if args.motion_command == "retarget":
        return _retarget(args)
    return _check(args)


def _retarget(args: argparse.Namespace) -> int:
    from unilab_envs.motion.cmu_source import SourceMissing, load_source_clips
    from unilab_envs.motion.format import save_motion
    from unilab_envs.motion.retarget import RetargetConfig, Target, retarget_clip

    t0 = time.perf_counter()
    try:
        sources = load_source_clips(args.clip)
        target = Target(_model(args.model_path), RetargetConfig())
    except (SourceMissing, KeyError, ValueError) as e:
        return _fail(e.args[0] if isinstance(e, KeyError) else e)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _fail(f"--out {out}: {e}")
    rows = []
    print(f"{'clip':<12} {'frames':>6} {'s':>5} {'err cm':>7} {'max cm':>7} {'skate':>6} {'pen cm':>6} "
          f"{'limit':>5} {'lifted':>6}")
    for src in sources:
        clip, rep = retarget_clip(src, target)
        save_motion(out / f"{src.name}.npz", clip)
        print(f"{rep.name:<12} {rep.frames:>6} {rep.seconds:>5.1f} {rep.mean_error_cm:>7.2f} {rep.max_error_cm:>7.2f} "
              f"{rep.skate_cm:>6.3f} {rep.penetration_cm:>6.2f} {rep.limit_frames:>5} {rep.lifted_frames:>6}")
        rows.append({"clip": rep.name, "frames": rep.frames, "seconds": rep.seconds,
                     "mean_error_cm": rep.mean_error_cm, "max_error_cm": rep.max_error_cm,
                     "keypoint_error_cm": dict(zip(rep.keypoint_names, map(float, rep.keypoint_error_cm))),
                     "skate_cm_per_stance_frame": rep.skate_cm, "stance_frames": rep.stance_frames,
                     "penetration_cm": rep.penetration_cm, "limit_clamped_frames": rep.limit_frames,
                     "lifted_frames": rep.lifted_frames, "wall_s": rep.wall_s})
    (out / "NOTICE.md").write_text(NOTICE)
    wall = time.perf_counter() - t0
    frames = sum(r["frames"] for r in rows)
    print(f"{len(rows)} clips, {frames} frames ({sum(r['seconds'] for r in rows):.1f} s of motion) in {wall:.1f} s; "
          f"mean keypoint error {sum(r['mean_error_cm'] * r['frames'] for r in rows) / frames:.2f} cm, "
          f"max {max(r['max_error_cm'] for r in rows):.2f} cm; deepest penetration "
          f"{max(r['penetration_cm'] for r in rows):.2f} cm; wrote {out}")
    if args.report:
        Path(args.report).write_text(json.dumps({"wall_s": wall, "clips": rows}, indent=1))
    return 0


def _check(args: argparse.Namespace) -> int:
    from unilab_envs.motion.format import MotionFormatError, load_motion
    from unilab_envs.motion.playback import play_kinematic

    try:
        model = _model(args.model_path)
    except ValueError as e:
        return _fail(e)
    worst = 0.0
    for f in args.files:
        try:
            clip = load_motion(f, model)
        except MotionFormatError as e:
            return _fail(e)
        res = play_kinematic(model, clip)
        worst = max(worst, res.max_body_error_m)
        print(f"{f}: {clip.num_frames} frames at {clip.fps:.2f} fps ({clip.duration_s:.1f} s), "
              f"{len(clip.joint_names)} joints, {len(clip.body_names)} bodies; playback body error "
              f"{res.max_body_error_m * 1000:.3f} mm, orientation {res.max_quat_error_rad:.2e} rad")
    if worst > args.tolerance_m:
        return _fail(f"playback body positions differ from the file by {worst * 1000:.1f} mm "
                     f"(over --tolerance-m {args.tolerance_m})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m trainers.motion_cli``: the same as ``unilab motion``."""
    p = argparse.ArgumentParser(prog="unilab motion", description=DESCRIPTION)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
