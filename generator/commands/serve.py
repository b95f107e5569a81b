"""`serve [--port N]`: preview the site on 127.0.0.1, rebuilt and reloaded whenever a source changes.

Each rebuild is a fresh `python -m generator build` process, so an edit to generator/ itself takes
effect, and the build's own atomic swap means a failed rebuild leaves the last good site in place;
the failure is printed here and shown on the open page. The server answers from a snapshot of
build/ held in memory, so a request never sees a half-swapped folder.

Reloading needs a script, and the pages' CSP allows only same-origin script files, so the server
injects <script src="/__serve/reload.js"> into the HTML it sends. It is never written to build/.
The script polls /__reload for a build counter and reloads the page when it moves.

The server is sized for a browser with many tabs, not for the internet: a deep listen backlog (a
burst of connections waits instead of being dropped and retried a second later) and a thread per
connection. A connection whose headers are not complete HEADER_SECONDS after it opened is closed,
so a client that trickles its headers a byte at a time holds nothing for long, and one client (one
address) has at most MAX_PER_CLIENT connections waiting for their headers; past that its oldest is
closed. Every write has a timeout. A client that goes away mid-answer is not an error worth printing. It answers only
to Host 127.0.0.1:PORT or localhost:PORT, so a page on another site cannot reach it by pointing
its own name at 127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import errno
import io
import json
import mimetypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import UserError
from ..paths import BUILD, DATA, SITE_SRC

PACKAGE = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.3
BACKLOG = 1024  # connections the kernel queues before accept(); Linux caps it at net.core.somaxconn
HEADER_SECONDS = 5.0  # a connection whose request headers are not all in this long after it opened is closed
MAX_HEADER_BYTES = 32 * 1024  # a request line and headers longer than this are refused (closed)
MAX_PER_CLIENT = 64  # connections one address may have waiting for their headers; past it the oldest is closed
IO_TIMEOUT_SECONDS = 10.0  # a write stalled this long ends the connection
REBUILD_TIMEOUT_SECONDS = 900  # a build that hangs must not stop the watcher for good
SLOW_REBUILD_SECONDS = 30  # a rebuild still running after this long is reported, and again every as long after
RELOAD_TAG = b'<script src="/__serve/reload.js" defer></script>'
RELOAD_JS = b"""(function () {
  "use strict";
  var seen = null, banner = null;
  function show(error) {
    if (!error) { if (banner) { banner.remove(); banner = null; } return; }
    if (!banner) {
      banner = document.createElement("pre");
      banner.setAttribute("role", "alert");
      var s = banner.style;
      s.position = "fixed"; s.left = "0"; s.right = "0"; s.bottom = "0"; s.margin = "0"; s.zIndex = "99999";
      s.padding = "0.75rem 1rem"; s.background = "#7a0000"; s.color = "#fff"; s.whiteSpace = "pre-wrap";
      s.font = "14px/1.4 monospace";
      document.body.appendChild(banner);
    }
    banner.textContent = "Rebuild failed; showing the last good build.\\n" + error;
  }
  function poll() {
    fetch("/__reload", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (state) {
      if (seen === null) { seen = state.build; }
      else if (state.build !== seen) { location.reload(); return; }
      show(state.error);
    }, function () {}).then(function () { setTimeout(poll, 500); });
  }
  poll();
})();
"""


class Site:
    """The last good build in memory, its number, and the error of the latest rebuild if it failed."""

    def __init__(self, out: Path):
        self.out = out
        self.lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.build = 0
        self.error: str | None = None

    def load(self) -> None:
        files = {p.relative_to(self.out).as_posix(): p.read_bytes() for p in sorted(self.out.rglob("*")) if p.is_file()}
        for rel in files:  # once per build, not once per request
            if mimetypes.guess_type(rel)[0] == "text/html":
                files[rel] = inject(files[rel])
        with self.lock:
            self.files = files
            self.build += 1
            self.error = None

    def fail(self, error: str) -> None:
        with self.lock:
            self.error = error

    def state(self) -> dict:
        with self.lock:
            return {"build": self.build, "error": self.error}


def watched_folders(root: Path) -> list[Path]:
    folders = {}  # by where each really is: the project's generator/ is usually the package itself
    for f in (root / SITE_SRC, root / DATA, root / "generator", PACKAGE):
        if f.is_dir():
            folders.setdefault(f.resolve(), f)
    return list(folders.values())


def snapshot(folders: list[Path]) -> dict[str, tuple[int, int]]:
    """Every source file's (mtime, size); editors' swap files and caches do not count."""
    seen = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for name in filenames:
                if name.startswith(".") or name.endswith(("~", ".swp", ".pyc")):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                seen[path] = (st.st_mtime_ns, st.st_size)
    return seen


def rebuild(root: Path, site: Site, log=sys.stderr) -> bool:
    started = time.perf_counter()
    done = run_build(root, site, log)
    if done.returncode != 0:
        message = done.stderr.strip() or f"the build exited with status {done.returncode}"
        print(message, file=log)
        print(f"serve: rebuild failed; still serving build {site.state()['build']}", file=log, flush=True)
        site.fail(message.splitlines()[-1])
        return False
    site.load()
    print(f"serve: build {site.state()['build']} ready in {time.perf_counter() - started:.2f}s", file=log, flush=True)
    return True


def run_build(root: Path, site: Site, log) -> subprocess.CompletedProcess:
    """`python -m generator build` in a session of its own; a line on `log` every SLOW_REBUILD_SECONDS while it
    runs, and the whole session stopped once it has run REBUILD_TIMEOUT_SECONDS."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:  # no pipe a build could fill
        proc = subprocess.Popen(
            [sys.executable, "-m", "generator", "build", "--out", str(site.out)],
            cwd=root,
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,  # so that stopping it stops whatever it started too
        )
        waited = 0.0
        while True:
            step = min(SLOW_REBUILD_SECONDS, REBUILD_TIMEOUT_SECONDS - waited)
            try:
                proc.wait(timeout=step)
                break
            except subprocess.TimeoutExpired:
                waited += step
            except BaseException:  # Ctrl-C reaches serve alone now: the build goes with it
                stop_session(proc)
                raise
            if waited >= REBUILD_TIMEOUT_SECONDS:
                stop_session(proc)
                message = f"error: the build took longer than {REBUILD_TIMEOUT_SECONDS} s and was stopped"
                message += "; the watcher goes on"
                return subprocess.CompletedProcess(proc.args, 1, "", message)
            print(
                f"serve: the rebuild has run for {waited:.0f} s and has not finished; still serving build "
                f"{site.state()['build']} (the rebuild is stopped at {REBUILD_TIMEOUT_SECONDS} s)",
                file=log,
                flush=True,
            )
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())


def stop_session(proc: subprocess.Popen) -> None:
    """SIGKILL the build and every process in its session, then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def watch(root: Path, site: Site, stop: threading.Event, last: dict) -> None:
    folders = watched_folders(root)
    while not stop.wait(POLL_SECONDS):
        if snapshot(folders) != last:
            time.sleep(0.1)  # an editor saving several files, or writing one in two steps
            last = snapshot(folders)
            rebuild(root, site)


QUIET = (ConnectionError, TimeoutError)  # the other end went away or stalled: nothing to report


def read_head(conn: socket.socket, deadline: float) -> bytes | None:
    """A request's line and headers, if they all arrive before the deadline and fit MAX_HEADER_BYTES; else None."""
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        left = deadline - time.monotonic()
        if left <= 0 or len(head) > MAX_HEADER_BYTES:
            return None
        conn.settimeout(left)
        data = conn.recv(65536)
        if not data:
            return None
        head += data
    return head


class PreviewServer(ThreadingHTTPServer):
    """A thread per connection, a deep backlog, and at most MAX_PER_CLIENT connections per client still
    waiting for their headers: past that, the client's oldest one is shut down, which ends its thread."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = BACKLOG

    def __init__(self, port: int, handler):
        self.lock = threading.Lock()
        self.waiting: dict[str, list[socket.socket]] = {}  # client -> its connections with no headers yet, oldest first
        super().__init__(("127.0.0.1", port), handler)
        self.port = self.server_address[1]

    def process_request(self, request, client_address) -> None:
        with self.lock:
            mine = self.waiting.setdefault(client_address[0], [])
            mine.append(request)
            if len(mine) > MAX_PER_CLIENT:
                try:
                    mine.pop(0).shutdown(socket.SHUT_RDWR)
                except OSError:  # it closed meanwhile
                    pass
        super().process_request(request, client_address)

    def headers_read(self, request, client_address) -> None:
        with self.lock:
            mine = self.waiting.get(client_address[0], [])
            if request in mine:
                mine.remove(request)
            if not mine:
                self.waiting.pop(client_address[0], None)

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if not isinstance(exc, QUIET):  # a bug of ours: one line, and the server keeps serving
            print(f"serve: {self.port}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)


def bind(port: int, handler) -> PreviewServer:
    """The listening socket, before anything is built: a taken port is one line, not a traceback after a build."""
    try:
        return PreviewServer(port, handler)
    except OverflowError:
        raise UserError(f"--port {port}: not a port number (0 to 65535)") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UserError(
                f"--port {port}: 127.0.0.1:{port} is already in use (another serve?); "
                "pick another with --port N, or --port 0 for any free one"
            ) from None
        raise UserError(f"--port {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None


class Handler(BaseHTTPRequestHandler):
    site: Site  # set on the subclass the server is made with
    server_version = "generator-serve"
    timeout = IO_TIMEOUT_SECONDS

    def log_message(self, format, *args) -> None:  # the terminal is for builds, not for every request
        pass

    def handle(self) -> None:
        """Read the headers within HEADER_SECONDS of the connection opening, then answer them (GET and HEAD only)."""
        try:
            head = read_head(self.connection, time.monotonic() + HEADER_SECONDS)
        except (OSError, ValueError):
            head = None
        finally:
            self.server.headers_read(self.request, self.client_address)
        if head is None:
            return
        self.connection.settimeout(IO_TIMEOUT_SECONDS)
        self.rfile = io.BytesIO(head)
        self.handle_one_request()  # a QUIET error here goes to PreviewServer.handle_error, which says nothing

    def do_GET(self) -> None:  # and HEAD, which `send` answers without the body
        port = self.server.port
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}"):  # a rebound foreign name would otherwise read it
            refusal = f"This preview answers only to http://127.0.0.1:{port}/ and http://localhost:{port}/\n"
            return self.send(HTTPStatus.FORBIDDEN, "text/plain", refusal.encode())
        path = unquote(urlsplit(self.path).path)
        if path == "/__reload":
            return self.send(HTTPStatus.OK, "application/json", json.dumps(self.site.state()).encode())
        if path == "/__serve/reload.js":
            return self.send(HTTPStatus.OK, "text/javascript", RELOAD_JS)
        rel = path.lstrip("/")
        if rel == "" or rel.endswith("/"):
            rel += "index.html"
        files = self.site.files  # the build being served: Site.load replaces it whole
        body, status = files.get(rel), HTTPStatus.OK
        if body is None and rel + "/index.html" in files:
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", path + "/")
            self.end_headers()
            return
        if body is None:  # as GitHub Pages does: the site's 404.html, at whatever depth was asked for
            body, status, rel = files.get("404.html") or NOT_FOUND, HTTPStatus.NOT_FOUND, "404.html"
        kind = mimetypes.guess_type(rel)[0] or "application/octet-stream"
        self.send(status, kind, body)  # HTML already carries the reload script (Site.load)

    do_HEAD = do_GET

    def send(self, status, kind: str, body: bytes) -> None:
        self.send_response(status)
        charset = "; charset=utf-8" if kind.startswith("text/") or kind.endswith("json") else ""
        self.send_header("Content-Type", kind + charset)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def inject(page: bytes) -> bytes:
    at = page.lower().find(b"</head>")
    return page[:at] + RELOAD_TAG + page[at:] if at >= 0 else RELOAD_TAG + page


NOT_FOUND = inject(b"<!doctype html><title>Not found</title><p>Not found")


def add_arguments(p) -> None:
    p.add_argument(
        "--port", type=int, default=8000, help="port on 127.0.0.1; 0 picks a free one (default: %(default)s)"
    )
    p.add_argument("--out", default=str(BUILD), help="folder the site is built into (default: %(default)s)")


def run(args) -> int:
    mimetypes.add_type("text/javascript", ".js")
    mimetypes.add_type("image/svg+xml", ".svg")
    root = Path.cwd()
    site = Site(Path(args.out).resolve())
    handler = type("BoundHandler", (Handler,), {"site": site})
    with bind(args.port, handler) as server:  # before building: a taken port should not cost a build to find out
        sources = snapshot(watched_folders(root))  # before the first build, so an edit made during it is not missed
        if not rebuild(root, site) and site.out.is_dir():
            error = site.state()["error"]
            site.load()  # the previous build/ is still a good site to look at while the error is fixed
            site.fail(error)
        stop = threading.Event()
        threading.Thread(target=watch, args=(root, site, stop, sources), daemon=True).start()
        print(f"serving http://127.0.0.1:{server.port}/ (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever(poll_interval=0.25)
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
    return 0
