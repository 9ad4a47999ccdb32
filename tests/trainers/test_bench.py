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


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    rc = cli.main(["--quick", "--rows", "1,2,3,4,5,6", "--out", str(out), "--device", "cpu"])
    return rc, out


def test_quick_run_writes_table_json_png(quick_run, capsys):
    rc, out = quick_run
    assert rc == 0
    data = json.loads((out / "bench.json").read_text())
    assert data["machine"]["cores"] >= 1 and data["machine"]["device"] == "cpu"
    rows = data["rows"]
    assert {r["row"] for r in rows} == {1, 2, 3, 4, 5, 6}
    for r in rows:
        assert not r.get("error"), r
        assert r["ratio"] is not None and math.isfinite(r["ratio"]) and r["ratio"] > 0, r
        assert r["baseline"] > 0 and r["ours"] > 0, r
    assert any(r["budget"] == 12.0 for r in rows if r["row"] == 1)
    assert any(r["name"].startswith("memory floor") for r in rows if r["row"] == 1)
    assert (out / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_postprocess_implementations_agree():
    from trainers.bench.postprocess import ThreadedNumpy, disagreements, make_inputs

    pool = ThreadedNumpy(2)
    try:
        assert disagreements(make_inputs(300, seed=3), 300, pool) == []
    finally:
        pool.close()


def test_memory_floor_reads_every_input_and_writes_every_output():
    from trainers.bench.postprocess import make_inputs, make_outputs, stream_floor

    x, out = make_inputs(64, seed=1), make_outputs(64)
    stream_floor(x, out)
    f64 = {k: v.astype(np.float64).reshape(64, -1) for k, v in x.items() if v.shape[:1] == (64,) and k != "qpos"}
    total = x["qpos"].sum(1) + sum(v.sum(1) for v in f64.values())
    np.testing.assert_allclose(out["obs"], np.repeat(total[:, None], out["obs"].shape[1], 1), rtol=1e-5)
    np.testing.assert_allclose(out["terms"][:, 0], total, rtol=1e-5)
    np.testing.assert_array_equal(out["terminated"], total > 0)


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
