"""`drill site --serve` under attack: a swapped link, a hard link, stalled clients.

Each test runs the real `drill site --serve` in its own process and talks to it over
raw sockets; every wait is bounded, and the server is stopped with SIGINT afterwards.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from drills.site import serve
from generator.io import safeio
from tests.conftest import REPO, bound
from tests.procs import reap

SECRET = b"outside the site: must never be served"


@contextlib.contextmanager
def serving(out: Path):
    log = out.with_name("serve.log").open("w+")  # a file, not a pipe: 3,000 log lines would fill a pipe
    proc = subprocess.Popen([sys.executable, "-m", "drills.cli", "site", "-o", str(out), "--serve", "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=log, text=True)
    killer = threading.Timer(bound(120), proc.kill)  # never hang the suite
    killer.start()
    try:
        assert proc.stdout.readline().startswith("wrote ")
        m = re.match(r"serving http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
        assert m
        yield proc, int(m.group(1))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=bound())
        finally:
            killer.cancel()
            reap(proc)  # killed if it still runs; its stdout pipe closed, not left to the collector
    log.seek(0)
    err = log.read()
    log.close()
    assert "Traceback" not in err, err[-2000:]


def get(port: int, path: str, timeout: float | None = None) -> tuple[int, bytes]:
    """(status, body) of one HTTP/1.0 GET over a raw socket (a silent server fails it after ``bound(timeout)``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=bound(timeout or 60)) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.slow
def test_a_symlink_flipped_in_for_index_html_is_never_followed(tmp_path):
    """3,000 requests while index.html flips between a regular file and a link out of the folder."""
    out = tmp_path / "s"
    secret = tmp_path / "secret.txt"
    secret.write_bytes(SECRET)
    inside = b"<p>the folder's own index</p>"
    with serving(out) as (_, port):
        index = out / "index.html"
        stop = threading.Event()
        flips = [0]

        def flip():
            while not stop.is_set():
                os.symlink(secret, out / ".link.tmp")
                os.replace(out / ".link.tmp", index)
                (out / ".file.tmp").write_bytes(inside)
                os.replace(out / ".file.tmp", index)
                flips[0] += 1

        flipper = threading.Thread(target=flip, daemon=True)
        flipper.start()
        statuses = {}
        leaked = 0
        try:
            for _ in range(3000):
                code, body = get(port, "/index.html")
                statuses[code] = statuses.get(code, 0) + 1
                leaked += SECRET in body
                assert code in (200, 404)
                assert code == 404 or body == inside
        finally:
            stop.set()
            flipper.join(bound(10))
        assert leaked == 0
        assert flips[0] > 100 and statuses.get(200, 0) > 0 and statuses.get(404, 0) > 0, (flips, statuses)


@pytest.mark.slow
def test_a_hard_link_to_a_file_outside_is_not_served(tmp_path):
    out = tmp_path / "s"
    secret = tmp_path / "secret.txt"
    secret.write_bytes(SECRET)
    with serving(out) as (_, port):
        assert get(port, "/site.js")[0] == 200
        (out / "site.js").unlink()
        os.link(secret, out / "site.js")  # same file system: the folder now names the outside file
        code, body = get(port, "/site.js")
        assert code == 404 and SECRET not in body
        # a hard link *from* the folder to elsewhere is refused the same way: two names, one file
        os.link(out / "site.css", tmp_path / "copy.css")
        assert get(port, "/site.css")[0] == 404
        os.unlink(tmp_path / "copy.css")
        assert get(port, "/site.css")[0] == 200


@pytest.mark.slow
def test_twenty_stalled_clients_are_dropped_after_the_timeout(tmp_path):
    with serving(tmp_path / "s") as (proc, port):
        idle = threads_of(proc.pid)
        stalled = [socket.create_connection(("127.0.0.1", port), timeout=bound()) for _ in range(20)]
        try:
            stalled[0].sendall(b"GET /index.ht")  # half a request line; the others send nothing
            stop = threading.Event()
            payload = b"GET /index.html HTTP/1.0\r\nX-Slow: " + b"a" * 100  # 126 s at one byte a second
            sent = [0]

            def drip():  # one byte a second: each read is quick, the request never completes
                for byte in payload:
                    if stop.wait(1.0):
                        return
                    try:
                        stalled[1].sendall(bytes([byte]))
                    except OSError:  # the server hung up: what should happen
                        return
                    sent[0] += 1

            dripper = threading.Thread(target=drip, daemon=True)
            dripper.start()
            deadline = time.monotonic() + bound(5)
            while threads_of(proc.pid) < idle + 20 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert threads_of(proc.pid) >= idle + 20  # each stalled client holds a thread, for now
            assert get(port, "/")[0] == 200  # and the page is still served meanwhile
            for sock in stalled:  # the server hangs up on each: recv sees the end of the stream
                try:
                    assert sock.recv(1024) == b""
                except ConnectionResetError:
                    pass
            # The dripping client was dropped while it was still sending: the limit is on the whole
            # request, not on each read (which would wait for all of its bytes first).
            assert serve.CLIENT_TIMEOUT_S < len(payload) / 2 and sent[0] < len(payload), sent[0]
            stop.set()
            dripper.join(bound())
            deadline = time.monotonic() + bound(5)
            while threads_of(proc.pid) > idle and time.monotonic() < deadline:
                time.sleep(0.05)
            assert threads_of(proc.pid) <= idle
        finally:
            for sock in stalled:
                sock.close()


def test_read_entry_refuses_links_hard_links_and_paths(tmp_path):
    (tmp_path / "own.txt").write_text("own")
    (tmp_path / "elsewhere.txt").write_text("elsewhere")
    os.symlink(tmp_path / "elsewhere.txt", tmp_path / "link.txt")
    os.link(tmp_path / "elsewhere.txt", tmp_path / "hard.txt")
    os.mkfifo(tmp_path / "fifo")
    dir_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert safeio.read_entry_bounded(dir_fd, "own.txt") == b"own"
        for name, why in (("link.txt", "can not read"), ("hard.txt", "2 links"), ("fifo", "FIFO"),
                          ("../s/own.txt", "not a plain file name"), ("..", "not a plain file name"),
                          ("missing", "can not read")):
            with pytest.raises(safeio.SafeIOError, match=re.escape(why)):
                safeio.read_entry_bounded(dir_fd, name)
        with pytest.raises(safeio.SafeIOError, match="limit"):
            safeio.read_entry_bounded(dir_fd, "own.txt", max_bytes=2)
    finally:
        os.close(dir_fd)


def test_a_clients_escapes_are_logged_as_escapes_never_raw(tmp_path, capfd):
    """The request line ``GET /\\x1b]0;PWN\\x07\\x1b[31mRED`` would set the terminal's title and colour if
    the log printed it as sent: each control is shown as its escape (``generator.io.termsafe``)."""
    out = tmp_path / "s"
    out.mkdir()
    server = serve.make_server(out, 0)
    runner = threading.Thread(target=server.serve_forever, daemon=True)
    runner.start()
    try:
        port = server.server_address[1]
        with socket.create_connection(("127.0.0.1", port), timeout=bound(60)) as sock:
            sock.sendall(b"GET /\x1b]0;PWN\x07\x1b[31mRED\x9b2J\xe9 HTTP/1.1\r\n\r\n")
            while sock.recv(65536):
                pass
    finally:
        server.shutdown()
        runner.join(bound(60))
        server.server_close()
    err = capfd.readouterr().err
    assert "PWN" in err and "RED" in err, err
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) <= 0x9F for c in err), repr(err)
    assert "\\x1b]0;PWN\\x07\\x1b[31mRED" in err
