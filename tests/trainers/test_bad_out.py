"""A bad ``--out`` (a file where a folder goes, a path under a file, a folder nobody may write in) gets one
line on stderr, naming what is wrong and what to do, and exit status 2, for every command that writes
there: ``unilab train`` under each learner, ``unilab distill``, ``unilab ship`` and ``unilab export``.
Nothing is written, and the file in the way is left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trainers import cli

RUN = "policies/go1_joystick"  # a shipped run: what export and ship read, distill's teacher
TRAIN = ["--task", "UniLab/UR5Reach-v0", "--num-envs", "2", "--total-steps", "64", "--no-progress"]
COMMANDS = {
    "train ppo": ["train", "--algo", "ppo", *TRAIN],
    "train sac": ["train", "--algo", "sac", *TRAIN],
    "train td3": ["train", "--algo", "td3", *TRAIN],
    "train sb3-ppo": ["train", "--algo", "sb3-ppo", *TRAIN],
    "train sb3-ppo --overwrite": ["train", "--algo", "sb3-ppo", *TRAIN, "--overwrite"],
    "distill": ["distill", "--teacher", RUN, "--task", "UniLab/Go1Joystick-v0", "--num-envs", "2"],
    "ship": ["ship", RUN],
    "export": ["export", RUN],
}


def bad_outs(tmp_path: Path, writes_a_file: bool) -> dict[str, tuple[Path, str]]:
    """Each bad ``--out`` and what its line must say (``export`` writes a file there, the others a folder)."""
    a_file = tmp_path / "README.md"
    a_file.write_text("a file, not a folder\n")
    read_only = tmp_path / "read_only"
    read_only.mkdir(mode=0o555)
    leaf = "run/policy.onnx" if writes_a_file else "run"
    if writes_a_file:
        (tmp_path / "a_folder").mkdir()
        wrong_kind = (tmp_path / "a_folder", "is a folder: pass the file to write")
    else:
        wrong_kind = (a_file, "is a file, not a folder: pass a folder")
    return {"the wrong kind": wrong_kind,
            "under a file": (a_file / leaf, f"{a_file} is a file, not a folder: pass a --out under a folder"),
            "in a read-only folder": (read_only / leaf, f"cannot write in {read_only}"),
            "in /proc": (Path("/proc/unilab-test") / leaf, "cannot write in /proc")}


@pytest.mark.parametrize("bad", ["the wrong kind", "under a file", "in a read-only folder", "in /proc"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_bad_out_is_one_line_and_exit_2(command, bad, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).parents[2])  # RUN is relative to the repository
    if bad == "in a read-only folder" and os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder ('in /proc' is the unwritable case here)")
    if bad == "in /proc" and not os.path.isdir("/proc"):
        pytest.skip("no /proc on this system")
    out, says = bad_outs(tmp_path, command == "export")[bad]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    try:
        code = cli.main([*COMMANDS[command], "--out", str(out)])
    except SystemExit as e:  # argparse
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith(f"unilab {command.split()[0]}: --out {out}") and says in err[0], err[0]
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written, no probe left behind
