"""Rounds per second: the vectorised convergence suite against a plain one-round-at-a-time loop.

Run: python tests/benchmarks/bench_convergence.py   (not a timed test: machines differ)
Target on a 2-core machine: the whole suite (14 profiles x 100,000 rounds) under 1 s, at least 50x the loop.
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from generator import analysis as A  # noqa: E402
from generator.config import MonteCarlo, Seeds  # noqa: E402
from generator.profiles import load_profiles  # noqa: E402


def plain_round(target, draft, residuals, rng):
    """The same rule, one round at a time, in ordinary Python floats; the caller keeps the same histograms."""
    k = len(draft)
    committed = []
    for i in range(k):
        x = pick(draft[i], rng.random())
        if rng.random() < min(1.0, target[i][x] / draft[i][x]):
            committed.append(x)
            continue
        committed.append(pick(residuals[i], rng.random()))
        return committed
    committed.append(pick(target[k], rng.random()))
    return committed


def pick(row, u):
    total = 0.0
    for i, p in enumerate(row):
        total += p
        if u < total and p > 0:
            return i
    return max(i for i, p in enumerate(row) if p > 0)


def main():
    profiles = load_profiles(Path(__file__).resolve().parents[2] / "data" / "profiles.v1.json")
    cases = [(d.id, d.name, profiles.target, d.distributions) for d in profiles.drafts]
    cases += A.random_cases(Seeds().random_profiles, MonteCarlo().random_profiles, 6, 5)
    rounds = MonteCarlo().rounds
    times = []
    for _ in range(5):
        start = time.perf_counter()
        A.convergence_suite(cases, rounds, Seeds().convergence)
        times.append(time.perf_counter() - start)
    suite = statistics.median(times)
    suite_rate = len(cases) * rounds / suite

    loop_rounds = 5000
    rng = np.random.default_rng(0)
    checkpoints = set(A.error_checkpoints(loop_rounds))
    start = time.perf_counter()
    for _, _, target, drafts in cases:
        t = [[float(p) for p in row] for row in target]
        d = [[float(p) for p in row] for row in drafts]
        res = A.residual_rows(np.array(t[:-1]), np.array(d)).tolist()
        counts = [[0] * len(row) for row in t]
        seen = [0] * len(t)
        curves = [[] for _ in t]
        for _ in range(loop_rounds):
            for i, token in enumerate(plain_round(t, d, res, rng)):
                counts[i][token] += 1
                seen[i] += 1
                if seen[i] in checkpoints:
                    curves[i].append(sum(abs(c / seen[i] - p) for c, p in zip(counts[i], t[i])) / 2)
    loop = time.perf_counter() - start
    loop_rate = len(cases) * loop_rounds / loop

    print(f"convergence suite: {len(cases)} profiles x {rounds:,} rounds in {suite:.3f} s (median of 5)")
    print(f"  vectorised: {suite_rate:,.0f} rounds/s")
    print(f"  plain loop: {loop_rate:,.0f} rounds/s ({len(cases)} x {loop_rounds:,} rounds in {loop:.2f} s)")
    print(f"  ratio: {suite_rate / loop_rate:.0f}x")


if __name__ == "__main__":
    main()
