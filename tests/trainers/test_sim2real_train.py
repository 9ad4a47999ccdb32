"""The bundled PPO trains with ``sim2real=<profile>`` from the CLI; eval, resume and overlap rebuild it."""

from __future__ import annotations

import pytest
import yaml

import trainers.common.envs as common_envs
from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION
from unilab_robot.profiles import Profile, resolve
from wrappers.sim2real import load_profile

GO1 = "UniLab/Go1Joystick-v0"
TINY_GO1 = ["--task", GO1, "--num-envs", "2", "--no-progress", "algo.num_steps=8", "algo.num_minibatches=1",
            "policy.actor_hidden=[16]", "policy.critic_hidden=[16]", "log.tensorboard=false", "log.plot=false",
            "env_kwargs.num_threads=1"]


@pytest.fixture
def wraps(monkeypatch):
    """Every ``wrap_sim2real`` call as (sim2real asked for, class of the env it returned).

    The CLI may also build a bare env to check ``env_kwargs`` before training: tests look
    at the wrapped ones (:func:`wrapped`).
    """
    seen: list[tuple[object, str]] = []
    original = common_envs.wrap_sim2real

    def spy(env, sim2real):
        out = original(env, sim2real)
        seen.append((sim2real, type(out).__name__))
        return out

    monkeypatch.setattr(common_envs, "wrap_sim2real", spy)
    return seen


def wrapped(wraps) -> list[object]:
    """The profiles of the envs that were wrapped in ``Sim2Real``: what the run gave (a name or a mapping) for a
    resolved ``Profile`` without a curriculum, the ``Profile`` itself for one at full strength."""
    return [asked.source if isinstance(asked, Profile) and asked.as_dict() == resolve(asked.source).as_dict() else asked
            for asked, kind in wraps if kind == "Sim2Real"]


def test_ppo_trains_evaluates_and_resumes_with_sim2real(tmp_path, capsys, wraps):
    out = tmp_path / "go1"
    assert cli.main(["train", *TINY_GO1, "--total-steps", "32", "--out", str(out), "sim2real=go1_real"]) == 0
    assert wrapped(wraps) == ["go1_real"]
    assert yaml.safe_load((out / "config.yaml").read_text())["sim2real"] == "go1_real"
    assert load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)["config"]["sim2real"] == "go1_real"

    wraps.clear()
    assert cli.main(["eval", str(out), "--episodes", "2"]) == 0  # default: as trained
    assert wrapped(wraps) == ["go1_real"]
    assert "episodes 2" in capsys.readouterr().out

    wraps.clear()
    assert cli.main(["eval", str(out), "--episodes", "2", "--sim2real", "none"]) == 0
    assert wraps and wrapped(wraps) == [] and all(asked is None for asked, _ in wraps)

    wraps.clear()
    assert cli.main(["train", "--resume", str(out), "--total-steps", "48", "--no-progress"]) == 0
    assert wrapped(wraps) == ["go1_real"]
    assert load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)["iteration"] == 3


def test_overlap_wraps_each_half(tmp_path, wraps):
    out = tmp_path / "go1_overlap"
    assert cli.main(["train", *TINY_GO1, "--total-steps", "16", "--out", str(out), "sim2real=go1_real",
                     "overlap=true"]) == 0
    assert wrapped(wraps) == ["go1_real", "go1_real"]


def test_profile_for_another_robot_is_refused_plainly(tmp_path, capsys):
    out = tmp_path / "wrong"
    assert cli.main(["train", *TINY_GO1, "--out", str(out), "sim2real=ur5_real"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "wrist_3_link" not in err
    assert "'ur5_real' is for UniLab/UR5Reach-v0" in err and f"profiles for {GO1}: go1_real" in err
    assert not out.exists()

    assert cli.main(["train", *TINY_GO1, "--out", str(out), "sim2real=spot_real"]) == 2
    assert "unknown sim-to-real profile 'spot_real'" in capsys.readouterr().err
    assert not out.exists()


def test_eval_with_a_profile_for_another_robot_exits_2(tmp_path, capsys):
    out = tmp_path / "bare"
    assert cli.main(["train", *TINY_GO1, "--total-steps", "16", "--out", str(out)]) == 0
    assert yaml.safe_load((out / "config.yaml").read_text())["sim2real"] is None
    capsys.readouterr()
    assert cli.main(["eval", str(out), "--episodes", "1", "--sim2real", "g1_real"]) == 2
    err = capsys.readouterr().err
    assert "'g1_real' is for UniLab/G1Joystick-v0" in err and "go1_real" in err


def test_a_push_curriculum_is_logged_as_env_push_level_and_left_out_of_eval(tmp_path, wraps):
    out = tmp_path / "go1"
    assert cli.main(["train", *TINY_GO1, "--total-steps", "32", "--out", str(out),
                     "sim2real={extends: go1_real, random_push: {levels: 10}}"]) == 0
    header, *rows = [line.split(",") for line in (out / "progress.csv").read_text().splitlines()]
    levels = [float(row[header.index("env/push_level")]) for row in rows]
    assert len(levels) == 2 and all(0.0 <= x <= 1.0 for x in levels)

    # evaluated as trained, but with pushes from the whole range: at level 0 they would be the weakest
    wraps.clear()
    assert cli.main(["eval", str(out), "--episodes", "2"]) == 0
    (profile,) = wrapped(wraps)
    whole = load_profile("go1_real")
    assert profile["random_push"] == {**whole["random_push"], "levels": 0}
    assert {k: v for k, v in profile.items() if k != "random_push"} == {k: v for k, v in whole.items()
                                                                          if k != "random_push"}


def test_an_eval_profile_without_a_curriculum_is_passed_on_as_given():
    assert common_envs.resolve_sim2real(common_envs.AS_TRAINED, "go1_real").source == "go1_real"
    assert common_envs.resolve_sim2real("g1_real", "go1_real") == resolve("g1_real")
    assert common_envs.resolve_sim2real("none", "go1_real") is None
    inline = {"extends": "go1_real", "random_push": None}
    assert common_envs.resolve_sim2real(common_envs.AS_TRAINED, inline).source == inline
    profile = resolve("go1_real")
    assert common_envs.resolve_sim2real(profile, None) is profile  # resolved once: taken as it is
    curriculum = {"extends": "g1_real", "random_push": {"levels": 5}}
    assert common_envs.resolve_sim2real(curriculum, None)["random_push"]["levels"] == 0
