"""The soak's robots and fleets: one robot is the play loop of :mod:`trainers.play` split into the
computer's half (``act``) and the world's half (``simulate``); a fleet runs K of them under one
concurrency model (one process each, one thread each, or one loop for all)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import traceback
from typing import Sequence

from benchmarks.soak.pacing import paced_loop, realtime

WORKERS = ("process", "thread", "loop")


@dataclasses.dataclass(frozen=True)
class RobotConfig:
    folder: str       # holds policy.onnx + deploy_spec.json
    seed: int
    guard: bool


class SoakRobot:
    """A :class:`trainers.play.Player` (spec observation, ONNX policy, safety guard) as the soak steps it.

    ``act()`` is :meth:`Player.act` (observe, infer, guard, write ``ctrl``); ``simulate()`` is
    :meth:`Player.simulate` (physics substeps), with a reset after a fall or at the episode's end.
    """

    def __init__(self, config: RobotConfig) -> None:
        from trainers.play import Player, find_policy

        self.player = Player(find_policy(config.folder), seed=config.seed, safety="on" if config.guard else "off")
        self.max_steps = self.player.spec.episode.max_steps
        for _ in range(3):  # first calls allocate (onnxruntime, NumPy): not part of the soak
            self.player.control_step()
        self.player.reset()
        self.falls = self.episodes = 0
        self._trips = self.player.guard.counts["trips"] if self.player.guard is not None else 0

    def act(self) -> None:
        self.player.act()

    def simulate(self) -> None:
        p = self.player
        fell = p.simulate()
        if fell or p.step_count >= self.max_steps:
            self.falls += bool(fell)
            self.episodes += 1
            p.reset()

    def counters(self) -> dict:
        """Falls, ended episodes and safe-mode trips since the last call."""
        guard = self.player.guard
        trips = guard.counts["trips"] if guard is not None else 0
        out = {"falls": self.falls, "episodes": self.episodes, "guard_trips": trips - self._trips}
        self.falls = self.episodes = 0
        self._trips = trips
        return out


# --- fleets: K robots under one concurrency model -------------------------------------------------


class LoopFleet:
    """One thread serving all K robots earliest-release-first."""

    def __init__(self, configs: Sequence[RobotConfig], rt_priority: int = 0) -> None:
        self.robots = [SoakRobot(c) for c in configs]
        self.rt_priority = rt_priority

    def run(self, k: int, period_ns: int, phases_ns: Sequence[int], duration_ns: int, lead_ns: int) -> tuple:
        with realtime(self.rt_priority):
            t0 = time.monotonic_ns() + lead_ns
            records = paced_loop(self.robots[:k], period_ns, phases_ns, t0, duration_ns)
        return records, [r.counters() for r in self.robots[:k]]

    def close(self) -> None:
        pass


class ThreadFleet(LoopFleet):
    """K threads in one process, one robot each."""

    def run(self, k: int, period_ns: int, phases_ns: Sequence[int], duration_ns: int, lead_ns: int) -> tuple:
        records: list = [None] * k
        errors: list = []
        t0 = time.monotonic_ns() + lead_ns

        def one(i: int) -> None:
            try:
                with realtime(self.rt_priority):
                    records[i] = paced_loop([self.robots[i]], period_ns, [phases_ns[i]], t0, duration_ns)[0]
            except BaseException:  # noqa: BLE001 - reported by the caller
                errors.append(traceback.format_exc())

        threads = [threading.Thread(target=one, args=(i,), name=f"robot-{i}", daemon=True) for i in range(k)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError(f"a robot thread failed:\n{errors[0]}")
        return records, [r.counters() for r in self.robots[:k]]


def _worker(conn, config: RobotConfig, rt_priority: int) -> None:
    """One robot's process: build it, say ready, then run the paced loop on each request until ``None``."""
    try:
        robot = SoakRobot(config)
        conn.send(("ready", None))
        while (request := conn.recv()) is not None:
            period_ns, phase_ns, t0_ns, duration_ns = request
            with realtime(rt_priority):
                record = paced_loop([robot], period_ns, [phase_ns], t0_ns, duration_ns)[0]
            conn.send(("done", (record, robot.counters())))
    except BaseException:  # noqa: BLE001 - sent to the parent
        with contextlib.suppress(Exception):
            conn.send(("error", traceback.format_exc()))


class ProcessFleet:
    """K processes, one robot each, forked from a forkserver that imported the play stack once."""

    def __init__(self, configs: Sequence[RobotConfig], rt_priority: int = 0, timeout_s: float = 300.0) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["numpy", "mujoco", "onnxruntime", "trainers.play"])
        self.timeout_s = timeout_s
        self.procs, self.conns = [], []
        for c in configs:
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child, c, rt_priority), name=f"robot-{c.seed}", daemon=True)
            p.start()
            child.close()
            self.procs.append(p)
            self.conns.append(parent)
        try:
            for conn in self.conns:
                self._receive(conn, "ready")
        except BaseException:
            self.close()
            raise

    def _receive(self, conn, expected: str):
        if not conn.poll(self.timeout_s):
            raise RuntimeError(f"a robot process sent nothing in {self.timeout_s:.0f} s")
        kind, payload = conn.recv()
        if kind == "error":
            raise RuntimeError(f"a robot process failed:\n{payload}")
        assert kind == expected, (kind, expected)
        return payload

    def run(self, k: int, period_ns: int, phases_ns: Sequence[int], duration_ns: int, lead_ns: int) -> tuple:
        t0 = time.monotonic_ns() + lead_ns  # CLOCK_MONOTONIC: one clock for every process
        for i in range(k):
            self.conns[i].send((period_ns, phases_ns[i], t0, duration_ns))
        done = [self._receive(self.conns[i], "done") for i in range(k)]
        return [d[0] for d in done], [d[1] for d in done]

    def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(Exception):
                conn.send(None)
        for p in self.procs:
            p.join(5)
            if p.is_alive():
                p.terminate()
                p.join(5)


FLEETS = {"process": ProcessFleet, "thread": ThreadFleet, "loop": LoopFleet}
