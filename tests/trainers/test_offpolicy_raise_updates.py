"""``algo.raise_updates``: more updates per batch step from the first time the rolling training success reaches a
threshold, for good (a later drop keeps it, a resumed run keeps it); counted update by update."""

from __future__ import annotations

import csv
import re

import pytest

from tests.trainers.conftest import POINT_REACH_ID
from tests.trainers.test_offpolicy_learning import RUN as LEARNING_RUN
from trainers.offpolicy.config import load_offpolicy_config
from trainers.offpolicy.runner import OffPolicyRunner
from unilab_envs.config import ConfigError

# the learning test's PointReach run (it learns within 9600 steps), at 1 update per batch step, logged often
RUN = [*LEARNING_RUN, "algo.updates_per_step=1", "log.every_steps=320"]
RAISE = "algo.raise_updates={updates_per_step: 3, at_success: 0.5, min_episodes: 20}"


def runner_for(tmp_path, *extra: str) -> OffPolicyRunner:
    return OffPolicyRunner(load_offpolicy_config("sac", POINT_REACH_ID, overrides=[*RUN, *extra, f"out={tmp_path}"]))


def updates_of_one_learn(runner: OffPolicyRunner) -> int:
    before = runner.learner.updates
    runner.learn()
    return runner.learner.updates - before


def record(runner: OffPolicyRunner, successes: int, failures: int) -> None:
    """Finished exploring episodes, as the runner records them."""
    for success in [True] * successes + [False] * failures:
        runner.finished.append((0.0, 10, success))
        runner.episodes_done += 1


def test_the_raise_waits_for_the_threshold_and_enough_episodes_then_holds(point_reach, tmp_path):
    runner = runner_for(tmp_path, RAISE)
    for _ in range(40):  # enough transitions to sample a batch from
        runner.collect()
    runner.finished.clear()
    runner.episodes_done = 0
    record(runner, 19, 0)  # all successes, but 19 < min_episodes
    assert updates_of_one_learn(runner) == 1 and runner.updates_raised_at is None
    record(runner, 0, 21)  # 40 episodes, 19 successes: 47.5% < 50%
    assert updates_of_one_learn(runner) == 1 and runner.updates_raised_at is None
    record(runner, 1, 0)  # 20 of 41: 48.8%
    assert updates_of_one_learn(runner) == 1
    record(runner, 2, 0)  # 22 of 43: 51.2%: raised at this step, whose updates are already the raised number
    assert updates_of_one_learn(runner) == 3 and runner.updates_raised_at == runner.env_steps == 640
    record(runner, 0, 200)  # the window now holds only failures: the raise holds
    assert updates_of_one_learn(runner) == 3 and runner.updates_per_step == 3
    runner.save()
    resumed = OffPolicyRunner(runner.cfg, resume=tmp_path / "checkpoint.pt")
    assert resumed.updates_raised_at == 640 and resumed.updates_per_step == 3
    resumed.env.close()
    runner.env.close()


def test_without_the_option_the_rate_stays(point_reach, tmp_path):
    runner = runner_for(tmp_path)
    for _ in range(40):
        runner.collect()
    record(runner, 300, 0)
    assert updates_of_one_learn(runner) == 1 and runner.updates_raised_at is None
    runner.env.close()


def test_a_training_run_switches_once_and_counts_its_updates(point_reach, tmp_path):
    """PointReach is learned within the run: the log shows 1 update per batch step, then 3 from the switch on, and the
    learner's update count is exactly 1 per batch step from learning_starts up to the switch and 3 after it."""
    runner = runner_for(tmp_path, RAISE)
    result = runner.train()
    raised = runner.updates_raised_at
    assert raised is not None and 640 < raised < 9600
    steps = range(16, 9600 + 1, 16)  # env steps after each batch step
    expected = sum(1 for s in steps if 640 <= s < raised) + sum(3 for s in steps if s >= raised)
    assert result.updates == expected
    rates = [float(row["updates_per_step"]) for row in csv.DictReader(open(tmp_path / "progress.csv"))]
    assert rates[0] == 1.0 and rates[-1] == 3.0 and rates == sorted(rates)


@pytest.mark.parametrize("value, words", [("{updates_per_step: 0}", "updates_per_step must be > 0"),
                                          ("{updates_per_step: 4, at_success: 0}", "at_success must be in (0, 1]"),
                                          ("{updates_per_step: 4, at_sucess: 0.3}", "at_success")])
def test_bad_raise_settings_are_refused_with_the_reason(value, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        load_offpolicy_config("sac", POINT_REACH_ID, overrides=[f"algo.raise_updates={value}"])
