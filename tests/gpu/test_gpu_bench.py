"""``unilab bench --quick`` rows 3-4 on CUDA: the bf16 autocast rows appear, ratios are finite."""

from __future__ import annotations

import json
import math

import pytest
import torch

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def test_quick_bench_storage_and_update_on_cuda(tmp_path):
    from trainers.bench.cli import main

    assert main(["--quick", "--rows", "3,4", "--device", "cuda", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "bench.json").read_text())["rows"]
    names = " ".join(r["name"] for r in rows)
    assert "bf16" in names and "cuda" in names
    assert all(r["ratio"] is not None and math.isfinite(r["ratio"]) and r["ratio"] > 0 for r in rows)
