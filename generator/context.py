"""Everything the pages show, computed once: the single object templates and figures read from.

This is the last place arithmetic happens. Views hold token labels instead of indices and exact
Fractions for every probability; templates only format them, and the stepper's JSON is a
projection of the same frames, so nothing a reader sees is derived twice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from . import analysis
from .config import SiteConfig
from .engine import Frame, Round, excess, overlap, residual, run_round
from .profiles import Draft, Profiles

SPEEDUP_ALPHAS = (Fraction(1, 2), Fraction(7, 10), Fraction(4, 5), Fraction(9, 10))
SPEEDUP_COSTS = (Fraction(1, 20), Fraction(1, 10), Fraction(1, 4))
SPEEDUP_MAX_K = 16


@dataclass(frozen=True)
class Chip:
    position: int
    token: str
    state: str  # pending, accepted, rejected, dropped, replacement, bonus


@dataclass(frozen=True)
class FrameView:
    id: str  # the HTML anchor, e.g. "frame-divergent-authored-4"
    number: int  # 1-based within its round
    kind: str
    title: str
    position: int | None
    proposal: str | None
    p_target: Fraction | None
    p_draft: Fraction | None
    ratio: Fraction | None
    accept_probability: Fraction | None
    u: float | None
    verdict: str | None
    residual: tuple[tuple[str, Fraction], ...] | None
    replacement: str | None
    replacement_u: float | None
    bonus_distribution: tuple[tuple[str, Fraction], ...] | None
    bonus: str | None
    bonus_u: float | None
    committed: tuple[str, ...]
    chips: tuple[Chip, ...]
    certain: bool  # the verdict needed no draw

    @property
    def residual_intervals(self) -> tuple["Interval", ...]:
        """Where in [0, 1) each residual token's share lies, so a reader can see which one the draw landed in."""
        return intervals(self.residual)

    @property
    def bonus_intervals(self) -> tuple["Interval", ...]:
        return intervals(self.bonus_distribution)

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(c.token for c in self.chips if c.state == "dropped")


@dataclass(frozen=True)
class Interval:
    token: str
    probability: Fraction
    low: Fraction
    high: Fraction


def intervals(row: tuple[tuple[str, Fraction], ...] | None) -> tuple[Interval, ...]:
    """The cumulative intervals engine.draw walks, skipping tokens it can never pick."""
    out, low = [], Fraction(0)
    for token, p in row or ():
        if p == 0:
            continue
        out.append(Interval(token, p, low, low + p))
        low += p
    return tuple(out)


@dataclass(frozen=True)
class RoundView:
    id: str  # "authored" or "sampled-1", ...
    label: str
    proposals: tuple[str, ...]
    committed: tuple[str, ...]
    accepted: int
    bonus: str | None
    frames: tuple[FrameView, ...]

    @property
    def frame_count(self) -> int:
        return len(self.frames)

    @property
    def positions_tried(self) -> int:
        """How many proposals the target actually checked: one verify frame each."""
        return sum(1 for f in self.frames if f.kind == "verify")

    @property
    def has_bonus(self) -> bool:
        return self.bonus is not None

    @property
    def every_verdict_certain(self) -> bool:
        """No check in the round needed a uniform draw: every ratio was at least 1 or the target gave 0."""
        return all(f.certain for f in self.frames if f.kind == "verify")

    @property
    def dropped_positions(self) -> tuple[int, ...]:
        """Positions whose proposals were thrown away unchecked after the round's rejection."""
        return tuple(c.position for c in self.frames[-1].chips if c.state == "dropped")

    def frame(self, kind: str, position: int | None = None) -> FrameView:
        for f in self.frames:
            if f.kind == kind and (position is None or f.position == position):
                return f
        raise KeyError((kind, position))


@dataclass(frozen=True)
class PositionView:
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
class ProfileView:
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
    authored: RoundView
    sampled: tuple[RoundView, ...]
    positions: tuple[PositionView, ...]
    frame_count_bounds: tuple[int, int]
    convergence: Any = None  # analysis.ConvergenceCase

    @property
    def rounds(self) -> tuple[RoundView, ...]:
        return (self.authored, *self.sampled)

    @property
    def frame_count(self) -> int:
        return self.authored.frame_count

    @property
    def dropped_views(self) -> tuple[PositionView, ...]:
        """The positions the authored round dropped unchecked, with what their own check would have said."""
        dropped = set(self.authored.dropped_positions)
        return tuple(v for v in self.positions if v.position in dropped)

    @property
    def frame_count_fixed(self) -> bool:
        """True when no random draw can change how many frames the authored round has."""
        return self.frame_count_bounds[0] == self.frame_count_bounds[1]

    def position(self, number: int) -> PositionView:
        """The view of position `number` (1-based; k + 1 is the bonus position)."""
        for v in self.positions:
            if v.position == number:
                return v
        raise KeyError(number)


@dataclass(frozen=True)
class SpeedupCurve:
    alpha: Fraction
    cost: Fraction
    points: tuple[tuple[int, Fraction], ...]  # (K, speedup)
    best_k: int
    best_speedup: Fraction


@dataclass(frozen=True)
class RooflineView:
    model_label: str
    parameters: float
    bytes_per_parameter: float
    memory_bandwidth_gb_s: float
    peak_tflops: float
    weight_bytes: float
    memory_ms: float  # the floor: every pass reads every weight once
    compute_ms_per_position: float
    crossover_positions: float  # where compute time catches up with the memory floor
    positions: tuple[int, ...]
    times_ms: tuple[float, ...]
    sources: tuple[Any, ...]

    @property
    def parameters_billions(self) -> float:
        return self.parameters / 1e9

    @property
    def weight_gb(self) -> float:
        return self.weight_bytes / 1e9

    @property
    def utilisation_one_position(self) -> float:
        """The share of the pass's time the arithmetic units are busy when it scores a single position."""
        return self.compute_ms_per_position / self.memory_ms

    def time_ms(self, positions: int) -> float:
        """The model's time for one pass that scores `positions` positions: the larger of memory and compute."""
        return max(self.memory_ms, self.compute_ms_per_position * positions)

    def compute_ms(self, positions: int) -> float:
        return self.compute_ms_per_position * positions


@dataclass
class Context:
    config: SiteConfig
    title: str
    tokens: tuple[str, ...]
    k: int
    draft_step: Fraction
    verify_step: Fraction
    round_cost: Fraction
    profiles: tuple[ProfileView, ...]
    identity: dict
    convergence: dict
    speedup_curves: tuple[SpeedupCurve, ...]
    roofline: RooflineView
    facts: dict
    figures: dict = field(default_factory=dict)  # name -> figures.Figure, filled by the build
    pages: list = field(default_factory=list)  # filled by the page stage
    playground: dict | None = None  # the playground's models and measurements, filled by the build

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    @property
    def entry_denominator(self) -> int:
        """The common denominator of every authored probability (8: every entry is a multiple of an eighth)."""
        rows = [v.target for v in self.profiles[0].positions]
        rows += [v.draft for p in self.profiles for v in p.positions if v.draft is not None]
        return math.lcm(*(Fraction(x).denominator for row in rows for x in row))

    @property
    def entry_unit(self) -> Fraction:
        return Fraction(1, self.entry_denominator)

    @property
    def frame_count_range(self) -> tuple[int, int]:
        """Fewest and most frames any round can have: propose, verify, done; or every verify plus a bonus."""
        return (3, self.k + 3)

    @property
    def best_case_tokens(self) -> int:
        return self.k + 1

    @property
    def best_case_speedup(self) -> Fraction:
        """Every proposal accepted: k + 1 tokens for one round's cost."""
        return Fraction(self.k + 1) / self.round_cost

    @property
    def worst_case_speedup(self) -> Fraction:
        """The first proposal rejected: one token for one round's cost."""
        return Fraction(1) / self.round_cost

    @property
    def draft_cost_per_round(self) -> Fraction:
        return self.k * self.draft_step

    @property
    def speedup_max_k(self) -> int:
        return max(k for c in self.speedup_curves for k, _ in c.points)

    @property
    def speedup_points_checked(self) -> int:
        return sum(len(c.points) for c in self.speedup_curves)

    @property
    def speedup_costs(self) -> tuple[Fraction, ...]:
        return tuple(sorted({c.cost for c in self.speedup_curves}))

    @property
    def speedup_alphas(self) -> tuple[Fraction, ...]:
        return tuple(sorted({c.alpha for c in self.speedup_curves}))

    @property
    def roofline_verify_ms(self) -> float:
        """The roofline's time for one pass that scores a whole round's k positions."""
        return self.roofline.time_ms(self.k)

    @property
    def roofline_verify_compute_ms(self) -> float:
        return self.roofline.compute_ms(self.k)

    @property
    def lossless_example(self) -> "LosslessExample":
        return lossless_example(self.facts["replacement"])

    def profile(self, profile_id: str) -> ProfileView:
        for p in self.profiles:
            if p.id == profile_id:
                return p
        raise KeyError(profile_id)

    def template_vars(self) -> dict:
        """What a page template sees: the context itself plus each profile under its own id."""
        out = {"site": self, "tokens": self.tokens, "k": self.k}
        out.update({p.id: p for p in self.profiles})
        return out


def _labelled(tokens, row) -> tuple[tuple[str, Fraction], ...] | None:
    return None if row is None else tuple((tokens[i], p) for i, p in enumerate(row))


def frame_title(f: Frame, tokens) -> str:
    if f.kind == "propose":
        return "The draft proposes"
    if f.kind == "verify":
        return f"Check position {f.position}: {tokens[f.proposal]!s} {f.verdict}"
    if f.kind == "bonus":
        return "Bonus token from the target"
    return "Round over"


def round_view(profile_id: str, round_id: str, label: str, r: Round, tokens) -> RoundView:
    frames = []
    for n, f in enumerate(r.frames, start=1):
        chips = []
        for i, state in enumerate(f.statuses):
            chips.append(Chip(i + 1, tokens[r.proposals[i]], "proposed" if state == "pending" else state))
            if state == "rejected":
                chips.append(Chip(i + 1, tokens[f.committed[i]] if len(f.committed) > i else "?", "replacement"))
        if f.kind in ("bonus", "done") and r.bonus is not None:
            chips.append(Chip(len(f.statuses) + 1, tokens[r.bonus], "bonus"))
        frames.append(FrameView(
            id=f"frame-{profile_id}-{round_id}-{n}", number=n, kind=f.kind, title=frame_title(f, tokens),
            position=f.position, proposal=None if f.proposal is None else tokens[f.proposal],
            p_target=f.p_target, p_draft=f.p_draft, ratio=f.ratio, accept_probability=f.accept_probability,
            u=None if f.u is None else float(f.u), verdict=f.verdict,
            residual=_labelled(tokens, f.residual),
            replacement=None if f.replacement is None else tokens[f.replacement],
            replacement_u=None if f.replacement_u is None else float(f.replacement_u),
            bonus_distribution=_labelled(tokens, f.bonus_distribution),
            bonus=None if f.bonus is None else tokens[f.bonus],
            bonus_u=None if f.bonus_u is None else float(f.bonus_u),
            committed=tuple(tokens[t] for t in f.committed), chips=tuple(chips),
            certain=f.kind == "verify" and f.u is None,
        ))
    return RoundView(
        round_id, label, tuple(tokens[x] for x in r.proposals), tuple(tokens[x] for x in r.committed),
        r.accepted, None if r.bonus is None else tokens[r.bonus], tuple(frames),
    )


def sampled_rounds(profiles: Profiles, draft: Draft, count: int, seed: int) -> list[Round]:
    """The first `count` rounds of a seeded stream, swapping in one that rejects on a drawn test if none does.

    A reader stepping through "another round" should meet a rejection whose ratio was below 1,
    not only the certain verdicts the authored rounds show.
    """
    rng = np.random.default_rng(seed)
    stream = [run_round(profiles.target, draft.distributions, rng) for _ in range(max(count * 40, 200))]
    chosen = stream[:count]

    def drawn_rejection(r: Round) -> bool:
        return any(f.verdict == "rejected" and f.u is not None for f in r.frames)

    if count and not any(drawn_rejection(r) for r in chosen):
        extra = next((r for r in stream[count:] if drawn_rejection(r)), None)
        if extra is not None:
            chosen[-1] = extra
    return chosen


def position_views(profiles: Profiles, draft: Draft) -> tuple[PositionView, ...]:
    views = []
    for i, (t, q) in enumerate(zip(profiles.target, draft.distributions)):
        x = draft.proposals[i]
        ex = excess(t, q)
        views.append(PositionView(
            i + 1, False, t, q, profiles.tokens[x], overlap(t, q), ex, sum(ex, Fraction(0)), residual(t, q),
            analysis.acceptance_rate(t, q), min(Fraction(1), t[x] / q[x]),
        ))
    views.append(PositionView(profiles.k + 1, True, profiles.target[-1], None, None, None, None, None, None, None, None))
    return tuple(views)


def profile_view(profiles: Profiles, draft: Draft, config: SiteConfig, index: int) -> ProfileView:
    n = analysis.summarize(draft.id, profiles.target, draft.distributions, profiles.cost_model)
    authored = run_round(
        profiles.target, draft.distributions, np.random.default_rng(config.seeds.authored_round), draft.proposals
    )
    sampled = sampled_rounds(profiles, draft, config.monte_carlo.sampled_rounds, config.seeds.sampled_rounds + index)
    partials = [Fraction(1)]
    for a in n.accept_rates:
        partials.append(partials[-1] * a)
    return ProfileView(
        id=draft.id, name=draft.name, description=draft.description,
        accept_rates=n.accept_rates,
        round_lengths=tuple(enumerate(n.round_length_distribution, start=1)),
        expected_tokens=n.expected_tokens, expected_tokens_partial_products=n.expected_tokens_partial_products,
        partial_products=tuple(partials), expected_accepted_drafts=n.expected_accepted_drafts,
        round_cost=n.round_cost, speedup=n.speedup,
        authored=round_view(draft.id, "authored", "The authored round", authored, profiles.tokens),
        sampled=tuple(
            round_view(draft.id, f"sampled-{j}", f"Sampled round {j}", r, profiles.tokens)
            for j, r in enumerate(sampled, start=1)
        ),
        positions=position_views(profiles, draft),
        frame_count_bounds=analysis.authored_frame_count(profiles.target, draft.distributions, draft.proposals),
    )


def identity_summary(profiles: Profiles, config: SiteConfig) -> dict:
    profile_pairs = [analysis.over_common_denominator(profiles.target[i], d.distributions[i])
                     for d in profiles.drafts for i in range(profiles.k)]
    random_pairs = analysis.random_identity_pairs(
        np.random.default_rng(config.seeds.identity_pairs), config.monte_carlo.identity_pairs
    )
    _, profile_entries = analysis.identity_check(profile_pairs)
    _, random_entries = analysis.identity_check(random_pairs)
    return {
        "profile_pairs": len(profile_pairs), "profile_entries": profile_entries,
        "random_pairs": len(random_pairs), "random_entries": random_entries,
        "pairs": len(profile_pairs) + len(random_pairs), "entries": profile_entries + random_entries,
        "failures": 0,
    }


def convergence_summary(profiles: Profiles, config: SiteConfig) -> dict:
    mc = config.monte_carlo
    cases = [(d.id, d.name, profiles.target, d.distributions) for d in profiles.drafts]
    cases += analysis.random_cases(config.seeds.random_profiles, mc.random_profiles, len(profiles.tokens), profiles.k)
    results = analysis.convergence_suite(cases, mc.rounds, config.seeds.convergence)
    tests = sum(len(c.checks) for c in results)
    family_alpha = 0.001
    return {
        "rounds": mc.rounds,
        "cases": results,
        "authored": results[: len(profiles.drafts)],
        "random": results[len(profiles.drafts):],
        "tests": tests,
        "family_alpha": family_alpha,
        "threshold": family_alpha / tests,
        "worst_p_value": min(c.worst_p_value for c in results),
        "worst_total_variation": max(c.worst_total_variation for c in results),
        "passed": not any(c.failed(family_alpha / tests) for c in results),
        "threshold_one_in": round(tests / family_alpha),
        "positions_per_case": profiles.k + 1,
        "negative_control": negative_control(profiles, config, family_alpha / tests),
    }


def speedup_curves(k: int, draft_step: Fraction, verify_step: Fraction) -> tuple[SpeedupCurve, ...]:
    """Closed-form curves, each point checked against the exact engine's expectation for i.i.d. alphas."""
    curves = []
    for c in SPEEDUP_COSTS:
        for a in SPEEDUP_ALPHAS:
            points = []
            for g in range(1, SPEEDUP_MAX_K + 1):
                closed = analysis.leviathan_speedup(a, g, c)
                exact = analysis.speedup(analysis.expected_tokens_from_partial_products([a] * g), g, c, Fraction(1))
                if closed != exact:
                    raise AssertionError(f"closed form and engine disagree at alpha={a}, K={g}, c={c}")
                points.append((g, closed))
            best = analysis.best_draft_length(a, c, SPEEDUP_MAX_K)
            curves.append(SpeedupCurve(a, c, tuple(points), best, points[best - 1][1]))
    return tuple(curves)


def roofline_view(config: SiteConfig) -> RooflineView:
    r = config.roofline
    weight_bytes = r.parameters * r.bytes_per_parameter
    memory_ms = weight_bytes / (r.memory_bandwidth_gb_s * 1e9) * 1e3
    compute_ms = 2 * r.parameters / (r.peak_tflops * 1e12) * 1e3
    crossover = memory_ms / compute_ms
    grid = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, r.max_positions, round(crossover)}  # the knee is a point too
    positions = tuple(sorted(p for p in grid if 1 <= p <= r.max_positions))
    return RooflineView(
        r.model_label, r.parameters, r.bytes_per_parameter, r.memory_bandwidth_gb_s, r.peak_tflops,
        weight_bytes, memory_ms, compute_ms, crossover,
        positions, tuple(max(memory_ms, compute_ms * n) for n in positions), r.sources,
    )


def worth_noticing(profiles: tuple[ProfileView, ...]) -> dict:
    """Where each of the four facts shows on the authored data: the frame a reader should look at."""
    facts: dict[str, Any] = {}
    for p in profiles:
        for f in p.authored.frames:
            if f.kind != "verify":
                continue
            if f.ratio is not None and f.ratio >= 1:
                facts.setdefault("outright", (p, f))
            if f.p_target == 0:
                facts.setdefault("target_zero", (p, f))
            if f.verdict == "rejected":
                facts.setdefault("drops_later", (p, f))
                facts.setdefault("replacement", (p, f))
    missing = {"outright", "target_zero", "drops_later", "replacement"} - facts.keys()
    if missing:
        raise AssertionError(f"the authored rounds do not show: {', '.join(sorted(missing))}")
    return facts


@dataclass(frozen=True)
class LosslessExample:
    """P(commit y) = q(y) min(1, p(y)/q(y)) + (1 - alpha) residual(y), for the token a rejection put in."""
    profile: ProfileView
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


def lossless_example(fact) -> LosslessExample:
    profile, frame = fact
    view = profile.positions[frame.position - 1]
    token = frame.replacement
    i = [t for t, _ in frame.residual].index(token)
    p, q = view.target[i], view.draft[i]
    a = min(Fraction(1), p / q) if q else Fraction(0)
    residual_y = view.residual[i]
    via_acceptance, via_residual = q * a, view.excess_mass * residual_y
    if via_acceptance != view.overlap[i] or via_residual != view.excess[i] or via_acceptance + via_residual != p:
        raise AssertionError(f"{profile.id} position {view.position}: the worked example does not add up to p({token})")
    return LosslessExample(profile, view.position, token, p, q, a, via_acceptance, view.excess_mass, residual_y,
                           via_residual, via_acceptance + via_residual)


def negative_control(profiles: Profiles, config: SiteConfig, threshold: float) -> dict:
    """The same convergence check run on a wrong sampler that replaces a rejection from the target itself."""
    cases = [(d.id, d.name, profiles.target, d.distributions) for d in profiles.drafts]
    results = analysis.convergence_suite(
        cases, config.monte_carlo.rounds, config.seeds.convergence, analysis.target_rows_resampler
    )
    tests = sum(len(case.checks) for case in results)
    failed = sum(case.failed(threshold) for case in results)
    return {
        "cases": results,
        "tests": tests,
        "failed_tests": failed,
        "passed_tests": tests - failed,
        "worst_p_value": min(case.worst_p_value for case in results),
        "worst_total_variation": max(case.worst_total_variation for case in results),
        "caught": failed > 0,
    }


def build_context(profiles: Profiles, config: SiteConfig) -> Context:
    views = tuple(profile_view(profiles, d, config, i) for i, d in enumerate(profiles.drafts))
    conv = convergence_summary(profiles, config)
    views = tuple(
        ProfileView(**{**v.__dict__, "convergence": case}) for v, case in zip(views, conv["authored"])
    )
    cm = profiles.cost_model
    return Context(
        config=config, title=config.title, tokens=profiles.tokens, k=profiles.k,
        draft_step=cm.draft_step, verify_step=cm.verify_step,
        round_cost=analysis.round_cost(profiles.k, cm.draft_step, cm.verify_step),
        profiles=views, identity=identity_summary(profiles, config), convergence=conv,
        speedup_curves=speedup_curves(profiles.k, cm.draft_step, cm.verify_step),
        roofline=roofline_view(config), facts=worth_noticing(views),
    )


def stepper_data(ctx: Context) -> dict:
    """The JSON the stepper reads: which frames exist and what to announce; the frames' HTML is in the page."""
    return {
        "profiles": [
            {
                "id": p.id, "name": p.name,
                "rounds": [
                    {"id": r.id, "label": r.label,
                     "frames": [{"id": f.id, "title": f.title} for f in r.frames]}
                    for r in p.rounds
                ],
            }
            for p in ctx.profiles
        ]
    }
