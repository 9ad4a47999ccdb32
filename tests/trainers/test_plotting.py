"""The learning-curve PNG draws from any progress CSV without a warning (CI runs with ``-W default``)."""

from __future__ import annotations

import warnings

import pytest

from trainers.common.plotting import plot_learning_curve

COLUMNS = {
    "return and reward terms": ["episode/return", "episode/length", "reward/distance", "reward/action"],
    "no episode finished yet": ["train/value_loss", "reward/distance"],
    "no reward terms (a Gymnasium task)": ["episode/return", "episode/length"],
    "success beside the return": ["episode/return", "episode/success"],
    "a curriculum, nothing else": ["env/terrain_level"],
}


@pytest.mark.parametrize("case", sorted(COLUMNS))
def test_the_curve_draws_without_warnings(case, tmp_path):
    columns = COLUMNS[case]
    csv = tmp_path / "progress.csv"
    rows = [",".join(["step", "iteration", *columns])]
    rows += [",".join([str(100 * i), str(i), *(str(0.1 * i + j) for j in range(len(columns)))]) for i in range(1, 6)]
    csv.write_text("\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = plot_learning_curve(csv, tmp_path / "curve.png", title=case)
    assert png is not None and png.stat().st_size > 1000
