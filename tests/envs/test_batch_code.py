"""One env runs the code a batch runs: one compiled specialization of each kernel, whatever the env count."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import mujoco
import mujoco.batch
import numba as nb
import numpy as np

from unilab_envs.core.batch_code import batch_kernel, batch_type, compiled_codes

ROOT = Path(__file__).resolve().parents[2]
XML = """<mujoco><worldbody><body mocap="true"><geom size=".1"/></body>
  <body><freejoint/><geom size=".1"/></body></worldbody></mujoco>"""


class Rows(NamedTuple):
    qpos: np.ndarray
    mocap_pos: np.ndarray


def bound(num_envs: int) -> mujoco.batch.Batch:
    return mujoco.batch.Batch(mujoco.MjModel.from_xml_string(XML), num_envs)


def test_a_row_of_the_batch_is_typed_as_in_a_batch_of_more():
    one, two = bound(1), bound(2)
    for name in ("qpos", "mocap_pos", "xpos"):  # state fields (2 and 3 axes), an output field
        assert batch_type(one.bind(name)) == nb.typeof(two.bind(name)), name
    assert nb.typeof(one.bind("qpos")).layout == "C" and batch_type(one.bind("qpos")).layout == "A"
    assert batch_type(one.bind("xpos")).layout == "C"  # an output: contiguous rows in a batch too
    assert batch_type(np.zeros((1, 3))) == nb.typeof(np.zeros((1, 3)))  # not MuJoCo's: as Numba types it
    rows = Rows(one.bind("qpos"), one.bind("mocap_pos"))
    assert batch_type(rows) == nb.typeof(Rows(two.bind("qpos"), two.bind("mocap_pos")))


@nb.njit
def _row_sums(out, rows, scale):
    for i in range(out.shape[0]):
        out[i] = scale * (rows.qpos[i].sum() + rows.mocap_pos[i].sum())


def test_one_env_runs_the_kernel_compiled_for_the_batch():
    kernel = nb.njit(_row_sums.py_func)  # a dispatcher of its own: no other test's specializations
    results = []
    for num_envs in (2, 1):
        batch = bound(num_envs)
        batch.bind("qpos")[:] = np.arange(batch.bind("qpos").size).reshape(num_envs, -1)
        batch.bind("mocap_pos")[:] = 0.5
        out = np.zeros(num_envs)
        batch_kernel(kernel)(out, Rows(batch.bind("qpos"), batch.bind("mocap_pos")), 2.0)
        results.append(out)
    assert compiled_codes(kernel) == 1 and len(kernel.signatures) == 2  # the one env's types: the batch's code
    assert results[1][0] == results[0][0] == 2.0 * (np.arange(7).sum() + 1.5)


def test_every_task_compiles_each_kernel_once_for_one_env_and_a_batch():
    """In a fresh process (no other test's specializations): one env (``gym.make``) and a batch of two of
    every task, stepped and reset, leave each of our kernels with one compiled specialization."""
    script = textwrap.dedent("""
        import gc
        import gymnasium as gym
        import numpy as np
        from numba.core.registry import CPUDispatcher
        import unilab_envs
        from unilab_envs.core import compile_notice
        from unilab_envs.core.batch_code import compiled_codes
        compile_notice.suppress()
        for task_id in sorted(unilab_envs.TASKS):
            env = gym.make(task_id)
            env.reset(seed=0)
            env.step(env.action_space.sample())
            env.close()
            envs = gym.make_vec(task_id, num_envs=2)
            envs.reset(seed=0)
            envs.step(np.zeros(envs.action_space.shape, np.float32))
            envs.reset(options={"reset_mask": np.array([True, False])})
            envs.close()
        kernels = [d for d in gc.get_objects()
                   if isinstance(d, CPUDispatcher) and compile_notice.is_ours(d) and d.overloads]
        print(len(kernels), sorted(d.py_func.__qualname__ for d in kernels if compiled_codes(d) != 1))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    count, twice = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert int(count) > 20 and twice == "[]"
