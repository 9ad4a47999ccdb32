"""Data-parallel PPO on CPU with gloo: 2 processes on this machine (spawned, or launched like torchrun)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from tests.trainers.conftest import POINT_REACH_ID

from trainers.ppo.config import TrainConfig, deep_merge, from_dict

REPO = Path(__file__).resolve().parents[2]
QUIET = {"log": {"tensorboard": False, "progress": False, "plot": False, "save_interval": 1000}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dist_env(rank: int, world: int, port: int) -> dict:
    return {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank), "WORLD_SIZE": str(world),
            "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": str(world)}


def _point_reach_cfg(out: Path, iterations: int, num_envs: int = 16, seed: int = 0,
                     algo: dict | None = None) -> TrainConfig:
    return from_dict(TrainConfig, deep_merge(QUIET, {
        "task": POINT_REACH_ID, "num_envs": num_envs, "total_steps": num_envs * 32 * iterations, "seed": seed,
        "device": "cpu", "out": str(out), "algo": {"num_steps": 32, "gamma": 0.95, **(algo or {})},
        "policy": {"actor_hidden": [32, 32], "critic_hidden": [32, 32]}}))


def _worker(rank: int, world: int, port: int, out: str, iterations: int, algo: dict | None = None) -> None:
    """One rank: train, then dump its parameters, normalizer and last rollout to ``out/rank<r>.pt``."""
    os.environ.update(_dist_env(rank, world, port))
    from trainers.ppo.distributed import exit_finished_rank, setup, teardown
    from trainers.ppo.runner import Runner

    dist = setup("cpu", timeout_s=30)
    runner = Runner(_point_reach_cfg(Path(out) / "run", iterations, algo=algo), dist=dist)
    try:
        res = runner.learn()
        state = {"policy": runner.algo.policy.state_dict(), "obs_norm": runner.algo.obs_normalizer.state_dict(),
                 "critic_norm": runner.algo.critic_normalizer.state_dict(), "lr": runner.algo.learning_rate,
                 "rollout_obs": runner.storage.obs.clone(), "num_envs": runner.env.num_envs,
                 "threads": torch.get_num_threads(), "env_steps": res.env_steps,
                 "reward_norm": None if runner.collector.reward_norm is None else
                 runner.collector.reward_norm.state_dict()["moments"]}
        torch.save(state, Path(out) / f"rank{rank}.pt")
    finally:
        runner.close()
        teardown()
    exit_finished_rank(0)  # as the CLI does: gloo can abort a finished rank at interpreter exit


def _spawn(tmp_path: Path, iterations: int, world: int = 2, algo: dict | None = None) -> list[dict]:
    mp.start_processes(_worker, args=(world, _free_port(), str(tmp_path), iterations, algo), nprocs=world,
                       start_method="spawn", join=True)
    return [torch.load(tmp_path / f"rank{r}.pt", weights_only=False) for r in range(world)]


def test_ranks_stay_identical(tmp_path):
    iterations = 4
    r0, r1 = _spawn(tmp_path, iterations)
    # each rank stepped its own half of the envs, on different data
    assert r0["num_envs"] == r1["num_envs"] == 8
    assert not torch.equal(r0["rollout_obs"], r1["rollout_obs"])
    assert r0["threads"] == r1["threads"] == max(1, len(os.sched_getaffinity(0)) // 2)
    assert r0["env_steps"] == 16 * 32 * iterations
    # ... yet parameters, normalizers and the adaptive lr are bit-identical after several updates
    for key in ("policy", "obs_norm", "critic_norm"):
        for name, t in r0[key].items():
            assert torch.equal(t, r1[key][name]), f"{key}.{name} differs between ranks"
    assert r0["lr"] == r1["lr"]
    # the normalizer counted every rank's observations: initial obs + T steps per iteration, 16 envs
    assert float(r0["obs_norm"]["count"]) == 16 * (1 + 32 * iterations)
    # rank 0 alone wrote the run directory
    run = tmp_path / "run"
    assert (run / "checkpoint.pt").exists() and (run / "progress.csv").exists()
    rows = (run / "progress.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + iterations


def test_reward_normalization_statistics_agree_across_ranks(tmp_path):
    """With algo.reward_normalization every rank ends each rollout with the same return statistics,
    counted over every rank's envs (as one process stepping all of them), and still identical parameters."""
    iterations = 3
    r0, r1 = _spawn(tmp_path, iterations, algo={"reward_normalization": True})
    assert torch.equal(r0["reward_norm"], r1["reward_norm"]), (r0["reward_norm"], r1["reward_norm"])
    mean, var, count = (float(v) for v in r0["reward_norm"])
    assert count == pytest.approx(1e-4 + 16 * 32 * iterations)  # the prior + every transition of both ranks
    assert var > 0 and var != 1.0
    for name, t in r0["policy"].items():
        assert torch.equal(t, r1["policy"][name]), name
    saved = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["reward_norm"]["moments"]
    assert torch.equal(saved, r0["reward_norm"])


def test_all_reduced_reward_statistics_equal_one_stream():
    """Two ranks' normalizers, each fed its own envs, then agreed (their pending moments summed): both hold
    the statistics one normalizer fed all the envs would, and the next rollout starts from them."""
    import numpy as np

    from trainers.ppo.reward_norm import RewardNormalizer

    rng = np.random.default_rng(1)
    one = RewardNormalizer(6, gamma=0.9)
    ranks = [RewardNormalizer(3, gamma=0.9) for _ in range(2)]
    for rollout in range(3):
        for _ in range(20):
            reward, done = rng.normal(5.0, 2.0, 6), rng.random(6) < 0.1
            valid = rng.random(6) < 0.9
            one(reward, done, valid)
            for k, norm in enumerate(ranks):
                rows = slice(3 * k, 3 * k + 3)
                norm(reward[rows], done[rows], valid[rows])
        assert ranks[0].count != ranks[1].count or ranks[0].var != ranks[1].var  # they drifted apart
        total = ranks[0].pending_moments() + ranks[1].pending_moments()
        for norm in ranks:
            norm.apply_all_reduced(total)
        assert (ranks[0].mean, ranks[0].var, ranks[0].count) == (ranks[1].mean, ranks[1].var, ranks[1].count)
        assert ranks[0].count == pytest.approx(one.count, rel=1e-12)
        assert ranks[0].mean == pytest.approx(one.mean, rel=1e-9)
        assert ranks[0].var == pytest.approx(one.var, rel=1e-9)
        assert float(ranks[0].pending_moments()[0]) == 0.0


def test_two_ranks_learn_like_one(tmp_path):
    """Same total envs, seed and iterations as the one-rank run of tests/trainers/test_ppo_learning.py's
    ``test_point_reach_learns``: 2 ranks learn PointReach to the bar that run is held to (that run is not
    trained a second time here)."""
    from trainers.ppo.evaluate import evaluate

    _spawn(tmp_path, 20)
    ev = evaluate(tmp_path / "run" / "checkpoint.pt", episodes=32, num_envs=16)
    assert ev.success_rate >= 0.9, ev.summary()
    assert ev.mean_length < 15, ev.summary()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "hung"])
def test_dead_rank_makes_the_other_exit(tmp_path, sig):
    """Kill (SIGKILL) or freeze (SIGSTOP) rank 1 mid-training: rank 0 exits non-zero with a clear
    message, at once for a closed connection and within the process-group timeout for a hung peer.

    No wall-clock bound is asserted (a starved machine is slow, not wrong): a killed peer is tested under a
    600 s process-group timeout, so rank 0 can only end within the 120 s guard by seeing the connection close;
    a hung peer under a 6 s one, so it ends by the timeout, where without it rank 0 would wait forever."""
    timeout_s = 600 if sig == signal.SIGKILL else 6
    port = _free_port()
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "trainers.cli", "train", "--task", "Pendulum-v1", "--num-envs", "4",
           "--total-steps", "100000000", "--device", "cpu", "--out", str(out), "--no-progress",
           "--dist-timeout", str(timeout_s), "log.tensorboard=false", "log.plot=false", "algo.num_steps=8"]
    procs = []
    for rank in range(2):
        env = {**os.environ, **_dist_env(rank, 2, port), "UNILAB_NUM_THREADS": "1"}
        procs.append(subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until a few iterations ran
            csv = out / "progress.csv"
            if csv.exists() and len(csv.read_text().splitlines()) >= 3:
                break
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.2)
        else:
            pytest.fail("training did not start")
        procs[1].send_signal(sig)
        _, err = procs[0].communicate(timeout=120 + (0 if sig == signal.SIGKILL else timeout_s))  # a hang guard
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    assert procs[0].returncode not in (0, None), err
    assert "distributed training aborted" in err and "another rank died" in err, err


def test_env_share_covers_all_envs_once():
    from trainers.ppo.distributed import DistContext
    for n, world in ((16, 2), (10, 3), (5, 5)):
        shares = [DistContext(r, world, r, world, torch.device("cpu"), "gloo", 1.0).env_share(n) for r in range(world)]
        assert [i for first, count in shares for i in range(first, first + count)] == list(range(n))
    with pytest.raises(ValueError, match="smaller than the number of ranks"):
        DistContext(0, 4, 0, 4, torch.device("cpu"), "gloo", 1.0).env_share(3)


def test_torchrun_cli_train_and_resume(tmp_path):
    """``torchrun -m trainers.cli train`` with the usual arguments; every rank resumes from rank 0's checkpoint."""
    out = tmp_path / "run"
    base = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "-m", "trainers.cli", "train"]
    env = {**os.environ, "UNILAB_NUM_THREADS": "1"}
    first = subprocess.run([*base[:4], f"--master_port={_free_port()}", *base[4:], "--task", "Pendulum-v1",
                            "--num-envs", "8", "--total-steps", str(8 * 8 * 2), "--device", "cpu", "--out", str(out),
                            "--no-progress", "--dist-timeout", "30", "algo.num_steps=8", "log.tensorboard=false"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.stdout.count("done:") == 1  # rank 0 reports
    assert (out / "learning_curve.png").exists()
    second = subprocess.run([*base[:4], f"--master_port={_free_port()}", *base[4:], "--resume", str(out),
                             "--total-steps", str(8 * 8 * 3), "--no-progress"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "done: 192 steps, 3 iterations" in second.stdout, second.stdout
    assert len((out / "progress.csv").read_text().strip().splitlines()) == 1 + 3
