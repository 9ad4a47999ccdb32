"""``trainers.bench.stats``: medians, interquartile ranges, paired ratios, the budget judgement
(including when the spread straddles the budget), and the JSON / table shape of a row.
Hand-computed numbers only; nothing here is timed."""

from __future__ import annotations

import json
import math

import pytest

from trainers.bench import report, stats


def test_summary_median_quartiles_range():
    s = stats.summary([5.0, 1.0, 3.0, 2.0, 4.0])
    assert s == {"median": 3.0, "q1": 2.0, "q3": 4.0, "min": 1.0, "max": 5.0, "n": 5}
    even = stats.summary([1.0, 2.0, 3.0, 4.0])  # linear interpolation between order statistics
    assert (even["median"], even["q1"], even["q3"]) == (2.5, 1.75, 3.25)
    with pytest.raises(ValueError):
        stats.summary([])


def test_paired_ratios_times_and_throughputs():
    assert stats.paired_ratios([10.0, 8.0], [1.0, 2.0]) == [10.0, 4.0]  # times: baseline / ours
    assert stats.paired_ratios([100.0, 50.0], [90.0, 50.0], higher_is_better=True) == [0.9, 1.0]
    with pytest.raises(ValueError):
        stats.paired_ratios([1.0, 2.0], [1.0])


def test_measured_takes_the_median_of_paired_ratios_not_the_ratio_of_medians():
    # per repetition: 10/1, 12/3, 8/1 -> ratios 10, 4, 8; ratio of medians would be 10/1 = 10
    m = stats.measured([10.0, 12.0, 8.0], [1.0, 3.0, 1.0])
    assert m["baseline"] == 10.0 and m["ours"] == 1.0
    assert m["ratio"] == 8.0 and m["ratio_iqr"] == [6.0, 9.0] and m["ratio_range"] == [4.0, 10.0]
    assert m["baseline_iqr"] == [9.0, 11.0] and m["ours_iqr"] == [1.0, 2.0] and m["repetitions"] == 3


@pytest.mark.parametrize("ratio, iqr, budget, verdict, straddle", [
    (13.0, [12.5, 14.0], 12.0, "ok", False),
    (13.0, [11.0, 14.0], 12.0, "ok, IQR straddles", True),
    (11.0, [10.0, 12.5], 12.0, "BELOW, IQR straddles", True),
    (11.0, [10.0, 11.5], 12.0, "BELOW", False),
    (12.0, [12.0, 12.0], 12.0, "ok", False),  # a budget met by the whole IQR, exactly
    (5.0, [4.0, 6.0], None, "-", None),
])
def test_judge_uses_the_median_and_flags_a_straddling_spread(ratio, iqr, budget, verdict, straddle):
    row = stats.finish({"ratio": ratio, "ratio_iqr": iqr, "budget": budget})
    assert row["status"] == verdict and row["straddles_budget"] is straddle
    assert report.status(row) == verdict


def test_judge_errors_and_missing_spread():
    assert stats.finish({"ratio": math.nan, "budget": 12.0, "error": "Boom"})["status"] == "ERROR"
    assert stats.judge({"ratio": math.nan, "budget": 12.0}) == "BELOW"
    row = stats.finish({"ratio": 13.0, "budget": 12.0})  # no repetitions recorded: judged on the value alone
    assert row["status"] == "ok" and row["straddles_budget"] is None


MACHINE = {"cpu": "x", "cores": 2, "threads": 2, "load_avg_1min": 0.0, "gpu": None, "device": "cpu",
           "torch": "t", "numba": "n", "mujoco": "m"}


def _row(**extra) -> dict:
    row = {"section": "postprocess", "name": "kernel vs numpy", "unit": "ms/call", "baseline_label": "numpy",
           "ours_label": "kernel", "budget": 8.5, "row": 1, **stats.measured([10.0, 12.0, 8.0], [1.0, 3.0, 1.0]),
           **extra}
    return stats.finish(row)


def test_json_shape_holds_medians_spreads_and_the_judgement(tmp_path):
    path = report.write_json(tmp_path / "bench.json", MACHINE, [_row(), _row(error="E: x", ratio=math.inf)])
    data = json.loads(path.read_text())
    assert set(data) == {"machine", "rows"}
    r = data["rows"][0]
    for key in ("baseline", "ours", "ratio", "repetitions", "budget", "status", "straddles_budget"):
        assert key in r, key
    for key in ("baseline_iqr", "ours_iqr", "ratio_iqr", "ratio_range"):
        assert isinstance(r[key], list) and len(r[key]) == 2 and r[key][0] <= r[key][1], key
    assert r["ratio"] == 8.0 and r["status"] == "BELOW, IQR straddles" and r["straddles_budget"] is True
    assert data["rows"][1]["ratio"] is None and data["rows"][1]["status"] == "ERROR"  # non-finite -> null


def test_table_prints_the_spread_the_count_and_a_straddling_verdict():
    text = report.format_table(MACHINE, [_row()])
    line = next(ln for ln in text.splitlines() if ln.startswith(" 1 "))
    assert "6-9" in line and " 3 " in line and "BELOW, IQR straddles" in line
    assert "IQR" in text.splitlines()[1] and "median" in text
