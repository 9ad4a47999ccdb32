"""Compile every task's Numba kernels once, split over a few processes, before xdist's workers start.

On a cold cache (a fresh clone, an empty ``UNILAB_KERNEL_DIR``) each xdist worker otherwise compiles
every task's kernels itself, the workers side by side: ~2.5 min of each worker's time on a 2-core
machine. Compiled here, split over the cores, the workers load them from the cache instead. Failing
here fails nothing: the workers then compile what they need, as before.

Both one env and a batch of two are compiled: MuJoCo's batch hands the tasks strided row views of its
state (``batch.bind("qpos")``), which NumPy flags C-contiguous when there is one row. Numba types them
as ``array(float64, 2d, C)`` for one env and ``array(..., 2d, A)`` for more, and compiles (and caches)
each kernel once per layout.
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
    for num_envs in (1, 2):  # one env (gym.make) types MuJoCo's state views as C layout, a batch as A
        env = gym.make_vec(task_id, num_envs=num_envs, **json.loads(kwargs or "{}"))
        env.reset(seed=0)
        env.step(np.zeros(env.action_space.shape, np.float32))
        env.close()
"""


#: variants whose generated kernels differ from their task's default (the shipped policies use them): "id|{json kwargs}"
VARIANTS = ['UniLab/Go1Joystick-v0|{"critic_only_groups": ["linvel"]}']


def split_round_robin(task_ids: list[str], num_processes: int) -> list[list[str]]:
    """``task_ids`` dealt to ``num_processes`` groups in turn; empty groups left out."""
    groups = [task_ids[i::num_processes] for i in range(num_processes)]
    return [g for g in groups if g]


def warm_kernels(task_ids: list[str], num_processes: int) -> str:
    """Make and step each task once in ``num_processes`` child processes (they inherit the environment, so
    the same kernel and Numba cache folders); returns one line saying what happened."""
    start = time.monotonic()
    children = [subprocess.Popen([sys.executable, "-c", _WARM_ONE_PROCESS, *group], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
                for group in split_round_robin(task_ids, num_processes)]
    last_lines = [(child.communicate()[1].strip().splitlines() or ["(no message)"])[-1] for child in children]
    failed = [line for child, line in zip(children, last_lines) if child.returncode != 0]
    took = time.monotonic() - start
    if failed:
        return f"kernel warm-up failed after {took:.0f} s (the tests compile what they need): {'; '.join(failed)}"
    return f"kernels of {len(task_ids)} tasks warmed in {took:.0f} s on {len(children)} processes"
