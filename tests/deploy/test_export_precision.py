"""``unilab export --precision fp16|int8``: same interface as fp32, actions within the bound, the
precision in the deploy spec, a refusal over the bound (``--force`` writes anyway), and the
exported models play unchanged. Exports the shipped Go1 policy into tmp folders only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from trainers import cli
from trainers.common.precision import DEFAULT_BOUNDS, action_error, record_observations
from unilab_robot.deploy import SpecError, load_spec, spec_from_dict
from unilab_envs.deploy_spec import deploy_spec_for

from tests.deploy.conftest import one_error_line, run

SHIPPED = Path(__file__).resolve().parents[2] / "policies" / "go1_joystick"
GO1 = "UniLab/Go1Joystick-v0"

pytestmark = pytest.mark.skipif(not (SHIPPED / "checkpoint.pt").exists(),
                                reason="policies/go1_joystick is not shipped in this checkout")



@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """``unilab export policies/go1_joystick --precision P --out TMP/P/policy.onnx`` for each precision."""
    root = tmp_path_factory.mktemp("precision")
    paths = {}
    for precision in ("fp32", "fp16", "int8"):
        paths[precision] = root / precision / "policy.onnx"
        assert cli.main(["export", str(SHIPPED), "--out", str(paths[precision]), "--precision", precision]) == 0
    return paths


@pytest.fixture(scope="module")
def observations(exported) -> np.ndarray:
    """Observations of the fp32 policy in Go1Joystick, another seed than the export's check used."""
    return record_observations(exported["fp32"], GO1, {"reward_scales": {"positive_clip": 1.0}}, num_envs=4,
                               steps=100, seed=7)


def _io(path: Path):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return [(t.name, t.type, t.shape) for t in (*session.get_inputs(), *session.get_outputs())]


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_reduced_exports_keep_the_float32_interface(exported, precision):
    assert _io(exported[precision]) == _io(exported["fp32"]) == [
        ("obs", "tensor(float)", ["batch", 50]), ("actions", "tensor(float)", ["batch", 12])]
    onnx.checker.check_model(onnx.load(str(exported[precision])))
    types = {t.data_type for t in onnx.load(str(exported[precision])).graph.initializer}
    assert {"fp16": onnx.TensorProto.FLOAT16, "int8": onnx.TensorProto.UINT8}[precision] in types
    assert exported[precision].stat().st_size < 0.6 * exported["fp32"].stat().st_size


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_reduced_exports_match_fp32_within_the_bound(exported, observations, precision):
    error = action_error(exported["fp32"], exported[precision], observations)
    assert error.samples == 400
    assert 0 < error.mean <= error.max <= DEFAULT_BOUNDS[precision]


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_precision_is_in_the_spec_and_round_trips(exported, precision):
    folder = exported[precision].parent
    spec = load_spec(folder / "deploy_spec.json")
    assert spec == load_spec(exported[precision])  # the copy in the ONNX metadata
    p = spec.precision
    assert p.name == precision and p.samples == 800 and p.bound == DEFAULT_BOUNDS[precision]
    assert 0 < p.mean_action_error <= p.max_action_error <= p.bound
    data = json.loads((folder / "deploy_spec.json").read_text())
    assert data["precision"]["name"] == precision and data["schema_version"] == 1
    assert spec_from_dict(json.loads(spec.to_json())) == spec


def test_fp32_export_records_fp32(exported):
    spec = load_spec(exported["fp32"].parent)
    assert spec.precision.name == "fp32" and spec.precision.max_action_error is None


def test_a_spec_without_precision_loads_as_fp32():
    data = json.loads(deploy_spec_for(GO1).to_json())
    del data["precision"]
    assert spec_from_dict(data).precision.name == "fp32"
    shipped = json.loads((SHIPPED / "deploy_spec.json").read_text())
    if "precision" not in shipped:  # exported before the section existed
        assert load_spec(SHIPPED / "deploy_spec.json").precision.name == "fp32"


@pytest.mark.parametrize("field, value, message", [
    ("name", "int4", "precision.name must be one of"),
    ("max_action_error", -0.1, "precision.max_action_error must be a finite number >= 0"),
])
def test_bad_precision_sections_are_refused(field, value, message):
    data = json.loads(deploy_spec_for(GO1).to_json())
    data["precision"][field] = value
    with pytest.raises(SpecError, match=message):
        spec_from_dict(data)


def test_the_refusal_says_the_error_the_bound_and_what_to_do_and_force_writes(tmp_path, capsys):
    target = tmp_path / "int8" / "policy.onnx"
    assert run(["export", str(SHIPPED), "--out", str(target), "--precision", "int8",
                "--max-action-error", "0.001"]) == 2
    line = one_error_line(capsys)
    measured = float(re.search(r"differ from fp32 by up to ([\d.]+) of the action range", line).group(1))
    assert measured > 0.001 and "over the bound 0.001" in line and "nothing was written" in line
    assert "--force" in line and "--max-action-error" in line
    assert not target.parent.exists() or not any(target.parent.iterdir())

    assert run(["export", str(SHIPPED), "--out", str(target), "--precision", "int8",
                "--max-action-error", "0.001", "--force"]) == 0
    out = capsys.readouterr().out
    assert "OVER the bound, written because of --force" in out
    p = load_spec(target.parent).precision
    assert p.name == "int8" and p.bound == 0.001 and p.max_action_error > p.bound


def test_a_refused_export_leaves_the_existing_policy_alone(exported, tmp_path, capsys):
    folder = tmp_path / "kept"
    folder.mkdir()
    for name in ("policy.onnx", "deploy_spec.json"):
        (folder / name).write_bytes((exported["fp32"].parent / name).read_bytes())
    before = {n: (folder / n).read_bytes() for n in ("policy.onnx", "deploy_spec.json")}
    assert run(["export", str(SHIPPED), "--out", str(folder / "policy.onnx"), "--precision", "fp16",
                "--max-action-error", "0"]) == 2
    one_error_line(capsys)
    assert {n: (folder / n).read_bytes() for n in before} == before


def test_force_and_bound_need_a_reduced_precision(tmp_path, capsys):
    assert run(["export", str(SHIPPED), "--out", str(tmp_path / "policy.onnx"), "--force"]) == 2
    assert "add --precision fp16 or int8" in one_error_line(capsys)
    assert not (tmp_path / "policy.onnx").exists()


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_reduced_exports_play_unchanged(exported, precision, capsys):
    folder = exported[precision].parent
    assert run(["play", str(folder), "--headless", "--episodes", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "falls 0.0%" in out and float(re.search(r"linear ([\d.]+)", out).group(1)) > 0.7, out


# --- the deployment distribution: bare and under the run's own profile (issue 55 item 5) ----------

REAL = SHIPPED.parent / "go1_joystick_real"


def test_a_sim2real_run_is_measured_bare_and_under_its_profile_and_the_spec_keeps_both(tmp_path, capsys):
    """policies/go1_joystick_real trained under go1_real: two observation sets, the bound on the worse."""
    target = tmp_path / "int8" / "policy.onnx"
    assert run(["export", str(REAL), "--out", str(target), "--precision", "int8"]) == 0
    out = capsys.readouterr().out
    assert "(bare task): action error max" in out and "(sim2real go1_real (the run's profile)): action error max" in out
    p = load_spec(target.parent).precision
    assert [m.on for m in p.measured] == ["bare task", "sim2real go1_real (the run's profile)"]
    assert [m.samples for m in p.measured] == [800, 800] and p.samples == 1600
    worse = max(p.measured, key=lambda m: m.max_action_error)
    assert (p.max_action_error, p.mean_action_error) == (worse.max_action_error, worse.mean_action_error)
    assert f"the bound applies to the worse ({worse.on})" in out
    assert 0 < p.max_action_error <= DEFAULT_BOUNDS["int8"]


def test_the_bound_applies_to_the_worse_set(monkeypatch, exported, observations, tmp_path):
    """Bare: the recorded observations; 'profile': the same, three times larger (further from training): a bound
    between the two errors refuses, naming the profile's set; above both it writes, the report holding both."""
    from trainers.common import precision as P

    wide = 3.0 * observations
    monkeypatch.setattr(P, "record_observations",
                        lambda *a, sim2real=None, **k: observations if sim2real is None else wide)
    candidate = P.convert(exported["fp32"], tmp_path / "c.onnx", "int8")
    bare, profile = action_error(exported["fp32"], candidate, observations), action_error(exported["fp32"], candidate, wide)
    assert profile.max > bare.max
    between = (bare.max + profile.max) / 2
    with pytest.raises(P.PrecisionError, match=r"400 recorded observations: sim2real go1_real\), over the bound"):
        P.reduce_precision(exported["fp32"], tmp_path / "out.onnx", "int8", GO1, bound=between, sim2real="go1_real")
    assert not (tmp_path / "out.onnx").exists()
    report = P.reduce_precision(exported["fp32"], tmp_path / "out.onnx", "int8", GO1, bound=1.0, sim2real="go1_real")
    assert [(e.on, e.max) for e in report.errors] == [("bare task", bare.max), ("sim2real go1_real", profile.max)]
    assert report.error == report.errors[1]
    section = report.spec_section()
    assert section.max_action_error == round(profile.max, 6) and section.samples == 2 * len(observations)


def test_a_precision_section_with_measured_sets_round_trips():
    import dataclasses

    from unilab_robot.deploy.spec import Precision, PrecisionSample

    measured = (PrecisionSample("bare task", 0.02, 0.002, 800), PrecisionSample("sim2real go1_real", 0.03, 0.003, 800))
    spec = dataclasses.replace(deploy_spec_for(GO1), precision=Precision("int8", 0.03, 0.003, 1600, 0.05, measured))
    assert spec_from_dict(json.loads(spec.to_json())) == spec
    data = json.loads(spec.to_json())
    data["precision"]["measured"][1]["max_action_error"] = float("-1")
    with pytest.raises(SpecError, match=r"precision.measured\[1\] needs"):
        spec_from_dict(data)
    assert "measured" not in json.loads(deploy_spec_for(GO1).to_json())["precision"]  # fp32: as before
