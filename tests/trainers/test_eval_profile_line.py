"""``unilab eval``'s first line names the sim-to-real profile its numbers are under (issue 54: the shipped
G1's 28% falls under its own, wider training profile were read as the README's g1_real number)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.trainers.conftest import POINT_REACH_ID
from trainers import cli
from trainers.common.profile_label import evaluation_profile, profile_label

G1_REAL = Path(__file__).resolve().parents[2] / "policies" / "g1_joystick_real" / "config.yaml"
WIDER = {"extends": "g1_real", "privileged_critic": True, "motor_strength": {"strength": [0.8, 1.2]}}


def test_the_phrases():
    assert evaluation_profile("g1_real", WIDER) == "sim2real: g1_real"
    assert evaluation_profile("none", WIDER) == "sim2real: none (the bare env)"
    assert evaluation_profile(None, WIDER) == ("run's own profile: g1_real with its own privileged_critic, "
                                               "motor_strength (--sim2real g1_real for the packaged profile, "
                                               "none for the bare env)")
    assert evaluation_profile(None, "go1_real") == "run's own profile: go1_real (--sim2real none for the bare env)"
    assert evaluation_profile(None, None).startswith("sim2real: none (the run trained on the bare env")
    assert "at full strength (curriculum left out)" in evaluation_profile(None, {"extends": "x", "curriculum": {}})
    assert profile_label(None) == "none" and profile_label({"observation_noise": {}}) == \
        "an inline profile (observation_noise)"


def test_the_shipped_g1_real_policy_says_its_own_profile_is_not_g1_real():
    trained = yaml.safe_load(G1_REAL.read_text())["sim2real"]
    line = evaluation_profile(None, trained)
    assert line.startswith("run's own profile: g1_real with its own ") and "--sim2real g1_real" in line


def test_eval_prints_the_profile_first(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", "--task", POINT_REACH_ID, "--num-envs", "4", "--no-progress", "--total-steps", "64",
                     "algo.num_steps=16", "log.tensorboard=false", "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["eval", str(out), "--episodes", "2", "--num-envs", "2"]) == 0
    first, *rest = capsys.readouterr().out.splitlines()
    assert first == (f"evaluating {out} on {POINT_REACH_ID}; sim2real: none (the run trained on the bare env; "
                     "--sim2real PROFILE to add one)")
    assert rest[-1].startswith("episodes 2")
