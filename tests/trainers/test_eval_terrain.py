"""``unilab eval`` of a terrain task measures a fixed, printed level set with no curriculum promotion, the
measurement a terrain policy's headline is stated in (issue 72, item 7): its numbers are those of
``benchmarks/rough_terrain_eval.py --pooled 0 5``, the script the shipped ``go1_depth`` figure came from."""

from __future__ import annotations

import re
import sys

import pytest

from trainers import cli
from trainers.common.terrain_eval import HEADLINE_LEVELS, TerrainEval, is_terrain_task, terrain_eval

ROUGH = "policies/go1_rough"


def test_terrain_tasks_get_the_headline_level_set_one_episode_per_env():
    assert is_terrain_task("UniLab/Go1JoystickRough-v0") and is_terrain_task("UniLab/Go1JoystickDepth-v0")
    assert not is_terrain_task("UniLab/Go1Joystick-v0") and not is_terrain_task("UniLab/UR5Reach-v0")
    plan = terrain_eval("UniLab/Go1JoystickDepth-v0", 256, None, None)
    assert plan == TerrainEval(HEADLINE_LEVELS, 256) and HEADLINE_LEVELS == (0, 5)
    assert plan.env_kwargs == {"init_levels": (0, 5)}
    assert "levels 0-5 of every terrain type" in plan.line() and "no curriculum promotion" in plan.line()
    assert terrain_eval("UniLab/Go1JoystickRough-v0", 16, 16, [2, 4]).levels == (2, 4)
    assert terrain_eval("UniLab/Go1Joystick-v0", 16, 4, None) is None


@pytest.mark.parametrize("args, message", [
    (("UniLab/Go1JoystickRough-v0", 16, 4, None), "give --num-envs 16 (= --episodes)"),
    (("UniLab/Go1JoystickRough-v0", 16, None, [3, 1]), "needs 0 <= LO <= HI, got 3 1"),
    (("UniLab/Go1Joystick-v0", 16, None, [0, 5]), "UniLab/Go1Joystick-v0 has no terrain: leave it out"),
])
def test_a_plan_that_would_not_hold_the_levels_is_refused(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        terrain_eval(*args)


def test_cli_refuses_num_envs_that_would_let_the_curriculum_promote(capsys):
    assert cli.main(["eval", ROUGH, "--episodes", "16", "--num-envs", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "one episode per env" in err[0], err


def test_eval_of_a_terrain_policy_equals_the_pooled_level_measurement(capsys, monkeypatch):
    """4 episodes of ``policies/go1_rough``: ``unilab eval``'s falls and tracking are the pooled script's, to the digit."""
    assert cli.main(["eval", ROUGH, "--episodes", "4", "--sim2real", "none"]) == 0
    out = capsys.readouterr().out
    assert "terrain: levels 0-5 of every terrain type; each of the 4 envs runs one episode" in out, out
    falls = re.search(r"terminated ([\d.]+)%", out).group(1)
    tracking = re.search(r"planar velocity tracking ([\d.]+)%", out).group(1)
    from benchmarks import rough_terrain_eval

    monkeypatch.setattr(sys, "argv", ["rough_terrain_eval.py", ROUGH, "--skip-flat", "--pooled", "0", "5",
                                      "--episodes", "4"])
    rough_terrain_eval.main()
    pooled = capsys.readouterr().out
    assert f"falls {falls}%, forward tracking {tracking}% (4 episodes)" in pooled, (out, pooled)
