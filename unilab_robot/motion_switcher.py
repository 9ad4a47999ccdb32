"""A client of Unitree's motion-switcher service: is a built-in controller active, release it, confirm.

A Unitree robot boots with a built-in (sport / "ai") controller holding it; while it is active the
robot does not follow ``rt/lowcmd``, and two controllers fight over the motors. Unitree's low-level
examples therefore first ask the ``motion_switcher`` service (``unitree_sdk2``'s
``MotionSwitcherClient``; service name, topics and API ids as its ``motion_switcher_api``) for the
active mode and release it until the answer is "no mode"::

    CheckMode   1001  parameter {}               data {"form": "0", "name": "<mode>"} ("" : none)
    SelectMode  1002  parameter {"name": NAME}
    ReleaseMode 1003  parameter {}
    SetSilent   1004  parameter {"silent": bool}
    GetSilent   1005  data {"silent": bool}

(requests on ``rt/api/motion_switcher/request``, answers on ``.../response``:
:mod:`unilab_robot.api`). :func:`release_built_in` is that sequence with one line per step and
a :class:`MotionSwitcherError` (one line; nothing sent to the motors) when the controller stays.

The G1 has one more state to be in: its low-level ("debug") mode, where the built-in controller is
off and the joints are damped. Unitree's G1 documentation enters it either with this service's
ReleaseMode or by hand (the robot hoisted, in zero-torque mode, L2+R2 on the remote); either way
CheckMode answers an empty name afterwards, which is how :func:`release_built_in` detects it.
"""

from __future__ import annotations

import json
import time
from typing import Callable

from unilab_robot.api import (RPC_ERR_CLIENT_API_TIMEOUT, RPC_OK, Request, Response, new_request_id,
                                   request_topic, response_topic)
from unilab_robot.wire import Transport

SERVICE = "motion_switcher"
TOPIC_REQUEST, TOPIC_RESPONSE = request_topic(SERVICE), response_topic(SERVICE)
API_CHECK_MODE, API_SELECT_MODE, API_RELEASE_MODE, API_SET_SILENT, API_GET_SILENT = 1001, 1002, 1003, 1004, 1005

#: what the service's error codes mean (Unitree's G1 developer guide, motion switcher service interface)
ERRORS = {7001: "request parameter error", 7002: "service busy, retry", 7004: "unsupported mode name",
          7005: "internal command execute error", 7006: "check command execute error",
          7007: "switch command execute error", 7008: "release command execute error",
          7009: "customize config set error", 3203: "API not implemented by the service",
          RPC_ERR_CLIENT_API_TIMEOUT: "no answer in time"}

#: the G1's extra step, said when its built-in controller will not let go
G1_DEBUG_HINT = ("a G1 must be in its low-level (debug) mode: hoist it, wait for zero-torque mode, press L2+R2 on "
                 "its remote, then start again (CheckMode then answers no mode)")


class MotionSwitcherError(RuntimeError):
    """The built-in controller is (or may be) active; the message says what to do, in one line."""


def describe(code: int) -> str:
    """``code`` and what it means, e.g. ``7008 (release command execute error)``."""
    return f"{code} ({ERRORS[code]})" if code in ERRORS else str(code)


class MotionSwitcherClient:
    """Calls of the ``motion_switcher`` service over ``transport`` (which must carry :data:`TOPIC_REQUEST`
    published and :data:`TOPIC_RESPONSE` subscribed). Each call waits up to ``timeout_s`` for the answer
    with the request's id, polling every ``poll_s`` through ``sleep`` (a test passes one that steps a
    simulated robot); no answer gives code 3104 (:data:`~unilab_robot.api.RPC_ERR_CLIENT_API_TIMEOUT`)."""

    def __init__(self, transport: Transport, timeout_s: float = 2.0, poll_s: float = 0.01,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.transport, self.timeout_s, self.poll_s, self.clock, self.sleep = transport, timeout_s, poll_s, clock, sleep

    def call(self, api_id: int, parameter: dict | None = None) -> Response:
        """One request/answer; the answer (code 3104 and no data when none came in ``timeout_s``)."""
        request = Request(id=new_request_id(), api_id=api_id, parameter=json.dumps(parameter or {}))
        self.transport.take(TOPIC_RESPONSE)  # answers to earlier calls (ours or other clients') are not this one's
        t0 = self.clock()
        while True:
            self.transport.publish(TOPIC_REQUEST, request)
            waited = 0.0
            while waited < min(0.25, self.timeout_s):  # re-send every 0.25 s: the first may go before discovery
                for answer in self.transport.take(TOPIC_RESPONSE):
                    if answer.id == request.id and answer.api_id == api_id:
                        return answer
                self.sleep(self.poll_s)
                waited += self.poll_s
                if self.clock() - t0 >= self.timeout_s:
                    return Response(id=request.id, api_id=api_id, code=RPC_ERR_CLIENT_API_TIMEOUT)

    def check_mode(self) -> tuple[int, str]:
        """``(code, name)`` of CheckMode; ``name`` is ``""`` when no built-in controller is active."""
        answer = self.call(API_CHECK_MODE)
        if answer.code != RPC_OK:
            return answer.code, ""
        try:
            return RPC_OK, str(json.loads(answer.data or "{}").get("name", ""))
        except (ValueError, AttributeError):
            return 3106, ""  # Unitree's RPC_ERR_CLIENT_API_DATA: an answer we cannot read

    def release_mode(self) -> int:
        """ReleaseMode's code."""
        return self.call(API_RELEASE_MODE).code


def release_built_in(client: MotionSwitcherClient, say: Callable[[str], None], robot: str = "",
                     tries: int = 5, wait_s: float = 1.0) -> str:
    """Check the robot's mode; when a built-in controller is active, release it and confirm with CheckMode
    (``tries`` times, ``wait_s`` apart, as Unitree's examples loop). One line per step through ``say``;
    returns the name of the controller released (``""``: none was active).

    :class:`MotionSwitcherError` (one line, saying that no low-level command was sent) when the service does
    not answer, answers an error, or the controller is still active after the last try.
    """
    where = f"{SERVICE} ({TOPIC_REQUEST})"
    hint = f"; {G1_DEBUG_HINT}" if robot == "g1" else ""
    code, name = client.check_mode()
    if code == RPC_ERR_CLIENT_API_TIMEOUT:
        raise MotionSwitcherError(
            f"the robot's {where} did not answer CheckMode (api {API_CHECK_MODE}) in {client.timeout_s:g} s, so whether "
            f"its built-in controller holds the motors is unknown: no low-level command sent. Is the robot on this "
            f"interface and DDS domain? If it runs no such service (unitree_mujoco) and nothing else drives the "
            f"motors, pass --motion-switcher off{hint}")
    if code != RPC_OK:
        raise MotionSwitcherError(f"{SERVICE} CheckMode (api {API_CHECK_MODE}) answered code {describe(code)}: "
                                  f"no low-level command sent{hint}")
    if not name:
        say(f"{SERVICE}: CheckMode: no built-in controller active (low-level mode): low-level commands allowed")
        return ""
    say(f"{SERVICE}: CheckMode: built-in controller {name!r} active: releasing it (ReleaseMode, api {API_RELEASE_MODE})")
    still, code = name, RPC_OK
    for attempt in range(tries):
        code = client.release_mode()
        if code == RPC_OK:
            code, still = client.check_mode()
            if code == RPC_OK and not still:
                say(f"{SERVICE}: released {name!r}; CheckMode confirms no built-in controller: low-level commands from now on")
                return name
        if attempt + 1 < tries:
            client.sleep(wait_s)
    why = f"the last call answered {describe(code)}" if code != RPC_OK else f"CheckMode still answers {still!r}"
    raise MotionSwitcherError(f"the built-in controller {name!r} is still active after {tries} ReleaseMode calls "
                              f"({why}): low-level commands refused, none sent. Release it with Unitree's app or "
                              f"remote{hint or ', then start again'}")
