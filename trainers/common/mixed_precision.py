"""Where ``algo.amp`` runs the networks in bfloat16, and where PPO's numerics stay in float32.

``algo.amp: true`` runs the actor's and critic's forward passes under ``torch.autocast`` with
bfloat16: their matrix products (and, by the autocast rules, what follows them in the MLP) run
in bf16, for collection (policy inference) and for the update's forward and backward passes.

It applies on CUDA and on CPUs with native bf16 arithmetic (AVX512-BF16 or AMX on x86, the
BF16 extension on Arm: :func:`cpu_has_bf16`). On a CPU without it, bf16 matrix products are
emulated and slower than float32, so the learner stays in float32 and says so once.

What stays float32, and why (``trainers.ppo.algorithm``): the networks' outputs (the action
mean and the value) are cast back to float32 as they leave autocast. Everything after that,
the Gaussian log-probabilities and their ratio (a difference of two log-probabilities of
order -20 whose exp must resolve 1 +- clip), the value targets and returns (GAE sums),
advantage normalization, the KL, the entropy and the losses, is float32 math. The
parameters, their gradients and Adam's moments are float32 (autocast casts weights per
matmul, it never stores bf16 weights), so checkpoints, ONNX export and resume are the same
with and without ``amp``. The observation normalizers run before autocast, in float32.
"""

from __future__ import annotations

import contextlib
import warnings

import torch


def cpu_has_bf16() -> bool:
    """True when this CPU does bf16 arithmetic natively (torch's own oneDNN check)."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a torch build without oneDNN
        return False


def amp_device_type(requested: bool, device: torch.device, key: str = "algo.amp") -> str | None:
    """The autocast device type for ``algo.amp`` on ``device``: ``"cuda"``, ``"cpu"``, or
    None (float32) when amp is off or the CPU has no native bf16 (warns once then)."""
    if not requested:
        return None
    if device.type == "cuda":
        return "cuda"
    if device.type == "cpu" and cpu_has_bf16():
        return "cpu"
    warnings.warn(f"{key}: this {device.type} has no native bf16 arithmetic (x86 needs AVX512-BF16 or AMX), "
                  "where bf16 would be slower than float32; training in float32", stacklevel=3)
    return None


def bf16_autocast(device_type: str | None, cache_enabled: bool = True):
    """``torch.autocast(device_type, bfloat16)``, or a no-op context for None."""
    if device_type is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type, dtype=torch.bfloat16, cache_enabled=cache_enabled)
