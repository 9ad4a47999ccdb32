"""``unilab export --precision fp16|int8`` of a run whose sim-to-real profile no longer resolves: one line
on stderr that names the profile and what to do, exit status 2, nothing written (it was a traceback)."""

from __future__ import annotations

import shutil

import pytest
from test_ppo_checkpoint import tiny_cfg

from trainers.ppo import train

from tests.deploy.conftest import one_error_line, run


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A PointReach run of 256 steps, trained without a profile."""
    folder = tmp_path_factory.mktemp("export_profile") / "run"
    train(tiny_cfg(folder, total_steps=256))
    return folder


def _run_naming(tiny_run, tmp_path, sim2real: str):
    """A copy of ``tiny_run`` whose config says it trained under ``sim2real``."""
    folder = tmp_path / "run"
    shutil.copytree(tiny_run, folder)
    config = folder / "config.yaml"
    text = config.read_text()
    assert "\nsim2real: null\n" in text
    config.write_text(text.replace("\nsim2real: null\n", f"\nsim2real: {sim2real}\n"))
    return folder


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_a_gone_profile_file_is_one_line_and_writes_nothing(tiny_run, tmp_path, capsys, precision):
    gone = tmp_path / "gone.yaml"
    folder = _run_naming(tiny_run, tmp_path, str(gone))
    out = tmp_path / "out" / "policy.onnx"
    assert run(["export", str(folder), "--precision", precision, "--out", str(out)]) == 2
    assert one_error_line(capsys) == (
        f"unilab export: cannot check the {precision} model under the run's sim-to-real profile: profile file "
        f"'{gone}' does not exist. Restore that profile or correct `sim2real` in {folder / 'config.yaml'}, or "
        f"export fp32 (the default); nothing was written")
    assert not out.exists() and not (folder / "policy.onnx").exists()


def test_an_unknown_profile_name_is_one_line(tiny_run, tmp_path, capsys):
    folder = _run_naming(tiny_run, tmp_path, "no_such_profile")
    assert run(["export", str(folder), "--precision", "int8"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("unilab export: cannot check the int8 model under the run's sim-to-real profile: "
                           "unknown sim-to-real profile 'no_such_profile'; use one of [")
    assert f"correct `sim2real` in {folder / 'config.yaml'}" in line
    assert not (folder / "policy.onnx").exists()
