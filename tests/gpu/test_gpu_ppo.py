"""The bundled PPO on CUDA: device-resident storage, pinned transfers, bf16 autocast, training.

Run with ``pytest -m gpu tests/gpu`` (``benchmarks/gpu_check.sh`` does); every test
skips cleanly on a machine without CUDA.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

CUDA = torch.device("cuda")


def _filled_storage(device, T=16, N=64, O=10, A=3, seed=0):
    from trainers.ppo.storage import RolloutStorage

    g = torch.Generator().manual_seed(seed)
    s = RolloutStorage(T, N, O, None, A, device)
    s.obs.copy_(torch.randn(T, N, O, generator=g))
    s.actions.copy_(torch.randn(T, N, A, generator=g) * 0.5)
    s.action_means.copy_(s.actions + 0.01)
    s.log_probs.copy_(torch.randn(T, N, generator=g) - 3.0)
    s.values.copy_(torch.randn(T, N, generator=g))
    s.rewards.copy_(torch.randn(T, N, generator=g))
    s.terminated.copy_(torch.rand(T, N, generator=g) < 0.05)
    s.truncated.copy_(torch.rand(T, N, generator=g) < 0.02)
    s.final_values.copy_(torch.randn(T, N, generator=g))
    s.last_values.copy_(torch.randn(N, generator=g))
    return s


def test_storage_lives_on_cuda_and_gae_matches_cpu():
    gpu, cpu = _filled_storage(CUDA), _filled_storage("cpu")
    assert all(t.is_cuda for t in (gpu.obs, gpu.actions, gpu.rewards, gpu.terminated, gpu.advantages))
    gpu.compute_returns(0.99, 0.95)
    cpu.compute_returns(0.99, 0.95)
    torch.testing.assert_close(gpu.advantages.cpu(), cpu.advantages, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gpu.returns.cpu(), cpu.returns, rtol=1e-5, atol=1e-5)
    gen = torch.Generator(device=CUDA).manual_seed(0)
    mbs = list(gpu.minibatches(4, 2, gen))
    assert len(mbs) == 8 and all(mb.obs.is_cuda and mb.obs.shape == (16 * 64 // 4, 10) for mb in mbs)


def test_host_to_device_uses_pinned_buffers():
    from trainers.ppo.collector import HostToDevice

    h2d = HostToDevice(CUDA)
    x = np.random.default_rng(0).normal(size=(256, 50)).astype(np.float32)
    out = h2d("obs", x)
    assert out.is_cuda and h2d._bufs["obs"].is_pinned()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), x)
    buf = h2d._bufs["obs"]
    out2 = h2d("obs", x * 2)  # the same pinned buffer is reused
    assert h2d._bufs["obs"] is buf
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out2.cpu().numpy(), x * 2)
    flags = h2d("term", np.array([True, False, True]), dtype=bool)
    assert flags.dtype == torch.bool and flags.cpu().tolist() == [True, False, True]


def test_host_to_device_copies_on_a_side_stream_without_races():
    """Many back-to-back copies through one pinned buffer, consumed on the compute stream, all arrive intact."""
    from trainers.ppo.collector import HostToDevice

    h2d = HostToDevice(CUDA)
    assert h2d.stream is not None and h2d.stream != torch.cuda.current_stream()
    x = np.random.default_rng(1).normal(size=(4096, 98)).astype(np.float32)
    acc = torch.zeros(4096, 98, device=CUDA)
    big = torch.randn(2048, 2048, device=CUDA)
    for k in range(50):
        big = big @ big.T / 2048.0  # keep the compute stream busy while copies are queued
        acc += h2d("obs", x * k)
    torch.cuda.synchronize()
    np.testing.assert_allclose(acc.cpu().numpy(), x * sum(range(50)), rtol=1e-5, atol=1e-3)


def _learner(amp: bool, O=10, A=3, N=64, T=16):
    from trainers.ppo.config import AlgoConfig, TrainConfig
    from trainers.ppo.envs import EnvDims
    from trainers.ppo.runner import build_learner

    cfg = TrainConfig(task="gpu-test", num_envs=N, device="cuda",
                      algo=AlgoConfig(num_steps=T, num_epochs=2, num_minibatches=2, schedule="fixed",
                                      learning_rate=3e-4, amp=amp))
    return build_learner(EnvDims(O, A, None), cfg, CUDA)


def test_bf16_autocast_update_matches_fp32_loosely():
    fp32, bf16 = _learner(amp=False), _learner(amp=True)
    assert bf16.amp and not fp32.amp
    s32, s16 = _filled_storage(CUDA), _filled_storage(CUDA)
    st32 = fp32.update(s32, torch.Generator(device=CUDA).manual_seed(1))
    st16 = bf16.update(s16, torch.Generator(device=CUDA).manual_seed(1))
    for k in ("loss/policy", "loss/value", "loss/entropy"):
        assert math.isfinite(st16[k])
        assert abs(st16[k] - st32[k]) <= 0.05 * abs(st32[k]) + 0.02, (k, st16[k], st32[k])
    for (n, p32), p16 in zip(fp32.policy.named_parameters(), bf16.policy.parameters()):
        assert p16.dtype == torch.float32, n  # autocast keeps master weights in fp32
        torch.testing.assert_close(p16, p32, rtol=0.05, atol=5e-3, msg=n)


@pytest.mark.parametrize("amp", [False, True])
def test_short_go1_training_on_cuda(tmp_path, amp):
    from trainers.ppo import AlgoConfig, LogConfig, TrainConfig, train

    cfg = TrainConfig(task="UniLab/Go1Joystick-v0", num_envs=256, total_steps=256 * 16 * 3, device="cuda",
                      out=str(tmp_path), algo=AlgoConfig(num_steps=16, amp=amp),
                      log=LogConfig(tensorboard=False, progress=False, plot=False))
    res = train(cfg)
    assert res.iterations == 3 and res.env_steps == 256 * 16 * 3
    assert res.checkpoint is not None and res.checkpoint.exists()
    for k in ("loss/value", "loss/policy", "perf/steps_per_s"):
        assert math.isfinite(res.stats[k]), (k, res.stats[k])
