"""The runtime's local control channel: one line in, one line out, over TCP on 127.0.0.1 only.

``unilab robot run ... --control-port PORT`` serves it on a background thread; ``unilab robot
swap FOLDER --port PORT`` / ``rollback`` / ``status`` are its clients. Requests (UTF-8, one line)::

    swap <folder>      load, check and warm up a candidate off the control path; answers when it is
                       ready (it acts from the next control step) or refused (the reason)
    rollback           the previous policy back at the next control step
    status             the acting policy, the previous one, a candidate waiting

Answers start with ``ready``, ``rolling back``, ``policy`` (status) or ``refused:``. The server binds
127.0.0.1 and nothing else.
"""

from __future__ import annotations

import socket
import socketserver
import threading

from unilab_robot.swap import HotSwap

HOST = "127.0.0.1"


def serve(swap: HotSwap, port: int, timeout: float = 60.0) -> socketserver.TCPServer:
    """Serve ``swap``'s requests on 127.0.0.1:``port`` (0: any free port, ``server.server_address[1]``) on a
    daemon thread; ``server.shutdown()`` stops it. ``OSError`` in one line when the port is taken."""

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(4096).decode("utf-8", "replace").strip()
            verb, _, arg = line.partition(" ")
            if verb == "swap" and arg:
                answer = swap.request(arg.strip(), wait=True, timeout=timeout)
            elif verb == "rollback":
                answer = swap.request_rollback()
            elif verb == "status":
                answer = swap.status()
            else:
                answer = f"refused: unknown request {line[:60]!r}; send 'swap <folder>', 'rollback' or 'status'"
            self.wfile.write((answer + "\n").encode())

    socketserver.TCPServer.allow_reuse_address = True
    try:
        server = socketserver.ThreadingTCPServer((HOST, port), Handler)
    except OSError as e:
        raise OSError(f"cannot serve the control channel on {HOST}:{port} ({e.strerror}); pick another --control-port") from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="unilab-control", daemon=True).start()
    return server


def ask(port: int, request: str, timeout: float = 60.0) -> str:
    """Send one request line to the runtime on 127.0.0.1:``port``; its one-line answer.
    ``ConnectionError`` in one line when no runtime listens there."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall((request.strip() + "\n").encode())
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
    except (ConnectionRefusedError, socket.timeout) as e:
        raise ConnectionError(f"no runtime answers on {HOST}:{port} ({e.__class__.__name__}): start `unilab robot run "
                              f"... --control-port {port}` first") from None
    return data.decode().strip()
