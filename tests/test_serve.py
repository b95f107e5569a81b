"""`serve` in a real process: it serves the site, rebuilds on a source change, and survives a broken one."""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from generator.cache import ENV_DIR
from support import copy_project


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def wait_for(condition, timeout: float = 45.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the server")


@pytest.fixture
def server(tmp_path, tmp_path_factory):
    root = copy_project(tmp_path / "project")
    env = {**os.environ, ENV_DIR: str(tmp_path_factory.getbasetemp() / "generator-cache"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "generator", "serve", "--port", "0"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line.startswith("serving "):
                break
        yield root, line.split()[1].rstrip("/")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def state(origin: str) -> dict:
    return json.loads(fetch(origin + "/__reload")[1])


def test_serve_serves_the_site_with_the_reload_script_that_build_never_gets(server):
    root, origin = server
    status, page = fetch(origin + "/")
    assert status == 200 and '<script src="/__serve/reload.js" defer></script></head>' in page
    assert "__serve" not in (root / "build" / "index.html").read_text()
    status, script = fetch(origin + "/__serve/reload.js")
    assert status == 200 and "/__reload" in script and "location.reload()" in script
    assert state(origin) == {"build": 1, "error": None}
    status, missing = fetch(origin + "/no/such/page.html")
    assert status == 404 and 'id="home"' in missing


def test_serve_rebuilds_when_a_source_changes_and_keeps_the_last_good_site_when_a_rebuild_fails(server):
    root, origin = server
    page = root / "site_src" / "pages" / "index.md"
    page.write_text(page.read_text() + "\n\nServe test marker paragraph.\n")
    wait_for(lambda: state(origin)["build"] == 2)
    assert "Serve test marker paragraph." in fetch(origin + "/")[1]

    page.write_text(page.read_text() + "\n\n{{ no_such_variable.at_all }}\n")
    failed = wait_for(lambda: state(origin)["error"])
    assert "index.md" in failed and state(origin)["build"] == 2
    status, body = fetch(origin + "/")
    assert status == 200 and "Serve test marker paragraph." in body
    assert "Serve test marker paragraph." in (root / "build" / "index.html").read_text()
