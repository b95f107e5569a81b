"""The Monte Carlo's facts: the exact identity on random pairs, the convergence checks on the authored and random
profiles, and the wrong sampler they must catch (the negative control). Floats: these are measurements.

The slow parts go through a memo (`Memo`), so the build's cache can keep them across edits to anything else.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from . import analysis, convergence, montecarlo
from .config import SiteConfig
from .convergence import ConvergenceCase, PositionCheck
from .profiles import Profiles

T = TypeVar("T")
# memo(kind, inputs, compute): compute(), or a result kept from an earlier call with the same kind and
# inputs. The slow parts (the Monte Carlo of the authored and random profiles and of the wrong sampler, the
# random identity pairs) go through it with exactly the inputs they depend on, so the build's cache can
# keep them across edits to anything else.
Memo = Callable[[str, tuple, Callable[[], T]], T]


def no_memo(kind: str, inputs: tuple, compute: Callable[[], T]) -> T:
    return compute()


@dataclass(frozen=True)
class IdentityFacts:
    profile_pairs: int
    profile_entries: int
    random_pairs: int
    random_entries: int
    pairs: int
    entries: int
    failures: int  # pairs whose identity min(p, q) + max(0, p - q) = p fails on some entry


@dataclass(frozen=True)
class NegativeControl:
    cases: tuple[ConvergenceCase, ...]
    tests: int
    failed_tests: int
    passed_tests: int
    worst_total_variation: float
    caught: bool


@dataclass(frozen=True)
class ConvergenceFacts:
    rounds: int
    cases: tuple[ConvergenceCase, ...]
    authored: tuple[ConvergenceCase, ...]
    random: tuple[ConvergenceCase, ...]
    random_slowest: tuple[PositionCheck, ...]  # each random case's position furthest from its target
    random_error_slope: float  # the mean fitted log-log slope of those positions' error curves
    tests: int
    family_alpha: float
    threshold: float
    worst_p_value: float
    worst_total_variation: float
    passed: bool
    threshold_one_in: int
    positions_per_case: int
    negative_control: NegativeControl

    @property
    def authored_worst_total_variation(self) -> float:
        """The real sampler's largest total variation on the toy data's drafts, those the negative control runs."""
        return max(case.worst_total_variation for case in self.authored)


def mean_loglog_slope(curves) -> float:
    """The mean over error curves of the least-squares slope of log(error) against log(samples)."""
    slopes = []
    for curve in curves:
        points = [(n, e) for n, e in curve if n > 0 and e > 0]
        if len(points) >= 2:
            slopes.append(np.polyfit(np.log10([n for n, _ in points]), np.log10([e for _, e in points]), 1)[0])
    return float(np.mean(slopes)) if slopes else math.nan


def identity_facts(profiles: Profiles, config: SiteConfig, memo: Memo = no_memo) -> IdentityFacts:
    profile_pairs = [
        analysis.over_common_denominator(profiles.target[i], d.distributions[i])
        for d in profiles.drafts
        for i in range(profiles.k)
    ]
    seed, count = config.seeds.identity_pairs, config.monte_carlo.identity_pairs

    def random_part() -> tuple[int, int, int]:
        pairs = analysis.random_identity_pairs(np.random.default_rng(seed), count)
        return len(pairs), sum(len(t) for t, _ in pairs), sum(not analysis.identity_holds(t, d) for t, d in pairs)

    random_pairs, random_entries, random_failures = memo("identity-random", (seed, count), random_part)
    profile_entries = sum(len(t) for t, _ in profile_pairs)
    return IdentityFacts(
        profile_pairs=len(profile_pairs),
        profile_entries=profile_entries,
        random_pairs=random_pairs,
        random_entries=random_entries,
        pairs=len(profile_pairs) + random_pairs,
        entries=profile_entries + random_entries,
        failures=sum(not analysis.identity_holds(t, d) for t, d in profile_pairs) + random_failures,
    )


def negative_control(cases: list, config: SiteConfig, threshold: float, memo: Memo = no_memo) -> NegativeControl:
    """The authored cases' convergence check run on a wrong sampler that replaces a rejection from the target."""
    rounds, seed = config.monte_carlo.rounds, config.seeds.convergence
    results = memo(
        "convergence-wrong-sampler",
        (cases, rounds, seed),
        lambda: convergence.convergence_suite(cases, rounds, seed, montecarlo.target_rows_resampler),
    )
    tests = sum(len(case.checks) for case in results)
    failed = sum(case.failed(threshold) for case in results)
    return NegativeControl(
        cases=tuple(results),
        tests=tests,
        failed_tests=failed,
        passed_tests=tests - failed,
        worst_total_variation=max(case.worst_total_variation for case in results),
        caught=failed > 0,
    )


def convergence_facts(profiles: Profiles, config: SiteConfig, memo: Memo = no_memo) -> ConvergenceFacts:
    mc = config.monte_carlo
    rounds, seed = mc.rounds, config.seeds.convergence
    cases = [(d.id, d.name, profiles.target, d.distributions) for d in profiles.drafts]
    authored = tuple(
        memo("convergence-authored", (cases, rounds, seed), lambda: convergence.convergence_suite(cases, rounds, seed))
    )
    # the random cases draw from the seed's children after the authored ones, as one suite would
    shape = (config.seeds.random_profiles, mc.random_profiles, len(profiles.tokens), profiles.k)
    random = tuple(
        memo(
            "convergence-random",
            (shape, rounds, seed, len(cases)),
            lambda: convergence.convergence_suite(convergence.random_cases(*shape), rounds, seed, first=len(cases)),
        )
    )
    results = authored + random
    tests = sum(len(c.checks) for c in results)
    threshold = mc.family_alpha / tests
    slowest = tuple(max(case.checks, key=lambda c: c.total_variation) for case in random)
    return ConvergenceFacts(
        rounds=rounds,
        cases=results,
        authored=authored,
        random=random,
        random_slowest=slowest,
        random_error_slope=mean_loglog_slope([c.error_curve for c in slowest]),
        tests=tests,
        family_alpha=mc.family_alpha,
        threshold=threshold,
        worst_p_value=min(c.worst_p_value for c in results),
        worst_total_variation=max(c.worst_total_variation for c in results),
        passed=not any(c.failed(threshold) for c in results),
        threshold_one_in=round(tests / mc.family_alpha),
        positions_per_case=profiles.k + 1,
        negative_control=negative_control(cases, config, threshold, memo),
    )
