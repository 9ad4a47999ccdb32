"""The low-level messages: sizes and offsets of Unitree's C structs, the CRC by hand, the remote bytes."""

from __future__ import annotations

import numpy as np
import pytest

from unilab_robot import messages as M
from unilab_robot.crc import c_image, crc32_core, crc32_mpeg2, crc32_words, crc_ok, message_crc, stamp_crc
from unilab_robot.remote import Remote, pack_remote, unpack_remote, velocity_command


def test_struct_sizes_are_the_published_ones():
    # unitree_sdk2_python utils/crc.py: "size 1004" (hg LowCmd), 2092 (hg LowState), 812 (go LowCmd), 1180 (go LowState)
    assert (M.HG_LOW_CMD.itemsize, M.HG_LOW_STATE.itemsize) == (1004, 2092)
    assert (M.GO_LOW_CMD.itemsize, M.GO_LOW_STATE.itemsize) == (812, 1180)


def test_field_offsets_by_hand():
    # hg LowCmd: 2 octets + 2 padding, then 35 MotorCmd_ of 1 + 3 pad + 5 floats + 1 uint32 = 28 bytes
    assert M.HG_LOW_CMD.fields["motor_cmd"][1] == 4 and M.HG_MOTOR_CMD.itemsize == 28
    assert M.HG_LOW_CMD.fields["crc"][1] == 4 + 35 * 28 + 16
    # hg LowState: version 8 + 2 octets + 2 pad + tick 4 = 16; IMU 13 floats + int16 + 2 pad = 56; motors 35 x 56
    assert M.HG_LOW_STATE.fields["imu_state"][1] == 16 and M.HG_IMU_STATE.itemsize == 56
    assert M.HG_LOW_STATE.fields["motor_state"][1] == 72 and M.HG_MOTOR_STATE.itemsize == 56
    assert M.HG_LOW_STATE.fields["wireless_remote"][1] == 72 + 35 * 56
    # go LowCmd: head 2 + 2 octets + sn 8 + version 8 + bandwidth 2 + 2 pad = 24; MotorCmd_ 1 + 3 + 20 + 12 = 36
    assert M.GO_LOW_CMD.fields["motor_cmd"][1] == 24 and M.GO_MOTOR_CMD.itemsize == 36
    assert M.GO_LOW_STATE.fields["wireless_remote"][1] == 1104


def test_crc_hand_vectors():
    assert crc32_core([]) == 0xFFFFFFFF
    # the register starts equal to the word: every feedback bit cancels the data bit, 32 shifts leave 0
    assert crc32_core([0xFFFFFFFF]) == 0
    assert crc32_core([0xFFFFFFFF, 0, 0]) == 0  # zeros from a zero register stay zero
    # the last bit differs: after 31 cancelling bits the register is 0x80000000; its top bit feeds the polynomial
    assert crc32_core([0xFFFFFFFE]) == 0x04C11DB7
    # the catalogue's CRC-32/MPEG-2 check value
    assert crc32_mpeg2(b"123456789") == 0x0376E6E7


def test_fast_crc_equals_the_bitwise_definition():
    words = np.random.default_rng(0).integers(0, 2**32, 64, dtype=np.uint64)
    assert crc32_words(words) == crc32_core(words)


def test_message_crc_covers_every_word_but_the_crc():
    msg = M.new_cmd(M.HG)
    msg["motor_cmd"]["q"][:29] = np.linspace(-1, 1, 29)
    stamp_crc(msg)
    assert crc_ok(msg)
    words = np.frombuffer(c_image(msg), dtype="<u4")
    assert int(msg["crc"]) == crc32_core(words[:-1]) == int(words[-1])  # (1004 / 4) - 1 words, as crc32_core's len
    assert crc_ok(msg.copy())  # padding bytes do not count (a NumPy copy leaves them undefined)
    msg["motor_cmd"]["kp"][3] = 1.0
    assert not crc_ok(msg)
    msg["crc"] = 0
    assert message_crc(msg) == message_crc(stamp_crc(msg))


@pytest.mark.parametrize("family", [M.HG, M.GO])
def test_pack_unpack_round_trip(family):
    state = M.new_state(family)
    state["motor_state"]["q"][:12] = np.arange(12) * 0.25
    state["imu_state"]["gyroscope"] = (0.1, -0.2, 0.3)
    state["wireless_remote"] = pack_remote(Remote(lx=0.5, ly=-0.25))
    stamp_crc(state)
    raw = M.to_bytes(state)
    assert len(raw) == family.state.itemsize
    back = M.from_bytes(raw, family.state)
    assert crc_ok(back) and M.to_bytes(back) == raw
    np.testing.assert_array_equal(back["motor_state"]["q"][:12], np.arange(12) * 0.25)
    with pytest.raises(ValueError, match="not a 1004-byte record"):
        M.from_bytes(raw[:-4], M.HG_LOW_CMD)


def test_remote_bytes_and_command_by_hand():
    raw = pack_remote(Remote(lx=-0.5, ly=1.0, rx=0.25, buttons=frozenset({"A", "start"})))
    assert raw.shape == (40,)
    assert int(raw[2]) | int(raw[3]) << 8 == (1 << 8) | (1 << 2)  # A is bit 8, start bit 2
    assert np.frombuffer(raw[4:8].tobytes(), "<f4")[0] == -0.5  # lx at bytes 4-7
    assert np.frombuffer(raw[20:24].tobytes(), "<f4")[0] == 1.0  # ly at bytes 20-23
    remote = unpack_remote(raw)
    assert remote.buttons == {"A", "start"}
    ranges = ((-0.5, 1.0), (-0.3, 0.3), (-1.0, 1.0))
    # ly 1 -> vx 1.0 (the top of its range); lx -0.5 -> vy +0.5 * 0.3; rx 0.25 -> yaw -0.25 * 1.0
    np.testing.assert_allclose(velocity_command(remote, ranges), [1.0, 0.15, -0.25])
    np.testing.assert_allclose(velocity_command(Remote(ly=-1.0, lx=0.01), ranges), [-0.5, 0.0, 0.0])
