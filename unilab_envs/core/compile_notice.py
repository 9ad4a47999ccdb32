"""A one-line notice on stderr while UniLab's Numba kernels compile for the first time.

The kernels are compiled at their first call and cached on disk (``cache=True``: in
``__pycache__`` beside each module, or under ``NUMBA_CACHE_DIR``). With an empty or stale
cache, the first ``reset()`` / ``step()`` of a process spends up to a minute in the
compiler (a Go1 eval: ~60 s cold, ~5 s warm) and would look hung.

Numba announces each real compile, a cache miss, never a load from the cache or a call of
an already compiled kernel, as a ``numba:compile`` event (``numba.core.event``).
:func:`install` registers a listener that prints :data:`MESSAGE` once per process when
the first kernel of :data:`PACKAGES` starts compiling; a warm cache prints nothing.
"""

from __future__ import annotations

import sys
from typing import TextIO

from numba.core import event

MESSAGE = "unilab: compiling UniLab's Numba kernels (first use, up to ~1 min; cached afterwards)"
#: packages whose kernels the notice is about (the envs, the sim-to-real wrappers, the kernels generated
#: from a task's reward terms: unilab_envs.core.generated)
PACKAGES = ("unilab_envs", "wrappers", "unilab_generated")

_announced = False
_listener: _FirstCompileNotice | None = None


def is_ours(dispatcher) -> bool:
    """Whether a Numba dispatcher's Python function lives in one of :data:`PACKAGES`."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module.split(".", 1)[0] in PACKAGES


def announce(stream: TextIO | None = None) -> bool:
    """Print :data:`MESSAGE` unless this process printed it already; whether it printed now."""
    global _announced
    if _announced:
        return False
    _announced = True
    print(MESSAGE, file=stream or sys.stderr, flush=True)
    return True


def suppress() -> None:
    """Print no notice in this process (e.g. a test suite that compares stderr line by line)."""
    global _announced
    _announced = True


class _FirstCompileNotice(event.Listener):
    """Announces the first compile of one of our kernels (cache misses only: see the module docstring)."""

    def on_start(self, ev: event.Event) -> None:
        if not _announced and is_ours((ev.data or {}).get("dispatcher")):
            announce()

    def on_end(self, ev: event.Event) -> None:
        pass


def install() -> None:
    """Listen for Numba compiles of UniLab's kernels (idempotent; the env modules call it at import)."""
    global _listener
    if _listener is None:
        _listener = _FirstCompileNotice()
        event.register("numba:compile", _listener)
