"""The two test tiers are what docs/testing.md says: the default tier (``.ci/run``, the README's command) leaves out
the tests marked ``slow``, ``.ci/run --slow`` runs them, and the page lists every one of them."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "testing.md").read_text()


def _slow_tests() -> list[str]:
    """``path::name`` of every test function decorated ``@pytest.mark.slow``, read from the sources."""
    found = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(ast.unparse(d) == "pytest.mark.slow" for d in node.decorator_list):
                found.append(f"{path.relative_to(ROOT).as_posix()}::{node.name}")
    return found


def test_the_testing_page_names_every_slow_test():
    slow = _slow_tests()
    assert slow, "no test is marked slow"
    missing = [t for t in slow if t.split("::")[1] not in PAGE]
    assert not missing, f"docs/testing.md does not list these slow tests: {missing}"


def test_the_default_tier_leaves_out_the_slow_one(pytestconfig):
    assert pytestconfig.getini("addopts")[-2:] == ["-m", "not slow"]


@pytest.mark.parametrize("args, ends", [([], "--dist loadfile"), (["--slow"], "--dist loadfile -m slow")])
def test_ci_run_runs_the_readme_command_or_its_slow_tier(args, ends, tmp_path):
    """``.ci/run`` on a copy of the repository's README, with a ``bash`` on PATH that records what it is asked to run (and an ``Xvfb``)."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text())
    (tmp_path / "README.md").write_text((ROOT / "README.md").read_text())
    fake = tmp_path / "bin" / "bash"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor last; do :; done\nprintf "%s" "$last" > "$RECORD"\n')
    xvfb = fake.parent / "Xvfb"  # found, so .ci/run does not apt-get it
    xvfb.write_text("#!/bin/sh\n")
    for f in (fake, xvfb):
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    record = tmp_path / "ran.txt"
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "RECORD": str(record)}
    subprocess.run(["/bin/bash", str(tmp_path / ".ci" / "run"), *args], env=env, check=True, capture_output=True)
    assert record.read_text().endswith(ends)
    wrong = subprocess.run(["/bin/bash", str(tmp_path / ".ci" / "run"), "--fast"], env=env, capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr.startswith("usage: .ci/run [--slow]")
