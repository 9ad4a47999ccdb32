"""Faults lose nothing (docs/faults.md): what a training run does when it is killed while it
writes a checkpoint, when the disk fills, when a checkpoint is truncated or corrupt, when the
learner goes NaN, and when many envs diverge at once.

Tiny runs: the PointReach stand-in (8 envs x 8 steps, 16-unit nets), Go1 for the physics.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID
from tests.trainers.test_cli_errors import one_error_line, run

from trainers.common.checkpoint import load_checkpoint
from trainers.common.logging import read_csv
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_GO1 = ROOT / "policies" / "go1_joystick"

#: a 4-iteration run (8 envs x 8 steps = 64 steps an iteration) saving at iteration 2 and at the end
TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--seed", "3", "--total-steps", "256", "--no-progress",
        "algo.num_steps=8", "algo.num_epochs=2", "algo.num_minibatches=2", "algo.schedule=fixed",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]",
        "log.plot=false", "log.tensorboard=false", "log.save_interval=2", "log.keep_every=0"]


def _checkpoint(path: Path) -> dict:
    return load_checkpoint(path, CKPT_FORMAT, CKPT_VERSION)


def _all_finite(ckpt: dict) -> bool:
    """Every tensor of the checkpoint's learner (networks, normalizers, optimizer) is finite."""
    def tensors(obj):
        if isinstance(obj, torch.Tensor):
            yield obj
        elif isinstance(obj, dict):
            for v in obj.values():
                yield from tensors(v)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                yield from tensors(v)
    return all(torch.isfinite(t).all() for t in tensors(ckpt["algo"]) if t.is_floating_point())


def _temp_files(folder: Path) -> list[str]:
    """atomic_write's temp files (``.checkpoint.<random>.pt``) left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _resume_finishes(out: Path, capsys) -> None:
    """``unilab train --resume out/checkpoint.pt`` ends at iteration 4 with a finite learner and one
    log row an iteration."""
    capsys.readouterr()
    assert run(["train", "--resume", str(out / "checkpoint.pt")]) == 0, capsys.readouterr().err
    ckpt = _checkpoint(out / "checkpoint.pt")
    assert ckpt["iteration"] == 4 and _all_finite(ckpt)
    assert read_csv(out / "progress.csv")["iteration"] == [1, 2, 3, 4]


# ---------------------------------------------------------------- killed while writing

#: a child ``unilab train`` whose second checkpoint write stops half-way: it writes a few bytes into
#: the temp file, touches the marker file argv[1] and sleeps until the test kills it (SIGKILL)
_STALLING_CHILD = textwrap.dedent("""
    import sys, time
    import torch
    from tests.trainers.standins import register_point_reach
    register_point_reach()
    real_save, calls = torch.save, [0]

    def stalling_save(obj, f):
        calls[0] += 1
        if calls[0] == 2:
            with open(f, "wb") as out:
                out.write(b"half a checkpoint")
            open(sys.argv[1], "w").close()
            time.sleep(600)
        real_save(obj, f)

    torch.save = stalling_save
    from trainers import cli
    sys.exit(cli.main(sys.argv[2:]))
""")


def test_sigkill_while_writing_keeps_the_previous_checkpoint_and_resume_finishes(tmp_path, capsys):
    out, marker = tmp_path / "run", tmp_path / "inside_the_write"
    env = {**os.environ, "UNILAB_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", _STALLING_CHILD, str(marker), "train", *TINY, "--out", str(out)],
                             cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not marker.exists():
            child.kill()
            pytest.fail(f"the child never reached its second checkpoint write: "
                        f"{child.communicate(timeout=30)[1].decode(errors='replace')[-2000:]}")
        child.send_signal(signal.SIGKILL)  # mid-write: the temp file holds half a checkpoint
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stderr.close()
    ckpt = _checkpoint(out / "checkpoint.pt")  # the write of iteration 2, untouched
    assert ckpt["iteration"] == 2 and _all_finite(ckpt)
    stale = _temp_files(out)  # no process was left to remove the half-written temp file: it is ignored
    assert len(stale) == 1 and stale[0].startswith(".checkpoint.") and stale[0].endswith(".pt"), stale
    _resume_finishes(out, capsys)


# ---------------------------------------------------------------- disk full

def _enospc(real_save):
    """torch.save as on a full disk: the OS refuses a write (``OSError`` ENOSPC)."""
    def save(obj, f):
        with open(f, "wb") as out:
            out.write(b"the first bytes")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(f))
    return save


def _dev_full(real_save):
    """torch.save into ``/dev/full``: what torch's own writer raises when the disk is full."""
    return lambda obj, f: real_save(obj, "/dev/full")


@pytest.mark.parametrize("failing, reason", [
    (_enospc, "(OSError: [Errno 28] No space left on device"),
    (_dev_full, "(torch.save failed as it does on a full disk: RuntimeError: ")],
                         ids=["oserror-enospc", "torch-writer-dev-full"])
def test_disk_full_while_writing_is_one_error_and_keeps_the_previous_checkpoint(failing, reason, tmp_path,
                                                                                 monkeypatch, capsys):
    if failing is _dev_full and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    out, real_save, calls = tmp_path / "run", torch.save, [0]
    broken = failing(real_save)

    def second_write_fails(obj, f):
        calls[0] += 1
        return (broken if calls[0] == 2 else real_save)(obj, f)

    monkeypatch.setattr(torch, "save", second_write_fails)
    assert run(["train", *TINY, "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"unilab train: could not write the checkpoint of iteration 4 to {out} ("), line
    assert reason in line and "MB free there" in line, line
    assert f"training stopped: {out / 'checkpoint.pt'} still holds iteration 2" in line, line
    assert f"Free disk space (or fix the folder's permissions), then resume with: unilab train --resume " \
           f"{out / 'checkpoint.pt'}" in line, line
    monkeypatch.undo()
    ckpt = _checkpoint(out / "checkpoint.pt")
    assert ckpt["iteration"] == 2 and _all_finite(ckpt)
    assert _temp_files(out) == []  # the failed write cleaned up after itself
    _resume_finishes(out, capsys)


class _FillingDisk(io.StringIO):
    """``progress.csv`` on a disk that fills after two rows: the third flush fails with ENOSPC, and so
    does the close (its buffered row still cannot be written), as a real file on a full disk does."""

    def __init__(self):
        super().__init__()
        self.flushes = 0

    def flush(self):
        self.flushes += 1
        if self.flushes >= 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def close(self):
        if self.flushes >= 3:
            super().close()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        super().close()


def test_disk_full_while_logging_is_one_error_and_keeps_the_checkpoint(tmp_path, monkeypatch, capsys):
    import trainers.common.logging

    out = tmp_path / "run"
    monkeypatch.setattr(trainers.common.logging, "open", lambda *args, **kwargs: _FillingDisk(), raising=False)
    assert run(["train", *TINY, "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"unilab train: could not write the progress.csv row of iteration 3 to {out} (OSError: "
                           f"[Errno 28] No space left on device; "), line
    assert f"{out / 'checkpoint.pt'} still holds iteration 2" in line and "then resume with" in line, line
    monkeypatch.undo()
    assert _checkpoint(out / "checkpoint.pt")["iteration"] == 2


# ---------------------------------------------------------------- corrupt files

@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished 2-iteration run folder (checkpoint.pt, config.yaml, progress.csv)."""
    out = tmp_path_factory.mktemp("faults") / "run"
    assert run(["train", *TINY, "--total-steps", "128", "--out", str(out)]) == 0
    return out


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    path.write_bytes({"truncated": data[: len(data) // 2], "garbage": b"not a checkpoint at all",
                      "empty": b""}[how])


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty"])
@pytest.mark.parametrize("command", ["resume-file", "resume-folder", "resume-with-task", "eval", "export"])
def test_a_corrupt_checkpoint_is_one_line_and_exit_2(finished_run, how, command, tmp_path, capsys):
    folder = tmp_path / "run"
    shutil.copytree(finished_run, folder)
    _damage(folder / "checkpoint.pt", how)
    before = sorted(p.name for p in folder.iterdir())
    argv = {"resume-file": ["train", "--resume", str(folder / "checkpoint.pt")],
            "resume-folder": ["train", "--resume", str(folder)],
            "resume-with-task": ["train", *TINY, "--resume", str(folder / "checkpoint.pt"),
                                 "--out", str(tmp_path / "new")],
            "eval": ["eval", str(folder), "--episodes", "1"],
            "export": ["export", str(folder)]}[command]
    capsys.readouterr()
    assert run(argv) == 2
    line = one_error_line(capsys)
    ckpt = folder / "checkpoint.pt"
    assert line.startswith(f"unilab {argv[0]}: checkpoint {ckpt} is corrupt or not a checkpoint"), line
    assert "use another checkpoint of the run" in line and "weights_only" not in line, line
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written into the run


@pytest.mark.skipif(not (SHIPPED_GO1 / "policy.onnx").exists(), reason="policies/go1_joystick is not shipped here")
@pytest.mark.parametrize("how", ["truncated", "garbage", "empty"])
def test_play_answers_a_corrupt_policy_in_one_line(how, tmp_path, capsys):
    folder = tmp_path / "policy"
    folder.mkdir()
    for name in ("policy.onnx", "deploy_spec.json"):
        shutil.copy(SHIPPED_GO1 / name, folder / name)
    _damage(folder / "policy.onnx", how)
    assert run(["play", str(folder), "--headless", "--episodes", "1", "--no-progress"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("unilab play: the policy is corrupt or not an ONNX model (") and str(folder) in line, line
    assert "export it again with `unilab export RUN`" in line
    _damage(folder / "deploy_spec.json", "truncated")  # and a truncated deploy spec
    assert run(["play", str(folder), "--headless", "--episodes", "1", "--no-progress"]) == 2
    assert "deploy_spec.json is not valid JSON" in one_error_line(capsys)


# ---------------------------------------------------------------- a NaN learner

def test_a_nonfinite_learner_stops_naming_the_iteration_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch,
                                                                                             capsys):
    """An absurd learning rate from the third update on: the run stops there, checkpoint.pt stays at 2."""
    from trainers.ppo.algorithm import PPO

    real_update, calls = PPO.update, [0]

    def update(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == 3:
            self.set_learning_rate(1e30)  # schedule=fixed keeps it; Adam's steps overflow float32
        return real_update(self, *args, **kwargs)

    monkeypatch.setattr(PPO, "update", update)
    out = tmp_path / "run"
    assert run(["train", *TINY, "log.save_interval=1", "--out", str(out)]) == 2
    line = one_error_line(capsys)
    ckpt_path = out / "checkpoint.pt"
    assert line.startswith("unilab train: iteration 3: the PPO update made loss/"), line
    assert "policy parameters NaN or inf; training stopped without saving that state: " \
           f"{ckpt_path} still holds iteration 2. Lower algo.learning_rate" in line, line
    assert f"unilab train --init-from {ckpt_path} --out NEW_RUN algo.learning_rate=..." in line, line
    monkeypatch.undo()
    ckpt = _checkpoint(ckpt_path)
    assert ckpt["iteration"] == 2 and _all_finite(ckpt)
    assert read_csv(out / "progress.csv")["iteration"] == [1, 2]  # the NaN iteration is not logged
    # what the message says to do works: a new run from the good weights
    assert run(["train", *TINY, "--total-steps", "128", "--init-from", str(ckpt_path), "--out",
                str(tmp_path / "again")]) == 0


def test_nonfinite_names_what_went_bad(tmp_path):
    from trainers.ppo.config import load_config
    from trainers.ppo.envs import EnvDims
    from trainers.ppo.runner import build_learner

    cfg = load_config(POINT_REACH_ID, overrides=["policy.actor_hidden=[8]", "policy.critic_hidden=[8]"])
    algo = build_learner(EnvDims(obs=4, act=2, privileged=7), cfg, torch.device("cpu"))
    finite = {"loss/value": 1.0, "loss/policy": -0.1, "learning_rate": 1e-3, "perf/update_s": float("nan")}
    assert algo.nonfinite(finite) == []  # only loss/* and the learner's tensors count
    with torch.no_grad():
        list(algo.policy.parameters())[-1].fill_(float("nan"))
    algo.critic_normalizer.var[0] = float("inf")
    assert algo.nonfinite({**finite, "loss/value": float("inf"), "loss/kl": float("nan")}) == [
        "loss/kl", "loss/value", "policy parameters", "critic normalizer"]


# ---------------------------------------------------------------- many envs diverge at once

def test_many_envs_diverging_at_once_keeps_training_and_logs_the_count(tmp_path, monkeypatch):
    import unilab_envs  # noqa: F401  registers UniLab/*
    from trainers.ppo import train
    from trainers.ppo.config import TrainConfig, from_dict

    monkeypatch.chdir(tmp_path)  # MuJoCo appends its instability warnings to ./MUJOCO_LOG.TXT
    rows = [0, 2, 3, 5, 7]  # 5 of 8 envs

    def blow_up_after_the_first_iteration(runner, stats):
        if runner.iteration == 1:
            runner.env.unwrapped.batch.bind("qvel")[rows, :] = 1e12  # MuJoCo flags these simulations unstable
        return False

    cfg = from_dict(TrainConfig, {
        "task": "UniLab/Go1Joystick-v0", "num_envs": 8, "total_steps": 8 * 8 * 4, "seed": 5,
        "out": str(tmp_path / "run"),
        "algo": {"num_steps": 8, "num_epochs": 1, "num_minibatches": 2},
        "policy": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]},
        "log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 2}})
    result = train(cfg, callback=blow_up_after_the_first_iteration)
    assert result.iterations == 4 and not result.interrupted
    # the count is a progress.csv column from the first row on (0 before the blow-up), and in the stats
    assert read_csv(tmp_path / "run" / "progress.csv")["env/diverged"] == [0.0, 5.0, 0.0, 0.0]
    assert result.stats["env/diverged"] == 0.0
    ckpt = _checkpoint(result.checkpoint)
    assert _all_finite(ckpt) and ckpt["iteration"] == 4
