"""Per-env random streams, usable inside Numba kernels.

Every env owns one 64-bit state (an ``(N,)`` uint64 array). A stream is a
SplitMix64 sequence, so env ``i``'s draws depend only on its own seed, never on
``N``, on the other envs or on the thread count: env ``i`` of a batch seeded with
``seed`` draws exactly what a single env seeded with ``seed + i`` draws.

Independent consumers (the task, each wrapper) take separate streams by mixing a
``stream`` tag, derived from the consumer's name (:func:`stream_id`), into the seed
(:func:`seed_streams`).
"""

from __future__ import annotations

import hashlib

import numba as nb
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_TWO_PI = 2.0 * np.pi


def _splitmix64_scalar(x: int) -> int:
    mask = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & mask
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


#: The stream tags in use before streams were named, kept so that every recorded number stands: the
#: task's own draws, the spread of episode starts, and the sim-to-real wrappers by profile section.
RECORDED_STREAMS: dict[str, int] = {
    "task": 0, "episode_start_spread": 1,
    "observation_noise": 10, "action_noise": 11, "imu_bias_drift": 12, "action_latency": 13,
    "observation_latency": 14, "packet_loss": 15, "packet_loss/actions": 16, "motor_strength": 17,
    "domain_randomization": 18, "random_push": 19, "safety": 20,
}


def stream_id(name: str) -> int:
    """The stream tag of the consumer called ``name`` (a wrapper's profile section, say).

    A recorded name keeps its tag (:data:`RECORDED_STREAMS`); any other name gets 64 bits of its
    BLAKE2b hash with the top bit set, so a new consumer (a user's own wrapper) needs no number
    picked by hand and never shares a stream with a recorded one or with another name.
    """
    if name in RECORDED_STREAMS:
        return RECORDED_STREAMS[name]
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") | (1 << 63)


def seed_streams(seeds: np.ndarray, stream: int = 0) -> np.ndarray:
    """Initial states ``(N,) uint64`` for per-env seeds ``(N,)`` on a named stream.

    Args:
        seeds: one non-negative integer seed per env.
        stream: the consumer's tag (:func:`stream_id` of its name) so that
            consumers draw independent numbers.
    """
    out = np.empty(len(seeds), dtype=np.uint64)
    for k, s in enumerate(np.asarray(seeds, dtype=np.int64)):
        out[k] = _splitmix64_scalar(_splitmix64_scalar(int(s) & ((1 << 64) - 1)) ^ (stream * 0xD6E8FEB86659FD93 & ((1 << 64) - 1)))
    return out


@nb.njit(inline="always", cache=True)
def next_u64(state, i):
    """Advance env ``i``'s stream; return 64 random bits."""
    x = state[i] + _GOLDEN
    state[i] = x
    z = x
    z = (z ^ (z >> np.uint64(30))) * _MUL1
    z = (z ^ (z >> np.uint64(27))) * _MUL2
    return z ^ (z >> np.uint64(31))


@nb.njit(inline="always", cache=True)
def uniform(state, i):
    """A float64 in [0, 1) from env ``i``'s stream."""
    return (next_u64(state, i) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@nb.njit(inline="always", cache=True)
def uniform_range(state, i, low, high):
    """A float64 in [low, high) from env ``i``'s stream."""
    return low + (high - low) * uniform(state, i)


@nb.njit(inline="always", cache=True)
def normal(state, i):
    """A standard normal float64 from env ``i``'s stream (Box-Muller)."""
    u1 = 1.0 - uniform(state, i)  # (0, 1]
    u2 = uniform(state, i)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(_TWO_PI * u2)
