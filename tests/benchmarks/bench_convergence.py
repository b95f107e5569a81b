"""Rounds per second: the convergence suite against a plain loop and against numpy's floor.

Run: python tests/benchmarks/bench_convergence.py   (not a timed test: machines differ)

The floor is the least any simulator of these rounds must do: draw the same float32 uniforms (one
per position per round) and count one token per position with np.bincount, here the token
(u * vocab) rounded down; it runs case by case on the same two threads as the suite. Suite and
floor alternate, PAIRS times each, and the ratio printed is the median of the pairs' ratios, so the
machine's load moves both sides of a pair alike.
A report, not a target: the simulator is kept plain, and its result is cached.
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from generator.model import convergence, montecarlo
from generator.model.config import MonteCarlo, Seeds
from generator.model.profiles import load_profiles


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


PAIRS = 9


def floor_case(target, rounds, rng):
    """Draw the uniforms the simulator draws and count one token per position: nothing less will do."""
    vocab = len(target[0])
    u = rng.random((len(target), rounds), dtype=np.float32)
    return [np.bincount((row * vocab).astype(np.intp), minlength=vocab) for row in u]


def floor_suite(cases, rounds, seed):
    """One case after another in one thread, as convergence_suite runs them."""
    children = np.random.default_rng(seed).spawn(len(cases))
    return [floor_case(case[2], rounds, rng) for case, rng in zip(cases, children)]


def main():
    profiles = load_profiles(Path(__file__).resolve().parents[2] / "data" / "profiles.v1.json")
    cases = [(d.id, d.name, profiles.target, d.distributions) for d in profiles.drafts]
    cases += convergence.random_cases(Seeds().random_profiles, MonteCarlo().random_profiles, 6, 5)
    rounds = MonteCarlo().rounds
    times, floor_times = [], []
    for _ in range(PAIRS):
        start = time.perf_counter()
        convergence.convergence_suite(cases, rounds, Seeds().convergence)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        floor_suite(cases, rounds, Seeds().convergence)
        floor_times.append(time.perf_counter() - start)
    suite, floor = statistics.median(times), statistics.median(floor_times)
    suite_rate, floor_rate = len(cases) * rounds / suite, len(cases) * rounds / floor
    paired = statistics.median(f / t for t, f in zip(times, floor_times))  # suite rate / floor rate, pair by pair

    loop_rounds = 5000
    rng = np.random.default_rng(0)
    checkpoints = set(convergence.error_checkpoints(loop_rounds))
    start = time.perf_counter()
    for _, _, target, drafts in cases:
        t = [[float(p) for p in row] for row in target]
        d = [[float(p) for p in row] for row in drafts]
        res = montecarlo.residual_rows(np.array(t[:-1]), np.array(d)).tolist()
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

    print(f"convergence suite: {len(cases)} profiles x {rounds:,} rounds in {suite:.3f} s (median of {PAIRS})")
    print(f"  vectorised: {suite_rate:,.0f} rounds/s")
    print(f"  plain loop: {loop_rate:,.0f} rounds/s ({len(cases)} x {loop_rounds:,} rounds in {loop:.2f} s)")
    print(f"  numpy floor (uniforms + bincount): {floor_rate:,.0f} rounds/s ({floor:.3f} s, median of {PAIRS})")
    print(f"  suite / plain loop: {suite_rate / loop_rate:.0f}x (target at least 50x)")
    print(f"  suite / floor: {paired:.2f}, median of {PAIRS} paired runs (target at least 0.5)")


if __name__ == "__main__":
    main()
