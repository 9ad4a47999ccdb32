"""The bundled PPO's convolutional encoder for image groups (trainers.ppo.image_encoder)."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

from trainers.common.envs import make_vec_env
from trainers.common.onnx_export import export_policy
from trainers.ppo.config import ConfigError, ImageGroupConfig, PolicyConfig, load_config
from trainers.ppo.envs import EnvDims, env_dims
from trainers.ppo.image_encoder import ImageMLP, resolve_image_groups, with_image_groups
from trainers.ppo.models import EmpiricalNormalizer, InferencePolicy
from trainers.ppo.runner import build_learner

DEPTH = "UniLab/Go1JoystickDepth-v0"
# the Go1 depth task's layout: 50 proprioceptive floats, then a 12 x 16 depth image (far 2 m)
GROUP = ImageGroupConfig("depth", (1, 12, 16), (50,), 2.0)


def _cfg(**policy):
    cfg = load_config(DEPTH, overrides=["num_envs=4"])
    return dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, image_groups=(GROUP,), **policy))


@pytest.mark.parametrize("override, says", [
    ("policy.image_encoder.kernel=[5]", "one per layer"),
    ("policy.image_encoder.channels=[]", "non-empty"),
    ("policy.image_encoder.scale=0", "scale must be > 0"),
    ("policy.image_encoder.features=0", "features must be > 0"),
])
def test_bad_encoder_config_is_one_line(override, says):
    with pytest.raises(ConfigError, match=says) as e:
        load_config(DEPTH, overrides=[override])
    assert "\n" not in str(e.value)


def test_groups_read_from_the_env_with_history_frames_as_channels():
    env = make_vec_env(DEPTH, 1, obs_history={"groups": ["gyro", "depth"], "length": 3})
    try:
        groups = resolve_image_groups(env)
        far = env.unwrapped.task.camera.config.far
        # history blocks follow the 242 columns: [gyro@1 depth@1][gyro@2 depth@2], 195 columns each
        assert groups == (ImageGroupConfig("depth", (1, 12, 16), (50, 245, 440), far),)
        obs, _ = env.reset(seed=0)
        np.testing.assert_array_equal(obs[:, 245:437], obs[:, 50:242])  # an episode's first frame fills the history
    finally:
        env.close()


def test_a_config_for_another_camera_is_refused():
    env = make_vec_env(DEPTH, 1)
    try:
        other = dataclasses.replace(GROUP, shape=(1, 24, 8))
        cfg = _cfg()
        cfg = dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, image_groups=(other,)))
        with pytest.raises(ConfigError, match="another camera"):
            with_image_groups(cfg, env)
        assert with_image_groups(_cfg(), env).policy.image_groups == (GROUP,)  # the env's own: unchanged
    finally:
        env.close()


def test_tasks_without_images_keep_the_plain_mlp():
    cfg = load_config("UniLab/Go1Joystick-v0")
    algo = build_learner(EnvDims(50, 12, 75), cfg, torch.device("cpu"))
    assert isinstance(algo.policy.actor, nn.Sequential) and isinstance(algo.policy.critic, nn.Sequential)
    assert algo.obs_normalizer.fixed is None and "fixed" not in algo.obs_normalizer.state_dict()


def test_cnn_reads_the_image_columns_in_c_order_and_the_rest_unchanged():
    torch.manual_seed(0)
    algo = build_learner(EnvDims(242, 12, None), _cfg(), torch.device("cpu"))
    actor = algo.policy.actor
    assert isinstance(actor, ImageMLP)
    x = torch.randn(7, 242)
    features = actor.encoders["depth"](x[:, 50:].reshape(7, 1, 12, 16))
    expected = actor.mlp(torch.cat([x[:, :50], features], dim=1))
    torch.testing.assert_close(actor(x), expected, rtol=0, atol=0)
    torch.testing.assert_close(actor(x.reshape(7, 1, 242)).reshape(7, 12), expected)  # leading dims kept


def test_images_get_a_fixed_scale_not_running_statistics():
    algo = build_learner(EnvDims(242, 12, 242 + 212), _cfg(), torch.device("cpu"))
    obs = torch.rand(64, 242) * 2.0
    critic = torch.cat([obs, torch.randn(64, 212)], dim=1)
    for _ in range(3):
        algo.update_normalizers(EmpiricalNormalizer.moments(obs), EmpiricalNormalizer.moments(critic))
    for norm, width in ((algo.obs_normalizer, 242), (algo.critic_normalizer, 454)):
        assert norm.fixed.sum() == 192
        assert torch.all(norm.mean[50:242] == 0) and torch.all(norm.var[50:242] == 4.0)
        assert not torch.allclose(norm.mean[:50], torch.zeros_like(norm.mean[:50]))  # the rest keeps its running statistics
        x = torch.cat([obs, critic[:, 242:]], dim=1)[:, :width]
        torch.testing.assert_close(norm(x)[:, 50:242], obs[:, 50:] / 2.0)
    assert isinstance(algo.policy.critic, ImageMLP)  # the critic sees the image too (its own CNN)


def test_onnx_output_equals_torch_with_the_cnn(tmp_path):
    algo = build_learner(EnvDims(242, 12, None), _cfg(), torch.device("cpu"))
    obs = torch.cat([torch.randn(256, 50), 0.1 + 1.9 * torch.rand(256, 192)], dim=1)
    algo.update_normalizers(EmpiricalNormalizer.moments(obs), None)
    policy = InferencePolicy(algo.obs_normalizer, algo.policy.actor).eval()
    path = export_policy(policy, 242, tmp_path / "policy.onnx", "test", action_low=-np.ones(12, np.float32),
                         action_high=np.ones(12, np.float32))
    session = ort.InferenceSession(str(path))
    got = session.run(None, {session.get_inputs()[0].name: obs[:9].numpy()})[0]
    with torch.no_grad():
        want = policy(obs[:9]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_env_dims_and_groups_agree_on_the_depth_task():
    env = make_vec_env(DEPTH, 1)
    try:
        dims = env_dims(env)
        cfg = with_image_groups(load_config(DEPTH), env)
        assert dims.obs == 242 and cfg.policy.image_groups[0].starts == (50,)
        assert load_config(DEPTH, overrides=["policy.image_encoder=null"]).policy.image_encoder is None
    finally:
        env.close()


def test_widening_a_cnn_run_for_a_history_is_refused_in_one_line():
    import numpy as np

    from trainers.ppo.widen import widen_for_history

    ckpt = {"dims": {"obs": 242}, "algo": {"policy": {"actor.encoders.depth.convs.0.weight": None}}}
    with pytest.raises(ValueError, match="image encoder.*obs_history from the start"):
        widen_for_history(ckpt, np.array([0, 1, 2]))
