"""A copy of a packaged robot's MJCF whose position servos are stiffer, for play on "another robot model".

    python benchmarks/stiff_servos.py g1 /tmp/stiff            # writes /tmp/stiff/g1_stiff.xml (Kp 500, Kd 10)
    python benchmarks/stiff_servos.py go1 /tmp/stiff --kp 100 --kd 2
    python benchmarks/stiff_servos.py go2 /tmp/stiff            # /tmp/stiff/go2_stiff.xml (Kp 100, Kd 2)

Published G1 models commonly ship position actuators of Kp 500, Kd ~10 on every joint, where
the G1 task trains with Kp 20-300, Kd 0.5-5 (its deploy spec's ``action.kp`` / ``action.kd``).
:func:`write_stiff_model` rewrites every ``<position>`` element and default of the packaged MJCF
(self-contained: no meshes or includes) with one Kp and Kd and writes it to a folder: the model
``unilab play --model-path`` plays in docs/results/safety_guard.md and tests/deploy/test_guard_gains.py.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from unilab_robot.assets import ASSETS_DIR

#: robot -> (packaged MJCF, stiff Kp, stiff Kd). G1: as published G1 models ship it (Kp 500, Kd 10 on every
#: joint). Go1: Menagerie's unitree_go1 (``<position kp="100">``; its joint damping 2 as the servo's Kd).
#: Go2: Menagerie's unitree_go2 ships torque ``<motor>`` actuators, so no servo gains of its own; the Go1's
#: (the same Unitree motor family, the same Menagerie joint damping 2 and 23.7 N m hip / thigh limit).
#: Our Go1 and Go2 train with Kp 35 / Kd 0.5 (their deploy specs), so the variants are ~2.9x stiffer.
STIFF = {"g1": ("g1/g1.xml", 500.0, 10.0), "go1": ("go1/go1.xml", 100.0, 2.0), "go2": ("go2/go2.xml", 100.0, 2.0)}

_POSITION = re.compile(r"<position\b[^>]*>")


def stiff_xml(xml: str, kp: float, kd: float) -> str:
    """``xml`` with every ``<position ...>`` element (defaults and actuators) given ``kp`` and ``kv``."""
    def one(match: re.Match) -> str:
        tag = re.sub(r'\s(kp|kv)="[^"]*"', "", match.group(0))
        return tag.replace("<position", f'<position kp="{kp:g}" kv="{kd:g}"', 1)
    return _POSITION.sub(one, xml)


def write_stiff_model(robot: str, folder: str | Path, kp: float | None = None, kd: float | None = None) -> Path:
    """Write ``<robot>_stiff.xml`` (the packaged MJCF of ``robot``, every position servo at ``kp`` / ``kd``,
    by default :data:`STIFF`'s) into ``folder``; its path."""
    if robot not in STIFF:
        raise ValueError(f"no stiff variant for {robot!r}; robots: {sorted(STIFF)}")
    rel, kp0, kd0 = STIFF[robot]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{robot}_stiff.xml"
    out.write_text(stiff_xml((Path(ASSETS_DIR) / rel).read_text(), kp0 if kp is None else kp, kd0 if kd is None else kd))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("robot", choices=sorted(STIFF))
    p.add_argument("folder", type=Path)
    p.add_argument("--kp", type=float)
    p.add_argument("--kd", type=float)
    args = p.parse_args()
    print(write_stiff_model(args.robot, args.folder, args.kp, args.kd))


if __name__ == "__main__":
    main()
