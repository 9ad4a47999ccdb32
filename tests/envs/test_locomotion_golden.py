"""Go1 and G1 (bare and under their sim-to-real profiles) still produce their golden trajectories, bit for bit.

The goldens were recorded before the move to the shared locomotion layer
(``tests/envs/golden/trajectories.py`` says how); any change in any bit of an
observation, privileged observation, reward, reward term, terminated or truncated flag
fails here with the first step and array that differ.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_SPEC = importlib.util.spec_from_file_location("golden_trajectories", Path(__file__).parent / "golden" / "trajectories.py")
golden = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(golden)


@pytest.mark.parametrize("case", golden.CASES, ids=[c[0] for c in golden.CASES])
def test_trajectory_equals_its_golden_bit_for_bit(case):
    stem, *args = case
    want = np.load(golden.path_of(stem))
    got = golden.rollout(*args)
    for k in golden.ARRAYS:
        np.testing.assert_array_equal(got[f"snap_{k}"], want[f"snap_{k}"], err_msg=f"{stem}: {k} at steps {golden.SNAPSHOT_STEPS}")
    for k in ("reward", "terminated", "truncated"):
        np.testing.assert_array_equal(got[f"full_{k}"], want[f"full_{k}"], err_msg=f"{stem}: {k}")
    for k in golden.ARRAYS:
        differ = np.flatnonzero(got[f"print_{k}"] != want[f"print_{k}"])
        assert differ.size == 0, f"{stem}: {k} first differs at step {differ[0] if differ.size else None}"
    assert int(got["command_changes"]) == int(want["command_changes"])


def test_goldens_cross_episode_ends_and_command_resamples():
    records = [np.load(golden.path_of(c[0])) for c in golden.CASES]
    assert sum(int(r["full_terminated"].sum()) for r in records) > 20
    assert sum(int(r["full_truncated"].sum()) for r in records) > 5
    assert sum(int(r["command_changes"]) for r in records) > 5


def test_fingerprint_tells_values_apart_and_ignores_the_sign_of_zero():
    a = np.array([0.0, 1.0, 2.0], dtype=np.float32)
    assert golden.fingerprint(a) == golden.fingerprint(np.array([-0.0, 1.0, 2.0], dtype=np.float32))
    assert golden.fingerprint(a) != golden.fingerprint(np.nextafter(a, np.float32(3.0)))
