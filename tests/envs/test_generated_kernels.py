"""Generated kernel modules: one file per source and bound code, loaded from Numba's cache in a new process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
