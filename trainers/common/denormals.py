"""Flush subnormal floats to zero on the CPU while training.

Adam's second-moment state and small gradients drift into subnormal floats, which x86
CPUs compute in microcode, tens of times slower. Measured on 2 cores, one thread,
256x256 ReLU actor and critic, minibatch 64 (HalfCheetah's tuned setting): a PPO
gradient step took 3.7-5.4 ms with subnormals and 2.3-2.6 ms flushed; the fused Adam
step alone 0.9-2.1 ms against 0.32 ms. Flushing changes values below ~1e-38 (float32)
to zero, far under anything the losses can resolve. The trainer sets it for the
training loop and restores the caller's setting after (``torch.set_flush_denormal``;
where the CPU lacks the flag nothing changes).
"""

from __future__ import annotations

import torch


def denormals_flushed() -> bool:
    """Whether torch flushes subnormals now (a subnormal float64 reads back as zero)."""
    return torch.tensor([1e-323], dtype=torch.float64).item() == 0.0
