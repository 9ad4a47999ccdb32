"""tests/file_order.py: the heaviest files go to xdist's workers first, each file's tests in their order."""

from __future__ import annotations

from pathlib import Path

from file_order import HEAVIEST_FIRST, heaviest_first

ROOT = Path(__file__).resolve().parents[1]


def test_every_listed_file_exists_once():
    assert len(set(HEAVIEST_FIRST)) == len(HEAVIEST_FIRST)
    assert [f for f in HEAVIEST_FIRST if not (ROOT / f).is_file()] == []


def test_listed_files_come_first_in_their_order_and_the_rest_keep_theirs():
    heavy_a, heavy_b = HEAVIEST_FIRST[0], HEAVIEST_FIRST[1]
    items = ["tests/a/test_x.py::t1", f"{heavy_b}::t1", "tests/a/test_x.py::t2", f"{heavy_a}::t1",
             "tests/b/test_y.py::t1", f"{heavy_b}::t2", f"{heavy_a}::t2"]
    heaviest_first(items, nodeid_of=str)
    assert items == [f"{heavy_a}::t1", f"{heavy_a}::t2", f"{heavy_b}::t1", f"{heavy_b}::t2",
                     "tests/a/test_x.py::t1", "tests/a/test_x.py::t2", "tests/b/test_y.py::t1"]
