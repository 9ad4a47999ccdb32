"""What carries the messages: a transport interface, an in-process bus, and a lossy, late link.

A :class:`Transport` moves message records (:mod:`unilab_robot.messages`) by topic.
:class:`LocalBus` does it in one process (tests, and the deterministic lock-step loop);
``unilab_robot.dds.DdsTransport`` does it over Cyclone DDS. :class:`Link` is the
imperfect wire the simulated robot can put on either: a fixed latency and Bernoulli loss per
message, each way.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


class Transport(Protocol):
    """Publish records on topics and take the ones that arrived."""

    def publish(self, topic: str, msg: np.ndarray) -> None:
        """Send one record (its dtype is the topic's)."""

    def take(self, topic: str) -> list[np.ndarray]:
        """The records that arrived on ``topic`` since the last take, oldest first (may be only the newest)."""

    def close(self) -> None:
        """Leave the wire."""


class LocalBus:
    """An in-process wire: ``bus.endpoint()`` gives transports that see each other's messages (not their own)."""

    def __init__(self) -> None:
        self._queues: list[dict[str, deque]] = []

    def endpoint(self) -> "LocalEndpoint":
        inbox: dict[str, deque] = {}
        self._queues.append(inbox)
        return LocalEndpoint(self, inbox)


class LocalEndpoint:
    """One participant on a :class:`LocalBus`."""

    def __init__(self, bus: LocalBus, inbox: dict[str, deque]) -> None:
        self.bus, self.inbox = bus, inbox

    def publish(self, topic: str, msg: np.ndarray) -> None:
        for other in self.bus._queues:
            if other is not self.inbox:
                other.setdefault(topic, deque()).append(msg.copy())

    def take(self, topic: str) -> list[np.ndarray]:
        q = self.inbox.get(topic)
        if not q:
            return []
        out = list(q)
        q.clear()
        return out

    def close(self) -> None:
        pass


@dataclass
class Link:
    """One direction of an imperfect wire: each message is lost with probability ``loss``, else arrives
    ``latency_s`` later. ``push(t, msg)`` at send time ``t``; ``ready(t)`` gives what has arrived by ``t``."""

    latency_s: float = 0.0
    loss: float = 0.0
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    sent: int = 0
    lost: int = 0

    def __post_init__(self) -> None:
        if not (self.latency_s >= 0.0 and 0.0 <= self.loss < 1.0):
            raise ValueError(f"latency must be >= 0 s and loss in [0, 1), got {self.latency_s} s and {self.loss}")
        self._line: deque = deque()

    def push(self, t: float, msg) -> None:
        self.sent += 1
        if self.loss and self.rng.random() < self.loss:
            self.lost += 1
            return
        self._line.append((t + self.latency_s, msg))

    def ready(self, t: float) -> list:
        out = []
        while self._line and self._line[0][0] <= t + 1e-12:
            out.append(self._line.popleft()[1])
        return out
