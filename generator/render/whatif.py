"""The what-if editor: the profiles it starts from, and the vectors its JavaScript must reproduce.

The editor (site_src/assets/what-if-core.js) recomputes acceptance rates, residuals, the round
length distribution, the expected tokens and the speedup in exact BigInt fractions as the reader
edits. This module hands it the shipped profiles as fraction strings, and writes parity vectors:
random profiles, the shipped ones and closed-form cases, each with the numbers analysis.py gives,
which tests/js/what-if.test.mjs replays. Nothing here reads a file except write_parity_vectors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..model import analysis, convergence, verifiers
from ..model.engine import Row, accept_probability, residual
from ..model.facts import checked_speedup
from ..model.profiles import MAX_TERM, CostModel

# The sizes a what-if state may have; what-if-core.js holds the same numbers and the vectors check it.
MIN_TOKENS, MAX_TOKENS = 2, 8
MIN_POSITIONS, MAX_POSITIONS = 1, 8

CALCULATOR_STEPS = 100  # the closed-form vectors' grid, as site.yaml's what_if.calculator_steps


def fraction_text(x: Fraction) -> str:
    return str(Fraction(x))


def state_document(
    tokens: Sequence[str],
    target: Sequence[Row],
    draft: Sequence[Row],
    proposals: Sequence[int],
    draft_step: Fraction,
    verify_step: Fraction,
) -> dict:
    """A profile in the shape of the editor's #what-if= fragment: fraction strings, proposals as labels."""
    return {
        "tokens": list(tokens),
        "target": [[fraction_text(p) for p in row] for row in target],
        "draft": [[fraction_text(p) for p in row] for row in draft],
        "proposals": [tokens[i] for i in proposals],
        "cost_model": {"draft_step": fraction_text(draft_step), "verify_step": fraction_text(verify_step)},
    }


def numbers(
    target: Sequence[Row],
    draft: Sequence[Row],
    proposals: Sequence[int],
    k: int,
    draft_step: Fraction,
    verify_step: Fraction,
) -> dict:
    """Every number the editor shows for a state whose first k positions are drafted, as fraction strings."""
    t, d = tuple(target[: k + 1]), tuple(draft[:k])
    n = analysis.summarize("what-if", t, d, CostModel(Fraction(draft_step), Fraction(verify_step)))
    return {
        "accept_rates": [fraction_text(a) for a in n.accept_rates],
        "residuals": [None if r is None else [fraction_text(x) for x in r] for r in map(residual, t, d)],
        "proposal_accept": [fraction_text(accept_probability(t[i][x], d[i][x])) for i, x in enumerate(proposals[:k])],
        "round_length_distribution": [fraction_text(p) for p in n.round_length_distribution],
        "expected_tokens": fraction_text(n.expected_tokens),
        "round_cost": fraction_text(n.round_cost),
        "speedup": fraction_text(n.speedup),
        "block_expected_accepted": fraction_text(block := verifiers.block_expected_accepted(t, d)),
        "block_expected_tokens": fraction_text(block + 1),
        "block_speedup": fraction_text((block + 1) / n.round_cost),
    }


def editor_data(facts) -> dict:
    """What the page embeds for the editor (a view of the facts): each shipped draft as a #what-if= state,
    the Move steps and the calculator's start, all as fraction strings."""
    target = tuple(v.target for v in facts.profiles[0].positions)
    w = facts.what_if
    return {
        "tokens": list(facts.tokens),
        "profiles": [
            {
                "id": p.id,
                "name": p.name,
                "state": state_document(
                    facts.tokens,
                    target,
                    tuple(v.draft for v in p.positions if not v.is_bonus),
                    tuple(facts.tokens.index(v.proposal) for v in p.positions if not v.is_bonus),
                    facts.draft_step,
                    facts.verify_step,
                ),
            }
            for p in facts.profiles
        ],
        "steps": [fraction_text(s) for s in w.steps],
        "calculator": {
            "alpha": fraction_text(w.calculator_alpha),
            "draft_step": fraction_text(w.calculator_draft_step),
            "k": w.calculator_k,
            "max_k": w.calculator_max_k,
            "best_k": w.calculator_best_k,
            "ties": list(w.calculator_ties),
            "steps": w.calculator_steps,
        },
    }


# --- parity vectors -----------------------------------------------------------------------------

DENOMINATORS = (2, 3, 5, 7, 8, 10, 12, 16, 64, 97, 100, 1000)


def _scatter(rng: np.random.Generator, row: Row) -> list[str]:
    """The row as strings, some unreduced ("2/8") or with mixed denominators, as a person might write them."""
    out = []
    for p in row:
        scale = int(rng.integers(1, 4))
        out.append(f"{p.numerator * scale}/{p.denominator * scale}" if p.denominator > 1 or scale > 1 else str(p))
    return out


def _random_case(rng: np.random.Generator, index: int, vocab: int, k: int) -> dict:
    denominator = int(rng.choice(DENOMINATORS))
    agreement = Fraction(int(rng.integers(0, 5)), 4)
    target, draft = convergence.random_profile(rng, vocab, k, agreement, denominator)
    if index % 3 == 1:  # a second denominator in the draft: rows whose entries do not share one
        other = int(rng.choice(DENOMINATORS))
        draft = tuple(analysis.random_rational_row(rng, vocab, other) for _ in range(k))
    proposals = [int(rng.choice([i for i, p in enumerate(row) if p > 0])) for row in draft]  # q > 0 at each
    draft_step = Fraction(int(rng.integers(0, 40)), int(rng.choice((10, 20, 100, 7))))
    verify_step = Fraction(int(rng.integers(1, 5)), int(rng.integers(1, 4)))
    used_k = int(rng.integers(1, k + 1)) if index % 4 == 3 else k
    tokens = [f"t{i}" for i in range(vocab)]
    doc = state_document(tokens, target, draft, proposals, draft_step, verify_step)
    doc["target"] = [_scatter(rng, row) for row in target]
    doc["draft"] = [_scatter(rng, row) for row in draft]
    if used_k != k:
        doc["k"] = used_k
    return {
        "id": f"random-{index:03d}",
        "state": doc,
        "numbers": numbers(target, draft, proposals, used_k, draft_step, verify_step),
    }


def shipped_cases(profiles) -> list[dict]:
    """The shipped drafts, with the same numbers `python -m generator numbers --json` prints."""
    cases = []
    table = {row["id"]: row for row in analysis.numbers_table(profiles, 0)}
    cost = profiles.cost_model
    for draft in profiles.drafts:
        doc = state_document(
            profiles.tokens, profiles.target, draft.distributions, draft.proposals, cost.draft_step, cost.verify_step
        )
        nums = numbers(
            profiles.target, draft.distributions, draft.proposals, profiles.k, cost.draft_step, cost.verify_step
        )
        for key in ("accept_rates", "round_length_distribution", "expected_tokens", "speedup"):
            assert nums[key] == table[draft.id][key], f"{draft.id}: {key} differs from numbers_table"
        for key in ("block_expected_accepted", "block_expected_tokens"):
            assert nums[key] == table[draft.id][key], f"{draft.id}: {key} differs from numbers_table"
        cases.append({"id": f"shipped-{draft.id}", "state": doc, "numbers": nums})
    return cases


def _closed_form_case(alpha: Fraction, c: Fraction, k: int, max_k: int) -> dict:
    best = analysis.best_draft_length(alpha, c, max_k)
    points = [(g, analysis.leviathan_speedup(alpha, g, c)) for g in range(1, max_k + 1)]
    return {
        "alpha": fraction_text(alpha),
        "k": k,
        "c": fraction_text(c),
        "max_k": max_k,
        "speedup": fraction_text(checked_speedup(alpha, k, c)),
        "best_k": best,
        "ties": list(analysis.printed_ties(points, best)),
    }


# Grid points where another K prints the best K's speedup to two decimals (0.83 at c = 0.1: K = 6 and 7
# both print 2.68x), so the vectors always hold ties.
TIED = ((Fraction(83, 100), Fraction(1, 10)), (Fraction(9, 10), Fraction(5, 100)), (Fraction(7, 10), Fraction(5, 100)))


def closed_form_cases(rng: np.random.Generator, count: int, max_k: int) -> list[dict]:
    """(alpha, K, c) in hundredths, the closed form, the best K and the K tied with it to two decimals, each
    speedup checked against the engine's i.i.d. path."""
    cases = []
    for i in range(count):
        alpha = Fraction(int(rng.integers(0, CALCULATOR_STEPS + 1)), CALCULATOR_STEPS)
        if i < 2:
            alpha = Fraction(i)  # the two ends: nothing accepted, everything accepted
        c = Fraction(int(rng.integers(0, CALCULATOR_STEPS + 1)), CALCULATOR_STEPS)
        k = int(rng.integers(1, max_k + 1))
        cases.append(_closed_form_case(alpha, c, k, max_k))
    return cases + [_closed_form_case(alpha, c, 1, max_k) for alpha, c in TIED]


def parity_vectors(profiles, seed: int) -> dict:
    """Random profiles for every k from 1 to 8 and vocabulary from 2 to 6, the shipped ones, closed-form cases."""
    rng = np.random.default_rng(seed)
    sizes = [(k, vocab) for k in range(MIN_POSITIONS, MAX_POSITIONS + 1) for vocab in range(2, 7)]
    cases = [_random_case(rng, index, vocab, k) for index, (k, vocab) in enumerate(sizes)]
    return {
        "limits": {
            "minTokens": MIN_TOKENS,
            "maxTokens": MAX_TOKENS,
            "minPositions": MIN_POSITIONS,
            "maxPositions": MAX_POSITIONS,
            "maxTerm": MAX_TERM,
        },
        "default_tokens": list(profiles.tokens),
        "cases": cases + shipped_cases(profiles),
        "closed_form": closed_form_cases(rng, 60, 16),
    }


def write_parity_vectors(profiles, seed: int, path: Path) -> Path:
    path.write_text(json.dumps(parity_vectors(profiles, seed), indent=1), encoding="utf-8")
    return path
