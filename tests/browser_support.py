"""What every test that drives a browser shares: Debian's chromium, its flags, a local server.

A tool a test needs but cannot find makes it skip on a developer's machine and fail in CI
(CI=true), so a green CI always means the browser tests ran.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import sys
import threading
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IN_CI = os.environ.get("CI") == "true"


def missing(what: str) -> None:
    """Skip here, fail in CI: a check that silently stops running is worse than a red build."""
    if IN_CI:
        pytest.fail(f"{what}; CI must run it (.ci/run installs it)", pytrace=False)
    pytest.skip(what)


def require_chromium():
    """Playwright's sync API, once Debian's chromium and the playwright package are both present."""
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    try:
        from playwright import sync_api
    except ImportError:
        missing("playwright is not installed (pip install -e '.[test]')")
    return sync_api


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a browser that dropped a request it no longer wants
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(directory: Path):
    """A local static server for a built site; yields its origin, e.g. http://127.0.0.1:41234."""
    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium():
    """One headless Debian chromium, never a browser Playwright downloads."""
    sync_api = require_chromium()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def shared_tab(browser, *, timeout_ms: int = 5000, console: tuple[str, ...] = ("error", "warning")):
    """One tab that a module's tests take turns in (see `turn`), recording what its pages do.

    Opening a tab costs Chromium a renderer process and an empty HTTP cache, about four times the
    CPU of navigating one already open; the site keeps nothing in the browser between pages (no
    storage, no service worker), so a navigation leaves nothing behind for the next test. The tab
    keeps pg.problems (console messages of the `console` levels, uncaught errors), pg.requested
    (every URL asked for) and pg.responses; `turn` empties them.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(timeout_ms)
    try:
        pg = context.new_page()
        pg.problems, pg.requested, pg.responses = [], [], []
        pg.on("console", lambda m: m.type in console and pg.problems.append(f"{m.type}: {m.text}"))
        pg.on("pageerror", lambda e: pg.problems.append(f"pageerror: {e}"))
        pg.on("request", lambda r: pg.requested.append(r.url))
        pg.on("response", lambda r: pg.responses.append(r))
        yield pg
    finally:
        context.close()


def turn(pg, viewport: dict | None = None) -> None:
    """Make the shared tab as a new one would be: blank, at its width, with no media emulated and
    nothing recorded."""
    pg.goto("about:blank")
    pg.set_viewport_size(viewport or {"width": 1280, "height": 900})
    pg.emulate_media(color_scheme="no-override", reduced_motion="no-override")
    for recorded in (pg.problems, pg.requested, pg.responses):
        recorded.clear()
