"""`bench [--runs N]`: wall time of a cold build and of a rebuild with nothing changed, medians of N runs.

Each run is a fresh `python -m generator build` process, so interpreter start-up and imports are
counted the way a person at the terminal pays for them. A cold run starts from an empty cache;
the rebuild that follows it reuses that cache. The project's own cache and build/ are untouched.
Targets on a 2-core machine: cold under 4 s, no-change rebuild under 0.5 s.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..cache import ENV_DIR
from ..errors import UserError

COLD_TARGET, WARM_TARGET = 4.0, 0.5


def add_arguments(p) -> None:
    p.add_argument("--runs", type=int, default=5, help="runs of each kind; the median is reported (default: %(default)s)")


def timed_build(root: Path, out: Path, cache: Path) -> float:
    env = {**os.environ, ENV_DIR: str(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "generator", "build", "--out", str(out)], cwd=root, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise UserError(f"bench: the build failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return elapsed


def measure(root: Path, runs: int) -> tuple[list[float], list[float]]:
    cold, warm = [], []
    with tempfile.TemporaryDirectory(prefix="generator-bench-") as tmp:
        for i in range(runs):
            cache, out = Path(tmp) / f"cache-{i}", Path(tmp) / "build"
            cold.append(timed_build(root, out, cache))
            warm.append(timed_build(root, out, cache))
    return cold, warm


def run(args) -> int:
    if args.runs < 1:
        raise UserError("bench: --runs must be at least 1")
    cold, warm = measure(Path.cwd(), args.runs)
    for label, times, target in (("cold build", cold, COLD_TARGET), ("no-change rebuild", warm, WARM_TARGET)):
        median = statistics.median(times)
        verdict = "ok" if median < target else "over target"
        runs = ", ".join(f"{t:.2f}" for t in times)
        print(f"{label:18} median {median:.2f}s (target < {target:g}s, {verdict}); runs: {runs}")
    return 0
