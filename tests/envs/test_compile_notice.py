"""A cold Numba cache announces itself: one line on stderr, once per process, never when warm."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from unilab_envs.core import compile_notice
from unilab_envs.core.compile_notice import MESSAGE

ROOT = Path(__file__).resolve().parents[2]


def fresh_kernel(module: str):
    """A new jitted function that Numba has never compiled, as if defined in ``module``."""
    def add_one(x):
        return x + 1

    add_one.__module__ = module
    return numba.njit(add_one)


@pytest.fixture
def not_announced(monkeypatch):
    """This process as if no UniLab kernel had compiled yet (the listener is installed at import)."""
    import unilab_envs.core.vector_env  # noqa: F401  (installs the listener)

    monkeypatch.setattr(compile_notice, "_announced", False)


def test_the_first_compile_of_our_kernels_prints_one_line_once(not_announced, capsys):
    assert fresh_kernel("unilab_envs.locomotion.fake")(1) == 2
    assert capsys.readouterr().err == MESSAGE + "\n"
    assert fresh_kernel("wrappers.fake")(2) == 3  # another of ours compiles: the process was told already
    assert capsys.readouterr().err == ""


def test_compiles_of_other_code_and_calls_of_compiled_kernels_print_nothing(not_announced, capsys):
    assert fresh_kernel("my_project.kernels")(1) == 2  # a user's own kernel is not ours to announce
    ours = fresh_kernel("unilab_envs.core.fake")
    ours.compile("(int64,)")
    capsys.readouterr()
    compile_notice._announced = False
    assert ours(5) == 6  # compiled already: no compile event
    assert capsys.readouterr().err == ""


PROBE = """
import gymnasium as gym, numpy as np, unilab_envs
env = gym.make_vec("UniLab/UR5Reach-v0", num_envs=2)
env.reset(seed=0)
env.step(np.zeros((2, 6), np.float32))
env.close()
print("stepped")
"""


def test_a_cold_cache_prints_the_line_once_and_a_warm_one_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba_cache")}  # empty: a cold first run

    def run() -> tuple[str, str]:
        done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr

    out, err = run()
    assert out == "stepped\n" and err.count(MESSAGE) == 1, err
    out, err = run()  # the kernels are cached now
    assert out == "stepped\n" and MESSAGE not in err, err
