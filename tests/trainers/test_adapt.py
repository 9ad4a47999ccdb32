"""``unilab adapt``: the fuse's decisions (pure), the CLI's refusals, and short real adaptations."""

from __future__ import annotations

import csv
import hashlib
import math

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.ppo.adapt import AdaptConfig, check_seeds, keep_privileged_critic, parse_sim2real, score
from trainers.ppo.config import ConfigError, load_config
from trainers.ppo.evaluate import evaluate
from trainers.ppo.fuse import Decision, Fuse
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

KEPT, NOT_KEPT, ROLLED_BACK = Decision.KEPT, Decision.NOT_KEPT, Decision.ROLLED_BACK
TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--no-progress", "algo.num_steps=16",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false", "log.plot=false"]


def decisions(metrics, patience=3, tolerance=0.05):
    """The fuse's decisions on a fake evaluator's scores (round 0 first); stops where the fuse trips."""
    fuse, out = Fuse(patience, tolerance), []
    for m in metrics:
        v = fuse.observe(m)
        out.append(v.decision)
        if v.stop:
            break
    return out, fuse


# --------------------------------------------------------------------------- the fuse (pure)


def test_better_rounds_are_kept_and_become_the_best():
    got, fuse = decisions([0.5, 0.6, 0.58, 0.7])
    assert got == [KEPT, KEPT, NOT_KEPT, KEPT]
    assert (fuse.best, fuse.best_round, fuse.bad_streak) == (0.7, 3, 0)


def test_three_bad_rounds_in_a_row_roll_back_to_the_best_and_stop():
    got, fuse = decisions([0.8, 0.9, 0.5, 0.4, 0.3, 0.95])
    assert got == [KEPT, KEPT, NOT_KEPT, NOT_KEPT, ROLLED_BACK]  # the 0.95 is never reached
    assert (fuse.best, fuse.best_round, fuse.bad_streak) == (0.9, 1, 3)
    with pytest.raises(RuntimeError, match="tripped"):
        fuse.observe(1.0)


def test_a_round_within_the_tolerance_breaks_the_streak():
    # floor = 0.9 - 0.05 * 0.9 = 0.855: 0.86 is not bad, so the bad rounds are never 3 in a row
    got, _ = decisions([0.9, 0.5, 0.5, 0.86, 0.5, 0.5, 0.86])
    assert got == [KEPT] + [NOT_KEPT] * 6
    assert decisions([0.9, 0.5, 0.5, 0.5], patience=2)[0] == [KEPT, NOT_KEPT, ROLLED_BACK]


def test_ties_are_not_kept_and_not_bad():
    got, fuse = decisions([0.5, 0.5, 0.5, 0.5, 0.5])
    assert got == [KEPT] + [NOT_KEPT] * 4
    assert (fuse.best_round, fuse.bad_streak) == (0, 0)


def test_a_first_round_worse_than_the_start_keeps_the_start():
    got, fuse = decisions([0.8, 0.3, 0.2, 0.1])
    assert got == [KEPT, NOT_KEPT, NOT_KEPT, ROLLED_BACK]
    assert (fuse.best, fuse.best_round) == (0.8, 0)


def test_tolerance_is_relative_to_the_magnitude_of_negative_scores_too():
    fuse = Fuse(patience=1, tolerance=0.1)
    fuse.observe(-200.0)
    assert fuse.floor() == pytest.approx(-220.0)
    assert fuse.observe(-215.0).decision is NOT_KEPT  # within 10% of |-200|
    assert fuse.observe(-230.0).decision is ROLLED_BACK


def test_nan_is_a_bad_round_and_a_diverged_learner_trips_at_once():
    assert decisions([0.5, math.nan], patience=1)[0] == [KEPT, ROLLED_BACK]
    fuse = Fuse(patience=3)
    fuse.observe(0.5)
    v = fuse.fail()
    assert v.stop and math.isnan(v.metric) and (v.best, v.best_round) == (0.5, 0)


def test_bad_settings_are_refused():
    for patience, tolerance in ((0, 0.05), (3, 1.0), (3, -0.1)):
        with pytest.raises(ValueError):
            Fuse(patience, tolerance)
    with pytest.raises(ValueError, match="finite"):
        Fuse().observe(math.nan)
    with pytest.raises(ConfigError, match="tolerance"):
        AdaptConfig(tolerance=2)
    with pytest.raises(ConfigError, match="metric"):
        AdaptConfig(metric="reward")


def test_sim2real_argument_and_eval_seeds():
    assert parse_sim2real("none") is None and parse_sim2real("go1_real") == "go1_real"
    assert parse_sim2real("{extends: go1_real, domain_randomization: {friction: [0.2, 0.4]}}") == {
        "extends": "go1_real", "domain_randomization": {"friction": [0.2, 0.4]}}
    with pytest.raises(ConfigError, match="inline mapping"):
        parse_sim2real("{extends: go1_real")
    cfg = load_config(POINT_REACH_ID, overrides=["num_envs=8", "seed=10"])
    check_seeds(cfg, AdaptConfig(eval_seed=18))
    with pytest.raises(ConfigError, match="overlap"):
        check_seeds(cfg, AdaptConfig(eval_seed=12))


def test_the_report_set_must_be_disjoint_from_the_selection_set_and_the_training_envs():
    cfg = load_config(POINT_REACH_ID, overrides=["num_envs=8", "seed=10"])  # rows: training 10..17
    check_seeds(cfg, AdaptConfig(eval_seed=18, report_seed=26))  # selection 18..25, report 26..33
    check_seeds(cfg, AdaptConfig(eval_seed=18, report_seed=2, eval_episodes=4))  # report 2..9
    with pytest.raises(ConfigError,
                       match=r"--report-seed 25: the report set's seeds 25..32 overlap the selection set's 18..25"):
        check_seeds(cfg, AdaptConfig(eval_seed=18, report_seed=25))
    with pytest.raises(ConfigError, match=r"--report-seed 3: the report set's seeds 3..10 overlap the training envs'"):
        check_seeds(cfg, AdaptConfig(eval_seed=18, report_seed=3))
    # the rows evaluate() builds: min(num_envs, episodes)
    with pytest.raises(ConfigError, match="overlap the selection set's"):
        check_seeds(cfg, AdaptConfig(eval_seed=18, report_seed=21, report_episodes=2))
    check_seeds(cfg, AdaptConfig(eval_seed=18, report_seed=21, eval_episodes=3, report_episodes=2))
    assert AdaptConfig(eval_episodes=32).report_count == 32 and AdaptConfig(report_episodes=8).report_count == 8


def test_a_shifted_profile_keeps_the_critic_inputs_of_the_run_unless_it_sets_them():
    trained = {"extends": "go1_real", "privileged_critic": True, "random_push": {"interval_s": [2.0, 5.0]}}
    wet = {"extends": "go1_real", "domain_randomization": {"friction": [0.2, 0.4]}}
    assert keep_privileged_critic(wet, trained) == {**wet, "privileged_critic": True}
    assert keep_privileged_critic("go1_real", trained) == {"extends": "go1_real", "privileged_critic": True}
    assert keep_privileged_critic({**wet, "privileged_critic": False}, trained) == {**wet, "privileged_critic": False}
    assert keep_privileged_critic(None, trained) is None  # the bare env stays bare
    assert keep_privileged_critic(wet, "go1_real") == wet  # the run's critic read no extras


# --------------------------------------------------------------------------- the CLI and real rounds


def run(argv):
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


def fingerprint(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def read_log(out):
    with open(out / "adapt_log.csv") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """A weak policy (640 steps) and a good one (6000 steps) on PointReach."""
    root = tmp_path_factory.mktemp("adapt")
    for name, steps in (("weak", "640"), ("good", "6000")):
        assert cli.main(["train", *TINY, "--total-steps", steps, "--out", str(root / name), "--seed", "3"]) == 0
    return root


@pytest.mark.parametrize("args, expected", [
    (["--out", "{src}"], "is the run being adapted"),
    (["--out", "{src}/sub"], "is inside the run being adapted"),
    (["--out", "{root}"], "already exists and is not empty"),
    (["--out", "{new}", "algo.bogus=1"], "unknown config key 'algo.bogus'"),
    (["--out", "{new}", "--bogus"], "unrecognized arguments: --bogus"),
    (["--out", "{new}", "--tolerance", "1.5"], "tolerance must be in [0, 1)"),
    (["--out", "{new}", "--eval-seed", "3"], "overlap the training envs'"),
    (["--out", "{new}", "--report-seed", "12350"], "overlap the selection set's 12345..12352"),
])
def test_cli_refuses_bad_input_before_writing(sources, tmp_path, capsys, args, expected):
    src = sources / "weak"
    before = fingerprint(src)
    argv = [a.format(src=src, root=sources, new=tmp_path / "new") for a in args]
    assert run(["adapt", str(src), "--sim2real", "none", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("unilab adapt: ") and expected in err and len(err.splitlines()) == 1, err
    assert fingerprint(src) == before and not (tmp_path / "new").exists() and not (src / "sub").exists()


@pytest.mark.parametrize("args, expected", [
    (["{tmp}/missing", "--sim2real", "none"], "does not exist"),
    (["{src}", "--sim2real", "go1_real"], "is for UniLab/Go1Joystick-v0"),
    (["{src}", "--sim2real", "{{extends: go1_real"], "not a valid inline mapping"),
    (["{src}"], "required: --sim2real"),
    (["{src}", "--sim2real", "none", "--metric", "tracking"], "this task reports no tracking"),  # known after round 0
])
def test_cli_refuses_a_missing_run_or_a_bad_profile(sources, tmp_path, capsys, args, expected):
    argv = [a.format(src=sources / "weak", tmp=tmp_path) for a in args]
    assert run(["adapt", *argv, "--out", str(tmp_path / "new")]) == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_adaptation_improves_a_weak_policy_and_writes_log_curve_and_best_run(sources, tmp_path, capsys):
    src, out = sources / "weak", tmp_path / "adapted"
    before = fingerprint(src)
    assert run(["adapt", str(src), "--sim2real", "none", "--out", str(out), "--rounds", "3",
                "--steps-per-round", "2048", "--eval-episodes", "64", "--no-progress", "log.tensorboard=false"]) == 0
    text = capsys.readouterr().out
    rows = read_log(out)
    assert [int(r["round"]) for r in rows] == [0, 1, 2, 3] and rows[0]["metric_name"] == "success"
    assert [int(r["steps"]) for r in rows] == [0, 2048, 4096, 6144]
    start, best = float(rows[0]["metric"]), float(rows[-1]["best"])
    assert best > start + 0.3, rows
    assert rows[0]["decision"] == "kept" and "rolled back" not in {r["decision"] for r in rows}
    assert (out / "adapt_curve.png").stat().st_size > 0 and f"best policy: {out / 'best'}" in text
    assert fingerprint(src) == before  # the source run is only read
    # the kept policy is the one that scored best: evaluated again, it scores the logged best
    best_round = int(rows[-1]["best_round"])
    assert float(rows[best_round]["metric"]) == best
    again = evaluate(out / "best", episodes=64, seed=AdaptConfig().eval_seed, progress=False)
    assert score(again, "success") == pytest.approx(best, abs=1e-6)
    assert run(["eval", str(out / "best"), "--episodes", "64"]) == 0
    assert f"success {best:.1%}" in capsys.readouterr().out
    assert run(["export", str(out / "best"), "--out", str(tmp_path / "p.onnx")]) == 0
    check_report_set(rows, text, src, out, best_round)


def check_report_set(rows, text, src, out, best_round):
    """The source and the kept policy were scored on a second set of episodes, disjoint from the one that
    chose the round (seeds in the log and printed), and those numbers are what evaluating them there gives."""
    select, report = AdaptConfig().eval_seed, AdaptConfig().report_seed
    assert {r["eval_seed"] for r in rows} == {str(select)} and {r["eval_episodes"] for r in rows} == {"64"}
    scored = [r for r in rows if r["report_seed"]]
    assert [int(r["round"]) for r in scored] == sorted({0, best_round})
    assert {r["report_seed"] for r in scored} == {str(report)} and {r["report_episodes"] for r in scored} == {"64"}
    assert not set(range(select, select + 8)) & set(range(report, report + 8))  # 8 eval env rows each
    assert all(r["report_metric"] == "" for r in rows if r not in scored)
    assert f"selection set, seed {select}" in text and f"report set, seed {report}" in text
    assert f"report set (64 episodes from seed {report}, not used to choose), before (the source)" in text
    assert f"after (best/, round {best_round})" in text
    before, after = rows[0], rows[best_round]
    assert (f"on the report set (64 episodes from seed {report}, disjoint from the selection set's): success score "
            f"{float(before['report_metric']):.1%} -> {float(after['report_metric']):.1%}") in text
    # the report set's numbers are what evaluating there gives: after = best/, before = the source
    again = evaluate(out / "best", episodes=64, seed=report, progress=False)
    assert score(again, "success") == pytest.approx(float(after["report_metric"]), abs=1e-6)
    source = evaluate(src, episodes=64, seed=report, progress=False, sim2real=None)
    assert score(source, "success") == pytest.approx(float(before["report_metric"]), abs=1e-6)
    # they differ from the selection set's scores of the same weights: other episodes
    assert (before["report_metric"], after["report_metric"]) != (before["metric"], after["metric"])


def test_the_same_rounds_without_learning_do_not_improve(sources, tmp_path):
    """The control of the test above: the same rounds at learning rate 1e-9 (fixed) cannot gain what it gained."""
    src, out = sources / "weak", tmp_path / "control"
    assert run(["adapt", str(src), "--sim2real", "none", "--out", str(out), "--rounds", "3",
                "--steps-per-round", "2048", "--eval-episodes", "64", "--no-progress", "log.tensorboard=false",
                "algo.learning_rate=1e-9", "algo.schedule=fixed"]) == 0
    rows = read_log(out)
    start, best = float(rows[0]["metric"]), float(rows[-1]["best"])
    assert best < start + 0.1, rows


def test_a_linear_schedule_anneals_once_over_all_rounds(sources, tmp_path):
    """The rounds are one run cut in pieces: a linear learning rate falls from the configured rate to ~0
    over the whole plan; it does not restart its ramp each round (round 2 starting above round 1's end)."""
    src, out = sources / "weak", tmp_path / "linear"
    assert run(["adapt", str(src), "--sim2real", "none", "--out", str(out), "--rounds", "2",
                "--steps-per-round", "512", "--eval-episodes", "8", "--no-progress", "log.tensorboard=false",
                "algo.learning_rate=1e-3", "algo.schedule=linear"]) == 0
    with open(out / "train" / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    steps = [int(r["step"]) for r in rows]
    lrs = [float(r["learning_rate"]) for r in rows]
    assert steps == [128 * (i + 1) for i in range(8)], steps  # 8 envs x 16 steps an iteration, 4 a round
    # iteration i (0-based) updates at progress i / 8 of the whole plan
    assert lrs == pytest.approx([1e-3 * (1 - i / 8) for i in range(8)], rel=1e-6), lrs


def test_a_harmful_setting_trips_the_fuse_and_the_best_policy_is_restored(sources, tmp_path, capsys):
    src, out = sources / "good", tmp_path / "harmed"
    assert run(["adapt", str(src), "--sim2real", "none", "--out", str(out), "--rounds", "6",
                "--steps-per-round", "1024", "--eval-episodes", "64", "--no-progress", "log.tensorboard=false",
                "algo.learning_rate=0.5", "algo.schedule=fixed"]) == 0
    assert "the fuse rolled back" in capsys.readouterr().out
    rows = read_log(out)
    assert [r["decision"] for r in rows] == ["kept", "not-kept", "not-kept", "rolled back"]
    assert [int(r["bad_streak"]) for r in rows] == [0, 1, 2, 3]
    assert all(r["best_round"] == "0" for r in rows) and float(rows[0]["metric"]) > 0.8
    # rolled back: best/ holds the source's weights (under the adaptation config) and scores the logged best
    kept = load_checkpoint(out / "best", CKPT_FORMAT, CKPT_VERSION)
    source = load_checkpoint(src, CKPT_FORMAT, CKPT_VERSION)
    for k, v in source["algo"]["policy"].items():
        torch.testing.assert_close(kept["algo"]["policy"][k], v, rtol=0, atol=0)
    assert kept["config"]["algo"]["learning_rate"] == 0.5 and kept["config"]["init_from"] == str(src)
    again = evaluate(out / "best", episodes=64, seed=AdaptConfig().eval_seed, progress=False)
    assert score(again, "success") == pytest.approx(float(rows[-1]["best"]), abs=1e-6)


def test_a_learner_that_diverges_trips_the_fuse_at_once(sources, tmp_path, capsys, monkeypatch):
    from trainers.ppo import runner
    from trainers.ppo.faults import TrainingFault

    def diverge(cfg, resume=None, **kwargs):
        raise TrainingFault("iteration 1: the PPO update made loss/policy NaN or inf")

    monkeypatch.setattr(runner, "train", diverge)
    out = tmp_path / "diverged"
    assert run(["adapt", str(sources / "weak"), "--sim2real", "none", "--out", str(out), "--eval-episodes", "16"]) == 0
    rows = read_log(out)
    assert [r["decision"] for r in rows] == ["kept", "rolled back"] and rows[1]["metric"] == "nan"
    assert "learner diverged" in rows[1]["note"] and "the fuse rolled back" in capsys.readouterr().out
