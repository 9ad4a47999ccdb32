"""Thread counts for MuJoCo, Numba and torch, decided in one place.

The three pools run one after another on the step path (physics, then the Numba
kernels, then the learner), so each gets all the cores in its phase. OpenMP
threads that spin after a parallel region would steal the cores from the next
phase, so ``OMP_WAIT_POLICY=PASSIVE`` is set when ``unilab_envs`` is imported,
before Numba or torch start a parallel region (a user's own value wins).

Numba's threading layer defaults to ``forksafe``, which takes TBB when it loads, else
Numba's own workqueue (GNU OpenMP aborts a process that forks after using it, which
would kill ``AsyncVectorEnv``, SB3's ``SubprocVecEnv`` and DataLoader workers). We
depend on the ``tbb`` wheel on Linux x86-64, whose library pip puts where Numba's
loader does not look, so it is loaded here first (:func:`preload_pip_tbb`). Measured on
2 cores: a ``prange`` launch costs 2-3 us on TBB against 63-70 us on the workqueue
(50 us on OpenMP with passive waits), and the workqueue at times ran at one core's
speed (the G1-sized bench kernel took 0.47 or 0.9 ms, call by call, and always ~0.5 ms
with its threads pinned to separate cores; TBB gave 0.40-0.43 ms unpinned). Training
speed is unchanged. Without TBB (other platforms) the workqueue still works.

Override order: the ``num_threads=`` keyword of an env or trainer, else the
``UNILAB_NUM_THREADS`` environment variable, else the CPUs this process may use.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.metadata
import os
import re
import sys
from typing import Iterator

ENV_VAR = "UNILAB_NUM_THREADS"


def set_thread_policies() -> None:
    """Passive OpenMP waits and a fork-safe Numba layer, unless the user chose (idempotent)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    layer = os.environ.setdefault("NUMBA_THREADING_LAYER", "forksafe")
    if layer in ("default", "safe", "forksafe", "threadsafe", "tbb"):
        preload_pip_tbb()
    numba = sys.modules.get("numba")
    if numba is not None:  # imported before us: its config was read already
        numba.config.THREADING_LAYER = layer


_TBB_LIBRARY = re.compile(r"libtbb\.so\.\d+")  # libtbb.so.12, not libtbbmalloc / libtbbbind


def preload_pip_tbb() -> str | None:
    """Load the pip ``tbb`` wheel's ``libtbb`` so that Numba's TBB layer can link to it.

    The wheel installs the library into ``<prefix>/lib``, which is not on the dynamic
    loader's path, so Numba's ``tbbpool`` extension fails to load it and Numba falls
    back to its workqueue (numba/numba#7148, #9740). Loading it once by its full path
    makes the later ``libtbb.so.12`` lookup find it. Returns the path loaded, or None
    when the wheel is not installed or its library does not load (nothing else changes).
    """
    try:
        files = importlib.metadata.files("tbb") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if _TBB_LIBRARY.fullmatch(file.name):
            path = str(file.locate())
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                return None
            return path
    return None


def available_cpus() -> int:
    """CPUs this process may run on (affinity-aware)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :mod:`platform` knows, for benchmark reports."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@contextlib.contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """Run the enclosed Numba kernels on ``n`` threads, then restore the caller's count.

    Numba's count is per calling thread, so this touches neither other threads nor
    torch. Costs ~3 us per use.
    """
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def resolve_num_threads(requested: int | None = None) -> int:
    """The thread count to use: keyword, else ``UNILAB_NUM_THREADS``, else all CPUs."""
    if requested is None:
        raw = os.environ.get(ENV_VAR)
        if raw is not None and raw.strip():
            try:
                requested = int(raw)
            except ValueError:
                raise ValueError(f"{ENV_VAR}={raw!r} is not an integer; set it to a thread count such as 2") from None
    if requested is None:
        return available_cpus()
    if requested < 1:
        raise ValueError(f"num_threads must be >= 1, got {requested}")
    return int(requested)


def torch_thread_count(requested: int | None = None) -> int | None:
    """The learner's torch intra-op threads: ``requested`` (a trainer's ``--torch-threads``),
    else ``UNILAB_NUM_THREADS`` when it is set, else None (leave torch's default)."""
    if requested:
        return int(requested)
    if os.environ.get(ENV_VAR, "").strip():
        return resolve_num_threads()
    return None


def configure_threads(num_threads: int | None = None) -> int:
    """Give Numba (and torch, if imported) ``num_threads`` threads, process-wide; return the count.

    For a program's entry point (a benchmark, a trainer), never for a library object:
    envs do not call it (they scope Numba's threads to their own kernel calls with
    :func:`numba_threads` and leave torch alone). MuJoCo's pool is per
    ``mujoco.batch.Batch`` and takes its count from the env constructor.
    """
    import numba

    n = resolve_num_threads(num_threads)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n
