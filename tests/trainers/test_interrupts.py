"""Interrupts are safe wherever the output goes (issue 54).

A real ``unilab train`` subprocess writes its stdout and stderr into one pipe (as under
``2>&1 | tee log``); the pipe's reader (a ``cat``) is killed, then the run gets SIGINT,
SIGTERM or SIGHUP. Each time, for the bundled PPO and for SB3: the run finishes its
iteration (env step), saves its checkpoint, writes the learning curve, exits with
128 + the signal, and what it printed after the pipe died (the resume command included) is
in ``<run>/train.log``, with no traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.trainers.conftest import POINT_REACH_ID

ROOT = Path(__file__).resolve().parents[2]
CHILD = ("import sys; from tests.trainers.standins import register_point_reach; register_point_reach(); "
         "from trainers.cli import main; sys.exit(main(sys.argv[1:]))")
PPO = ["--task", POINT_REACH_ID, "--num-envs", "4", "--total-steps", "1e9", "--device", "cpu", "algo.num_steps=16",
       "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false"]
SB3 = ["--algo", "sb3-ppo", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "1e8", "--device", "cpu",
       "algo_kwargs.n_steps=16", "algo_kwargs.batch_size=64", "algo_kwargs.n_epochs=1",
       "algo_kwargs.policy_kwargs={net_arch: [16]}", "checkpoint_every=256"]
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _as_from_a_terminal() -> None:
    """The child's stop signals at their defaults, as a run started from a terminal has them, even when
    the tests themselves run under ``nohup`` (SIGHUP ignored, which a run keeps on purpose) or as a
    background job of a script (SIGINT ignored)."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def _train_into_a_dead_pipe(out: Path, argv: list[str], started, signum: int) -> tuple[int, str]:
    """Run ``unilab train`` with stdout and stderr into a pipe read by ``cat``; once ``started(out)``,
    kill ``cat`` (the pipe now has no reader), send ``signum``; the exit status and ``train.log``."""
    read_end, write_end = os.pipe()
    reader = subprocess.Popen(["cat"], stdin=read_end, stdout=subprocess.DEVNULL)
    os.close(read_end)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "UNILAB_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, "train", *argv, "--out", str(out)], cwd=ROOT, env=env,
                             stdout=write_end, stderr=write_end, preexec_fn=_as_from_a_terminal)
    os.close(write_end)
    try:
        deadline = time.monotonic() + 120
        while not started(out) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert child.poll() is None and started(out), f"the run ended or never started (status {child.poll()})"
        reader.kill()
        reader.wait(timeout=10)
        time.sleep(0.5)  # a progress refresh or two into the dead pipe
        child.send_signal(signum)
        status = child.wait(timeout=120)
    finally:
        for proc in (child, reader):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    log = out / "train.log"
    return status, log.read_text() if log.exists() else ""


def _ppo_started(out: Path) -> bool:
    csv = out / "progress.csv"
    return csv.exists() and len(csv.read_text().splitlines()) >= 3  # the header and two iterations


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_ppo_run_whose_pipe_died_saves_on_every_signal(tmp_path, signum):
    from trainers.common.checkpoint import load_checkpoint
    from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

    out = tmp_path / "run"
    status, log = _train_into_a_dead_pipe(out, PPO, _ppo_started, signum)
    assert status == 128 + signum, log
    assert "Traceback" not in log and "closed (BrokenPipeError" in log, log
    name = signal.Signals(signum).name
    assert f"[unilab] {name}: finishing iteration" in log, log
    ckpt = load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    rows = len((out / "progress.csv").read_text().splitlines()) - 1
    assert ckpt["iteration"] == rows >= 2 and ckpt["env_state"] is not None  # the iteration it was in, finished
    assert f"stopped at iteration {ckpt['iteration']}" in log
    assert f"Resume with: unilab train --resume {out / 'checkpoint.pt'}" in log
    assert (out / "learning_curve.png").stat().st_size > 0
    assert f"checkpoint: {out / 'checkpoint.pt'}" in log  # the closing lines on stdout, after it died


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_sb3_run_whose_pipe_died_saves_on_every_signal(tmp_path, signum):
    out = tmp_path / "run"
    status, log = _train_into_a_dead_pipe(out, SB3, lambda o: (o / "checkpoint.zip").exists(), signum)
    assert status == 128 + signum, log
    assert "Traceback" not in log and "closed (BrokenPipeError" in log, log
    assert f"[unilab] {signal.Signals(signum).name}: stopping after this env step" in log, log
    assert "[unilab] stopped at" in log and f"--resume {out}" in log, log
    assert (out / "model.zip").exists() and (out / "model_vecnormalize.pkl").exists()
    assert (out / "learning_curve.png").stat().st_size > 0
    assert f"model: {out / 'model.zip'}" in log


def test_a_finished_run_whose_stdout_pipe_died_exits_0_without_a_traceback(tmp_path):
    """``unilab train ... | tee log`` (stdout only) with tee gone: the closing lines land in train.log, stderr
    (here a file) stays clean, and the exit status is 0, not a ``BrokenPipeError`` at the last print."""
    out, err_path = tmp_path / "run", tmp_path / "stderr.txt"
    read_end, write_end = os.pipe()
    reader = subprocess.Popen(["cat"], stdin=read_end, stdout=subprocess.DEVNULL)
    os.close(read_end)
    reader.kill()  # gone before the run writes a line
    reader.wait(timeout=10)
    argv = [a if a != "1e9" else "256" for a in PPO]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "UNILAB_NUM_THREADS": "1"}
    with open(err_path, "w") as err:
        child = subprocess.Popen([sys.executable, "-c", CHILD, "train", *argv, "--no-progress", "--out", str(out)],
                                 cwd=ROOT, env=env, stdout=write_end, stderr=err)
        os.close(write_end)
        try:
            status = child.wait(timeout=180)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    stderr, log = err_path.read_text(), (out / "train.log").read_text()
    assert status == 0 and "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert "stdout was closed (BrokenPipeError" in log and f"checkpoint: {out / 'checkpoint.pt'}" in log, log
    assert (out / "checkpoint.pt").exists() and (out / "learning_curve.png").exists()
