"""``unilab`` on a robot's computer: the console script of the ``unilab-robot`` distribution.

A robot's computer installs the robot side alone (``pip install ./unilab_robot``: NumPy, onnxruntime,
PyYAML, MuJoCo; Cyclone DDS with the ``dds`` extra) and gets the ``unilab robot`` subcommands
(:mod:`unilab_robot.robot_cli`: ``run``, ``sim``, ``lockstep``, ``identify``, ``swap``, ``rollback``,
``status``), the same ones the full install's ``unilab`` (``trainers.cli``) offers beside training.
"""

from __future__ import annotations

import argparse
import sys

from unilab_robot import robot_cli


class _Parser(argparse.ArgumentParser):
    """argparse that answers a mistake with one line on stderr (exit 2) instead of the usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    """The robot-side ``unilab`` parser: ``unilab robot ...``."""
    p = _Parser(prog="unilab", description="UniLab on a robot's computer: run exported policies over Unitree's "
                                           "low-level DDS messages (training lives in the full `unilab-mujoco` install).")
    sub = p.add_subparsers(dest="command", required=True)
    rb = sub.add_parser("robot", help="the DDS robot bridge: a simulated robot (sim), a policy on the robot (run)",
                        description=robot_cli.DESCRIPTION)
    robot_cli.add_arguments(rb)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the robot-side ``unilab``."""
    args = build_parser().parse_args(argv)
    return robot_cli.run(args)


if __name__ == "__main__":
    sys.exit(main())
