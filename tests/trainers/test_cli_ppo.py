"""The ``unilab`` CLI: train / eval / export / resume, Ctrl-C, dispatch to SB3."""

import os
import signal
import threading

import pytest
import torch
from tests.trainers.conftest import POINT_REACH_ID

from trainers import cli
from trainers.common.checkpoint import load_checkpoint
from trainers.ppo.runner import CKPT_FORMAT, CKPT_VERSION

TINY = ["--task", POINT_REACH_ID, "--num-envs", "8", "--no-progress", "algo.num_steps=16",
        "policy.actor_hidden=[16,16]", "policy.critic_hidden=[16,16]"]


def test_train_eval_export_resume(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["train", *TINY, "--total-steps", "384", "--out", str(out), "--seed", "1"]) == 0
    for name in ("checkpoint.pt", "progress.csv", "learning_curve.png", "config.yaml", "tb"):
        assert (out / name).exists(), name
    assert "checkpoint:" in capsys.readouterr().out

    assert cli.main(["eval", str(out), "--episodes", "4", "--video", str(tmp_path / "v.gif")]) == 0
    text = capsys.readouterr().out
    assert "success" in text and (tmp_path / "v.gif").stat().st_size > 0

    assert cli.main(["export", str(out / "checkpoint.pt"), "--out", str(tmp_path / "p.onnx")]) == 0
    assert (tmp_path / "p.onnx").stat().st_size > 0

    # resume from the checkpoint alone (config comes from it), to a larger budget
    assert cli.main(["train", "--resume", str(out / "checkpoint.pt"), "--total-steps", "640", "--no-progress"]) == 0
    ckpt = load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    assert ckpt["iteration"] == 5 and ckpt["config"]["seed"] == 1


def test_print_config_and_bad_input(tmp_path, capsys):
    assert cli.main(["train", *TINY, "--print-config", "algo.gamma=0.9"]) == 0
    assert "gamma: 0.9" in capsys.readouterr().out
    assert cli.main(["train", *TINY, "algo.gamm=0.9"]) == 2
    assert "Did you mean 'algo.gamma'" in capsys.readouterr().err
    assert cli.main(["train", *TINY, "algo.gamma=2"]) == 2
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"junk")
    assert cli.main(["train", "--resume", str(bad)]) == 2
    assert "corrupt" in capsys.readouterr().err
    assert cli.main(["eval", str(bad)]) == 2
    assert cli.main(["export", str(bad)]) == 2
    with pytest.raises(SystemExit):
        cli.main(["train", "--total-steps", "lots"])


def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path, capsys):
    out = tmp_path / "run"
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN under nohup or a background job, not Python's default
    done = threading.Event()

    def ctrl_c_once_the_run_listens():
        # a SIGINT sent before the run installs its handler would be lost where SIGINT is ignored
        while signal.getsignal(signal.SIGINT) is before and not done.wait(0.05):
            pass
        if not done.wait(1.0):
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=ctrl_c_once_the_run_listens, daemon=True)
    sender.start()
    try:
        rc = cli.main(["train", *TINY, "--total-steps", "1e9", "--out", str(out)])
    finally:
        done.set()
        sender.join()
    assert rc == 130
    assert "Resume with" in capsys.readouterr().err
    ckpt = load_checkpoint(out / "checkpoint.pt", CKPT_FORMAT, CKPT_VERSION)
    assert ckpt["iteration"] >= 1 and ckpt["env_state"] is not None  # stopped at an iteration boundary
    assert signal.getsignal(signal.SIGINT) is before  # the handler in place before the run is restored


@pytest.mark.parametrize("algo", ["sb3-ppo", "sb3-sac", "sb3-td3"])
def test_sb3_algos_dispatch_to_train_sb3(monkeypatch, algo, tmp_path):
    import trainers.sb3.cli as sb3_cli
    seen = {}

    def fake(args):
        seen.update(vars(args))
        return tmp_path / "model.zip"

    monkeypatch.setattr(sb3_cli, "train_sb3", fake)
    assert cli.main(["train", "--algo", algo, "--task", "Pendulum-v1", "--total-steps", "1000", "x.y=1"]) == 0
    assert seen["algo"] == algo and seen["task"] == "Pendulum-v1" and seen["total_steps"] == 1000
    assert seen["num_envs"] >= 1 and seen["out"] and seen["overrides"] == ["x.y=1"]


def test_cpu_threads_flag_is_applied(tmp_path):
    before = torch.get_num_threads()
    try:
        assert cli.main(["train", *TINY, "--total-steps", "128", "--out", str(tmp_path), "--torch-threads", "1",
                         "log.tensorboard=false", "log.plot=false"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
