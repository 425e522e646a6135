"""`drill site --serve`: the built page on 127.0.0.1, and nothing else.

Only the files the build writes (``index.html``, ``site.js``, ``site.css``) are
served, each read through ``generator.safeio`` (a regular file, not a link, read
whole); ``/`` is ``index.html``. Anything else is 404: no directory listings, no
dotfiles, no other files, no links out of the folder. A request whose path is
not plain printable ASCII (a NUL byte, say, raw or %-encoded) is 400. Errors are
one line on stderr, never a traceback.
"""

from __future__ import annotations

import http.server
import os
import stat
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from generator.safeio import SafeIOError, read_bytes_bounded

SERVED = {"index.html": "text/html; charset=utf-8", "site.js": "text/javascript; charset=utf-8",
          "site.css": "text/css; charset=utf-8"}
MAX_FILE_BYTES = 16 * 1024 * 1024


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


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "drill-site"
    sys_version = ""
    directory = "."

    def _answer(self, body: bool) -> None:
        status, name = resolve(self.path)
        data = b""
        if name is not None:
            target = Path(self.directory) / name
            try:
                if stat.S_ISLNK(os.lstat(target).st_mode):  # only what the build wrote, never a link
                    raise SafeIOError(f"{target} is a link")
                data = read_bytes_bounded(target, MAX_FILE_BYTES)
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

    def log_message(self, format: str, *args) -> None:  # noqa: A002
        line = (format % args).encode("ascii", "backslashreplace").decode("ascii")
        sys.stderr.write(f"{self.address_string()} {line}\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        sys.stderr.write(f"drill site --serve: request from {client_address[0]} failed: {exc!r}\n")


def make_server(out_dir: Path, port: int) -> Server:
    handler = type("SiteHandler", (Handler,), {"directory": str(Path(out_dir).resolve())})
    return Server(("127.0.0.1", port), handler)
