"""docs/deploy.md's safety-guard snippet runs as pasted, from the repository root (issue 54: it used
``np`` without importing it, and ``q``, ``qd``, ``base_quat``, ``fresh`` it never defined)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _python_block(page: Path, containing: str) -> str:
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page.read_text(), re.S) if containing in b]
    assert len(blocks) == 1, f"{page}: {len(blocks)} python blocks contain {containing!r}"
    return blocks[0]


def test_the_safety_guard_snippet_runs_as_pasted(monkeypatch):
    code = _python_block(ROOT / "docs" / "deploy.md", "SafetyGuard.from_spec")
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    exec(compile(code, "docs/deploy.md", "exec"), scope)  # noqa: S102 - the documentation's own code
    targets, kp = scope["targets"], scope["kp"]
    assert targets.shape == kp.shape == (scope["spec"].action.size,) and np.isfinite(targets).all()
    assert not scope["guard"].latched
