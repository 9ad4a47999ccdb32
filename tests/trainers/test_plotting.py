"""The learning-curve PNG draws from any progress CSV without a warning (CI runs with ``-W default``)."""

from __future__ import annotations

import warnings

import pytest

from trainers.common.plotting import logged_points, plot_learning_curve

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


def test_an_evaluation_logged_now_and_then_is_drawn_where_it_was_logged(tmp_path):
    """stop.eval writes eval/success every N steps, blank in the rows between: its points are those rows."""
    nan = float("nan")
    assert logged_points([100, 200, 300, 400], [nan, 0.9, nan, 1.0]) == [(200, 0.9), (400, 1.0)]
    csv = tmp_path / "progress.csv"
    csv.write_text("step,iteration,episode/return,episode/success,eval/success\n"
                   "100,1,1.0,0.5,\n200,2,2.0,0.8,0.9\n300,3,2.5,0.9,\n400,4,3.0,0.95,1.0\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = plot_learning_curve(csv, tmp_path / "curve.png")
    assert png is not None and png.stat().st_size > 1000

