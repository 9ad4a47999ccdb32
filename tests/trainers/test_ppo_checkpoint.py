"""Checkpoints: atomic writes, exact resume, clear errors for corrupt or mismatched files."""

import os

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers.common.checkpoint import CheckpointError, atomic_save, load_checkpoint
from trainers.common.logging import read_csv
from trainers.ppo import train
from trainers.ppo.config import TrainConfig, deep_merge, from_dict
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION


def tiny_cfg(out, **over) -> TrainConfig:
    base = {"task": POINT_REACH_ID, "num_envs": 8, "total_steps": 8 * 16 * 4, "seed": 3, "out": str(out),
            "algo": {"num_steps": 16, "num_epochs": 2, "num_minibatches": 2},
            "policy": {"actor_hidden": [16, 16], "critic_hidden": [16, 16]},
            "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 2, "keep_every": 2}}
    return from_dict(TrainConfig, deep_merge(base, over))


def flat_leaves(tree, prefix: str = "") -> dict:
    """Every leaf of nested dicts / lists / tuples, keyed by its ``/``-joined path."""
    if isinstance(tree, dict):
        return {k: v for key, sub in tree.items() for k, v in flat_leaves(sub, f"{prefix}/{key}").items()}
    if isinstance(tree, (list, tuple)):
        return {k: v for i, sub in enumerate(tree) for k, v in flat_leaves(sub, f"{prefix}/{i}").items()}
    return {prefix: tree}


def _flat_state(path):
    """The tensors and numbers of a checkpoint's learner, counters, RNG, env and collector state."""
    ckpt = load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION)
    leaves = flat_leaves({k: ckpt[k] for k in ("algo", "iteration", "env_steps", "rng", "env_state", "collector")})
    return {k: v for k, v in leaves.items()
            if isinstance(v, torch.Tensor) or (isinstance(v, (int, float)) and not isinstance(v, bool))}


#: a learned state estimator (trainers.ppo.estimator) of PointReach's privileged goal offset
ESTIMATOR = {"policy": {"estimator": {"targets": ["offset"], "hidden": [16]}}}
#: the same with a warm-up of 3 iterations: the resume at 2 crosses its end (the actor held at 3, learning at 4)
WARMUP = {"policy": {"estimator": {"targets": ["offset"], "hidden": [16], "warmup_iterations": 3}}}
#: a critic warm-up of 3 iterations (no estimator): the resume at 2 crosses its end too
CRITIC_WARMUP = {"algo": {"num_steps": 16, "num_epochs": 2, "num_minibatches": 2, "critic_warmup_iterations": 3}}
EXTRA = {False: {}, True: ESTIMATOR, "warmup": WARMUP, "critic warmup": CRITIC_WARMUP}


@pytest.mark.parametrize("mode, overlap, estimator", [("SameStep", False, False), ("NextStep", False, False),
                                                      ("SameStep", True, False), ("NextStep", True, False),
                                                      ("SameStep", False, True), ("NextStep", True, True),
                                                      ("SameStep", False, "warmup"), ("NextStep", False, "critic warmup")])
def test_resume_equals_uninterrupted_run(tmp_path, mode, overlap, estimator):
    extra, named = EXTRA[estimator], estimator in (True, "warmup")
    env_kwargs = {"env_kwargs": {"autoreset_mode": mode, "max_episode_steps": 10, **({"named_groups": True} if named else {})},
                  "overlap": overlap, **extra}
    full = train(tiny_cfg(tmp_path / "full", **env_kwargs))
    assert full.iterations == 4 and (tmp_path / "full" / "checkpoint_2.pt").exists()
    resumed = train(tiny_cfg(tmp_path / "resumed", **env_kwargs), resume=tmp_path / "full" / "checkpoint_2.pt")
    assert resumed.iterations == 4 and resumed.env_steps == full.env_steps
    a, b = _flat_state(full.checkpoint), _flat_state(resumed.checkpoint)
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], torch.Tensor):
            assert torch.equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k
    # the logged losses of iterations 3 and 4 match too
    la, lb = read_csv(tmp_path / "full" / "progress.csv"), read_csv(tmp_path / "resumed" / "progress.csv")
    assert la["loss/value"][2:] == lb["loss/value"]
    if named:  # its weights and their Adam moments are saved, and its logged error goes on as straight
        assert any(k.startswith("/algo/policy/actor.estimator.") for k in a)
        assert la["loss/estimator"][2:] == lb["loss/estimator"]
        assert la["estimator/rmse_offset_0"][2:] == lb["estimator/rmse_offset_0"]
    if estimator == "warmup":
        assert la["estimator/warmup"] == [1.0, 1.0, 1.0, 0.0] and lb["estimator/warmup"] == [1.0, 0.0]
        assert la["loss/policy"][2:] == lb["loss/policy"]
    if estimator == "critic warmup":
        assert la["policy/held"] == [1.0, 1.0, 1.0, 0.0] and lb["policy/held"] == [1.0, 0.0]
        assert la["loss/policy"][2:] == lb["loss/policy"]


def test_resume_rewrites_log_after_the_checkpoint(tmp_path):
    cfg = tiny_cfg(tmp_path)
    train(cfg)
    train(cfg, resume=tmp_path / "checkpoint_2.pt")
    assert read_csv(tmp_path / "progress.csv")["iteration"] == [1, 2, 3, 4]


def test_atomic_save_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "ck.pt"
    atomic_save({"x": torch.ones(3)}, path)

    def broken_save(obj, f):
        with open(f, "wb") as out:
            out.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(KeyboardInterrupt):
        atomic_save({"x": torch.zeros(3)}, path)
    monkeypatch.undo()
    assert torch.equal(torch.load(path, weights_only=True)["x"], torch.ones(3))
    assert os.listdir(tmp_path) == ["ck.pt"]


def test_corrupt_and_foreign_checkpoints_get_clear_errors(tmp_path):
    res = train(tiny_cfg(tmp_path / "run", total_steps=128))
    good = res.checkpoint.read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good[: len(good) // 2])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    foreign = tmp_path / "foreign.pt"
    torch.save({"model": torch.zeros(2)}, foreign)
    for path in (truncated, garbage):
        with pytest.raises(CheckpointError, match="corrupt or not a checkpoint"):
            train(tiny_cfg(tmp_path / "x"), resume=path)
    with pytest.raises(CheckpointError, match="not a unilab-ppo checkpoint"):
        train(tiny_cfg(tmp_path / "x"), resume=foreign)
    with pytest.raises(CheckpointError, match="does not exist"):
        train(tiny_cfg(tmp_path / "x"), resume=tmp_path / "missing.pt")


def test_mismatched_checkpoint_gets_clear_error(tmp_path):
    res = train(tiny_cfg(tmp_path / "run", total_steps=128))
    # the critic input is the 4 policy floats followed by the 3 privileged ones
    with pytest.raises(CheckpointError, match=r"does not match this env \(privileged: checkpoint 7 vs env None\)"):
        train(tiny_cfg(tmp_path / "x", env_kwargs={"privileged": False}), resume=res.checkpoint)
    with pytest.raises(CheckpointError, match="does not fit this run's networks"):
        train(tiny_cfg(tmp_path / "y", policy={"actor_hidden": [8]}), resume=res.checkpoint)


def test_overlap_runs_check_their_envs(tmp_path):
    from tests.trainers.conftest import PointReach

    from trainers.ppo.runner import Runner

    with pytest.raises(ValueError, match="num_envs >= 2"):
        Runner(tiny_cfg(tmp_path, num_envs=1, overlap=True))
    with pytest.raises(ValueError, match="two envs"):
        Runner(tiny_cfg(tmp_path, overlap=True), env=PointReach(8))
    with pytest.raises(ValueError, match="16 envs but config.num_envs is 8"):
        Runner(tiny_cfg(tmp_path, overlap=True), env=[PointReach(8), PointReach(8)])
    runner = Runner(tiny_cfg(tmp_path, overlap=True))
    try:
        assert [e.num_envs for e in runner.envs] == [4, 4]
        with pytest.raises(AttributeError, match="runner.envs"):
            runner.env  # noqa: B018
    finally:
        runner.close()


def test_keep_every_keeps_its_iterations_whatever_the_save_interval(tmp_path):
    """``log.keep_every`` is a save point of its own: a 3 with saves every 2 iterations keeps
    iteration 3 (not only the iterations where both line up), and each kept file is that
    iteration's checkpoint."""
    cfg = tiny_cfg(tmp_path, total_steps=8 * 16 * 6, log={"save_interval": 2, "keep_every": 3, "save_minutes": 0})
    train(cfg)
    kept = sorted(p.name for p in tmp_path.glob("checkpoint_*.pt"))
    assert kept == ["checkpoint_3.pt", "checkpoint_6.pt"]
    assert load_checkpoint(tmp_path / "checkpoint_3.pt", CKPT_FORMAT, CKPT_VERSION)["iteration"] == 3


def test_resume_with_more_steps_says_how_it_stretches_a_linear_schedule(tmp_path, capsys):
    lr = 1.0e-3
    linear = {"algo": {"schedule": "linear", "learning_rate": lr}}
    train(tiny_cfg(tmp_path / "run", **linear))  # 4 iterations, checkpoint_2.pt kept
    capsys.readouterr()
    train(tiny_cfg(tmp_path / "same", **linear), resume=tmp_path / "run" / "checkpoint_2.pt")
    assert "linear learning-rate schedule" not in capsys.readouterr().err
    longer = tiny_cfg(tmp_path / "longer", total_steps=8 * 16 * 8, **linear)  # 8 iterations
    train(longer, resume=tmp_path / "run" / "checkpoint_2.pt")
    err = capsys.readouterr().err
    assert "total_steps 512 -> 1024" in err and "at iteration 2 the rate is 0.00075 (it would have been 0.0005)" in err
    rates = read_csv(tmp_path / "longer" / "progress.csv")["learning_rate"]
    assert rates[0] == pytest.approx(lr * (1 - 2 / 8))  # iteration 3 updates at progress 2/8 of the new total
