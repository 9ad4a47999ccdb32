"""ONNX export: onnxruntime's output equals torch's, normalizer folded in."""

import numpy as np
import onnxruntime as ort
import torch
from test_ppo_checkpoint import tiny_cfg

from trainers.ppo import train
from trainers.ppo.evaluate import export_onnx, load_policy


def test_onnx_matches_torch_on_random_observations(tmp_path):
    res = train(tiny_cfg(tmp_path, total_steps=256))
    path = export_onnx(res.checkpoint)
    assert path == tmp_path / "policy.onnx"
    policy, _, _ = load_policy(res.checkpoint)
    norm_mean = policy.mean.numpy()
    assert np.abs(norm_mean).max() > 0  # the normalizer is not the identity
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for batch in (1, 7, 256):
        obs = (rng.normal(size=(batch, 4)) * 3).astype(np.float32)  # some beyond the obs clip
        (onnx_out,) = sess.run(["actions"], {"obs": obs})
        with torch.no_grad():
            torch_out = np.clip(policy(torch.from_numpy(obs)).numpy(), -1, 1)  # the export clips to the action space
        np.testing.assert_allclose(onnx_out, torch_out, rtol=1e-5, atol=1e-5)
    # the folded normalizer is the training one: normalize by hand, then run the bare actor
    ckpt_policy, _, _ = load_policy(res.checkpoint)
    obs = rng.normal(size=(5, 4)).astype(np.float32)
    z = np.clip((obs - norm_mean) * policy.inv_std.numpy(), -10, 10)
    with torch.no_grad():
        bare = np.clip(ckpt_policy.actor(torch.from_numpy(z)).numpy(), -1, 1)
    np.testing.assert_allclose(sess.run(["actions"], {"obs": obs})[0], bare, rtol=1e-5, atol=1e-5)
