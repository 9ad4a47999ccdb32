"""``unilab bench --quick``: the table, JSON and PNG come out and every ratio is a positive finite number.

Speed budgets are not asserted here (quick sizes on shared CI cores); ``unilab bench``
without ``--quick`` reports them.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from trainers.bench import cli
from trainers.common.mixed_precision import cpu_has_bf16


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    rc = cli.main(["--quick", "--rows", "1,2,3,4,5,6,7", "--out", str(out), "--device", "cpu"])
    return rc, out


def test_quick_run_writes_table_json_png(quick_run, capsys):
    rc, out = quick_run
    assert rc == 0
    data = json.loads((out / "bench.json").read_text())
    assert data["machine"]["cores"] >= 1 and data["machine"]["device"] == "cpu"
    rows = data["rows"]
    assert {r["row"] for r in rows} == {1, 2, 3, 4, 5, 6, 7}
    for r in rows:
        assert not r.get("error"), r
        assert r["ratio"] is not None and math.isfinite(r["ratio"]) and r["ratio"] > 0, r
        assert r["baseline"] > 0 and r["ours"] > 0, r
        assert r["repetitions"] >= 1 and r["ratio_iqr"][0] <= r["ratio"] <= r["ratio_iqr"][1], r  # median and spread
        assert r["status"] in ("ok", "BELOW", "-", "ok, IQR straddles", "BELOW, IQR straddles"), r
    assert any(r["budget"] == 12.0 for r in rows if r["row"] == 1)
    assert any(r["name"].startswith("memory floor") for r in rows if r["row"] == 1)
    if cpu_has_bf16():  # algo.amp's rows: the update at the Go1 and G1 sizes, training vs env-only
        assert sum("fp32 vs bf16" in r["name"] for r in rows if r["row"] == 4) == 2
        assert any("bf16" in r["name"] for r in rows if r["row"] == 5)
    assert (out / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def g1():
    from trainers.bench.postprocess import g1_batch

    env, args = g1_batch(256, 2)
    yield env.unwrapped, args
    env.close()


def _shake(args, seed=0):
    """Put rows where every branch of the kernel runs: fallen, past joint limits, slipping, landing."""
    rng = np.random.default_rng(seed)
    n = args["obs"].shape[0]
    rows = lambda: rng.random(n) < 0.25  # noqa: E731
    args["qpos"][rows(), args["root_q"] + 2] = 0.3  # pelvis below min_base_height: a fall
    args["qpos"][rows(), args["joint_q"][0]] = args["joint_high"][0] + 0.05
    args["previous_foot_pos"][:] += rng.normal(0, 0.01, args["previous_foot_pos"].shape)
    landing = rows()
    args["contact"][landing], args["air_time"][landing] = False, 0.2


def test_postprocess_numpy_computes_what_the_g1_kernel_computes(g1):
    """Both NumPy paths and the task's kernel agree on every output and state update, on
    a batch where every reward term is live and some rows resample their commands."""
    from trainers.bench.postprocess import ThreadedNumpy, disagreements

    env, args = g1
    _shake(args)
    pool = ThreadedNumpy(2)
    try:
        assert disagreements(env, args, pool, resample_every=5) == []
    finally:
        pool.close()
    assert (args["reward_terms"] != 0).any(axis=0).all(), "a reward term was zero on every row"
    assert args["terminated"].any() and not args["terminated"].all()


def test_numpy_disagrees_when_the_computation_differs(g1, monkeypatch):
    """The check has teeth: NumPy with a wrong weight is reported."""
    from trainers.bench import g1_numpy
    from trainers.bench.postprocess import ThreadedNumpy, disagreements

    env, args = g1
    real = g1_numpy.g1_compute_numpy

    def off(a, lo=0, hi=None):
        real({**a, "weights": a["weights"] * 1.01}, lo, hi)

    monkeypatch.setattr("trainers.bench.postprocess.g1_compute_numpy", off)
    monkeypatch.setattr(g1_numpy, "g1_compute_numpy", off)
    pool = ThreadedNumpy(2)
    try:
        bad = disagreements(env, args, pool)
    finally:
        pool.close()
    assert "numpy: reward_terms" in bad and "numpy threads: reward" in bad


@pytest.mark.parametrize("straight", [0.0, 0.5])
def test_numpy_draws_the_kernels_commands(straight):
    from tests.envs import locomotion_records as rec
    from trainers.bench.g1_numpy import sample_commands
    from unilab_envs.core.rng import seed_streams
    from unilab_envs.locomotion.commands import sample_command

    spec = rec.commands(zero_probability=0.2, straight_probability=straight)
    rng = seed_streams(np.arange(64))
    twin = {"commands": spec, "rng": rng.copy(), "command": np.zeros((64, 3))}
    rows = np.arange(64)
    sample_commands(twin, rows)
    command = np.zeros((64, 3))
    for i in rows:
        sample_command(i, command, rng, spec)
    np.testing.assert_array_equal(twin["command"], command)
    np.testing.assert_array_equal(twin["rng"], rng)
    straight_rows = (command[:, 0] != 0.0) & (command[:, 1] == 0.0)
    assert straight_rows.any() == (straight > 0)


def test_memory_floor_reads_every_input_and_writes_every_output(g1):
    from trainers.bench.floor import stream_floor
    from trainers.bench.postprocess import private_copy

    _, args = g1
    a = private_copy(args)
    feet, ids = a["foot_sites"], a["actuator_ids"]
    total = (a["phase"] + a["command"].sum(1) + a["episode_step"] + a["qpos"].sum(1) + a["qvel"].sum(1)
             + a["actuator_force"][:, ids].sum(1) + a["last_action"].sum(1) + a["previous_action"].sum(1)
             + a["site_xpos"][:, feet].sum((1, 2)) + a["previous_foot_pos"].sum((1, 2)) + a["air_time"].sum(1)
             + a["contact"].sum(1))
    stream_floor(a)
    for k in ("obs", "privileged_obs", "reward_terms"):
        np.testing.assert_allclose(a[k], np.repeat(total[:, None], a[k].shape[1], 1).astype(np.float32), rtol=1e-5)
    np.testing.assert_allclose(a["phase"], total)
    np.testing.assert_array_equal(a["terminated"], total > 0)


def test_table_marks_budgets_and_errors():
    from trainers.bench.report import format_table

    machine = {"cpu": "x", "cores": 2, "threads": 2, "load_avg_1min": 0.0, "gpu": None, "device": "cpu",
               "torch": "t", "numba": "n", "mujoco": "m"}
    rows = [{"row": 1, "name": "a", "baseline": 10.0, "ours": 1.0, "unit": "ms", "ratio": 10.0, "budget": 12.0},
            {"row": 4, "name": "b", "baseline": 1.0, "ours": 1.0, "unit": "ms", "ratio": 1.0, "budget": None},
            {"row": 5, "name": "c", "ratio": float("nan"), "budget": None, "error": "Boom: no"}]
    text = format_table(machine, rows)
    assert "BELOW" in text and "ERROR" in text and "Boom: no" in text


def test_rows_option_rejects_unknown_rows():
    with pytest.raises(SystemExit):
        cli.main(["--rows", "1,9"])


def test_module_entry_point_help():
    res = subprocess.run([sys.executable, "-m", "trainers.bench", "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "--quick" in res.stdout


def test_sizes_quick_are_small():
    s = cli.pick_sizes(quick=True, cuda=False)
    assert s.post_envs <= 1024 and s.e2e_envs <= 64
    assert np.all(np.array([s.post_envs, s.env_envs, s.storage_envs, s.update_envs]) > 0)
