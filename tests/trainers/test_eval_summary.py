"""``unilab eval``'s summary line says what its numbers measure.

Where a task reports success (reach, grasp), a success may end the episode: the share of
episodes that ended before the time limit is "ended early", never a bare "terminated" that
reads like failure. The joystick tracking share measures the planar (vx, vy) velocity error.
"""

from __future__ import annotations

from trainers.ppo.evaluate import EvalResult


def result(**kwargs) -> EvalResult:
    fields = dict(episodes=64, mean_return=59.293, std_return=5.631, mean_length=988.8, success_rate=None,
                  fall_rate=0.016, video=None)
    return EvalResult(**{**fields, **kwargs})


def test_a_task_with_success_says_ended_early_beside_the_success():
    line = result(success_rate=1.0, fall_rate=1.0, mean_length=52.3).summary()
    assert "success 100.0%  ended early 100.0% (a success can end an episode)" in line, line
    assert "terminated" not in line


def test_a_joystick_task_says_terminated_and_planar_velocity_tracking():
    line = result(tracking_share=0.965).summary()
    assert line == ("episodes 64  return 59.293 +- 5.631  length 988.8  terminated 1.6%  "
                    "planar velocity tracking 96.5% of max")
    assert "forward" not in line and "success" not in line and "ended early" not in line


def test_a_walk_is_an_episode_that_neither_fell_nor_tracked_below_the_threshold():
    r = result(tracking_share=0.85, episode_falls=(False, False, True, False),
               episode_tracking=(0.95, 0.79, 0.99, 0.80))
    assert r.walk_rate() == 0.5  # 0.79 tracked too little; the fall does not count whatever it tracked
    assert r.walk_rate(0.7) == 0.75
    assert result(success_rate=1.0).walk_rate() is None  # no tracking share: not a joystick task
