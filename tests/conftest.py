"""Shared test fixtures: the task registry and small helpers."""

from __future__ import annotations

import numpy as np
import pytest

import unilab_envs

TASK_IDS = sorted(unilab_envs.TASKS)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under xdist, in the controller before its workers start: compile every task's kernels once, split
    over the workers' count of processes (``tests/kernel_warmup.py``), so no worker compiles them again."""
    config = session.config
    workers = len(getattr(config.option, "tx", None) or [])
    if hasattr(config, "workerinput") or workers < 2 or config.getoption("collectonly"):
        return
    from kernel_warmup import VARIANTS, warm_kernels

    line = warm_kernels([*TASK_IDS, *VARIANTS], workers)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def random_actions(rng: np.random.Generator, num_envs: int, action_size: int) -> np.ndarray:
    """Uniform actions in [-1, 1], float32."""
    return rng.uniform(-1.0, 1.0, size=(num_envs, action_size)).astype(np.float32)


@pytest.fixture(autouse=True, scope="session")
def _no_compile_notice():
    """No "compiling UniLab's Numba kernels" line (a cold Numba cache) in whichever test compiles
    first: tests compare stderr line by line. ``tests/envs/test_compile_notice.py`` tests it."""
    from unilab_envs.core import compile_notice

    compile_notice.suppress()


@pytest.fixture(params=TASK_IDS)
def task_id(request) -> str:
    return request.param
