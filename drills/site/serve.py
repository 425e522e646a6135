"""`drill site --serve`: the built page on 127.0.0.1, and nothing else.

Only the files the build writes are served (``/`` is ``index.html``); anything else is 404.
Details: docs/internals.md.
"""

from __future__ import annotations

import http.server
import io
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from generator.io.safeio import SafeIOError, read_entry_bounded
from generator.io.termsafe import visible

SERVED = {"index.html": "text/html; charset=utf-8", "site.js": "text/javascript; charset=utf-8",
          "site.css": "text/css; charset=utf-8"}
MAX_FILE_BYTES = 16 * 1024 * 1024
CLIENT_TIMEOUT_S = 5.0  # a local browser sends its request at once; a silent client is dropped after this


def resolve(raw_path: str) -> tuple[int, str | None]:
    """(HTTP status, file name) for a request path: 200 and one of SERVED, else 400 or 404 and None."""
    if any(ord(c) < 0x21 or ord(c) > 0x7e for c in raw_path):
        return 400, None
    try:
        path = unquote(urlsplit(raw_path).path, errors="strict")
    except (UnicodeDecodeError, ValueError):  # %-escapes that are not UTF-8
        return 400, None
    if any(ord(c) < 0x20 or ord(c) == 0x7f for c in path) or "\\" in path:
        return 400, None
    name = "index.html" if path in ("/", "/index.html") else path[1:] if path.startswith("/") else ""
    return (200, name) if name in SERVED else (404, None)


class _DeadlineReader(io.RawIOBase):
    """The request's socket, read against one deadline for the whole request (a per-read timeout
    alone lets a client that sends a byte every few seconds hold its thread for ever)."""

    def __init__(self, sock: socket.socket, seconds: float):
        self._sock, self._end = sock, time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not complete in time")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "drill-site"
    sys_version = ""
    timeout = CLIENT_TIMEOUT_S  # socketserver sets it on each connection: a stalled read ends the request
    dir_fd = -1  # the served folder, opened once by make_server

    def setup(self) -> None:
        super().setup()
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.timeout))

    def _answer(self, body: bool) -> None:
        self.connection.settimeout(self.timeout)  # the answer gets its own time, whatever reading left
        status, name = resolve(self.path)
        data = b""
        if name is not None:
            try:  # only what the build wrote: never a link, checked on what was opened
                data = read_entry_bounded(self.dir_fd, name, MAX_FILE_BYTES)
            except (SafeIOError, OSError):
                status, name = 404, None
        if name is None:
            text = {400: "400 bad request\n", 404: "404 not found\n"}[status].encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            if body:
                self.wfile.write(text)
            return
        self.send_response(200)
        self.send_header("Content-Type", SERVED[name])
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """One line per request on stderr, the client's bytes made safe (``generator.io.termsafe``: every
        control shown as its escape), and anything not ASCII as its escape too."""
        line = visible(format % args).encode("ascii", "backslashreplace").decode("ascii")
        sys.stderr.write(f"{visible(self.address_string())} {line}\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    dir_fd = -1

    def server_close(self) -> None:
        super().server_close()
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        sys.stderr.write(visible(f"drill site --serve: request from {client_address[0]} failed: {exc!r}") + "\n")


def make_server(out_dir: Path, port: int, timeout_s: float = CLIENT_TIMEOUT_S) -> Server:
    """A server for the folder ``out_dir`` (opened now, as a directory, links not followed past it)."""
    dir_fd = os.open(Path(out_dir), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    handler = type("SiteHandler", (Handler,), {"dir_fd": dir_fd, "timeout": timeout_s})
    try:
        server = Server(("127.0.0.1", port), handler)
    except BaseException:
        os.close(dir_fd)
        raise
    server.dir_fd = dir_fd
    return server
