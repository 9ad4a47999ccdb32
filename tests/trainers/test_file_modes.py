"""Files UniLab writes (checkpoints, ONNX, deploy specs, videos) get the user's normal permissions.

They are written atomically (a temp file beside the target, fsync, ``os.replace``); the temp
file must be created like any new file (``0o666 & ~umask``), not ``0600`` as
``tempfile.mkstemp`` makes it, or a shipped policy folder is unreadable to anyone else.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import numpy as np
import pytest
import torch

from trainers.common.atomic import atomic_write
from trainers.common.checkpoint import atomic_save, load_checkpoint, save_checkpoint
from trainers.common.deploy_export import attach_deploy_spec
from trainers.common.onnx_export import export_policy
from trainers.common.video import write_video


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def write_checkpoint_onnx_spec_video(folder) -> list:
    """Write what `unilab train/export/eval --video` write: a checkpoint, an ONNX policy with
    its deploy spec, and a video; return their paths."""
    ckpt = save_checkpoint({"weights": torch.zeros(3)}, folder / "checkpoint.pt", "test", 1)
    onnx = export_policy(torch.nn.Linear(50, 12), 50, folder / "policy.onnx", "test policy",
                         action_low=-np.ones(12, np.float32), action_high=np.ones(12, np.float32))
    spec = attach_deploy_spec(onnx, "UniLab/Go1Joystick-v0")
    video = write_video([np.zeros((8, 8, 3), np.uint8)] * 2, folder / "eval.gif", fps=10)
    return [ckpt, onnx, spec, video]


def test_written_files_are_0644_under_umask_022(tmp_path):
    with umask(0o022):
        paths = write_checkpoint_onnx_spec_video(tmp_path)
    assert [p.name for p in paths] == ["checkpoint.pt", "policy.onnx", "deploy_spec.json", "eval.gif"]
    assert {p.name: oct(mode(p)) for p in paths} == {p.name: "0o644" for p in paths}
    assert load_checkpoint(paths[0], "test", 1)["weights"].shape == (3,)  # still a whole, readable file
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temp left


@pytest.mark.parametrize("mask, expected", [(0o002, 0o664), (0o077, 0o600)])
def test_the_mode_follows_the_umask(tmp_path, mask, expected):
    with umask(mask):
        path = atomic_save({"x": 1}, tmp_path / "checkpoint.pt")
    assert mode(path) == expected


def test_a_rewrite_gets_the_users_mode_and_a_failed_one_leaves_the_old_file(tmp_path):
    target = tmp_path / "deploy_spec.json"

    def half_then_fail(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise RuntimeError("disk full")

    with umask(0o022):
        atomic_write(target, lambda tmp: Path(tmp).write_text("old"))
        inode = os.stat(target).st_ino
        with pytest.raises(RuntimeError, match="disk full"):
            atomic_write(target, half_then_fail)
        assert target.read_text() == "old" and os.stat(target).st_ino == inode  # left alone
        atomic_write(target, lambda tmp: Path(tmp).write_text("new"))
    assert target.read_text() == "new" and mode(target) == 0o644
    assert os.stat(target).st_ino != inode  # replaced by a rename, not rewritten in place
    assert [p.name for p in tmp_path.iterdir()] == ["deploy_spec.json"]  # no temp file left
