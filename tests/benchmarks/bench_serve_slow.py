"""`serve` while slow clients trickle their request headers a byte at a time (issue 25, item 6).

Run: python tests/benchmarks/bench_serve_slow.py [--slow N] [--seconds S] [--requests R]
(not a timed test: machines differ). Loopback only, bounded in count and time: N connections (default
50, at most 500) each send one byte of a request every 0.2 s for S seconds (default 8, at most 30),
reopening when the server closes them; meanwhile R normal GETs (default 20), one at a time. Target:
every normal request answered in under 1 s. Before this issue a normal request timed out after 15 s
with 20 slow connections, and failed outright with 300. Also prints the server's thread count once the
slow clients are all connected (a thread per open connection: at most about serve.MAX_PER_CLIENT, whatever N is).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_serve import started  # noqa: E402

from support import copy_project  # noqa: E402

TARGET = 1.0


def trickle(port: int, stop: threading.Event, closed: list[int]) -> None:
    """One slow client: a byte every 0.2 s, a fresh connection whenever the server closes the old one."""
    request = f"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: {'a' * 200}\r\n\r\n".encode()
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                for i in range(len(request)):
                    if stop.wait(0.2):
                        return
                    s.sendall(request[i : i + 1])
        except OSError:
            closed[0] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    slow, seconds = min(args.slow, 500), min(args.seconds, 30.0)
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_project(Path(tmp))
        serve, port = started([sys.executable, "-m", "generator", "serve", "--port", "0"], root, "serving ")
        stop, closed = threading.Event(), [0]
        threads = [threading.Thread(target=trickle, args=(port, stop, closed), daemon=True) for _ in range(slow)]
        try:
            for t in threads:
                t.start()
            time.sleep(1.0)
            server_threads = len(os.listdir(f"/proc/{serve.pid}/task")) if os.path.isdir("/proc") else -1
            latencies, failures = [], []
            deadline = time.monotonic() + seconds
            while len(latencies) + len(failures) < args.requests and time.monotonic() < deadline:
                begun = time.perf_counter()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/cost.html", timeout=15) as r:
                        r.read()
                    latencies.append(time.perf_counter() - begun)
                except OSError as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")
                time.sleep(max(0.0, seconds / args.requests - (time.perf_counter() - begun)))
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=2)
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=10)
            shutil.rmtree(root / "build", ignore_errors=True)
    worst = max(latencies, default=float("nan"))
    latencies = latencies or [float("nan")]
    print(
        f"{slow} slow clients, {len(latencies)} normal requests answered, {len(failures)} failed; "
        f"slowest {worst * 1000:.0f} ms, median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms; "
        f"server threads {server_threads}; slow connections closed by the server {closed[0]}"
    )
    ok = not failures and latencies and worst < TARGET
    print("ok" if ok else f"FAILED: target every request under {TARGET:.0f} s; {failures[:3]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
