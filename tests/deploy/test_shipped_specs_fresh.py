"""Every shipped policy's ``deploy_spec.json`` is what a fresh ``unilab export`` (or ``unilab ship``) writes today.

A spec that lags the exporter lacks fields the robot side reads (``precision``,
``command.straight_probability``, the ``safety`` guard): these tests build the spec the way
``unilab export POLICY`` and ``unilab ship RUN --out POLICY`` do
(:func:`trainers.common.deploy_export.run_spec` on the folder's config), with the precision
the folder was exported at, and compare it to the shipped JSON text, and to the copy in the
ONNX metadata. The graph is compared too: a fresh export of ``checkpoint.pt`` gives the
shipped ``policy.onnx``'s actions. When one fails: ``unilab export policies/NAME``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trainers.common.deploy_export import run_spec
from unilab_robot.deploy import load_spec
from unilab_robot.deploy.spec import ONNX_METADATA_KEY, read_onnx_spec_text

POLICIES = Path(__file__).resolve().parents[2] / "policies"
SHIPPED = sorted(p.name for p in POLICIES.iterdir() if (p / "deploy_spec.json").is_file()) if POLICIES.is_dir() else []

pytestmark = pytest.mark.skipif(not SHIPPED, reason="no shipped policies in this checkout")


@pytest.mark.parametrize("name", SHIPPED)
def test_a_fresh_export_equals_the_shipped_spec(name):
    folder = POLICIES / name
    text = (folder / "deploy_spec.json").read_text()
    fresh = run_spec(folder, load_spec(folder / "deploy_spec.json").precision)
    assert fresh is not None
    assert fresh.to_json() == text, f"policies/{name}/deploy_spec.json lags the exporter: run `unilab export policies/{name}`"
    assert read_onnx_spec_text(folder / "policy.onnx") == text, f"the {ONNX_METADATA_KEY} metadata of policies/{name}/policy.onnx differs from its deploy_spec.json"


@pytest.mark.parametrize("name", SHIPPED)
def test_joystick_specs_carry_the_guard_and_arm_specs_none(name):
    spec = load_spec(POLICIES / name)
    if spec.action.mode == "home_offset":
        assert spec.safety is not None and spec.safety.source
        assert set(spec.safety.torque_limit) == set(spec.action.joint_names)  # every joint's limit, in numbers
    else:
        assert spec.safety is None


@pytest.mark.parametrize("name", SHIPPED)
def test_a_fresh_export_of_the_checkpoint_gives_the_shipped_graphs_actions(name, tmp_path):
    import onnxruntime as ort

    from trainers.ppo.evaluate import export_onnx

    folder = POLICIES / name
    fresh = export_onnx(folder / "checkpoint.pt", tmp_path / "policy.onnx")
    sessions = [ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (folder / "policy.onnx", fresh)]
    size = sessions[0].get_inputs()[0].shape[1]
    obs = (2.0 * np.random.default_rng(0).standard_normal((256, size))).astype(np.float32)
    shipped, again = (s.run(None, {"obs": obs})[0] for s in sessions)
    np.testing.assert_array_equal(again, shipped)
