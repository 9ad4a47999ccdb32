"""Fixtures for the trainer tests: the ``PointReach`` stand-in env (``tests/trainers/standins.py``).

Importing this module registers ``UniLabTest/PointReach-v0``; ``PointReach``,
``POINT_REACH_ID`` and ``make_point_reach`` are importable from here too.
"""

from __future__ import annotations

import pytest
from tests.trainers.standins import POINT_REACH_ID, PointReach, make_point_reach, register_point_reach

__all__ = ["POINT_REACH_ID", "PointReach", "make_point_reach", "point_reach"]

register_point_reach()


@pytest.fixture
def point_reach():
    return make_point_reach
