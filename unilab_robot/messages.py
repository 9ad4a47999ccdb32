"""Unitree's low-level messages as NumPy records laid out as the robots' C structs.

Two families, as Unitree's published IDL (``unitree_sdk2`` / ``unitree_sdk2_python`` /
``unitree_ros2``, modules ``unitree_hg`` and ``unitree_go``) defines them:

* ``hg`` (humanoids: G1, H1-2): ``unitree_hg::msg::dds_::LowCmd_`` and ``LowState_``, 35 motor
  slots (the G1 29-DoF drives slots 0-28).
* ``go`` (quadrupeds: Go2, B2): ``unitree_go::msg::dds_::LowCmd_`` and ``LowState_``, 20 motor
  slots (the Go2 drives slots 0-11).

Each message is one record of a NumPy structured dtype built with ``align=True``, which gives
the padding and size a C compiler gives the struct (members at their natural alignment).
That byte image is what the robots' CRC is computed over (:mod:`unilab_robot.crc`), so
the CRC needs no DDS at all. The published sizes, which the tests check, are 1004 bytes
(hg LowCmd), 2092 (hg LowState), 812 (go LowCmd) and 1180 (go LowState), as the struct
formats of ``unitree_sdk2_python``'s ``utils/crc.py`` give them.

Field order and types follow the IDL files (``LowCmd_.idl``, ``LowState_.idl``,
``MotorCmd_.idl``, ``MotorState_.idl``, ``IMUState_.idl``, ``BmsCmd_.idl``,
``BmsState_.idl``); the DDS type names are in :data:`TYPE_NAMES`. The IMU quaternion is
``(w, x, y, z)``, gyroscope rad/s and accelerometer m/s^2 in the IMU frame, motor ``q`` rad,
``dq`` rad/s, ``tau`` N m.

Besides Unitree's messages, :data:`ODOM` is ours (``rt/unilab/odom``): the base velocity a
policy that observes ``linvel`` needs and the low-level state does not carry. On a robot a
state estimator publishes it; ``unilab robot sim`` publishes the simulator's truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# --- unitree_hg (G1, H1-2) -----------------------------------------------------------------------

HG_MOTOR_CMD = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("tau", "<f4"), ("kp", "<f4"), ("kd", "<f4"),
                         ("reserve", "<u4")], align=True)
HG_LOW_CMD = np.dtype([("mode_pr", "u1"), ("mode_machine", "u1"), ("motor_cmd", HG_MOTOR_CMD, (35,)),
                       ("reserve", "<u4", (4,)), ("crc", "<u4")], align=True)
HG_IMU_STATE = np.dtype([("quaternion", "<f4", (4,)), ("gyroscope", "<f4", (3,)), ("accelerometer", "<f4", (3,)),
                         ("rpy", "<f4", (3,)), ("temperature", "<i2")], align=True)
HG_MOTOR_STATE = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("ddq", "<f4"), ("tau_est", "<f4"),
                           ("temperature", "<i2", (2,)), ("vol", "<f4"), ("sensor", "<u4", (2,)),
                           ("motorstate", "<u4"), ("reserve", "<u4", (4,))], align=True)
HG_LOW_STATE = np.dtype([("version", "<u4", (2,)), ("mode_pr", "u1"), ("mode_machine", "u1"), ("tick", "<u4"),
                         ("imu_state", HG_IMU_STATE), ("motor_state", HG_MOTOR_STATE, (35,)),
                         ("wireless_remote", "u1", (40,)), ("reserve", "<u4", (4,)), ("crc", "<u4")], align=True)

# --- unitree_go (Go2, B2) ------------------------------------------------------------------------

GO_MOTOR_CMD = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("tau", "<f4"), ("kp", "<f4"), ("kd", "<f4"),
                         ("reserve", "<u4", (3,))], align=True)
GO_BMS_CMD = np.dtype([("off", "u1"), ("reserve", "u1", (3,))], align=True)
GO_LOW_CMD = np.dtype([("head", "u1", (2,)), ("level_flag", "u1"), ("frame_reserve", "u1"), ("sn", "<u4", (2,)),
                       ("version", "<u4", (2,)), ("bandwidth", "<u2"), ("motor_cmd", GO_MOTOR_CMD, (20,)),
                       ("bms_cmd", GO_BMS_CMD), ("wireless_remote", "u1", (40,)), ("led", "u1", (12,)),
                       ("fan", "u1", (2,)), ("gpio", "u1"), ("reserve", "<u4"), ("crc", "<u4")], align=True)
GO_IMU_STATE = np.dtype([("quaternion", "<f4", (4,)), ("gyroscope", "<f4", (3,)), ("accelerometer", "<f4", (3,)),
                         ("rpy", "<f4", (3,)), ("temperature", "u1")], align=True)
GO_MOTOR_STATE = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("ddq", "<f4"), ("tau_est", "<f4"),
                           ("q_raw", "<f4"), ("dq_raw", "<f4"), ("ddq_raw", "<f4"), ("temperature", "u1"),
                           ("lost", "<u4"), ("reserve", "<u4", (2,))], align=True)
GO_BMS_STATE = np.dtype([("version_high", "u1"), ("version_low", "u1"), ("status", "u1"), ("soc", "u1"),
                         ("current", "<i4"), ("cycle", "<u2"), ("bq_ntc", "u1", (2,)), ("mcu_ntc", "u1", (2,)),
                         ("cell_vol", "<u2", (15,))], align=True)
GO_LOW_STATE = np.dtype([("head", "u1", (2,)), ("level_flag", "u1"), ("frame_reserve", "u1"), ("sn", "<u4", (2,)),
                         ("version", "<u4", (2,)), ("bandwidth", "<u2"), ("imu_state", GO_IMU_STATE),
                         ("motor_state", GO_MOTOR_STATE, (20,)), ("bms_state", GO_BMS_STATE),
                         ("foot_force", "<i2", (4,)), ("foot_force_est", "<i2", (4,)), ("tick", "<u4"),
                         ("wireless_remote", "u1", (40,)), ("bit_flag", "u1"), ("adc_reel", "<f4"),
                         ("temperature_ntc1", "u1"), ("temperature_ntc2", "u1"), ("power_v", "<f4"),
                         ("power_a", "<f4"), ("fan_frequency", "<u2", (4,)), ("reserve", "<u4"), ("crc", "<u4")],
                        align=True)

# --- ours: the base velocity (rt/unilab/odom) ------------------------------------------------------

#: ``linvel`` body-frame m/s, ``position`` world m, ``tick`` as the matching LowState's, ``crc`` as Unitree's
ODOM = np.dtype([("tick", "<u4"), ("linvel", "<f4", (3,)), ("position", "<f4", (3,)), ("reserve", "<u4"),
                 ("crc", "<u4")], align=True)

#: DDS type names (IDL module path) of each message, as the robots publish and subscribe them
TYPE_NAMES = {
    ("hg", "cmd"): "unitree_hg::msg::dds_::LowCmd_",
    ("hg", "state"): "unitree_hg::msg::dds_::LowState_",
    ("go", "cmd"): "unitree_go::msg::dds_::LowCmd_",
    ("go", "state"): "unitree_go::msg::dds_::LowState_",
    ("unilab", "odom"): "unilab::msg::dds_::BaseOdometry_",
}

#: topics (Unitree's channel names; ``rt/unilab/odom`` is ours)
TOPIC_CMD, TOPIC_STATE, TOPIC_ODOM = "rt/lowcmd", "rt/lowstate", "rt/unilab/odom"

#: go family: ``head`` of every LowCmd, ``level_flag`` of low-level control (Unitree's ``LOWLEVEL``)
GO_HEAD, GO_LOWLEVEL = (0xFE, 0xEF), 0xFF
#: motor ``mode``: 1 enables the motor's PD (hg and Go2), 0 leaves it off
MOTOR_ENABLE, MOTOR_OFF = 1, 0


@dataclass(frozen=True)
class Family:
    """One message family: its dtypes, motor slots and DDS type names."""

    name: str
    cmd: np.dtype
    state: np.dtype
    slots: int

    @property
    def cmd_type(self) -> str:
        return TYPE_NAMES[(self.name, "cmd")]

    @property
    def state_type(self) -> str:
        return TYPE_NAMES[(self.name, "state")]


HG = Family("hg", HG_LOW_CMD, HG_LOW_STATE, 35)
GO = Family("go", GO_LOW_CMD, GO_LOW_STATE, 20)
FAMILIES = {"hg": HG, "go": GO}


def new_cmd(family: Family) -> np.ndarray:
    """A zeroed LowCmd record (shape ``()``), with the go family's ``head`` and ``level_flag`` set."""
    msg = np.zeros((), dtype=family.cmd)
    if family.name == "go":
        msg["head"] = GO_HEAD
        msg["level_flag"] = GO_LOWLEVEL
    return msg


def new_state(family: Family) -> np.ndarray:
    """A zeroed LowState record (shape ``()``), quaternion at identity."""
    msg = np.zeros((), dtype=family.state)
    msg["imu_state"]["quaternion"] = (1.0, 0.0, 0.0, 0.0)
    if family.name == "go":
        msg["head"] = GO_HEAD
        msg["level_flag"] = GO_LOWLEVEL
    return msg


def to_bytes(msg: np.ndarray) -> bytes:
    """The record's C-struct byte image (little-endian, padded as the C struct, padding zero)."""
    from unilab_robot.crc import c_image

    return c_image(msg)


def from_bytes(data: bytes, dtype: np.dtype) -> np.ndarray:
    """A record of ``dtype`` from its byte image; ``ValueError`` naming both sizes when they differ."""
    if len(data) != dtype.itemsize:
        raise ValueError(f"a message of {len(data)} bytes is not a {dtype.itemsize}-byte record of this type")
    return np.frombuffer(data, dtype=dtype)[0].copy()


def set_tag(msg: np.ndarray, value: int) -> None:
    """Write ``value`` into the message's first reserved word (``reserve[0]``; go LowCmd/LowState: ``reserve``)."""
    if msg["reserve"].shape:
        msg["reserve"][0] = value
    else:
        msg["reserve"] = value


def get_tag(msg: np.ndarray) -> int:
    """The message's first reserved word (see :func:`set_tag`)."""
    r = msg["reserve"]
    return int(r[0] if r.shape else r)
