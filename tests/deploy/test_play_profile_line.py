"""``unilab play`` says which profile it plays under, and tells a profile's randomized gains from a
model that differs from training (issue 54: ``--sim2real go1_real`` was reported as a wrong model)."""

from __future__ import annotations

from tests.deploy.conftest import run


def _play(go1_run, capsys, *extra) -> tuple[list[str], str]:
    assert run(["play", go1_run, "--headless", "--episodes", "2", "--no-progress", *extra]) == 0
    captured = capsys.readouterr()
    return captured.out.splitlines(), captured.err


def test_a_profiles_motor_strength_draw_is_not_a_different_model(go1_run, capsys):
    out, err = _play(go1_run, capsys, "--sim2real", "go1_real")
    assert out[0] == "playing UniLab/Go1Joystick-v0 headless, 2 episodes; sim2real: go1_real", out
    assert "differs from the training model" not in err, err  # the draw scaled Kp (e.g. 32.8): not the model
    assert ("go1_real's motor_strength scales Kp and Kd by a factor drawn from [0.9, 1.1] each episode "
            "(one factor per actuator), as in training") in err, err


def test_without_a_profile_the_first_line_says_none(go1_run, capsys):
    out, err = _play(go1_run, capsys)
    assert out[0] == "playing UniLab/Go1Joystick-v0 headless, 2 episodes; sim2real: none", out
    assert "differs" not in err and "motor_strength" not in err, err


def test_a_stiffer_model_under_a_profile_is_still_reported(go1_run, tmp_path, capsys):
    from unilab_robot.assets import go1

    stiff = tmp_path / "go1_stiff.xml"
    stiff.write_text(go1.MJCF_PATH.read_text().replace('<position kp="35"', '<position kp="60"', 1))
    _, err = _play(go1_run, capsys, "--sim2real", "go1_real", "--model-path", str(stiff))
    assert "Kp differs on 12 actuators (e.g. FR_hip: 60 here, 35 in training)" in err, err  # the model's, undrawn
    assert "motor_strength scales Kp and Kd" in err
