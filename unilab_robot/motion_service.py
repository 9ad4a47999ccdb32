"""The simulated robot's ``motion_switcher`` service: a built-in controller that holds the robot until released.

It answers the requests :mod:`unilab_robot.motion_switcher` sends (CheckMode, SelectMode,
ReleaseMode, SetSilent, GetSilent; any other API id: code 3203, not implemented) as Unitree's
service does: CheckMode's data is ``{"form": "0", "name": NAME}`` with ``NAME`` ``""`` once
released. A release takes effect ``release_delay_s`` after it is asked (a robot's controller
needs a moment to let go), so a client that does not confirm with CheckMode sees the controller
still there. :class:`~unilab_robot.sim.SimRobot` holds the joints and ignores ``rt/lowcmd``
while :attr:`MotionSwitcherService.active`.
"""

from __future__ import annotations

import json
from typing import Callable

from unilab_robot.api import RPC_ERR_SERVER_API_NOT_IMPL, RPC_OK, Response
from unilab_robot.motion_switcher import (API_CHECK_MODE, API_GET_SILENT, API_RELEASE_MODE, API_SELECT_MODE,
                                               API_SET_SILENT, TOPIC_REQUEST, TOPIC_RESPONSE)
from unilab_robot.wire import Transport

#: what the service answers SelectMode with for an empty name (Unitree's "unsupported mode name")
ERR_MODE_NAME = 7004


class MotionSwitcherService:
    """The service on ``transport`` (:data:`TOPIC_REQUEST` subscribed, :data:`TOPIC_RESPONSE` published);
    ``mode``: the built-in controller active at start (``None`` or ``""``: none, as in low-level mode).
    ``on_change(name)`` is called when the active controller changes (``""``: released)."""

    def __init__(self, transport: Transport, mode: str | None = None, release_delay_s: float = 0.5,
                 on_change: Callable[[str], None] | None = None) -> None:
        self.transport, self.release_delay_s = transport, release_delay_s
        self.mode = mode or ""
        self.silent = False
        self.on_change = on_change or (lambda name: None)
        self.requests = 0
        self._release_at: float | None = None

    @property
    def active(self) -> bool:
        """Whether a built-in controller holds the robot."""
        return bool(self.mode)

    def step(self, now: float) -> None:
        """Answer the requests that arrived; let go of the controller once a release is due."""
        if self._release_at is not None and now >= self._release_at:
            self._release_at = None
            if self.mode:
                self.mode = ""
                self.on_change("")
        for request in self.transport.take(TOPIC_REQUEST):
            self.requests += 1
            answer = self._answer(request, now)
            if not request.noreply:
                self.transport.publish(TOPIC_RESPONSE, answer)

    def _answer(self, request, now: float) -> Response:
        def reply(code: int = RPC_OK, data: dict | None = None) -> Response:
            return Response(id=request.id, api_id=request.api_id, code=code, data=json.dumps(data) if data is not None else "")

        try:
            parameter = json.loads(request.parameter or "{}")
        except ValueError:
            parameter = {}
        if request.api_id == API_CHECK_MODE:
            return reply(data={"form": "0", "name": self.mode})
        if request.api_id == API_RELEASE_MODE:
            if self.mode and self._release_at is None:
                self._release_at = now + self.release_delay_s
            return reply()
        if request.api_id == API_SELECT_MODE:
            name = str(parameter.get("name", "")) if isinstance(parameter, dict) else ""
            if not name:
                return reply(ERR_MODE_NAME)
            self._release_at = None
            if name != self.mode:
                self.mode = name
                self.on_change(name)
            return reply()
        if request.api_id == API_SET_SILENT:
            self.silent = bool(parameter.get("silent", False)) if isinstance(parameter, dict) else False
            return reply()
        if request.api_id == API_GET_SILENT:
            return reply(data={"silent": self.silent})
        return reply(RPC_ERR_SERVER_API_NOT_IMPL)
