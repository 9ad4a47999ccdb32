"""The estimator's error is one line, worded once (:func:`~trainers.common.evaluation.estimator_rmse_line`): the line
training ends with and the line ``unilab eval`` prints are the same for the same numbers (they were worded apart:
``estimator RMSE (the last rollout, the targets' units): offset_0 0.1235`` and ``... estimator RMSE offset_0 0.123``
inside the eval summary)."""

from tests.trainers.test_ppo_estimator import est_cfg

from trainers import cli
from trainers.common.evaluation import estimator_rmse_line
from trainers.ppo import train

#: an RMSE per estimate column, and another statistic the line leaves out
NUMBERS = {"estimator/rmse_offset_0": 0.123456, "loss/estimator": 9.0, "estimator/rmse_offset_1": 0.0456789}
LINE = "estimator RMSE in the targets' units: offset_0 0.123  offset_1 0.0457"


def test_the_line_by_hand():
    assert estimator_rmse_line(NUMBERS) == LINE
    assert estimator_rmse_line({"loss/estimator": 9.0}) is None and estimator_rmse_line({}) is None


def test_training_and_eval_print_the_same_line_for_the_same_numbers(tmp_path, monkeypatch, capsys):
    from trainers.ppo.algorithm import PPO
    from trainers.ppo.estimator import MeteredActions

    monkeypatch.setattr(PPO, "estimator_error", lambda self, storage: dict(NUMBERS))
    monkeypatch.setattr(MeteredActions, "rmse", lambda self: dict(NUMBERS))
    train(est_cfg(tmp_path / "run", total_steps=8 * 16 * 2))
    trained = capsys.readouterr().out.splitlines()
    assert cli.main(["eval", str(tmp_path / "run"), "--episodes", "2", "--num-envs", "2", "--no-progress"]) == 0
    evaluated = capsys.readouterr().out.splitlines()
    assert [line for line in trained if "RMSE" in line] == [LINE]
    assert [line for line in evaluated if "RMSE" in line] == [LINE]

