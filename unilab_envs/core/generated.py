"""Generated kernel modules: Python source written to a file once, imported, compiled and cached by Numba.

A kernel assembled from a task's declaration (its reward terms) is Python source plus the
objects it names (the term functions). :func:`generated_module` writes the source to
``<kernel dir>/<stem>_<key>.py`` and imports it with those objects bound as module globals,
so the kernel's ``@njit(cache=True)`` functions compile once per machine and load from
Numba's cache afterwards, like the package's own kernels (a function built with ``exec`` or
handed a jitted function as an argument is recompiled in every process instead).

The file name's key hashes the source, each bound function's code (so an edited term
function never loads a stale compiled kernel) and the files of ``depends`` (the package
modules the source imports). The kernel directory is ``$UNILAB_KERNEL_DIR``, else
``$XDG_CACHE_HOME/unilab/kernels`` (``~/.cache/unilab/kernels``), else a folder in the
system's temporary directory when neither can be written.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from unilab_envs.core.batch_code import share_batch_code

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: first calls are not serialized
    fcntl = None

PACKAGE = "unilab_generated"  # parent name of every generated module in sys.modules


def kernel_dir() -> Path:
    """Where generated kernel sources (and Numba's cache of them) live; created if missing."""
    explicit = os.environ.get("UNILAB_KERNEL_DIR")
    candidates = [Path(explicit)] if explicit else []
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    candidates += [Path(cache_home) / "unilab" / "kernels", Path(tempfile.gettempdir()) / f"unilab-kernels-{os.getuid()}"]
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / f".probe-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
            return folder
        except OSError:
            continue
    raise OSError(f"no writable folder for generated kernels among {[str(c) for c in candidates]}; set UNILAB_KERNEL_DIR")


def code_fingerprint(obj: object) -> bytes:
    """Bytes that change when a (jitted) function's code or constants change; ``repr`` for anything else."""
    func = getattr(obj, "py_func", obj)
    code = getattr(func, "__code__", None)
    if code is None:
        return repr(obj).encode()
    parts = [func.__module__ or "", func.__qualname__, code.co_code.hex(), repr(code.co_consts), repr(code.co_names)]
    return "\0".join(parts).encode()


def generated_module(stem: str, source: str, bindings: Mapping[str, object], depends: Iterable[str | Path] = ()) -> types.ModuleType:
    """The module of ``source`` with ``bindings`` as globals, from ``<kernel dir>/<stem>_<key>.py`` (see the module docstring).

    The same source and bindings give the same file and the same module object within a
    process; the file is written atomically and never rewritten (Numba's cache is keyed on it).
    """
    digest = hashlib.sha256(source.encode())
    for name in sorted(bindings):
        digest.update(name.encode() + b"\0" + code_fingerprint(bindings[name]))
    for path in sorted(str(p) for p in depends):
        digest.update(Path(path).read_bytes())
    key = digest.hexdigest()[:20]
    module_name = f"{PACKAGE}.{stem}_{key}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = kernel_dir() / f"{stem}_{key}.py"
    if not path.exists():  # the first writer's file stays: a later one would change its stamp, and Numba's cache with it
        partial = path.with_suffix(f".py.{os.getpid()}.partial")
        partial.write_text(source)
        try:
            os.link(partial, path)
        except FileExistsError:
            pass
        finally:
            partial.unlink()
    if PACKAGE not in sys.modules:
        sys.modules[PACKAGE] = types.ModuleType(PACKAGE, "Kernels generated from task declarations (unilab_envs.core.generated).")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(bindings)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def first_call_locked(module: types.ModuleType, name: str, timeout: float = 600.0) -> Callable:
    """``module.<name>`` (a Numba dispatcher) whose first call in this process holds a lock on the
    module's file: of processes starting together (test workers, parallel evaluations) one compiles
    the kernel and the others, waiting, then load it from Numba's cache instead of compiling it too.
    A lock not had within ``timeout`` seconds is gone without: the call proceeds (never a deadlock).
    The first call also shares a batch's code (:func:`~unilab_envs.core.batch_code.share_batch_code`):
    one env runs the kernel a batch runs, not a second compile of it. Make one per task."""
    dispatcher = getattr(module, name)
    lock_path = Path(module.__file__).with_suffix(".lock")
    first = [True]

    def call(*args):
        if first[0]:
            with _file_lock(lock_path, timeout):
                share_batch_code(dispatcher, args)
                result = dispatcher(*args)
            first[0] = False
            return result
        return dispatcher(*args)

    call.__doc__ = dispatcher.__doc__
    return call


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    with open(path, "a") as handle:
        deadline, locked = time.monotonic() + timeout, False
        while not locked:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)
