"""``unilab train`` / ``ship`` never replace a run by accident (issue 54): an ``--out`` that holds a run
is refused in one line naming the choices; ``--resume`` into it and ``--overwrite`` (which moves the old
run aside, deleting nothing) are the ways in. Also the closed-stream fallback of the run's output."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from tests.trainers.conftest import POINT_REACH_ID
from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.common.run_folder import RunFolderError, check_out_folder, holds_run
from trainers.common.streams import fallback_output
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--no-progress", "algo.num_steps=16",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]", "log.tensorboard=false"]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_second_train_into_a_finished_run_is_refused_and_the_run_kept(tmp_path, capsys):
    out = tmp_path / "reach"
    assert cli.main(["train", *TINY, "--total-steps", "256", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()

    assert cli.main(["train", *TINY, "--total-steps", "128", "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{out} already holds a run (checkpoint.pt, progress.csv)" in line
    assert f"`unilab train --resume {out}`" in line and "new --out" in line and "--overwrite" in line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # untouched

    # --resume into its own folder goes on
    assert cli.main(["train", "--resume", str(out), "--total-steps", "384", "--no-progress"]) == 0
    assert load_checkpoint(out, CKPT_FORMAT, CKPT_VERSION)["iteration"] == 3
    # --init-from reads it into a new folder, but not into a folder that holds another run
    assert cli.main(["train", *TINY, "--total-steps", "128", "--init-from", str(out), "--out", str(out)]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert cli.main(["train", *TINY, "--total-steps", "128", "--init-from", str(out), "--overwrite",
                     "--out", str(out)]) == 2
    assert "this command reads the run in it" in _one_line(capsys.readouterr().err)

    # --overwrite moves the old run aside, whole, and starts anew
    resumed = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert cli.main(["train", *TINY, "--total-steps", "128", "--out", str(out), "--overwrite"]) == 0
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("reach.old-")]
    assert len(moved) == 1 and f"moved the run in {out} aside to {moved[0]}" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in moved[0].iterdir() if p.is_file()} == resumed
    assert load_checkpoint(out, CKPT_FORMAT, CKPT_VERSION)["iteration"] == 1


def test_what_holds_a_run(tmp_path):
    assert holds_run(tmp_path / "missing") == [] and holds_run(tmp_path) == []
    (tmp_path / "notes.txt").write_text("mine")  # other files: the folder is used as it is
    assert check_out_folder(tmp_path) is None
    (tmp_path / "model.zip").write_bytes(b"")
    assert holds_run(tmp_path) == ["model.zip"]
    with pytest.raises(RunFolderError, match="already holds a run"):
        check_out_folder(tmp_path)
    assert check_out_folder(tmp_path, resume=tmp_path / "model.zip") is None  # resuming it writes back into it


def test_sb3_train_into_a_run_is_refused(tmp_path, capsys):
    out = tmp_path / "sb3"
    out.mkdir()
    (out / "model.zip").write_bytes(b"a finished run")
    argv = ["train", "--algo", "sb3-ppo", "--task", POINT_REACH_ID, "--num-envs", "8", "--total-steps", "64",
            "--out", str(out)]
    assert cli.main(argv) == 2
    assert "already holds a run (model.zip)" in _one_line(capsys.readouterr().err)
    assert (out / "model.zip").read_bytes() == b"a finished run"
    # --overwrite moves it only once every setting is checked: a mistake leaves it where it was
    assert cli.main([*argv, "--overwrite", "algo_kwargs.n_stepz=16"]) == 2
    assert "n_stepz" in _one_line(capsys.readouterr().err) and (out / "model.zip").read_bytes() == b"a finished run"
    assert cli.main([*argv, "--overwrite", "--no-progress", "algo_kwargs.n_steps=16", "algo_kwargs.batch_size=64"]) == 0
    [old] = [p for p in tmp_path.iterdir() if p.name.startswith("sb3.old-")]
    assert (old / "model.zip").read_bytes() == b"a finished run" and (out / "model.zip").read_bytes() != b"a finished run"


def test_ship_into_a_policy_folder_is_refused_without_overwrite(tmp_path, capsys):
    run, shipped = tmp_path / "run", tmp_path / "policy"
    assert cli.main(["train", *TINY, "--total-steps", "128", "--out", str(run)]) == 0
    assert cli.main(["ship", str(run), "--out", str(shipped)]) == 0
    first = (shipped / "policy.onnx").read_bytes()
    capsys.readouterr()
    assert cli.main(["ship", str(run), "--out", str(shipped)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "already holds a run" in line and "--overwrite" in line and "--resume" not in line
    assert cli.main(["ship", str(run), "--out", str(shipped), "--overwrite"]) == 0
    old = [p for p in tmp_path.iterdir() if p.name.startswith("policy.old-")]
    assert len(old) == 1 and (old[0] / "policy.onnx").read_bytes() == first and (shipped / "policy.onnx").exists()
    assert cli.main(["ship", str(run), "--out", str(run), "--overwrite"]) == 2  # would move away what it reads
    assert (run / "checkpoint.pt").exists()


def test_a_closed_stdout_falls_back_to_the_log_and_stderr_still_speaks(tmp_path, monkeypatch):
    """``unilab train ... | tee log`` with tee gone: stdout's writes land in the log, stderr (a terminal
    here) keeps working, nothing raises, and nothing buffered is left to fail at exit."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone
    dead = io.TextIOWrapper(io.BufferedWriter(io.FileIO(write_end, "w")), line_buffering=False)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", dead)
    monkeypatch.setattr(sys, "stderr", err)
    log = tmp_path / "run" / "train.log"
    with fallback_output(log):
        print("[unilab] train PointReach ...", flush=True)  # the flush finds the pipe dead
        print("\rbar 1/10", end="", flush=True)  # progress refreshes: only the last one is kept
        print("\rbar 2/10", end="", flush=True)
        print("\ndone: 1 steps", flush=True)
        print("Resume with: unilab train --resume x", file=sys.stderr)
    assert sys.stdout is dead and sys.stderr is err
    text = log.read_text()
    assert "stdout was closed (BrokenPipeError" in text
    assert "[unilab] train PointReach ..." in text and "bar 2/10\ndone: 1 steps" in text and "bar 1/10" not in text
    assert "Resume with" in err.getvalue() and "Resume with" not in text
    dead.flush()  # what interpreter exit does: the descriptor now points at the log, so it does not fail


def test_nohup_keeps_sighup_ignored_and_the_other_signals_are_routed():
    """Under ``nohup`` SIGHUP is ignored so the run outlives the terminal: the stop handlers keep it so."""
    import signal

    from trainers.common.signals import exit_status, route_stop_signals

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    handler = lambda signum, frame: None  # noqa: E731
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        restore = route_stop_signals(handler)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is handler and signal.getsignal(signal.SIGTERM) is handler
        restore()
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        restore = route_stop_signals(handler)
        assert signal.getsignal(signal.SIGHUP) is handler
        restore()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    finally:
        for s, h in before.items():
            signal.signal(s, h)
    assert [exit_status(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, None)] == [130, 143, 129, 130]
