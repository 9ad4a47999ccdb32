"""Data-parallel PPO on CUDA with NCCL: every rank on its own GPU (one-GPU machines: world size 1).

Run with ``pytest -m gpu tests/gpu``; skips without CUDA. Two ranks need two GPUs (NCCL
refuses two ranks on one device); with one GPU the NCCL collectives still run (world 1).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = """
import os, sys
import torch, torch.distributed as tdist
from trainers.ppo.config import load_config
from trainers.ppo.runner import train
if os.environ["WORLD_SIZE"] == "1":  # torchrun leaves world 1 undistributed: join NCCL by hand
    tdist.init_process_group("nccl", device_id=torch.device("cuda", 0))
cfg = load_config("Pendulum-v1", out=sys.argv[1], total_steps=16 * 24 * 3, num_envs=16,
                  overrides=["log.progress=false", "log.plot=false", "log.tensorboard=false", "algo.num_steps=24"])
res = train(cfg)
assert res.iterations == cfg.num_iterations == 3
print("OK", os.environ["RANK"], res.stats["loss/kl"])
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nccl_data_parallel_trains(tmp_path):
    gpus = min(torch.cuda.device_count(), 2)
    script = tmp_path / "nccl_train.py"
    script.write_text(_SCRIPT)
    launch = ([sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={gpus}",
               f"--master_port={_free_port()}"] if gpus > 1 else [sys.executable])
    cmd = [*launch, str(script), str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if gpus == 1:
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), RANK="0", WORLD_SIZE="1",
                   LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("OK") == gpus, proc.stdout
    assert (tmp_path / "run" / "checkpoint.pt").exists()
