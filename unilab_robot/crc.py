"""The CRC the Unitree robots check on ``LowCmd_`` and write into ``LowState_``.

Unitree's ``crc32_core(uint32_t* ptr, uint32_t len)`` (``unitree_sdk2``, ``unitree_ros2``'s
``motor_crc.cpp``; ``unitree_sdk2_python``'s ``utils/crc.py`` reimplements it) runs a
most-significant-bit-first CRC-32 with polynomial ``0x04C11DB7``, initial value
``0xFFFFFFFF``, no reflection and no final XOR over ``len`` 32-bit words, where the words
are the message's C struct read in the machine's (little-endian) order and
``len = sizeof(struct) / 4 - 1``: every word of the struct but the last, which is the
``crc`` field itself. Fed the words' bytes big-endian, that is the catalogued
CRC-32/MPEG-2 (check value ``0x0376E6E7`` for ``b"123456789"``).

:func:`crc32_core` is the definition, bit by bit (slow, for tests); :func:`crc32_words` is
the same number through ``zlib`` (bit-reversed bytes in, bit-reversed and complemented
out), fast enough for every message at 500 Hz.
"""

from __future__ import annotations

import zlib

import numpy as np

POLYNOMIAL = 0x04C11DB7
_REVERSED_BYTE = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.uint8)


_MASKS: dict[np.dtype, np.ndarray] = {}


def field_mask(dtype: np.dtype) -> np.ndarray:
    """``uint8`` per byte of a record: 1 where a field lies, 0 on padding."""
    if dtype not in _MASKS:
        mask = np.zeros(dtype.itemsize, np.uint8)
        for name in dtype.names:
            sub, offset = dtype.fields[name][:2]
            base, shape = sub.subdtype if sub.subdtype is not None else (sub, ())
            inner = field_mask(base) if base.names else np.ones(base.itemsize, np.uint8)
            for i in range(int(np.prod(shape, dtype=np.int64))):
                start = offset + i * base.itemsize
                mask[start:start + base.itemsize] = inner
        _MASKS[dtype] = mask
    return _MASKS[dtype]


def c_image(msg: np.ndarray) -> bytes:
    """The record's C-struct byte image with every padding byte zero (NumPy copies carry padding along
    undefined; the robots' structs are zero-initialized)."""
    return (np.frombuffer(msg.tobytes(), np.uint8) * field_mask(msg.dtype)).tobytes()


def crc32_core(words) -> int:
    """Unitree's ``crc32_core`` over ``words`` (ints < 2**32), bit by bit: the reference definition."""
    crc = 0xFFFFFFFF
    for word in words:
        word = int(word)
        for bit in range(31, -1, -1):
            top = crc & 0x80000000
            crc = (crc << 1) & 0xFFFFFFFF
            if top:
                crc ^= POLYNOMIAL
            if (word >> bit) & 1:
                crc ^= POLYNOMIAL
    return crc


def _reverse32(value: int) -> int:
    return int(f"{value:032b}"[::-1], 2)


def crc32_mpeg2(data: bytes) -> int:
    """CRC-32/MPEG-2 of ``data``: zlib's reflected CRC-32 of the bit-reversed bytes, reflected back, un-complemented."""
    flipped = _REVERSED_BYTE[np.frombuffer(data, dtype=np.uint8)].tobytes()
    return _reverse32(zlib.crc32(flipped) ^ 0xFFFFFFFF)


def crc32_words(words: np.ndarray) -> int:
    """:func:`crc32_core` of a ``uint32`` array, fast."""
    return crc32_mpeg2(np.asarray(words, dtype=np.uint32).astype(">u4").tobytes())


def message_crc(msg: np.ndarray) -> int:
    """The CRC of a message record (:mod:`unilab_robot.messages`): over all its words but the last (``crc``),
    padding bytes zero (as the robots' zero-initialized structs have them; NumPy copies leave padding undefined)."""
    words = np.frombuffer(c_image(msg), dtype="<u4")
    return crc32_words(words[:-1])


def stamp_crc(msg: np.ndarray) -> np.ndarray:
    """Write the message's CRC into its ``crc`` field; returns ``msg``."""
    msg["crc"] = message_crc(msg)
    return msg


def crc_ok(msg: np.ndarray) -> bool:
    """Whether the message's ``crc`` field is the CRC of the rest of it."""
    return int(msg["crc"]) == message_crc(msg)
