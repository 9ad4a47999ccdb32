"""Multi-node training as users launch it: two torchrun agents (one per "host") meeting at a c10d
rendezvous on the loopback address, one CPU rank each (gloo), training Go1 for a few iterations.

- the two-agent run equals a one-agent two-process run of the same seed, bit for bit;
- a "host" that dies (its agent and its rank killed) makes the other agent exit with the
  "another rank died" message, at once; one that hangs (stopped), within ``--dist-timeout``;
- with ``--max-restarts=1`` a rank that dies makes torchrun restart the group, which resumes
  from the run directory's last checkpoint and finishes (the ranks agree on a store prefix new
  to the attempt, since torchrun keeps its store, and the old attempt's keys, across restarts).

Every subprocess has a timeout; the agents run in their own sessions and are killed at the end.
"""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from tests.trainers.test_ppo_distributed import REPO, _free_port

ENVS, STEPS = 16, 8  # 8 envs per rank, 8 steps per rollout: 128 env steps an iteration
TRAIN = ["-m", "trainers.cli", "train", "--task", "UniLab/Go1Joystick-v0", "--num-envs", str(ENVS), "--device", "cpu",
         "--seed", "5", "--no-progress", "log.tensorboard=false", "log.plot=false", f"algo.num_steps={STEPS}",
         "algo.num_minibatches=2", "algo.num_epochs=2", "algo.reward_normalization=true",
         "policy.actor_hidden=[32,32]", "policy.critic_hidden=[32,32]"]
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]


def _train_args(out: Path, iterations: int, timeout_s: float = 30, save_interval: int = 1000) -> list[str]:
    return [*TRAIN, "--out", str(out), "--total-steps", str(ENVS * STEPS * iterations), "--dist-timeout",
            str(timeout_s), f"log.save_interval={save_interval}"]


def _env() -> dict:
    return {**os.environ, "UNILAB_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _wait_listening(port: int, proc: subprocess.Popen, timeout_s: float = 30) -> None:
    """Until the first agent hosts the rendezvous store (so the second one joins it as a client)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the first agent exited before hosting the rendezvous"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail("the first agent did not open the rendezvous port")


class _Agents:
    """Two torchrun agents, ``--nnodes=2 --nproc_per_node=1`` at ``c10d`` on 127.0.0.1; logs in files."""

    def __init__(self, tmp: Path, name: str, args: list[str], extra: tuple[str, ...] = ()):
        port = _free_port()
        self.logs = [(tmp / f"{name}{k}.out", tmp / f"{name}{k}.err") for k in range(2)]
        cmd = [*TORCHRUN, "--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=c10d",
               f"--rdzv_endpoint=127.0.0.1:{port}", f"--rdzv_id={name}", *extra, *args]
        self.procs: list[subprocess.Popen] = []
        try:
            for k, (out, err) in enumerate(self.logs):
                with open(out, "w") as fo, open(err, "w") as fe:
                    self.procs.append(subprocess.Popen(cmd, cwd=REPO, env=_env(), stdout=fo, stderr=fe,
                                                       start_new_session=True))
                if k == 0:
                    _wait_listening(port, self.procs[0])
        except BaseException:
            self.kill_all()
            raise

    def wait(self, timeout_s: float) -> list[int]:
        deadline = time.monotonic() + timeout_s
        for p in self.procs:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        return [p.returncode for p in self.procs]

    def text(self, k: int, which: int) -> str:
        return self.logs[k][which].read_text()

    def workers(self, k: int) -> list[int]:
        """Process ids of agent ``k``'s ranks."""
        return _workers(self.procs[k].pid)

    def kill_all(self) -> None:
        for p in self.procs:
            _kill_agent(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill_all()


def _workers(agent: int) -> list[int]:
    """Process ids of a torchrun agent's ranks (its children running the trainer)."""
    return [pid for pid in _children(agent) if b"trainers.cli" in _cmdline(pid)]


def _kill_agent(proc: subprocess.Popen) -> None:
    """A running agent and its ranks (which run in sessions of their own, so they outlive a killed agent)."""
    if proc.poll() is None:
        for pid in _workers(proc.pid):
            _kill(pid)
        _kill(proc.pid)
        proc.wait(timeout=30)


def _children(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(d.name))
    return kids


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _rows(out: Path) -> list[dict]:
    path = out / "progress.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _wait_rows(out: Path, n: int, agents: _Agents, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len(_rows(out)) >= n:
            return
        assert all(p.poll() is None for p in agents.procs), [agents.text(k, 1)[-2000:] for k in range(2)]
        time.sleep(0.02)
    pytest.fail(f"training did not reach iteration {n}")


def _learned(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if not k.startswith("perf/")} for r in rows]


def test_two_agents_equal_one_agent_with_two_ranks(tmp_path):
    """Same seed and arguments: 2 hosts x 1 rank gives the checkpoint and log of 1 host x 2 ranks."""
    iterations = 3
    with open(tmp_path / "one.err", "w") as err:  # one host, two ranks, started alongside
        one = subprocess.Popen([*TORCHRUN, "--standalone", "--nproc_per_node=2",
                                *_train_args(tmp_path / "one", iterations)], cwd=REPO, env=_env(),
                               stdout=subprocess.DEVNULL, stderr=err)
    try:
        with _Agents(tmp_path, "multi", _train_args(tmp_path / "multi", iterations)) as agents:
            codes = agents.wait(90)
            assert codes == [0, 0], [agents.text(k, 1)[-3000:] for k in range(2)]
            assert sum(agents.text(k, 0).count("done:") for k in range(2)) == 1  # rank 0 reports
        assert one.wait(timeout=90) == 0, (tmp_path / "one.err").read_text()[-3000:]
    finally:
        _kill_agent(one)
    a = torch.load(tmp_path / "multi" / "checkpoint.pt", weights_only=True)
    b = torch.load(tmp_path / "one" / "checkpoint.pt", weights_only=True)
    assert a["iteration"] == b["iteration"] == iterations
    for part in ("policy", "obs_normalizer", "critic_normalizer"):
        for name, t in b["algo"][part].items():
            assert torch.equal(a["algo"][part][name], t), f"{part}.{name} differs"
    assert torch.equal(a["reward_norm"]["moments"], b["reward_norm"]["moments"])
    assert _learned(_rows(tmp_path / "multi")) == _learned(_rows(tmp_path / "one"))


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "frozen"])
def test_dead_host_makes_the_other_exit(tmp_path, sig):
    """Kill (SIGKILL) or freeze (SIGSTOP) one agent and its rank, as a host that dies or hangs: the other
    rank stops with the "another rank died" message and its agent exits non-zero, at once for a closed
    connection and within the process-group timeout (--dist-timeout) for a silent peer.

    No wall-clock bound is asserted (a starved machine is slow, not wrong): a killed host is tested under a
    600 s --dist-timeout, so the other agent can only end within the 120 s guard by seeing the connection
    close; a frozen one under a 6 s one, so it ends by the timeout, where without it the agent would wait forever."""
    out, timeout_s = tmp_path / "run", (600 if sig == signal.SIGKILL else 6)
    with _Agents(tmp_path, "dead", _train_args(out, 100_000, timeout_s)) as agents:
        _wait_rows(out, 2, agents)
        for pid in [*agents.workers(1), agents.procs[1].pid]:
            os.kill(pid, sig)
        code = agents.procs[0].wait(timeout=120 + (0 if sig == signal.SIGKILL else timeout_s))  # a hang guard
        err = agents.text(0, 1)
    assert code != 0, err[-3000:]
    assert "distributed training aborted" in err and "another rank died" in err, err[-3000:]


def test_restarted_group_resumes_from_the_last_checkpoint(tmp_path):
    """``--max-restarts=1``: a rank killed mid-run fails the group; torchrun starts it again and the new
    group goes on from the run directory's last checkpoint (the log before it kept) to the end."""
    out, iterations, every = tmp_path / "run", 60, 4
    with _Agents(tmp_path, "restart", _train_args(out, iterations, 20, save_interval=every),
                 extra=("--max-restarts=1",)) as agents:
        _wait_rows(out, every + 1, agents)
        before = _rows(out)[:every]
        workers = agents.workers(1)
        assert len(workers) == 1
        _kill(workers[0])
        codes = agents.wait(100)
        outs = "".join(agents.text(k, 0) for k in range(2))
        errs = "".join(agents.text(k, 1) for k in range(2))
    assert codes == [0, 0], errs[-4000:]
    assert "torchrun restarted the group (restart 1): resuming from" in errs, errs[-4000:]
    assert f"done: {ENVS * STEPS * iterations} steps, {iterations} iterations" in outs, outs
    rows = _rows(out)
    assert [int(r["iteration"]) for r in rows] == list(range(1, iterations + 1))
    assert rows[:every] == before  # resumed: the first attempt's rows up to its checkpoint are kept as written
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    assert ckpt["iteration"] == iterations and ckpt["env_steps"] == ENVS * STEPS * iterations


def test_restart_resume_choice():
    from trainers.ppo.distributed import DistributedError, choose_restart_resume

    ckpt = Path("runs/x/checkpoint.pt")
    assert choose_restart_resume([(0, True), (0, True)], ckpt, None) is None  # a first launch: as launched
    assert choose_restart_resume([(0, True), (0, True)], ckpt, "old.pt") == "old.pt"
    assert choose_restart_resume([(0, True), (1, True)], ckpt, "old.pt") == ckpt  # one host restarted: all resume
    assert choose_restart_resume([(1, False), (1, False)], ckpt, None) is None  # nothing saved yet: start over
    with pytest.raises(DistributedError, match="shares"):  # rank 0 on a host without the run directory
        choose_restart_resume([(1, False), (1, True)], ckpt, None)


def test_attempt_token_ignores_an_earlier_attempts_keys():
    """Ranks that meet on a store an earlier attempt left keys in agree on one new token, every time."""
    import threading

    from torch.distributed import HashStore

    from trainers.ppo.distributed import DistributedError, attempt_token

    store = HashStore()
    for key, value in (("request/1", "old"), ("answer/1", "old:stale"), ("ack/1", "old:stale"), ("request/2", "x")):
        store.set(f"unilab/attempt/{key}", value)
    seen = set()
    for _ in range(3):
        got: dict = {}
        threads = [threading.Thread(target=lambda r=r: got.__setitem__(r, attempt_token(store, r, 3, 10.0)))
                   for r in (2, 0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        assert len(got) == 3 and len(set(got.values())) == 1, got
        seen |= set(got.values())
    assert len(seen) == 3 and "stale" not in seen
    with pytest.raises(DistributedError, match="another rank died"):  # rank 1 never comes
        attempt_token(HashStore(), 0, 2, 0.2)


def test_attempts_on_torchruns_store_are_counted(monkeypatch):
    """On torchrun's shared store (TORCHELASTIC_USE_AGENT_STORE) each attempt joins under a new prefix and
    rank 0 counts the attempts of the launch before it, which torchrun leaves uncounted after a host joins."""
    import torch.distributed as tdist
    from torch.distributed import TCPStore

    from trainers.ppo.distributed import _init_group

    server = TCPStore("127.0.0.1", 0, 1, is_master=True)
    monkeypatch.setenv("TORCHELASTIC_USE_AGENT_STORE", "True")
    for k, v in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(server.port), "RANK": "0", "WORLD_SIZE": "1"}.items():
        monkeypatch.setenv(k, v)
    for attempt in range(3):
        try:
            assert _init_group("gloo", 10.0) == attempt
            t = torch.ones(1)
            tdist.all_reduce(t)
            assert t.item() == 1.0
        finally:
            if tdist.is_initialized():
                tdist.destroy_process_group()
