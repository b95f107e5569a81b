"""Which figures the site has: for each, its drawing function and the facts it is drawn from.

One entry per kind of figure. `each` says what one figure is drawn for: the whole site, every
profile, or every speedup panel; the figure's name is the entry's key, followed by the profile's or
panel's id. Pages show a figure through the views (`site.figure[key]`, `p.figures[key]`,
`panel.figures[key]`), never by spelling its name, and `check` fails on a figure drawn and never
shown or shown and never drawn.

Adding a figure: a function in figures.py (or a module of its own, as figure_timeline.py, figures_practice.py and
figures_verifiers.py are), an entry here, a `widget("figure", ...)` on a page.

The drawing modules are imported on every build, to plan the figures; they import matplotlib only inside the
functions that draw, so a build that finds every figure in its cache never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

from ..digest import digest
from ..model.facts import Facts, FigureRef, ProfileFacts, SpeedupPanel
from ..model.practice import PracticeFacts
from . import figure_timeline, figures, figures_practice, figures_verifiers
from .figure_words import timeline_span


@dataclass(frozen=True)
class FigureSpec:
    key: str
    function: Callable[..., figures.Figure]  # the drawing function
    each: str  # "site", "profile", "speedup" or "practice" (drawn once, when the site has that page)
    inputs: Callable[..., dict[str, Any]]  # (facts) for "site"; (facts, item) otherwise


@dataclass(frozen=True)
class FigureJob:
    ref: FigureRef
    draw: Callable[..., figures.Figure]  # the spec's function, called with kwargs
    kwargs: dict[str, Any]

    @property
    def name(self) -> str:
        return self.ref.name


def _labels(facts: Facts) -> list[str]:
    return [f"position {i}" for i in range(1, facts.k + 1)] + ["bonus"]


def _profile_bars(facts: Facts, p: ProfileFacts) -> dict:
    return dict(
        tokens=facts.tokens,
        target_rows=[v.target for v in p.positions],
        draft_rows=[v.draft for v in p.positions if not v.is_bonus],
        proposals=[v.proposal for v in p.positions if not v.is_bonus],
        title=p.name,
        accept_probabilities=[v.proposal_accept_probability for v in p.positions if not v.is_bonus],
    )


def _convergence(facts: Facts, p: ProfileFacts) -> dict:
    checks = p.convergence.checks
    return dict(
        tokens=facts.tokens,
        position_labels=_labels(facts),
        target_rows=[v.target for v in p.positions],
        frequencies=[c.frequencies for c in checks],
        samples=[c.samples for c in checks],
        title=f"{p.name}: committed tokens against the target",
    )


def _error_vs_samples(facts: Facts, p: ProfileFacts) -> dict:
    labels = _labels(facts)
    return dict(
        series=[(labels[c.position - 1], list(c.error_curve)) for c in p.convergence.checks],
        title=f"{p.name}: distance to the target",
        slope=p.error_slope,
    )


def _error_vs_samples_random(facts: Facts) -> dict:
    conv = facts.convergence
    return dict(
        series=[
            (case.id.replace("-", " "), list(check.error_curve))
            for case, check in zip(conv.random, conv.random_slowest)
        ],
        title="Random profiles: the slowest position of each",
        slope=conv.random_error_slope,
    )


def _round_lengths(facts: Facts) -> dict:
    return dict(
        series=[(p.name, [prob for _, prob in p.round_lengths]) for p in facts.profiles],
        k=facts.k,
        expected=[p.expected_tokens for p in facts.profiles],
    )


def _acceptance(facts: Facts) -> dict:
    return dict(labels=_labels(facts)[: facts.k], rates=[(p.name, list(p.accept_rates)) for p in facts.profiles])


def _speedup_vs_k(facts: Facts, panel: SpeedupPanel) -> dict:
    return dict(
        curves=[(f"α = {float(c.alpha):g}", list(c.points)) for c in panel.curves],
        best=[(f"α = {float(c.alpha):g}", c.best_k, c.best_speedup) for c in panel.curves],
        cost=panel.cost,
    )


def _roofline(facts: Facts) -> dict:
    r = facts.roofline
    return dict(
        positions=list(r.positions),
        times_ms=list(r.times_ms),
        memory_ms=r.memory_ms,
        compute_ms=r.compute_ms_per_position,
        model_label=r.model_label,
        knee=r.crossover_positions,
        draft_positions=facts.k,
        draft_ms=facts.roofline_verify_ms,
    )


def _timeline(facts: Facts) -> dict:
    # only the sampled rounds a lane can show, so that the figure's inputs change when its picture may
    shown = timeline_span(Fraction(facts.round_cost) / Fraction(facts.verify_step))
    return dict(
        draft_step=facts.draft_step,
        verify_step=facts.verify_step,
        round_cost=facts.round_cost,
        k=facts.k,
        lanes=[
            (p.name, p.expected_tokens, [(r.accepted, r.bonus is not None) for r in p.stream_rounds[:shown]])
            for p in facts.profiles
        ],
    )


def exactness_position(facts: Facts, p: ProfileFacts) -> int:
    """The position a draft's exactness panel shows: where its worked round rejects (the page's worked example is
    such a position), or for a round that rejects nothing, the first position of its lowest acceptance rate."""
    if p.authored_round.bonus is None:
        return p.authored_round.accepted + 1
    return 1 + min(range(facts.k), key=lambda i: p.accept_rates[i])


def _exactness(facts: Facts) -> dict:
    panels = []
    for p in facts.profiles:
        v = p.position(exactness_position(facts, p))
        panels.append((p.name, v.position, v.target, v.draft, v.overlap, v.excess, v.accept_rate))
    return dict(tokens=facts.tokens, panels=panels)


def _k_sweep(facts: Facts, practice: PracticeFacts) -> dict:
    sweep = practice.data.blocks["k_sweep"]
    best = {b.name: b.best_k for b in practice.sweep}
    return dict(
        ks=list(sweep.ks),
        drafts=[
            (d["name"], [q.value for q in d["acceptance_length"]], [q.value for q in d["tpot_ms"]], best[d["name"]])
            for d in sweep.drafts
        ],
        plain_ms=sweep.plain_tpot_ms.value,
        model=sweep.model,
        batch=sweep.batch,
        source=sweep.source.label,
    )


def _batch_speedup(facts: Facts, practice: PracticeFacts) -> dict:
    m = practice.batch
    return dict(
        curves=[(c.name, list(c.points)) for c in m.curves],
        knee=m.knee,
        crossover=m.crossover,
        k=m.k,
        break_even=[c.break_even for c in m.curves],
        model_label=facts.roofline.model_label,
    )


def _block_vs_tokenwise(facts: Facts) -> dict:
    b = facts.beyond
    return dict(
        drafts=[(d.name, list(d.tokenwise_by_k), list(d.block_by_k)) for d in b.drafts], ks=list(range(1, b.k + 1))
    )


def _tree_vs_chain(facts: Facts) -> dict:
    b = facts.beyond
    return dict(tree=list(b.tree), chains=[(d.name, list(d.tokenwise_by_k), list(d.block_by_k)) for d in b.drafts])


REGISTRY: tuple[FigureSpec, ...] = (
    FigureSpec("timeline", figure_timeline.timeline, "site", _timeline),
    FigureSpec("profile", figures.profile_bars, "profile", _profile_bars),
    FigureSpec("convergence", figures.convergence_histograms, "profile", _convergence),
    FigureSpec("error-vs-samples", figures.error_vs_samples, "profile", _error_vs_samples),
    FigureSpec("error-vs-samples-random", figures.error_vs_samples, "site", _error_vs_samples_random),
    FigureSpec("round-lengths", figures.round_length_distribution, "site", _round_lengths),
    FigureSpec("acceptance", figures.acceptance_bars, "site", _acceptance),
    FigureSpec("speedup-vs-k", figures.speedup_vs_k, "speedup", _speedup_vs_k),
    FigureSpec("roofline", figures.roofline, "site", _roofline),
    FigureSpec("exactness", figures.exactness, "site", _exactness),
    FigureSpec("k-sweep", figures_practice.k_sweep, "practice", _k_sweep),
    FigureSpec("batch-speedup", figures_practice.batch_speedup, "practice", _batch_speedup),
    FigureSpec("block-vs-tokenwise", figures_verifiers.block_vs_tokenwise, "site", _block_vs_tokenwise),
    FigureSpec("tree-vs-chain", figures_verifiers.tree_vs_chain, "site", _tree_vs_chain),
)


def _items(facts: Facts, each: str) -> tuple[tuple[str | None, Any], ...]:
    if each == "site":
        return ((None, None),)
    if each == "profile":
        return tuple((p.id, p) for p in facts.profiles)
    if each == "speedup":
        return tuple((s.id, s) for s in facts.speedup_panels)
    if each == "practice":
        return () if facts.practice is None else ((None, facts.practice),)
    raise ValueError(f"unknown figure scope {each!r}")


def jobs(facts: Facts) -> tuple[FigureJob, ...]:
    """Every figure the site shows, with the arguments its drawing function is called with."""
    out = []
    for spec in REGISTRY:
        function, module = spec.function.__name__, spec.function.__module__.rpartition(".")[2]
        # what the inputs digest (the manifest's inputs_sha256) was always taken over, so reviews compare across builds
        drawn_by = function if module == "figures" else f"{module}.{function}"
        for item_id, item in _items(facts, spec.each):
            name = spec.key if item_id is None else f"{spec.key}-{item_id}"
            kwargs = {"name": name, **(spec.inputs(facts) if item is None else spec.inputs(facts, item))}
            ref = FigureRef(spec.key, spec.each, item_id, name, function, digest(drawn_by, kwargs), module)
            out.append(FigureJob(ref, spec.function, kwargs))
    names = [j.name for j in out]
    if len(set(names)) != len(names):
        raise AssertionError(f"two figures share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return tuple(out)


def drawing_code() -> tuple[Path, ...]:
    """The source files the figures are drawn by, what the manifest's code identity covers: each drawing function's
    module, every module of generator/ it refers to (a module, or a function or class of one), theirs in turn. A
    constant (a colour, a size) names no module, so a module the drawing code takes nothing but constants from is not
    found through that use (tests/test_facts.py compares this with the modules the drawing code imports)."""
    found: dict[str, ModuleType] = {}
    todo = [spec.function.__module__ for spec in REGISTRY]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found[name] = import_module(name)  # imported already: this only looks it up
        for value in vars(found[name]).values():
            used = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
            if isinstance(used, str) and used.startswith("generator."):
                todo.append(used)
    return tuple(sorted(Path(module.__file__) for module in found.values()))
