"""Every task (Go1, G1, Go1 rough, UR5 reach and grasp; bare and under the sim-to-real
profiles the goldens name) still produces its golden trajectories, bit for bit.

The Go1 / G1 goldens were recorded before the move to the shared locomotion layer, the Go1
rough and UR5 ones before the reward kernels became named reward terms
(``tests/envs/golden/trajectories.py`` says how); any change in any bit of an observation,
privileged observation, reward, reward term, terminated or truncated flag fails here with
the first step and array that differ.

Bit equality holds for one set of ``mujoco`` / ``numba`` / ``numpy`` versions (``pyproject.toml``
sets no upper bound), kept in each golden file (older ones: ``golden/versions.json``). A golden
that differs while the installed versions are others fails with one message naming both and
the re-record command. It fails rather than skips: a skip would switch the check off silently on
every install after a library release, where a failure asks for the one step that turns it
back on (check the change is the library's, then re-record).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_SPEC = importlib.util.spec_from_file_location("golden_trajectories", Path(__file__).parent / "golden" / "trajectories.py")
golden = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(golden)


def _assert_equal(stem: str, got, want) -> None:
    for k in golden.ARRAYS:
        np.testing.assert_array_equal(got[f"snap_{k}"], want[f"snap_{k}"], err_msg=f"{stem}: {k} at steps {golden.SNAPSHOT_STEPS}")
    for k in ("reward", "terminated", "truncated"):
        np.testing.assert_array_equal(got[f"full_{k}"], want[f"full_{k}"], err_msg=f"{stem}: {k}")
    for k in golden.ARRAYS:
        differ = np.flatnonzero(got[f"print_{k}"] != want[f"print_{k}"])
        assert differ.size == 0, f"{stem}: {k} first differs at step {differ[0] if differ.size else None}"
    assert int(got["command_changes"]) == int(want["command_changes"])


@pytest.mark.parametrize("case", golden.CASES, ids=[c[0] for c in golden.CASES])
def test_trajectory_equals_its_golden_bit_for_bit(case):
    stem, *args = case
    want = np.load(golden.path_of(stem))
    got = golden.rollout(*args)
    try:
        _assert_equal(stem, got, want)
    except AssertionError as error:
        drift = golden.version_drift(golden.recorded_versions(stem), golden.running_versions())
        if drift is None:
            raise
        first = " / ".join(line.strip() for line in str(error).strip().splitlines()[:3] if line.strip())
        pytest.fail(f"{stem}: the trajectory differs from its golden ({first}), and {drift}. If the only change is "
                    f"the libraries', re-record the goldens and their versions: {golden.RECORD_COMMAND}", pytrace=False)


def test_goldens_say_the_library_versions_they_were_recorded_with():
    recorded = golden.recorded_versions()
    assert set(recorded) == set(golden.PACKAGES), f"{golden.VERSIONS_PATH} is missing or incomplete; run {golden.RECORD_COMMAND}"
    running = {"mujoco": "9.9.9", **{k: v for k, v in recorded.items() if k != "mujoco"}}
    assert golden.version_drift(recorded, recorded) is None
    drift = golden.version_drift(recorded, running)
    assert f"mujoco {recorded['mujoco']}" in drift and "mujoco 9.9.9" in drift


def test_a_mismatch_under_other_versions_names_them_and_the_re_record_command(monkeypatch):
    stem, *args = golden.CASES[0]
    changed = dict(np.load(golden.path_of(stem)))
    changed["full_reward"] = changed["full_reward"] + np.float32(1.0)  # as if the physics had moved a bit
    monkeypatch.setattr(golden, "rollout", lambda *a: changed)
    monkeypatch.setattr(golden, "running_versions", lambda: {**golden.recorded_versions(), "mujoco": "9.9.9"})
    with pytest.raises(pytest.fail.Exception) as failure:
        test_trajectory_equals_its_golden_bit_for_bit(golden.CASES[0])
    message = str(failure.value)
    assert "mujoco 9.9.9" in message and golden.RECORD_COMMAND in message and f"{stem}: reward" in message
    monkeypatch.setattr(golden, "running_versions", golden.recorded_versions)  # same versions: the plain failure
    with pytest.raises(AssertionError, match=f"{stem}: reward"):
        test_trajectory_equals_its_golden_bit_for_bit(golden.CASES[0])


def test_goldens_cross_episode_ends_command_resamples_and_picks():
    records = {c[0]: np.load(golden.path_of(c[0])) for c in golden.CASES}
    arm = {c[0] for c in golden.CASES if c[1].startswith("UniLab/UR5")}  # no command: 0 changes
    assert sum(int(r["full_terminated"].sum()) for r in records.values()) > 20
    assert sum(int(r["full_truncated"].sum()) for r in records.values()) > 5
    assert sum(int(r["command_changes"]) for stem, r in records.items() if stem not in arm) > 5
    assert all(int(records[stem]["command_changes"]) == 0 for stem in arm)
    # a UR5Grasp episode terminates only on a success (1 s held up) or the cube off the table
    assert sum(int(records[s]["full_terminated"].sum()) for s in arm if s.startswith("ur5_grasp")) > 5


def test_a_golden_without_its_own_versions_reads_versions_json():
    assert golden.recorded_versions(golden.CASES[0][0]) == golden.recorded_versions()
    stem = next(c[0] for c in golden.CASES if "versions" in np.load(golden.path_of(c[0])))
    assert set(golden.recorded_versions(stem)) == set(golden.PACKAGES)


def test_fingerprint_tells_values_apart_and_ignores_the_sign_of_zero():
    a = np.array([0.0, 1.0, 2.0], dtype=np.float32)
    assert golden.fingerprint(a) == golden.fingerprint(np.array([-0.0, 1.0, 2.0], dtype=np.float32))
    assert golden.fingerprint(a) != golden.fingerprint(np.nextafter(a, np.float32(3.0)))
