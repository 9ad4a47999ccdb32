"""No parallel kernel stores through a named tuple's array field inside its ``prange`` loop.

Numba 0.68 drops such stores: in ``@njit(parallel=True)``, ``record.field[i, j] = v`` inside ``prange`` leaves the
array untouched, while the same store through a local name (``field = record.field`` before the loop) or inside a
non-inlined function the loop calls (our ``*_block`` kernels) lands. G1Track's action history was all zeros for it.
The first test shows the behaviour on this Numba (skipped once Numba keeps the store); the second keeps our kernels
off the pattern, read from their source.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

import numba as nb
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL_PACKAGES = ("unilab_envs", "wrappers")


class _Record(NamedTuple):
    values: np.ndarray


@nb.njit(parallel=True)
def _store_through_field(x, record):
    for i in nb.prange(x.shape[0]):
        record.values[i] = x[i]


@nb.njit(parallel=True)
def _store_through_local(x, record):
    values = record.values
    for i in nb.prange(x.shape[0]):
        values[i] = x[i]


def test_a_store_through_a_local_name_lands():
    x = np.arange(1.0, 9.0)
    record = _Record(np.zeros(8))
    _store_through_local(x, record)
    assert np.array_equal(record.values, x)
    record = _Record(np.zeros(8))
    _store_through_field(x, record)
    if np.array_equal(record.values, x):
        pytest.skip(f"Numba {nb.__version__} keeps stores through a named tuple's field in prange; the rule below "
                    "is then only style")


def _decorated_parallel(fn: ast.FunctionDef) -> bool:
    return any("parallel=True" in ast.unparse(d) for d in fn.decorator_list)


def _field_stores_in_prange(fn: ast.FunctionDef) -> list[str]:
    found = []
    for loop in ast.walk(fn):
        if not (isinstance(loop, ast.For) and "prange" in ast.unparse(loop.iter)):
            continue
        for node in ast.walk(loop):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
            for target in targets:
                for stored in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(stored, ast.Subscript) and isinstance(stored.value, ast.Attribute):
                        found.append(f"line {node.lineno}: {ast.unparse(stored)}")
    return found


def test_no_parallel_kernel_stores_through_a_field():
    offenders = []
    for package in KERNEL_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for fn in ast.walk(tree):
                if isinstance(fn, ast.FunctionDef) and _decorated_parallel(fn):
                    offenders += [f"{path.relative_to(ROOT)} {fn.name} {hit}" for hit in _field_stores_in_prange(fn)]
    assert not offenders, ("stores through a named tuple's field inside prange (lost under Numba 0.68; bind the "
                           "array to a local name before the loop): " + "; ".join(offenders))
