"""The messages over Cyclone DDS (the optional ``robot`` extra: ``pip install -e ".[robot]"``).

The IDL types are generated from the NumPy record dtypes of :mod:`unilab_robot.messages`
(one definition of each layout), with Unitree's type names (``unitree_hg.msg.dds_.LowCmd_``
in Python's spelling of ``unitree_hg::msg::dds_::LowCmd_``), ``@final`` extensibility and
sequential member ids, as Unitree's generated IDL declares them, so a robot or Unitree's
SDK reads what we write. Unitree's service messages (``unitree_api::msg::dds_::Request_`` /
``Response_``, strings and sequences, so no NumPy layout) are declared here from their IDL and
carried as the :class:`~unilab_robot.api.Request` / :class:`~unilab_robot.api.Response`
records. :class:`DdsTransport` is the :class:`~unilab_robot.wire.Transport` over them,
started under a :class:`~unilab_robot.dds_config.DdsConfig`.
"""

from __future__ import annotations

import numpy as np

from unilab_robot.dds_config import INSTALL_HINT, DdsConfig, apply

try:
    import cyclonedds.idl as idl
    import cyclonedds.idl.annotations as annotate
    import cyclonedds.idl.types as types
    from cyclonedds.core import Qos, Policy
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
except ImportError as e:  # pragma: no cover - the message is the contract
    raise ImportError(f"{INSTALL_HINT} ({e})") from None

from unilab_robot import api
from unilab_robot import messages as M

_PRIMITIVES = {"u1": types.uint8, "u2": types.uint16, "u4": types.uint32, "i1": types.int8, "i2": types.int16,
               "i4": types.int32, "f4": types.float32, "f8": types.float64}

#: nested dtypes -> their IDL type names (module path in Python's dotted spelling)
_NAMES = {
    M.HG_MOTOR_CMD: "unitree_hg.msg.dds_.MotorCmd_", M.HG_LOW_CMD: "unitree_hg.msg.dds_.LowCmd_",
    M.HG_IMU_STATE: "unitree_hg.msg.dds_.IMUState_", M.HG_MOTOR_STATE: "unitree_hg.msg.dds_.MotorState_",
    M.HG_LOW_STATE: "unitree_hg.msg.dds_.LowState_",
    M.GO_MOTOR_CMD: "unitree_go.msg.dds_.MotorCmd_", M.GO_BMS_CMD: "unitree_go.msg.dds_.BmsCmd_",
    M.GO_LOW_CMD: "unitree_go.msg.dds_.LowCmd_", M.GO_IMU_STATE: "unitree_go.msg.dds_.IMUState_",
    M.GO_MOTOR_STATE: "unitree_go.msg.dds_.MotorState_", M.GO_BMS_STATE: "unitree_go.msg.dds_.BmsState_",
    M.GO_LOW_STATE: "unitree_go.msg.dds_.LowState_",
    M.ODOM: "unilab.msg.dds_.BaseOdometry_",
}
_CLASSES: dict[np.dtype, type] = {}


def idl_type(dtype: np.dtype) -> type:
    """The ``IdlStruct`` class of a message dtype (made once)."""
    if dtype not in _CLASSES:
        fields = {}
        for name in dtype.names:
            sub, _ = dtype.fields[name][:2]
            base, shape = (sub.subdtype if sub.subdtype else (sub, ()))
            inner = idl_type(base) if base.names else _PRIMITIVES[base.str.lstrip("<>|=")]
            fields[name] = types.array[inner, shape[0]] if shape else inner
        typename = _NAMES[dtype]
        cls = idl.make_idl_struct(typename.rsplit(".", 1)[1], typename, fields)
        _CLASSES[dtype] = annotate.autoid("sequential")(annotate.final(cls))
    return _CLASSES[dtype]


def to_idl(msg: np.ndarray, dtype: np.dtype | None = None):
    """The IDL object of a record."""
    dtype = msg.dtype if dtype is None else dtype
    cls = idl_type(dtype)
    values = {}
    for name in dtype.names:
        sub = dtype.fields[name][0]
        v = msg[name]
        if sub.subdtype is not None:
            base = sub.subdtype[0]
            values[name] = [to_idl(x, base) for x in v] if base.names else v.tolist()
        elif sub.names:
            values[name] = to_idl(v, sub)
        else:
            values[name] = v.item()
    return cls(**values)


def from_idl(obj, dtype: np.dtype) -> np.ndarray:
    """The record of an IDL object."""
    out = np.zeros((), dtype=dtype)
    _fill(out, obj, dtype)
    return out


def _fill(out, obj, dtype) -> None:
    for name in dtype.names:
        sub = dtype.fields[name][0]
        v = getattr(obj, name)
        if sub.subdtype is not None and sub.subdtype[0].names:
            base = sub.subdtype[0]
            for i, x in enumerate(v):
                _fill(out[name][i], x, base)
        elif sub.names:
            _fill(out[name], v, sub)
        elif isinstance(v, (bytes, bytearray)):  # octet arrays come back as bytes
            out[name] = np.frombuffer(v, dtype=np.uint8)
        else:
            out[name] = v


def _struct(name: str, fields: dict) -> type:
    cls = idl.make_idl_struct(name, f"unitree_api.msg.dds_.{name}", fields)
    return annotate.autoid("sequential")(annotate.final(cls))


# unitree_api's IDL (Request_.idl, Response_.idl and their parts), member by member
_IDENTITY = _struct("RequestIdentity_", {"id": types.int64, "api_id": types.int64})
_LEASE = _struct("RequestLease_", {"id": types.int64})
_POLICY = _struct("RequestPolicy_", {"priority": types.int32, "noreply": bool})
_REQ_HEADER = _struct("RequestHeader_", {"identity": _IDENTITY, "lease": _LEASE, "policy": _POLICY})
_REQUEST = _struct("Request_", {"header": _REQ_HEADER, "parameter": str, "binary": types.sequence[types.uint8]})
_STATUS = _struct("ResponseStatus_", {"code": types.int32})
_RESP_HEADER = _struct("ResponseHeader_", {"identity": _IDENTITY, "status": _STATUS})
_RESPONSE = _struct("Response_", {"header": _RESP_HEADER, "data": str, "binary": types.sequence[types.uint8]})
_API = {api.Request: _REQUEST, api.Response: _RESPONSE}


def api_to_idl(msg):
    """The ``Request_`` / ``Response_`` IDL object of an :class:`~unilab_robot.api.Request` / ``Response``."""
    ident = _IDENTITY(id=msg.id, api_id=msg.api_id)
    if isinstance(msg, api.Request):
        header = _REQ_HEADER(identity=ident, lease=_LEASE(id=msg.lease),
                             policy=_POLICY(priority=msg.priority, noreply=msg.noreply))
        return _REQUEST(header=header, parameter=msg.parameter, binary=list(msg.binary))
    return _RESPONSE(header=_RESP_HEADER(identity=ident, status=_STATUS(code=msg.code)), data=msg.data,
                     binary=list(msg.binary))


def api_from_idl(obj):
    """The record of a ``Request_`` / ``Response_`` IDL object."""
    h = obj.header
    if isinstance(obj, _REQUEST):
        return api.Request(id=h.identity.id, api_id=h.identity.api_id, parameter=obj.parameter, lease=h.lease.id,
                           priority=h.policy.priority, noreply=bool(h.policy.noreply), binary=bytes(obj.binary))
    return api.Response(id=h.identity.id, api_id=h.identity.api_id, code=h.status.code, data=obj.data,
                        binary=bytes(obj.binary))


class DdsTransport:
    """Records over DDS on ``topics`` (topic -> dtype, or :class:`~unilab_robot.api.Request` /
    :class:`~unilab_robot.api.Response` for a service's topics); readers keep the newest ``depth``
    samples (a service's 16), best effort.

    The :class:`DdsConfig` is applied (``CYCLONEDDS_URI``) before the participant is made.
    """

    def __init__(self, config: DdsConfig, topics: dict[str, np.dtype], publish: tuple[str, ...],
                 subscribe: tuple[str, ...], depth: int = 1) -> None:
        apply(config)
        self.config = config
        self.participant = DomainParticipant(config.domain_id)
        self.dtypes = dict(topics)
        self._topics = {t: Topic(self.participant, t, _API[d] if d in _API else idl_type(d)) for t, d in topics.items()}
        self._writers = {t: DataWriter(self.participant, self._topics[t]) for t in publish}
        qos = {t: Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(16 if topics[t] in _API else depth))
               for t in subscribe}
        self._readers = {t: DataReader(self.participant, self._topics[t], qos=qos[t]) for t in subscribe}

    def publish(self, topic: str, msg) -> None:
        dtype = self.dtypes[topic]
        self._writers[topic].write(api_to_idl(msg) if dtype in _API else to_idl(msg, dtype))

    def take(self, topic: str) -> list:
        dtype = self.dtypes[topic]
        samples = self._readers[topic].take(N=64)
        if dtype in _API:
            return [api_from_idl(s) for s in samples if isinstance(s, _API[dtype])]
        return [from_idl(s, dtype) for s in samples if hasattr(s, "crc")]

    def matched(self, topic: str) -> int:
        """How many remote readers (for a topic we publish) or writers (one we read) are matched now."""
        if topic in self._writers:
            return len(self._writers[topic].get_matched_subscriptions())
        return len(self._readers[topic].get_matched_publications())

    def close(self) -> None:
        self._writers.clear()
        self._readers.clear()
        self._topics.clear()
        self.participant = None
