"""`serve` under a browser's burst of connections, side by side with Python's stock threading server.

Run: python tests/benchmarks/bench_serve.py [--requests N] [--parallel C] [--runs R]
(not a timed test: machines differ). Both servers answer the same built site on loopback; each run
sends N GETs, C at a time, each on a fresh connection (tests/serve_load.py), alternating servers.
Target: p99 under 0.2 s for 2,000 requests at 50 in parallel; the peer (listen backlog 5, one thread
per connection) is the "before".
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from serve_load import hammer  # noqa: E402
from support import copy_project  # noqa: E402

PATHS = ["/index.html", "/cost.html", "/assets/style.css", "/figures/manifest.json"]


def started(cmd: list[str], cwd: Path, ready: str) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    for line in proc.stdout:
        if line.startswith(ready):
            return proc, int(line.split(":")[-1].split("/")[0].split()[0])
    raise SystemExit(f"{cmd[2:]} did not start")


PEER = """
import http.server, functools, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
handler.func.log_message = lambda *a: None
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(f"peer on 127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--parallel", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_project(Path(tmp))
        serve, serve_port = started([sys.executable, "-m", "generator", "serve", "--port", "0"], root, "serving ")
        peer, peer_port = started([sys.executable, "-c", PEER, str(root / "build")], root, "peer on ")
        try:
            results: dict[str, list] = {"serve": [], "peer": []}
            for run in range(args.runs):
                for name, port in (("serve", serve_port), ("peer", peer_port)):
                    load = hammer(port, PATHS, args.requests, args.parallel)
                    results[name].append(load)
                    print(f"run {run + 1} {name:5}: {load.summary()}", flush=True)
            for q in ("p50", "p99"):
                ours = statistics.median(getattr(r, q) for r in results["serve"])
                theirs = statistics.median(getattr(r, q) for r in results["peer"])
                print(f"{q}: serve {ours * 1000:.1f} ms, peer {theirs * 1000:.1f} ms, peer/serve {theirs / ours:.1f}x")
        finally:
            for proc in (serve, peer):
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            shutil.rmtree(root / "build", ignore_errors=True)


if __name__ == "__main__":
    main()
