"""One run lifecycle for every learner (trainers.common.lifecycle): the same tests, parametrized over PPO,
SAC, distillation and the SB3 adapter.

- A real ``unilab train`` / ``unilab distill`` subprocess writes its stdout and stderr into one pipe (as under
  ``2>&1 | tee log``); the pipe's reader is killed, then the run gets SIGINT, SIGTERM or SIGHUP. Each time the
  run finishes its step, saves, writes the curve, exits with 128 + the signal, and what it printed after the pipe
  died (the ``--resume OUT`` command included; a distillation's ``--init-from OUT``) is in ``<run>/train.log``,
  with no traceback.
- A run whose stdout reader is gone before it starts finishes with status 0; its closing lines go to the log.
- A second run into a finished run's folder is refused in one line; ``--overwrite`` moves the old run aside.
- Every run folder names its kind (``run.yaml``), and eval asks the learner registry, not the files.

The bad ``--out`` test over the same learners (and export, ship) is ``test_bad_out.py``.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.trainers.conftest import POINT_REACH_ID
from trainers import cli
from trainers.common.runs import find_run, read_run_kind

ROOT = Path(__file__).resolve().parents[2]
CHILD = ("import sys; from tests.trainers.standins import register_point_reach; register_point_reach(); "
         "from trainers.cli import main; sys.exit(main(sys.argv[1:]))")
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
FLAT = "UniLab/Go1Joystick-v0"


def _rows(out: Path, at_least: int) -> bool:
    csv = out / "progress.csv"
    return csv.exists() and len(csv.read_text().splitlines()) >= at_least


# each learner: the command line (without --out and the step count), the file a stop saves, when it has started
LEARNERS = {
    "ppo": (["train", "--task", POINT_REACH_ID, "--num-envs", "4", "--device", "cpu", "algo.num_steps=16",
             "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false"],
            "checkpoint.pt", lambda out: _rows(out, 3)),
    "sac": (["train", "--algo", "sac", "--task", POINT_REACH_ID, "--num-envs", "4", "--device", "cpu",
             "algo.learning_starts=64", "algo.batch_size=32", "algo.buffer_size=2000", "nets.actor_hidden=[16,16]",
             "nets.critic_hidden=[16,16]", "log.every_steps=64", "log.tensorboard=false", "torch_threads=1"],
            "checkpoint.pt", lambda out: _rows(out, 3)),
    "distill": (["distill", "--teacher", "policies/go1_joystick", "--task", FLAT, "--num-envs", "4", "--device", "cpu",
                 "algo.num_steps=8", "log.tensorboard=false"],
                "checkpoint.pt", lambda out: _rows(out, 3)),
    "sb3": (["train", "--algo", "sb3-ppo", "--task", POINT_REACH_ID, "--num-envs", "8", "--device", "cpu",
             "algo_kwargs.n_steps=16", "algo_kwargs.batch_size=64", "algo_kwargs.n_epochs=1",
             "algo_kwargs.policy_kwargs={net_arch: [16]}", "checkpoint_every=256"],
            "model.zip", lambda out: (out / "checkpoint.zip").exists()),
}
KIND = {"ppo": "ppo", "sac": "sac", "distill": "distill", "sb3": "sb3"}


def _as_from_a_terminal() -> None:
    """The child's stop signals at their defaults, as a run started from a terminal has them, even when
    the tests themselves run under ``nohup`` (SIGHUP ignored, which a run keeps on purpose) or as a
    background job of a script (SIGINT ignored)."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def _child(argv: list[str], out: Path, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "UNILAB_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", CHILD, *argv, "--out", str(out)], cwd=ROOT, env=env,
                            preexec_fn=_as_from_a_terminal, **kwargs)


def _dead_pipe() -> tuple[subprocess.Popen, int]:
    """A pipe read by ``cat``: the reader and the write end."""
    read_end, write_end = os.pipe()
    reader = subprocess.Popen(["cat"], stdin=read_end, stdout=subprocess.DEVNULL)
    os.close(read_end)
    return reader, write_end


#: the default tier's pairs: every learner stopped by a real signal in a real process, every signal sent at least once.
#: A learner's loop reaches the signals through the one ``stop_on_signals`` (trainers/common/signals.py), which
#: routes all three alike; what each signal means (exit status, the second Ctrl-C) is the StopRequest test below.
ONE_SIGNAL_EACH = {"ppo": signal.SIGINT, "sac": signal.SIGTERM, "distill": signal.SIGHUP, "sb3": signal.SIGHUP}
_ID = lambda s: signal.Signals(s).name  # noqa: E731


@pytest.mark.parametrize("learner, signum", sorted(ONE_SIGNAL_EACH.items()), ids=lambda v: v if isinstance(v, str) else _ID(v))
def test_a_run_whose_pipe_died_saves_on_a_stop_signal(learner, signum, tmp_path):
    _stop_with_a_dead_pipe(learner, signum, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=_ID)
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_a_run_whose_pipe_died_saves_on_every_signal(learner, signum, tmp_path):
    """The full learner x signal matrix (12 processes); the default tier runs one pair a learner, above."""
    if ONE_SIGNAL_EACH[learner] == signum:
        pytest.skip("run in the default tier (test_a_run_whose_pipe_died_saves_on_a_stop_signal)")
    _stop_with_a_dead_pipe(learner, signum, tmp_path)


def _stop_with_a_dead_pipe(learner: str, signum: int, tmp_path: Path) -> None:
    argv, saved, started = LEARNERS[learner]
    out = tmp_path / "run"
    reader, write_end = _dead_pipe()
    child = _child([*argv, "--total-steps", "1e9"], out, stdout=write_end, stderr=write_end)
    os.close(write_end)
    try:
        deadline = time.monotonic() + 180
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
    log = (out / "train.log").read_text() if (out / "train.log").exists() else ""
    assert status == 128 + signum, log
    assert "Traceback" not in log and "closed (BrokenPipeError" in log, log
    assert f"[unilab] {signal.Signals(signum).name}: finishing " in log and ", then saving" in log, log
    go_on = f"--init-from {out}" if learner == "distill" else f"--resume {out}"  # DAgger has no exact resume
    assert "[unilab] stopped at" in log and go_on in log, log
    assert (out / saved).stat().st_size > 0 and (out / "learning_curve.png").stat().st_size > 0
    assert read_run_kind(out) == KIND[learner]
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temp file left of an atomic write


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_a_finished_run_whose_stdout_pipe_died_exits_0_without_a_traceback(learner, tmp_path):
    """``unilab train ... | tee log`` (stdout only) with tee gone: the closing lines land in train.log, stderr
    (here a file) stays clean, and the exit status is 0, not a ``BrokenPipeError`` at the last print."""
    argv, saved, _ = LEARNERS[learner]
    out, err_path = tmp_path / "run", tmp_path / "stderr.txt"
    reader, write_end = _dead_pipe()
    reader.kill()  # gone before the run writes a line
    reader.wait(timeout=10)
    steps = {"sac": "256", "distill": "64", "sb3": "256"}.get(learner, "128")
    with open(err_path, "w") as err:
        child = _child([*argv, "--total-steps", steps, *(["--no-progress"] if learner != "distill" else [])], out,
                       stdout=write_end, stderr=err)
        os.close(write_end)
        try:
            status = child.wait(timeout=240)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    stderr, log = err_path.read_text(), (out / "train.log").read_text()
    assert status == 0 and "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert "stdout was closed (BrokenPipeError" in log and str(out / saved) in log, log
    assert (out / saved).exists() and (out / "learning_curve.png").exists()


# in-process runs, a few steps each: (the command, the files of a finished run it writes)
SHORT = {
    "ppo": ["train", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "128", "--no-progress",
            "algo.num_steps=16", "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false"],
    "sac": ["train", "--algo", "sac", "--task", POINT_REACH_ID, "--num-envs", "4", "--total-steps", "128",
            "--no-progress", "algo.learning_starts=64", "algo.batch_size=32", "algo.buffer_size=2000",
            "nets.actor_hidden=[16,16]", "nets.critic_hidden=[16,16]", "log.every_steps=64", "log.tensorboard=false"],
    "distill": ["distill", "--teacher", "policies/go1_joystick", "--task", FLAT, "--num-envs", "2", "--total-steps", "32",
                "algo.num_steps=8", "log.tensorboard=false", "log.progress=false"],
    "sb3": ["train", "--algo", "sb3-ppo", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "64",
            "--no-progress", "algo_kwargs.n_steps=8", "algo_kwargs.batch_size=64", "algo_kwargs.n_epochs=1",
            "algo_kwargs.policy_kwargs={net_arch: [16]}"],
}


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("learner", sorted(SHORT))
def test_a_second_run_into_a_run_is_refused_and_overwrite_moves_it_aside(learner, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the teacher's path is relative to the repository
    out = tmp_path / "run"
    assert cli.main([*SHORT[learner], "--out", str(out)]) == 0
    assert read_run_kind(out) == KIND[learner] and find_run(out).kind == KIND[learner]
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()

    assert cli.main([*SHORT[learner], "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{out} already holds a run" in line and "new --out" in line and "--overwrite" in line, line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # untouched

    assert cli.main([*SHORT[learner], "--out", str(out), "--overwrite"]) == 0
    [moved] = [p for p in tmp_path.iterdir() if p.name.startswith("run.old-")]
    assert f"aside to {moved}" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in moved.iterdir() if p.is_file()} == before
    assert read_run_kind(out) == KIND[learner]


def test_the_stop_request_first_signal_stops_second_ctrl_c_interrupts_and_a_save_is_never_cut():
    from trainers.common.signals import StopRequest

    said = io.StringIO()
    request = StopRequest(lambda: "iteration 3", file=said)
    request.handle(signal.SIGTERM)
    assert request.requested and request.signal_name == "SIGTERM" and request.exit_status(True) == 143
    assert "SIGTERM: finishing iteration 3, then saving (Ctrl-C again to stop now)" in said.getvalue()
    with pytest.raises(KeyboardInterrupt):
        request.handle(signal.SIGINT)
    request.saving = True
    request.handle(signal.SIGINT)  # while the files are written: a message, no KeyboardInterrupt
    assert "SIGINT: saving the checkpoint and the learning curve, one moment" in said.getvalue()
    assert request.signum == signal.SIGTERM and request.exit_status(False) == 0


def test_legacy_folders_are_recognized_in_one_place_and_every_kind_has_a_learner(tmp_path):
    """The shipped policies have no run.yaml: their kind comes from their files (trainers.common.runs.legacy_kind)."""
    from trainers.common.runs import KINDS, write_run_kind
    from trainers.learners import LEARNERS as REGISTRY

    assert find_run(ROOT / "policies" / "go1_joystick").kind == "ppo"
    assert find_run(ROOT / "policies" / "go1_depth").kind == "distill"  # it holds distill.yaml
    assert set(REGISTRY.kinds) == set(KINDS)
    for kind in KINDS:
        hooks = REGISTRY[kind].load()
        assert all(callable(getattr(hooks, name)) for name in ("train", "run_config", "evaluate", "export"))
        assert callable(getattr(hooks, "slim_checkpoint", None)) == REGISTRY[kind].ships
    write_run_kind(tmp_path, "td3")
    assert read_run_kind(tmp_path) == "td3" and read_run_kind(tmp_path / "missing") is None


def test_the_cli_and_ship_switch_on_no_run_kind():
    """eval, export, ship, play and --resume ask the registry: no `kind ==` test is left in the CLI or in ship."""
    import re

    for path in ("trainers/cli.py", "trainers/common/ship.py"):
        text = (ROOT / path).read_text()
        assert not re.search(r"kind\s*[!=]=|kind in \(", text), path
    ship = (ROOT / "trainers/common/ship.py").read_text()
    assert "from ..ppo" not in ship and "from ..offpolicy" not in ship
    assert "ppo.mixed_precision" not in (ROOT / "trainers/offpolicy/learner.py").read_text()
