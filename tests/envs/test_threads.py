"""Thread policies set at ``import unilab_envs``: Numba's layer (TBB from the pip wheel), counts."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from unilab_envs.threads import preload_pip_tbb, resolve_num_threads

_PRANGE_THEN_FORK = """
import os
import unilab_envs
import numba as nb
import numpy as np

@nb.njit(parallel=True)
def add_one(a):
    for i in nb.prange(a.shape[0]):
        a[i] += 1.0

a = np.zeros(1000)
add_one(a)
print(nb.threading_layer(), a.sum())
pid = os.fork()  # what AsyncVectorEnv / SubprocVecEnv do after the parent ran kernels
if pid == 0:
    b = np.zeros(1000)
    add_one(b)
    os._exit(0 if b.sum() == 1000.0 else 3)
print("child", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def _has_tbb_wheel() -> bool:
    try:
        importlib.metadata.distribution("tbb")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _run_clean(code: str, **env_overrides: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "NUMBA_THREADING_LAYER")}
    env.update(env_overrides)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64" or not _has_tbb_wheel(),
                    reason="the tbb wheel is a dependency on Linux x86-64 only")
def test_import_makes_numba_use_the_pip_tbb_and_forked_children_still_run_kernels():
    res = _run_clean(_PRANGE_THEN_FORK)
    assert res.returncode == 0, res.stderr
    layer, total = res.stdout.split("\n")[0].split()
    assert layer == "tbb" and float(total) == 1000.0
    assert "child 0" in res.stdout


def test_a_users_threading_layer_wins():
    res = _run_clean(_PRANGE_THEN_FORK, NUMBA_THREADING_LAYER="workqueue")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[0] == "workqueue" and "child 0" in res.stdout


def test_preload_without_the_wheel_is_a_no_op(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    assert preload_pip_tbb() is None


def test_thread_count_override_order(monkeypatch):
    monkeypatch.setenv("UNILAB_NUM_THREADS", "3")
    assert resolve_num_threads(None) == 3
    assert resolve_num_threads(1) == 1  # the keyword wins
    monkeypatch.setenv("UNILAB_NUM_THREADS", "two")
    with pytest.raises(ValueError, match="UNILAB_NUM_THREADS='two' is not an integer"):
        resolve_num_threads(None)
    with pytest.raises(ValueError, match="num_threads must be >= 1"):
        resolve_num_threads(0)


def test_making_and_stepping_envs_leaves_torch_and_numba_thread_counts_alone():
    """An env runs its own kernels on its own count and hands the process back as it was."""
    import gymnasium as gym
    import numba
    import torch

    import unilab_envs  # noqa: F401

    torch_before, numba_before = torch.get_num_threads(), numba.get_num_threads()
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    try:
        single = gym.make("UniLab/Go1Joystick-v0")  # num_threads=1 by default
        batched = gym.make_vec("UniLab/Go1Joystick-v0", num_envs=4, num_threads=2)
        single.reset(seed=0)
        batched.reset(seed=0)
        batched.step(np.zeros((4, 12), np.float32))
        assert torch.get_num_threads() == 1
        assert numba.get_num_threads() == 1
        single.close()
        batched.close()
    finally:
        torch.set_num_threads(torch_before)
        numba.set_num_threads(numba_before)


def test_the_learners_torch_threads_come_from_the_flag_else_the_variable(monkeypatch):
    from unilab_envs.threads import torch_thread_count

    monkeypatch.delenv("UNILAB_NUM_THREADS", raising=False)
    assert torch_thread_count(None) is None  # torch's own default
    assert torch_thread_count(3) == 3
    monkeypatch.setenv("UNILAB_NUM_THREADS", "1")
    assert torch_thread_count(None) == 1
    assert torch_thread_count(2) == 2
