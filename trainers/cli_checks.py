"""Checks ``unilab`` runs before it builds anything (no run folder, no envs, no learner).

Each check raises :class:`UsageError` with one line that says what is wrong and what to
do; the CLI prints it and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys


class UsageError(ValueError):
    """A command-line mistake, with a one-line message that says how to fix it."""


def fail(command: str, message: object) -> int:
    """Print ``unilab <command>: <message>`` as one line on stderr; the exit status 2."""
    print(f"unilab {command}: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def step_count(text: str) -> int:
    """argparse type: ``2e6``, ``2_000_000``, ``2000000`` -> 2000000."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a step count: {text!r}") from None
    if value < 1 or not value.is_integer():
        raise argparse.ArgumentTypeError(f"step count must be a positive integer, got {text!r}")
    return int(value)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``--num-envs``, ``--torch-threads``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def check_task(task: str) -> None:
    """``task`` is a registered Gymnasium id; otherwise name the closest ids."""
    from trainers.common.envs import check_task as find_task

    try:
        find_task(task)
    except ValueError as e:
        raise UsageError(str(e)) from None


def check_device(device: str) -> None:
    """``cuda[:i]`` needs CUDA and that GPU here (``auto`` and ``cpu`` always work)."""
    if not device.startswith("cuda"):
        return
    import torch

    if not torch.cuda.is_available():
        raise UsageError(f"device {device!r} needs CUDA, which this machine does not have "
                         f"(torch {torch.__version__}); use --device cpu or --device auto")
    index = device.partition(":")[2]
    count = torch.cuda.device_count()
    if index and (not index.isdigit() or int(index) >= count):
        raise UsageError(f"device {device!r}: this machine has {count} CUDA device(s), "
                         f"cuda:0..cuda:{count - 1}; pick one of them")


def check_env_kwargs(task: str, env_kwargs: dict, vectorization_mode: str | None = None) -> None:
    """Build a 1-env vector env with ``env_kwargs`` so an unknown or out-of-range keyword fails now."""
    if not env_kwargs:
        return
    from trainers.ppo.envs import make_vec_env

    try:
        env = make_vec_env(task, 1, env_kwargs, vectorization_mode)
    except (TypeError, ValueError) as e:
        msg = " ".join(str(e).split())
        raise UsageError(f"env_kwargs for {task}: {msg} (fix env_kwargs in --config or an env_kwargs.KEY=VALUE "
                         f"override)") from None
    env.close()
