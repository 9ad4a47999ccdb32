"""Data-parallel PPO on ``torch.distributed`` (several GPUs, several hosts; gloo on CPU).

Launch with ``torchrun`` and the usual ``unilab train`` arguments::

    torchrun --nproc_per_node=4 -m trainers.cli train --task UniLab/Go1Joystick-v0 --num-envs 8192

Each rank (one process) owns:

- its share of ``num_envs`` (``config.num_envs`` is the *total* over all ranks), a batched
  env seeded with ``seed + first_global_env_index``: with UniLab's ``env i <- seed + i``
  rule the union of the ranks' envs is exactly the single-process env of the same seed;
- its own device (``cuda:LOCAL_RANK`` with NCCL, or the CPU with gloo) and its own
  action-noise / minibatch generator (``seed + rank * RANK_SEED_STRIDE``);
- ``cpus // LOCAL_WORLD_SIZE`` threads (at least 1) for MuJoCo, Numba and torch, so the
  ranks of one host do not oversubscribe its cores.

Parameters start identical (broadcast from rank 0) and stay identical: :class:`DistributedPPO`
averages the gradients (one flat all-reduce per minibatch, each rank weighted by its share
of the envs), the KL that drives the adaptive learning rate, and the observation-normalizer
moments and (with ``algo.reward_normalization``) the return statistics that scale the rewards,
in one all-reduce per rollout. Each rank shuffles its own rollout into minibatches. Rank 0
alone writes logs, checkpoints and the learning curve; every rank resumes from rank 0's
checkpoint (the env state of a distributed run is per rank, so resumed envs are re-seeded;
the learner state is restored exactly). The process group has a timeout (``--dist-timeout``,
``UNILAB_DIST_TIMEOUT``; default 300 s): if a rank dies, the others raise
:class:`DistributedError` instead of hanging. When torchrun restarts the group
(``--max-restarts``), it resumes from the run directory's last checkpoint
(:func:`restart_resume`). The CUDA-graph update is off under distributed training (the
eager path runs the collectives).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import os

import numpy as np
import torch
import torch.distributed as tdist

from .algorithm import PPO

RANK_SEED_STRIDE = 1_000_003  # per-rank generator seed offset (a prime, far from env seed offsets)
DEFAULT_TIMEOUT_S = 300.0
TIMEOUT_ENV = "UNILAB_DIST_TIMEOUT"
RESTART_ENV = "TORCHELASTIC_RESTART_COUNT"  # set by torchrun: 0, then 1, 2, ... after each group restart
AGENT_STORE_ENV = "TORCHELASTIC_USE_AGENT_STORE"  # "True": the ranks share torchrun's rendezvous TCPStore
_HANDSHAKE = "unilab/attempt"
_SUMMED_STATS = ("episode/finished", "env/diverged")


class DistributedError(RuntimeError):
    """A collective failed or timed out: another rank died, hung or lost the network."""


@dataclasses.dataclass(frozen=True)
class DistContext:
    """Where this process sits in the job (read from torchrun's environment variables)."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    device: torch.device
    backend: str
    timeout_s: float
    owns_group: bool = False  # setup() created the process group (train() then destroys it)
    earlier_attempts: int = 0  # rank 0: attempts of this launch before this one, counted on torchrun's store

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def env_share(self, num_envs: int) -> tuple[int, int]:
        """``(first global env index, count)`` of this rank's envs (remainder to the first ranks)."""
        if num_envs < self.world_size:
            raise ValueError(f"num_envs ({num_envs}) is smaller than the number of ranks ({self.world_size})")
        base, rem = divmod(num_envs, self.world_size)
        return self.rank * base + min(self.rank, rem), base + (self.rank < rem)

    def num_threads(self) -> int:
        """Threads per rank: ``UNILAB_NUM_THREADS`` if set, else this host's CPUs // local ranks."""
        from unilab_envs.threads import ENV_VAR, available_cpus
        raw = os.environ.get(ENV_VAR, "").strip()
        if raw:
            return max(1, int(raw))
        return max(1, available_cpus() // max(1, self.local_world_size))


def launched_world_size() -> int:
    """``WORLD_SIZE`` set by torchrun (1 when not launched by it)."""
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def timeout_from_env(timeout_s: float | None = None) -> float:
    if timeout_s is not None:
        return float(timeout_s)
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    return float(raw) if raw else DEFAULT_TIMEOUT_S


def setup(device: str = "auto", timeout_s: float | None = None) -> DistContext | None:
    """Join the process group when launched by torchrun with ``WORLD_SIZE > 1``; else None.

    NCCL on ``cuda:LOCAL_RANK`` when CUDA is wanted (``device`` auto/cuda) and present, gloo
    on the CPU otherwise. Reuses a process group the caller already initialized.
    """
    if launched_world_size() <= 1 and not (tdist.is_available() and tdist.is_initialized()):
        return None
    env = os.environ
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in env]
    if missing and not tdist.is_initialized():
        raise DistributedError(f"WORLD_SIZE={env.get('WORLD_SIZE')} but {', '.join(missing)} not set: "
                               f"launch with torchrun (it sets them)")
    timeout_s = timeout_from_env(timeout_s)
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise DistributedError(f"distributed timeout must be a positive number of seconds, got {timeout_s}")
    local_rank = int(env.get("LOCAL_RANK", "0"))
    local_world = int(env.get("LOCAL_WORLD_SIZE", "1"))
    use_cuda = device != "cpu" and torch.cuda.is_available()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available (use --device cpu)")
    if use_cuda:
        dev = torch.device("cuda", local_rank)
        torch.cuda.set_device(dev)
    else:
        dev = torch.device("cpu")
    backend = "nccl" if use_cuda else "gloo"
    owns = not tdist.is_initialized()
    earlier = 0
    if owns:
        kwargs = {"device_id": dev} if use_cuda else {}
        earlier = _collective(_init_group, backend, timeout_s,
                              what=f"joining the process group at {env.get('MASTER_ADDR')}:{env.get('MASTER_PORT')}",
                              **kwargs)
    backend = tdist.get_backend()
    return DistContext(tdist.get_rank(), tdist.get_world_size(), local_rank, local_world, dev, backend, timeout_s,
                       owns, earlier)


def _init_group(backend: str, timeout_s: float, **kwargs) -> int:
    """``init_process_group`` from torchrun's variables; on torchrun's shared store, under a fresh prefix.

    torchrun (c10d or static rendezvous, torch >= 2.5) hands its ranks the agent's TCPStore and
    keeps it across a group restart (``--max-restarts``) without scoping the keys by attempt, so
    a restarted rank can read the previous attempt's addresses and fail to connect (pytorch
    issue 135712). The ranks first agree on a prefix new to this attempt (:func:`attempt_token`).
    Returns, on rank 0, how many attempts of this launch joined that store before (else 0).
    """
    timeout = datetime.timedelta(seconds=timeout_s)
    if os.environ.get(AGENT_STORE_ENV) != "True":
        tdist.init_process_group(backend, timeout=timeout, **kwargs)
        return 0
    env = os.environ
    rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
    agent = tdist.TCPStore(env["MASTER_ADDR"], int(env["MASTER_PORT"]), world, is_master=False, timeout=timeout)
    token = attempt_token(agent, rank, world, timeout_s)
    earlier = agent.add(f"{_HANDSHAKE}/count", 1) - 1 if rank == 0 else 0
    tdist.init_process_group(backend, store=tdist.PrefixStore(f"unilab/{token}", agent), rank=rank,
                             world_size=world, timeout=timeout, **kwargs)
    return earlier


def attempt_token(store, rank: int, world: int, timeout_s: float, poll_s: float = 0.02) -> str:
    """A token that rank 0 makes new and every rank of this attempt receives, on a ``store`` that
    may still hold any keys of earlier attempts (whose ranks are gone).

    Rank ``r > 0`` posts a fresh nonce; rank 0 answers each nonce it finds with ``nonce:token``
    and returns once every rank acknowledged ``nonce:token`` with its current nonce (only a rank
    of this attempt can know the token); rank ``r`` waits for the answer to its own nonce.
    Stale requests, answers and acknowledgements never match. Raises :class:`DistributedError`
    after ``timeout_s``.
    """
    import time
    import uuid

    def read(key: str) -> str | None:
        return store.get(key).decode() if store.check([key]) else None

    deadline = time.monotonic() + timeout_s
    mine = uuid.uuid4().hex
    if rank == 0:
        answered: dict[int, str] = {}
        waiting = set(range(1, world))
        while waiting:
            for r in sorted(waiting):
                request = read(f"{_HANDSHAKE}/request/{r}")
                if request is not None and answered.get(r) != request:
                    store.set(f"{_HANDSHAKE}/answer/{r}", f"{request}:{mine}")
                    answered[r] = request
                if r in answered and read(f"{_HANDSHAKE}/ack/{r}") == f"{answered[r]}:{mine}":
                    waiting.discard(r)
            if waiting:
                _wait_or_fail(deadline, poll_s, f"rank 0 waited for rank(s) {sorted(waiting)} to join")
        return mine
    store.set(f"{_HANDSHAKE}/request/{rank}", mine)
    while True:
        answer = read(f"{_HANDSHAKE}/answer/{rank}")
        if answer is not None and answer.startswith(mine + ":"):
            store.set(f"{_HANDSHAKE}/ack/{rank}", answer)
            return answer.split(":", 1)[1]
        _wait_or_fail(deadline, poll_s, f"rank {rank} waited for rank 0 to answer")


def _wait_or_fail(deadline: float, poll_s: float, what: str) -> None:
    import time

    if time.monotonic() > deadline:
        raise DistributedError(f"{what} until the timeout: another rank died, hung or lost the network")
    time.sleep(poll_s)


def teardown() -> None:
    """Leave the process group together: a rank that closes its gloo pairs while a peer is
    still using them can make that peer abort ("terminate called without an active exception")."""
    if tdist.is_available() and tdist.is_initialized():
        barrier()
        tdist.destroy_process_group()


def _collective(fn, *args, what: str, **kwargs):
    """Run a collective; turn a backend failure into a :class:`DistributedError` that says what happened."""
    try:
        return fn(*args, **kwargs)
    except DistributedError:
        raise
    except (RuntimeError, OSError) as e:  # DistBackendError, DistNetworkError are RuntimeErrors
        rank = tdist.get_rank() if tdist.is_initialized() else "?"
        world = tdist.get_world_size() if tdist.is_initialized() else "?"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DistributedError(
            f"rank {rank}/{world}: {what} failed: another rank died, hung or lost the network "
            f"({type(e).__name__}: {first})") from e


# --------------------------------------------------------------------------- the algorithm


class DistributedPPO(PPO):
    """PPO whose three DDP hooks reduce across ranks so every rank takes the same step.

    ``weight`` is this rank's share of the total envs (``local_envs / num_envs``): gradients,
    KL and moments are weighted sums, so uneven shares average like one big batch. A reward
    normalizer given to :meth:`share_reward_normalizer` is agreed with the observation moments.
    """

    def __init__(self, *args, weight: float, **kwargs):
        super().__init__(*args, **kwargs)
        if self.graphed is not None:
            raise ValueError("DistributedPPO runs the eager update: build it with algo.cuda_graph=false")
        self.weight = float(weight)
        self.reward_norm = None

    def share_reward_normalizer(self, reward_norm) -> None:
        """All-reduce ``reward_norm``'s return statistics (a
        :class:`~trainers.ppo.reward_norm.RewardNormalizer`) in every :meth:`update_normalizers`
        (the end of each rollout), so every rank scales rewards by the same statistics. Every rank
        must share one, or none."""
        self.reward_norm = reward_norm

    def update_normalizers(self, obs_moments, critic_moments) -> None:
        parts = [obs_moments] + ([critic_moments] if critic_moments is not None else [])
        if self.reward_norm is not None:
            parts.append(self.reward_norm.pending_moments().to(obs_moments.device))
        flat = torch.cat([p.reshape(-1).to(torch.float64) for p in parts])
        _collective(tdist.all_reduce, flat, what="all-reduce of the observation moments")
        n_obs = obs_moments.numel()
        n_crit = critic_moments.numel() if critic_moments is not None else 0
        obs = flat[:n_obs]
        crit = flat[n_obs:n_obs + n_crit] if critic_moments is not None else None
        if self.reward_norm is not None:
            self.reward_norm.apply_all_reduced(flat[n_obs + n_crit:])
        super().update_normalizers(obs, crit)

    def reduce_kl(self, kl: torch.Tensor) -> torch.Tensor:
        kl = (kl.detach().float() * self.weight).reshape(1)
        _collective(tdist.all_reduce, kl, what="all-reduce of the KL")
        return kl[0]

    def reduce_gradients(self) -> None:
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        flat = torch.cat([g.reshape(-1) for g in grads]).mul_(self.weight)
        _collective(tdist.all_reduce, flat, what="all-reduce of the gradients")
        offset = 0
        for p, g in zip(self.params, grads):
            n = g.numel()
            p.grad = flat[offset:offset + n].view_as(p)
            offset += n

    def broadcast_from_main(self) -> None:
        """Copy rank 0's parameters and normalizer statistics to every rank (one flat broadcast per dtype)."""
        tensors = [*self.policy.state_dict().values(), *self.obs_normalizer.state_dict().values()]
        if self.critic_normalizer is not None:
            tensors += list(self.critic_normalizer.state_dict().values())
        for dtype in sorted({t.dtype for t in tensors}, key=str):
            group = [t for t in tensors if t.dtype == dtype]
            flat = torch.cat([t.reshape(-1) for t in group])
            _collective(tdist.broadcast, flat, src=0, what="broadcast of the parameters")
            offset = 0
            with torch.no_grad():
                for t in group:
                    t.copy_(flat[offset:offset + t.numel()].view_as(t))
                    offset += t.numel()


# --------------------------------------------------------------------------- runner helpers


def gather_stats(stats: dict, stop: bool) -> tuple[dict, bool]:
    """Every rank's iteration stats merged (counts summed, others NaN-averaged), and whether any rank stops.

    ``perf/*`` are rank 0's own timings.
    """
    world = tdist.get_world_size()
    got: list = [None] * world
    _collective(tdist.all_gather_object, got, (stats, bool(stop)), what="gather of the iteration statistics")
    merged: dict = {}
    keys = dict.fromkeys(k for s, _ in got for k in s)
    for k in keys:
        vals = [float(s[k]) for s, _ in got if k in s]
        if k.startswith("perf/"):
            merged[k] = got[0][0].get(k, vals[0])
        elif k in _SUMMED_STATS:
            merged[k] = float(sum(vals))
        else:
            finite = [v for v in vals if not math.isnan(v)]
            merged[k] = float(np.mean(finite)) if finite else float("nan")
    return merged, any(s for _, s in got)


def any_rank(flag: bool) -> bool:
    t = torch.tensor([1.0 if flag else 0.0])
    if tdist.get_backend() == "nccl":
        t = t.cuda()
    _collective(tdist.all_reduce, t, op=tdist.ReduceOp.MAX, what="all-reduce of the stop flag")
    return bool(t.item() > 0)


def restart_count() -> int:
    """How often torchrun restarted this process's worker group (``TORCHELASTIC_RESTART_COUNT``; 0 outside torchrun)."""
    return int(os.environ.get(RESTART_ENV, "0") or 0)


def choose_restart_resume(reports: list[tuple[int, bool]], checkpoint, resume):
    """What a group resumes from, given every rank's ``(restart_count, sees checkpoint)`` (rank order).

    A group no rank of which was restarted goes on as launched (``resume``). After a restart
    (torchrun counts per host: a host that joined anew reports 0, so any rank's count counts),
    the run directory's ``checkpoint`` if rank 0 sees it, else ``resume`` (the launch's own
    ``--resume``, or None: start over). :class:`DistributedError` when rank 0 cannot see the
    checkpoint another rank sees (a run directory that is not on a shared filesystem).
    """
    if not any(count > 0 for count, _ in reports):
        return resume
    if reports[0][1]:
        return checkpoint
    seen = [r for r, (_, sees) in enumerate(reports) if sees]
    if seen:
        raise DistributedError(
            f"torchrun restarted the group, and rank 0 cannot see {checkpoint} that rank(s) {seen} see: rank 0 "
            f"reads the checkpoint, and torchrun may place it on another host after a restart; put the run "
            f"directory (--out) on a filesystem every host shares")
    return resume


def restart_resume(dist: DistContext, out_dir, resume=None):
    """The checkpoint this (possibly restarted) group resumes from: call on every rank, before training.

    With ``torchrun --max-restarts=N`` a failed group (a rank died) is started again with the
    same command; the restarted group goes on from ``out_dir/checkpoint.pt`` (the last one
    rank 0 saved) instead of starting over or from the launch's ``--resume`` (see
    :func:`choose_restart_resume`). A rank counts as restarted when torchrun says so
    (``TORCHELASTIC_RESTART_COUNT``) or, rank 0, when an earlier attempt of the launch joined
    torchrun's store (``dist.earlier_attempts``: a group restarted because a host joined
    anew, which torchrun does not count). Rank 0 says what it chose on stderr.
    """
    import sys
    from pathlib import Path

    checkpoint = Path(out_dir) / "checkpoint.pt"
    reports: list = [None] * dist.world_size
    mine = (max(restart_count(), dist.earlier_attempts), checkpoint.is_file())
    _collective(tdist.all_gather_object, reports, mine, what="gather of the restart state")
    chosen = choose_restart_resume(reports, checkpoint, resume)
    restarts = max(count for count, _ in reports)
    if restarts and tdist.get_rank() == 0:
        how = f"resuming from {chosen}" if chosen is not None else "no checkpoint saved yet: starting over"
        print(f"[unilab] torchrun restarted the group (restart {restarts}): {how}", file=sys.stderr, flush=True)
    return chosen


def rank_generator_seed(seed: int, rank: int) -> int:
    return int(seed) + int(rank) * RANK_SEED_STRIDE


def broadcast_object(obj):
    """Rank 0's ``obj`` on every rank (pickled; for checkpoints and small messages)."""
    box = [obj]
    _collective(tdist.broadcast_object_list, box, src=0, what="broadcast from rank 0")
    return box[0]


def barrier() -> None:
    _collective(tdist.barrier, what="barrier")


def exit_finished_rank(code: int = 0) -> None:
    """End a rank whose work is done and saved, skipping C++ teardown (never returns).

    After the process group is destroyed, gloo's connection threads can still abort a
    rank at interpreter exit ("terminate called without an active exception", seen in
    about 1 of 20 CPU runs), which torchrun then reports as a failed run. The CLI calls
    this at the end of a distributed ``unilab train``; a script that calls
    :func:`trainers.ppo.train` under torchrun can end the same way.
    """
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
