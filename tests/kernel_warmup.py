"""Compile every task's Numba kernels once, split over a few processes, before xdist's workers start.

On a cold cache (a fresh clone, an empty ``UNILAB_KERNEL_DIR``) each xdist worker otherwise compiles
every task's kernels itself, the workers side by side: ~2.5 min of each worker's time on a 2-core
machine. Compiled here, split over the cores, the workers load them from the cache instead. Failing
here fails nothing: the workers then compile what they need, as before.

Only a batch of two is made: one env (``gym.make``, ``num_envs=1``) runs the code compiled for a batch
(``unilab_envs.core.batch_code``: MuJoCo's one-row state views, which NumPy flags C-contiguous, are typed
as a batch's), so it loads the same specializations from the cache and compiles none of its own.
"""

from __future__ import annotations

import subprocess
import sys
import time

_WARM_ONE_PROCESS = """
import json
import sys
import gymnasium as gym
import numpy as np
import unilab_envs  # noqa: F401  (registers UniLab/*)
from unilab_envs.core import compile_notice
compile_notice.suppress()
for entry in sys.argv[1:]:
    task_id, _, kwargs = entry.partition("|")  # "id" or "id|{json env kwargs}": a variant whose kernel differs
    env = gym.make_vec(task_id, num_envs=2, **json.loads(kwargs or "{}"))  # one env runs a batch's kernels
    env.reset(seed=0)
    env.step(np.zeros(env.action_space.shape, np.float32))
    env.close()
"""


#: variants whose generated kernels differ from their task's default (the shipped policies use them): "id|{json kwargs}"
VARIANTS = ['UniLab/Go1Joystick-v0|{"critic_only_groups": ["linvel"]}']


#: each entry's cold compile, seconds (a batch of two; the entries one after another in one process, an empty cache,
#: a busy 2-core machine, 2026-12-06; each of VARIANTS[0] and the Go2 alone): what the split below balances. An entry
#: missing here counts as the mean of the others. One layout each since one env runs a batch's kernels: about half
#: of the two-layout costs before (G1Joystick 53 s, Go1JoystickDepth 68 s).
COMPILE_S = {"UniLab/G1Joystick-v0": 26, "UniLab/G1Track-v0": 13, "UniLab/Go1Joystick-v0": 26,
             "UniLab/Go1JoystickDepth-v0": 36, "UniLab/Go1JoystickRough-v0": 28, "UniLab/Go2Joystick-v0": 24,
             "UniLab/UR5Grasp-v0": 14, "UniLab/UR5Reach-v0": 5, VARIANTS[0]: 24}

#: entries that reuse another's kernels, with what they still compile after it: VARIANTS[0]'s kernels are the Go2's
#: (the Go2's actor reads no linvel either: 0 s after it). Each is warmed after the one it reuses, in the same
#: process: side by side in two processes, the two would compile the same kernels twice. (G1Track shares nothing
#: with G1Joystick: 13 s alone and after it.)
AFTER = {VARIANTS[0]: ("UniLab/Go2Joystick-v0", 0)}

def split_by_cost(entries: list[str], num_processes: int) -> list[list[str]]:
    """``entries`` in ``num_processes`` groups of about equal compile time (the longest first, each to the least
    loaded group), an entry of ``AFTER`` right after the one it reuses; empty groups left out."""
    mean = sum(COMPILE_S.values()) / len(COMPILE_S)
    units: dict[str, list[str]] = {e: [e] for e in entries if AFTER.get(e, (None,))[0] not in entries}
    cost = {e: COMPILE_S.get(e, mean) for e in units}
    for entry, (first, rest) in AFTER.items():
        if entry in entries and first in units:
            units[first].append(entry)
            cost[first] += rest
    groups: list[list[str]] = [[] for _ in range(max(1, num_processes))]
    loads = [0.0] * len(groups)
    for first in sorted(units, key=lambda e: (-cost[e], e)):
        i = loads.index(min(loads))
        groups[i] += units[first]
        loads[i] += cost[first]
    return [g for g in groups if g]


def warm_kernels(task_ids: list[str], num_processes: int) -> str:
    """Make and step each task once in ``num_processes`` child processes (they inherit the environment, so
    the same kernel and Numba cache folders); returns one line saying what happened."""
    start = time.monotonic()
    children = [subprocess.Popen([sys.executable, "-c", _WARM_ONE_PROCESS, *group], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
                for group in split_by_cost(task_ids, num_processes)]
    last_lines = [(child.communicate()[1].strip().splitlines() or ["(no message)"])[-1] for child in children]
    failed = [line for child, line in zip(children, last_lines) if child.returncode != 0]
    took = time.monotonic() - start
    if failed:
        return f"kernel warm-up failed after {took:.0f} s (the tests compile what they need): {'; '.join(failed)}"
    return f"kernels of {len(task_ids)} tasks warmed in {took:.0f} s on {len(children)} processes"
