"""A small, bounded load generator for `serve`: N requests, C at a time, loopback only.

Shared by tests/test_serve.py (which checks every request is answered and reports p50/p99) and
tests/benchmarks/bench_serve.py (which compares with a peer server side by side). One asyncio
thread opens a fresh connection per request, as a browser opening many tabs does, and times each
request from connect to the last byte.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Load:
    latencies: tuple[float, ...]  # seconds, one per answered request
    statuses: tuple[int, ...]
    failures: tuple[str, ...]
    wall: float

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies) if self.latencies else float("nan")

    @property
    def p99(self) -> float:
        return self.quantile(0.99)

    def summary(self) -> str:
        return (
            f"{len(self.latencies)} answered, {len(self.failures)} failed, p50 {self.p50 * 1000:.1f} ms, "
            f"p99 {self.p99 * 1000:.1f} ms, max {max(self.latencies, default=0) * 1000:.1f} ms, "
            f"{self.wall:.2f} s in all"
        )


async def _one(port: int, path: str, host: str, timeout: float) -> tuple[float, int]:
    start = time.perf_counter()
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("ascii"))
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    elapsed = time.perf_counter() - start
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return elapsed, status


async def _run(port: int, paths: list[str], requests: int, parallel: int, timeout: float) -> Load:
    latencies: list[float] = []
    statuses: list[int] = []
    failures: list[str] = []
    queue = list(range(requests))
    host = f"127.0.0.1:{port}"

    async def worker() -> None:
        while queue:
            i = queue.pop()
            try:
                elapsed, status = await _one(port, paths[i % len(paths)], host, timeout)
            except (TimeoutError, OSError) as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                continue
            latencies.append(elapsed)
            statuses.append(status)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(parallel)))
    return Load(tuple(latencies), tuple(statuses), tuple(failures), time.perf_counter() - start)


def hammer(port: int, paths: list[str], requests: int = 2000, parallel: int = 50, timeout: float = 30.0) -> Load:
    """`requests` GETs of `paths` in turn, `parallel` at a time, each on a fresh loopback connection.

    Its event loop runs on a thread of its own, so a caller whose thread already has one (a Playwright
    session left open by an earlier test) can still use it."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as one:
        return one.submit(asyncio.run, _run(port, paths, requests, parallel, timeout)).result()
