"""The maps match the code: every module a package docstring's module table names exists in that package, and
every source path docs/architecture.md names exists (a table that describes removed modules fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("unilab_envs", "trainers", "wrappers", "unilab_robot")


def module_table_names(docstring: str) -> list[str]:
    """The ````name```` of each row of the docstring's RST tables whose header says ``module``."""
    names = []
    for rule, header, body in re.findall(r"^(=+ +=+)\n(.*?)\n\1\n(.*?)\n\1$", docstring, re.S | re.M):
        if header.split()[0] == "module":
            names += re.findall(r"^``([\w.]+)``", body, re.M)
    return names


def test_the_table_reader_reads_a_table_by_hand():
    doc = "x\n\n==== ===\nmodule what\n==== ===\n``a``  one\n``b``  two\n==== ===\n"
    assert module_table_names(doc) == ["a", "b"]


INITS = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py"))


@pytest.mark.parametrize("init", INITS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_module_a_package_table_names_exists(init):
    import ast

    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    missing = [name for name in module_table_names(doc)
               if not (init.parent / f"{name}.py").exists() and not (init.parent / name / "__init__.py").exists()]
    assert not missing, f"{init.relative_to(ROOT)}'s module table names modules that do not exist: {missing}"


def test_each_path_architecture_md_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = set(re.findall(r"`((?:unilab_envs|unilab_robot|trainers|wrappers|benchmarks|tests)/[\w/.-]+)`", text))
    assert paths, "docs/architecture.md names no source paths: the reader is wrong"
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
