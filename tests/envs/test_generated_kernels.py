"""Generated kernel modules: one file per source and bound code, loaded from Numba's cache in a new process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numba as nb

from unilab_envs.core.generated import generated_module, kernel_dir

SOURCE = "import numba as nb\n\n\n@nb.njit(cache=True)\ndef f(x):\n    return g(x) + 1.0\n"


@nb.njit(inline="always")
def double(x):
    return 2.0 * x


@nb.njit(inline="always")
def triple(x):
    return 3.0 * x


def test_same_source_and_code_is_one_file_and_one_module(tmp_path, monkeypatch):
    monkeypatch.setenv("UNILAB_KERNEL_DIR", str(tmp_path))
    first = generated_module("unit", SOURCE, {"g": double})
    assert generated_module("unit", SOURCE, {"g": double}) is first and first.f(2.0) == 5.0
    other = generated_module("unit", SOURCE, {"g": triple})  # same source, other bound code: its own file
    assert other.f(2.0) == 7.0
    assert len(list(tmp_path.glob("unit_*.py"))) == 2


def test_a_new_process_loads_the_compiled_kernel_from_numbas_cache(tmp_path):
    script = textwrap.dedent(f"""
        import numba as nb
        from unilab_envs.core.generated import generated_module

        @nb.njit(inline="always")
        def double(x):
            return 2.0 * x

        module = generated_module("unit", {SOURCE!r}, {{"g": double}})
        assert module.f(2.0) == 5.0
        print(sum(module.f.stats.cache_hits.values()), sum(module.f.stats.cache_misses.values()))
    """)
    env = {"UNILAB_KERNEL_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True) for _ in range(2)]
    assert runs[0].stdout.split() == ["0", "1"]  # compiled once
    assert runs[1].stdout.split() == ["1", "0"]  # then loaded


def test_an_unwritable_kernel_dir_falls_back_to_the_next(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("UNILAB_KERNEL_DIR", str(blocker / "kernels"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert kernel_dir() == tmp_path / "cache" / "unilab" / "kernels"


def test_a_first_call_waits_for_the_process_compiling_the_same_kernel(tmp_path):
    import fcntl

    script = textwrap.dedent(f"""
        import numba as nb
        from unilab_envs.core.generated import first_call_locked, generated_module

        @nb.njit(inline="always")
        def double(x):
            return 2.0 * x

        module = generated_module("unit", {SOURCE!r}, {{"g": double}})
        call = first_call_locked(module, "f")
        print("calling", flush=True)
        print("first call:", call(2.0), flush=True)
    """)
    env = {"UNILAB_KERNEL_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)  # writes the file
    (lock_path,) = [p.with_suffix(".lock") for p in tmp_path.glob("unit_*.py")]
    with open(lock_path, "a") as held:  # as if another process were compiling it now
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
        assert waiting.stdout.readline() == "calling\n"
        time.sleep(1.0)  # the kernel is in Numba's cache: unlocked, the call would take milliseconds
        assert waiting.poll() is None, "the first call did not wait for the lock"
        fcntl.flock(held, fcntl.LOCK_UN)
    assert waiting.wait(timeout=60) == 0 and "first call: 5.0" in waiting.stdout.read()


def test_a_lock_not_had_in_time_is_gone_without(tmp_path, monkeypatch):
    import fcntl

    from unilab_envs.core.generated import first_call_locked

    monkeypatch.setenv("UNILAB_KERNEL_DIR", str(tmp_path))
    module = generated_module("unit", SOURCE, {"g": double})
    with open(Path(module.__file__).with_suffix(".lock"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # flock locks are per open file: this process's own call waits too
        assert first_call_locked(module, "f", timeout=0.3)(2.0) == 5.0
