"""Unitree's request/response services on DDS (``unitree_api``), as plain records (no ``cyclonedds`` import here).

Unitree's SDKs (``unitree_sdk2``, ``unitree_sdk2_python``'s ``rpc/``) call a service named ``S`` by
writing a ``unitree_api::msg::dds_::Request_`` on ``rt/api/S/request`` and reading the
``unitree_api::msg::dds_::Response_`` on ``rt/api/S/response`` whose ``header.identity`` carries the
request's ``id`` and ``api_id``. The IDL (``Request_.idl`` and its parts), field by field::

    Request_        { RequestHeader_ header; string parameter; sequence<octet> binary; }
    RequestHeader_  { RequestIdentity_ identity; RequestLease_ lease; RequestPolicy_ policy; }
    RequestIdentity_{ int64 id; int64 api_id; }
    RequestLease_   { int64 id; }
    RequestPolicy_  { int32 priority; boolean noreply; }
    Response_       { ResponseHeader_ header; string data; sequence<octet> binary; }
    ResponseHeader_ { RequestIdentity_ identity; ResponseStatus_ status; }
    ResponseStatus_ { int32 code; }

``parameter`` and ``data`` are JSON text; ``code`` 0 is success. :class:`Request` and
:class:`Response` are those messages flattened into frozen records, which the in-process bus carries
as they are and :mod:`unilab_robot.dds` converts to and from the IDL types.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

#: DDS type names (IDL module path)
REQUEST_TYPE, RESPONSE_TYPE = "unitree_api::msg::dds_::Request_", "unitree_api::msg::dds_::Response_"

#: RPC status codes of Unitree's SDK (``rpc/internal.py``) the client itself produces or may get back
RPC_OK = 0
RPC_ERR_CLIENT_API_TIMEOUT = 3104
RPC_ERR_SERVER_API_NOT_IMPL = 3203
RPC_ERR_SERVER_API_PARAMETER = 3204


def request_topic(service: str) -> str:
    """The topic a client writes requests of ``service`` on: ``rt/api/<service>/request``."""
    return f"rt/api/{service}/request"


def response_topic(service: str) -> str:
    """The topic a client reads answers of ``service`` from: ``rt/api/<service>/response``."""
    return f"rt/api/{service}/response"


@dataclass(frozen=True)
class Request:
    """One ``Request_``: ``id`` (unique per call; Unitree's clients use a monotonic clock in ns), ``api_id``,
    the JSON ``parameter``, the lease, priority and no-reply flag of its header, and the ``binary`` octets."""

    id: int
    api_id: int
    parameter: str = "{}"
    lease: int = 0
    priority: int = 0
    noreply: bool = False
    binary: bytes = b""

    def copy(self) -> "Request":
        """Itself (frozen): the in-process bus copies what it carries."""
        return self


@dataclass(frozen=True)
class Response:
    """One ``Response_``: the ``id`` and ``api_id`` of the request it answers, the status ``code`` (0: success),
    the JSON ``data`` and the ``binary`` octets."""

    id: int
    api_id: int
    code: int = RPC_OK
    data: str = ""
    binary: bytes = b""

    def copy(self) -> "Response":
        """Itself (frozen): the in-process bus copies what it carries."""
        return self


_counter = itertools.count(1)


def new_request_id() -> int:
    """A request id unique in this process: the monotonic clock in ns plus a counter (two calls never collide)."""
    return time.monotonic_ns() + next(_counter)
