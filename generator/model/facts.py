"""Every number a page or figure shows, computed once from the profiles and the settings.

This is the last place arithmetic happens. Everything here is a frozen dataclass, exact
(Fraction or int) wherever the quantity is exact and a float only for Monte Carlo results and
hardware estimates. Nothing here knows about HTML, templates or figures: views.py turns these
facts into what templates need, and the figure registry reads them to draw.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate
from types import MappingProxyType

import numpy as np

from ..decimals import nearest  # the one rounding rule, the pages' too
from . import analysis
from .beyond import BeyondFacts, beyond_facts
from .checks import (
    ConvergenceFacts,
    IdentityFacts,
    Memo,
    convergence_facts,
    identity_facts,
    mean_loglog_slope,
    no_memo,
)
from .config import RooflineSource, SiteConfig
from .convergence import ConvergenceCase
from .engine import ACCEPTED, REJECTED, Round, Verdict, accept_probability, excess, overlap, residual, run_round
from .practice import Practice, PracticeFacts, practice_facts
from .profiles import CostModel, Draft, Profiles
from .requirements import AUTHORED_FACTS, authored_facts, authored_rounds, check_rounds


@dataclass(frozen=True)
class PositionFacts:
    position: int  # 1-based; k + 1 is the bonus position
    is_bonus: bool
    target: tuple[Fraction, ...]
    draft: tuple[Fraction, ...] | None
    proposal: str | None
    overlap: tuple[Fraction, ...] | None
    excess: tuple[Fraction, ...] | None
    excess_mass: Fraction | None
    residual: tuple[Fraction, ...] | None
    accept_rate: Fraction | None
    proposal_accept_probability: Fraction | None


@dataclass(frozen=True)
class ProfileFacts:
    id: str
    name: str
    description: str
    accept_rates: tuple[Fraction, ...]
    round_lengths: tuple[tuple[int, Fraction], ...]  # (n, P(N = n)), n = 1 .. k + 1
    expected_tokens: Fraction
    expected_tokens_partial_products: Fraction
    partial_products: tuple[Fraction, ...]  # 1, a1, a1 a2, ...
    expected_accepted_drafts: Fraction
    round_cost: Fraction
    speedup: Fraction
    authored_round: Round
    sampled_rounds: tuple[Round, ...]
    drawn_rounds: tuple[tuple[Verdict, Round], ...]  # (ACCEPTED or REJECTED, a round a uniform draw decided)
    stream_rounds: tuple[Round, ...]  # the seeded stream's first rounds in order, none chosen (the opening figure)
    positions: tuple[PositionFacts, ...]
    frame_count_bounds: tuple[int, int]
    convergence: ConvergenceCase
    error_slope: float  # the mean fitted log-log slope of the error curves of its positions (about -0.5)

    @property
    def frame_count_fixed(self) -> bool:
        """True when no random draw can change how many frames the authored round has."""
        return self.frame_count_bounds[0] == self.frame_count_bounds[1]

    def position(self, number: int) -> PositionFacts:
        """The facts of position `number` (1-based; k + 1 is the bonus position)."""
        return self.positions[number - 1]


@dataclass(frozen=True)
class SpeedupCurve:
    alpha: Fraction
    cost: Fraction
    points: tuple[tuple[int, Fraction], ...]  # (K, speedup)
    best_k: int
    best_speedup: Fraction
    ties: tuple[int, ...] = ()  # other K whose speedup prints the same as the best K's, to two decimals


@dataclass(frozen=True)
class SpeedupPanel:
    """One draft cost and its curves: what one speedup-against-K figure shows."""

    id: str  # "1-20" for c = 1/20
    cost: Fraction
    curves: tuple[SpeedupCurve, ...]


@dataclass(frozen=True)
class RooflineFacts:
    model_label: str
    bytes_per_parameter: float
    memory_bandwidth_gb_s: float
    peak_tflops: float
    weight_bytes: float
    memory_ms: float  # the floor: every pass reads every weight once
    compute_ms_per_position: float
    crossover_positions: float  # where compute time catches up with the memory floor
    positions: tuple[int, ...]
    times_ms: tuple[float, ...]  # a pass takes the larger of the memory time and the compute time
    sources: tuple[RooflineSource, ...]
    parameters_billions: float
    weight_gb: float
    utilisation_one_position: float  # the share of a one-position pass the arithmetic units are busy


@dataclass(frozen=True)
class Notable:
    """Where one worth-noticing fact shows: a verify frame (1-based number) of a profile's authored round."""

    profile_id: str
    frame_number: int


@dataclass(frozen=True)
class LosslessExample:
    """P(commit y) = q(y) min(1, p(y)/q(y)) + (1 - alpha) residual(y), for the token a rejection put in."""

    profile_id: str
    position: int
    token: str
    p_target: Fraction
    p_draft: Fraction
    accept_probability: Fraction
    via_acceptance: Fraction  # q(y) min(1, p(y)/q(y)) = min(p, q)(y)
    rejection_mass: Fraction  # 1 - alpha = sum of max(0, p - q)
    residual: Fraction
    via_residual: Fraction  # (1 - alpha) residual(y) = max(0, p - q)(y)
    total: Fraction


@dataclass(frozen=True)
class WhatIfFacts:
    """Where the what-if editor and its closed-form calculator start; the profiles themselves are in Facts."""

    steps: tuple[Fraction, ...]  # what one Move or arrow key shifts; the first is the default
    calculator_steps: int  # the calculator's alpha and c move in 1/calculator_steps
    calculator_alpha: Fraction  # the first draft's mean acceptance rate on that grid, below 1
    calculator_draft_step: Fraction  # draft_step / verify_step on that grid (the closed form has verify = 1)
    calculator_k: int
    calculator_max_k: int
    calculator_best_k: int  # the calculator's starting best K, and the other K that print its speedup
    calculator_ties: tuple[int, ...]


@dataclass(frozen=True)
class Facts:
    tokens: tuple[str, ...]
    k: int
    vocab_size: int
    draft_step: Fraction
    verify_step: Fraction
    round_cost: Fraction
    entry_unit: Fraction  # every authored probability is a multiple of it
    frame_count_range: tuple[int, int]  # fewest and most frames any round can have
    best_case_tokens: int
    best_case_speedup: Fraction  # every proposal accepted: k + 1 tokens for one round's cost
    worst_case_speedup: Fraction  # the first proposal rejected: one token for one round's cost
    profiles: tuple[ProfileFacts, ...]
    identity: IdentityFacts
    convergence: ConvergenceFacts
    speedup_curves: tuple[SpeedupCurve, ...]
    speedup_panels: tuple[SpeedupPanel, ...]
    speedup_max_k: int
    speedup_points_checked: int
    speedup_costs: tuple[Fraction, ...]
    speedup_alphas: tuple[Fraction, ...]
    roofline: RooflineFacts
    roofline_verify_positions: int  # one check scores k + 1 positions: the k proposals and the bonus after them
    roofline_verify_ms: float  # the roofline's time for that one pass
    roofline_verify_compute_ms: float
    notable: Mapping[str, Notable]  # each of requirements.AUTHORED_FACTS -> the first authored frame showing it
    lossless_example: LosslessExample
    what_if: WhatIfFacts
    beyond: BeyondFacts  # block verification, token trees, several guesses, the rule lab (beyond.py)
    practice: PracticeFacts | None = None  # the page "In practice", when the site has it


@dataclass(frozen=True)
class FigureRef:
    """A figure drawn from these facts, as the figure registry names it (see figure_registry.py)."""

    key: str  # the registry entry, e.g. "convergence"
    each: str  # what the entry draws one figure for: "site", "profile" or "speedup" (a speedup panel)
    item_id: str | None  # the profile's or panel's id; None for a site-wide figure
    name: str  # the file stem: key, or key-item_id
    function: str  # the drawing function's name, for the manifest and the figure's credit line
    inputs: str  # a digest of the drawing function's name and arguments
    module: str = "figures"  # the module of generator/render/ holding the drawing function


# --- computing them -----------------------------------------------------------------------------


def position_facts(profiles: Profiles, draft: Draft) -> tuple[PositionFacts, ...]:
    out = []
    for position, (t, q, x) in enumerate(zip(profiles.target, draft.distributions, draft.proposals), start=1):
        ex = excess(t, q)
        out.append(
            PositionFacts(
                position,
                False,
                t,
                q,
                profiles.tokens[x],
                overlap(t, q),
                ex,
                sum(ex, Fraction(0)),
                residual(t, q),
                analysis.acceptance_rate(t, q),
                accept_probability(t[x], q[x]),
            )
        )
    out.append(PositionFacts(profiles.k + 1, True, profiles.target[-1], None, None, None, None, None, None, None, None))
    return tuple(out)


def _drawn(r: Round, verdict: Verdict) -> bool:
    """Whether a uniform draw, not a certain ratio, gave some check of the round this verdict."""
    return any(f.verdict == verdict and f.u is not None for f in r.frames)


STREAM_SHOWN = 8  # rounds of each draft's seeded stream kept in order, unchosen, for the opening figure


def seeded_rounds(
    profiles: Profiles, draft: Draft, config: SiteConfig, index: int
) -> tuple[tuple[Round, ...], tuple[tuple[Verdict, Round], ...], tuple[Round, ...]]:
    """(sampled rounds, drawn rounds, the stream's first STREAM_SHOWN rounds) of the draft at `index`, all from one
    seeded stream of rounds.

    The sampled rounds are the stream's first few, the last swapped for a later one that rejects on a drawn
    test if none of them does: a reader stepping through "another round" should meet a rejection whose ratio
    was below 1, not only the certain verdicts the authored rounds show. The drawn rounds come from past
    those: the first round where a uniform draw kept a proposal (and none rejected one), and the first where
    a draw rejected one. A draft whose stream shows neither simply has no such round.
    """
    mc = config.monte_carlo
    count = mc.sampled_rounds
    rng = np.random.default_rng(config.seeds.sampled_rounds + index)
    stream = (
        run_round(profiles.target, draft.distributions, rng)
        for _ in range(max(count, mc.sampled_stream_rounds, STREAM_SHOWN))
    )
    head = list(itertools.islice(stream, max(count, STREAM_SHOWN)))
    first, sampled = tuple(head[:STREAM_SHOWN]), head[:count]
    kept = rejected = None
    for r in itertools.chain(head[count:], stream):  # the stream's later rounds, run only until both turn up
        if kept is None and _drawn(r, ACCEPTED) and not _drawn(r, REJECTED):
            kept = r
        if rejected is None and _drawn(r, REJECTED):
            rejected = r
        if kept is not None and rejected is not None:
            break
    if rejected is not None and not any(_drawn(r, REJECTED) for r in sampled):
        sampled[-1] = rejected
    drawn = tuple((verdict, r) for verdict, r in ((ACCEPTED, kept), (REJECTED, rejected)) if r is not None)
    return tuple(sampled), drawn, first


def profile_facts(
    profiles: Profiles,
    draft: Draft,
    config: SiteConfig,
    index: int,
    convergence: ConvergenceCase,
    authored: Round,
) -> ProfileFacts:
    """A draft's facts, given its authored round (requirements.authored_rounds)."""
    n = analysis.summarize(draft.id, profiles.target, draft.distributions, profiles.cost_model)
    sampled, drawn, first = seeded_rounds(profiles, draft, config, index)
    return ProfileFacts(
        id=draft.id,
        name=draft.name,
        description=draft.description,
        accept_rates=n.accept_rates,
        round_lengths=tuple(enumerate(n.round_length_distribution, start=1)),
        expected_tokens=n.expected_tokens,
        expected_tokens_partial_products=n.expected_tokens_partial_products,
        partial_products=tuple(accumulate(n.accept_rates, operator.mul, initial=Fraction(1))),
        expected_accepted_drafts=n.expected_accepted_drafts,
        round_cost=n.round_cost,
        speedup=n.speedup,
        authored_round=authored,
        sampled_rounds=sampled,
        drawn_rounds=drawn,
        stream_rounds=first,
        positions=position_facts(profiles, draft),
        frame_count_bounds=analysis.authored_frame_count(profiles.target, draft.distributions, draft.proposals),
        convergence=convergence,
        error_slope=mean_loglog_slope([c.error_curve for c in convergence.checks]),
    )


def checked_speedup(alpha: Fraction, k: int, c: Fraction) -> Fraction:
    """The closed-form speedup at draft length k and draft cost c, checked against the exact engine's
    expectation for i.i.d. acceptance rates alpha."""
    closed = analysis.leviathan_speedup(alpha, k, c)
    exact = analysis.speedup(analysis.expected_tokens_from_partial_products([alpha] * k), k, c, Fraction(1))
    if closed != exact:
        raise AssertionError(f"closed form and engine disagree at alpha={alpha}, K={k}, c={c}")
    return closed


def speedup_curves(config: SiteConfig) -> tuple[SpeedupCurve, ...]:
    """Closed-form curves, each point checked against the exact engine (checked_speedup)."""
    s = config.speedup
    curves = []
    for c in s.costs:
        for a in s.alphas:
            points = [(g, checked_speedup(a, g, c)) for g in range(1, s.max_k + 1)]
            best = analysis.best_draft_length(a, c, s.max_k)
            ties = analysis.printed_ties(points, best)
            curves.append(SpeedupCurve(a, c, tuple(points), best, points[best - 1][1], ties))
    return tuple(curves)


def speedup_panels(curves: tuple[SpeedupCurve, ...]) -> tuple[SpeedupPanel, ...]:
    return tuple(
        SpeedupPanel(f"{cost.numerator}-{cost.denominator}", cost, tuple(c for c in curves if c.cost == cost))
        for cost in sorted({c.cost for c in curves})
    )


def roofline_facts(config: SiteConfig) -> RooflineFacts:
    r = config.roofline
    weight_bytes = r.parameters * r.bytes_per_parameter
    memory_ms = weight_bytes / (r.memory_bandwidth_gb_s * 1e9) * 1e3
    compute_ms = 2 * r.parameters / (r.peak_tflops * 1e12) * 1e3
    crossover = memory_ms / compute_ms
    grid = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, r.max_positions, round(crossover)}  # the knee is a point too
    positions = tuple(sorted(p for p in grid if 1 <= p <= r.max_positions))
    return RooflineFacts(
        r.model_label,
        r.bytes_per_parameter,
        r.memory_bandwidth_gb_s,
        r.peak_tflops,
        weight_bytes,
        memory_ms,
        compute_ms,
        crossover,
        positions,
        tuple(max(memory_ms, compute_ms * n) for n in positions),
        r.sources,
        parameters_billions=r.parameters / 1e9,
        weight_gb=weight_bytes / 1e9,
        utilisation_one_position=compute_ms / memory_ms,
    )


def notable_frames(profiles: tuple[ProfileFacts, ...]) -> Mapping[str, Notable]:
    """Where each of the four facts shows on the authored data: the frame a reader should look at.

    The rules are requirements.AUTHORED_FACTS, which build_facts and `validate` check first, so data
    that lacks one is refused there, naming the profiles file, before anything is computed."""
    found = authored_facts((p, p.authored_round.frames) for p in profiles)
    missing = set(AUTHORED_FACTS) - found.keys()
    if missing:
        raise AssertionError(f"the authored rounds do not show: {', '.join(sorted(missing))}")
    return MappingProxyType(
        {name: Notable(p.id, p.authored_round.frames.index(f) + 1) for name, (p, f) in found.items()}
    )


def lossless_example(profiles: tuple[ProfileFacts, ...], where: Notable, tokens: tuple[str, ...]) -> LosslessExample:
    profile = next(p for p in profiles if p.id == where.profile_id)
    frame = profile.authored_round.frames[where.frame_number - 1]
    view = profile.position(frame.position)
    i = frame.replacement
    token = tokens[i]
    p, q = view.target[i], view.draft[i]
    a = accept_probability(p, q) if q else Fraction(0)  # a token the draft never proposes
    residual_y = view.residual[i]
    via_acceptance, via_residual = q * a, view.excess_mass * residual_y
    if via_acceptance != view.overlap[i] or via_residual != view.excess[i] or via_acceptance + via_residual != p:
        raise AssertionError(f"{profile.id} position {view.position}: the worked example does not add up to p({token})")
    return LosslessExample(
        profile.id,
        view.position,
        token,
        p,
        q,
        a,
        via_acceptance,
        view.excess_mass,
        residual_y,
        via_residual,
        via_acceptance + via_residual,
    )


def entry_unit(profiles: Profiles) -> Fraction:
    """One over the common denominator of every authored probability (1/8: every entry is a multiple of it)."""
    rows = [*profiles.target, *(row for d in profiles.drafts for row in d.distributions)]
    return Fraction(1, math.lcm(*(Fraction(x).denominator for row in rows for x in row)))


def what_if_facts(alphas: tuple[Fraction, ...], k: int, cost_model: CostModel, config: SiteConfig) -> WhatIfFacts:
    """The calculator starts from the first draft's acceptance rates (`alphas`) and the cost model."""
    grid = config.what_if.calculator_steps  # each slider starts on its grid, by the pages' rounding rule
    mean = sum(alphas, Fraction(0)) / len(alphas)
    alpha = min(Fraction(nearest(mean, grid), grid), Fraction(grid - 1, grid))
    c = min(Fraction(nearest(cost_model.draft_step / cost_model.verify_step, grid), grid), Fraction(1))
    max_k = config.speedup.max_k
    best = analysis.best_draft_length(alpha, c, max_k)
    points = [(g, analysis.leviathan_speedup(alpha, g, c)) for g in range(1, max_k + 1)]
    return WhatIfFacts(
        steps=config.what_if.steps,
        calculator_steps=grid,
        calculator_alpha=alpha,
        calculator_draft_step=c,
        calculator_k=min(k, max_k),
        calculator_max_k=max_k,
        calculator_best_k=best,
        calculator_ties=analysis.printed_ties(points, best),
    )


def build_facts(
    profiles: Profiles, config: SiteConfig, memo: Memo = no_memo, practice: Practice | None = None
) -> Facts:
    authored = authored_rounds(profiles, config.seeds.authored_round)
    check_rounds(profiles, authored)  # first: data the pages cannot walk through is refused before any work
    conv = convergence_facts(profiles, config, memo)
    drafts = tuple(
        profile_facts(profiles, d, config, i, case, round_)
        for i, (d, case, round_) in enumerate(zip(profiles.drafts, conv.authored, authored))
    )
    cm, k = profiles.cost_model, profiles.k
    cost = analysis.round_cost(k, cm.draft_step, cm.verify_step)
    curves = speedup_curves(config)
    roofline = roofline_facts(config)
    verify_compute_ms = roofline.compute_ms_per_position * (k + 1)
    notable = notable_frames(drafts)
    return Facts(
        tokens=profiles.tokens,
        k=k,
        vocab_size=len(profiles.tokens),
        draft_step=cm.draft_step,
        verify_step=cm.verify_step,
        round_cost=cost,
        entry_unit=entry_unit(profiles),
        frame_count_range=(3, k + 3),  # propose, verify, done; or every verify plus a bonus
        best_case_tokens=k + 1,
        best_case_speedup=Fraction(k + 1) / cost,
        worst_case_speedup=Fraction(1) / cost,
        profiles=drafts,
        identity=identity_facts(profiles, config, memo),
        convergence=conv,
        speedup_curves=curves,
        speedup_panels=speedup_panels(curves),
        speedup_max_k=max(g for c in curves for g, _ in c.points),
        speedup_points_checked=sum(len(c.points) for c in curves),
        speedup_costs=tuple(sorted({c.cost for c in curves})),
        speedup_alphas=tuple(sorted({c.alpha for c in curves})),
        roofline=roofline,
        roofline_verify_positions=k + 1,
        roofline_verify_ms=max(roofline.memory_ms, verify_compute_ms),
        roofline_verify_compute_ms=verify_compute_ms,
        notable=notable,
        lossless_example=lossless_example(drafts, notable["replacement"], profiles.tokens),
        what_if=what_if_facts(drafts[0].accept_rates, k, cm, config),
        beyond=beyond_facts(
            profiles, config.seeds.authored_round, config.block_round.draft, config.block_round.proposals, memo
        ),
        practice=None
        if practice is None
        else practice_facts(
            practice,
            profiles.tokens,
            profiles.target,
            [
                (p.id, p.name, p.expected_tokens, d.distributions, p.expected_accepted_drafts)
                for p, d in zip(drafts, profiles.drafts)
            ],
            k,
            cm.draft_step / cm.verify_step,
            config.roofline,
        ),
    )
