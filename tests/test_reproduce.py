"""benchmarks/reproduce.py: a two-stage headline trains its first stage, goes on from it and sums both stages.

``unilab`` is replaced by a fake that writes what a finished run and its evaluation leave behind, so these
tests check the sweep's bookkeeping (which commands, in which order, with which folders), not training.
"""

from pathlib import Path

import pytest

from benchmarks import reproduce

EVAL_LINE = ("episodes 256  return 3.100 +- 0.200  length 300.0  success 91.4%  ended early 8.6% "
             "(a success can end an episode)  tracking_error_cm 5.42  joint_error 0.125")


class FakeUnilab:
    """Records each call; ``train`` writes a progress.csv ending at ``steps[out]``, ``eval`` the line above."""

    def __init__(self, steps: dict[str, int], walls: dict[str, float]):
        self.calls: list[tuple[str, ...]] = []
        self.steps, self.walls = steps, walls

    def __call__(self, *args: str, log: Path, threads: int | None) -> float:
        self.calls.append(args)
        if args[0] == "eval":
            log.write_text(EVAL_LINE + "\n")
            return 1.0
        out = Path(args[args.index("--out") + 1])
        out.mkdir(parents=True)
        (out / "progress.csv").write_text(f"step,iteration\n100,1\n{self.steps[out.parent.name]},2\n")
        return self.walls[out.parent.name]


@pytest.fixture
def fake(monkeypatch):
    fake = FakeUnilab(steps={"g1_track": 14_000_000, "g1_track_real": 7_000_000},
                      walls={"g1_track": 4000.0, "g1_track_real": 1800.0})
    monkeypatch.setattr(reproduce, "unilab", fake)
    return fake


def test_the_second_stage_goes_on_from_the_first_and_sums_steps_and_wall(tmp_path, fake):
    result = reproduce.run_seed(reproduce.BY_KEY["g1_track_real"], 3, tmp_path, threads=None)
    trains = [c for c in fake.calls if c[0] == "train"]
    assert [c[c.index("--config") + 1] for c in trains] == ["trainers/configs/g1_track.yaml",
                                                           "trainers/configs/g1_track_real.yaml"]
    first_out = tmp_path / "g1_track" / "seed3"
    assert trains[0][trains[0].index("--out") + 1] == str(first_out)
    assert "--init-from" not in trains[0]
    assert trains[1][trains[1].index("--init-from") + 1] == str(first_out)
    assert trains[1][trains[1].index("--seed") + 1] == "3"
    assert result["steps"] == 21_000_000 and result["wall_s"] == 5800.0
    assert result["success"] == 91.4 and result["body_cm"] == 5.42
    # both stages evaluated: the first is a headline of its own
    assert sum(c[0] == "eval" for c in fake.calls) == 2


def test_a_finished_first_stage_is_reused_not_retrained(tmp_path, fake):
    reproduce.run_seed(reproduce.BY_KEY["g1_track"], 0, tmp_path, threads=None)
    fake.calls.clear()
    reproduce.run_seed(reproduce.BY_KEY["g1_track_real"], 0, tmp_path, threads=None)
    assert [c[2] for c in fake.calls if c[0] == "train"] == ["trainers/configs/g1_track_real.yaml"]


def test_every_second_stage_names_a_headline_and_bounds_parse():
    for h in reproduce.HEADLINES:
        assert h.after is None or h.after in reproduce.BY_KEY
        assert all(b.metric in {*reproduce.METRICS, "steps", "wall_s"} for b in h.bounds)
    assert reproduce.parse_eval(EVAL_LINE) == {"success": 91.4, "body_cm": 5.42}
