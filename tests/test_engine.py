from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model.config import load_config
from generator.model.engine import (
    ACCEPTED,
    DROPPED,
    REJECTED,
    accept_probability,
    draw,
    excess,
    overlap,
    residual,
    run_round,
)
from generator.model.profiles import load_profiles
from support import PROFILES


def rows(size, denominator=24):
    """A strategy for exact distributions over `size` tokens, entries multiples of 1/denominator."""
    return st.lists(st.integers(0, denominator), min_size=size - 1, max_size=size - 1).map(
        lambda cuts: _row(sorted(cuts), denominator)
    )


def _row(cuts, denominator):
    edges = [0, *cuts, denominator]
    return tuple(F(b - a, denominator) for a, b in zip(edges, edges[1:]))


@st.composite
def profile(draw_, k=3, size=4):
    target = tuple(draw_(rows(size)) for _ in range(k + 1))
    drafts = []
    proposals = []
    for _ in range(k):
        d = draw_(rows(size))
        drafts.append(d)
        proposals.append(draw_(st.sampled_from([i for i, p in enumerate(d) if p > 0])))
    return target, tuple(drafts), tuple(proposals)


def test_accept_probability_is_capped_at_one_and_exact():
    assert accept_probability(F(3, 8), F(1, 8)) == 1
    assert accept_probability(F(1, 8), F(3, 8)) == F(1, 3)
    assert accept_probability(F(0), F(2, 8)) == 0


def test_a_proposal_the_draft_never_makes_has_no_accept_probability():
    with pytest.raises(ValueError):
        accept_probability(F(1, 2), F(0))


def test_the_residual_is_the_normalised_excess_of_target_over_draft():
    target = (F(1, 2), F(1, 4), F(1, 4))
    draft = (F(1, 4), F(1, 2), F(1, 4))
    assert excess(target, draft) == (F(1, 4), 0, 0)
    assert residual(target, draft) == (F(1), F(0), F(0))


def test_a_draft_equal_to_the_target_leaves_no_residual():
    row = (F(1, 2), F(1, 2))
    assert residual(row, row) is None


def test_draw_never_returns_a_zero_probability_token():
    row = (F(0), F(1, 2), F(0), F(1, 2), F(0))
    for u in (F(0), F(1, 4), F(1, 2), F(999, 1000), F(1) - F(1, 2**53)):
        assert row[draw(row, u)] > 0


def test_the_aligned_authored_round_leaves_position_two_to_the_draw_which_keeps_it_then_earns_the_bonus():
    """Under the site's seed: position 2 proposes a token the draft overrates (accept probability 1/2), so a uniform
    draw decides it within the round's first three frames (the stepper opens here); the draw keeps it, every other
    check is certain, and the round earns the bonus in eight frames. Seed 0 draws u >= 1/2 and rejects there."""
    p = load_profiles(PROFILES)
    d = p.draft("aligned")
    seed = load_config(PROFILES.parent / "site.yaml").seeds.authored_round
    r = run_round(p.target, d.distributions, np.random.default_rng(seed), d.proposals)
    assert [f.kind for f in r.frames] == ["propose"] + ["verify"] * 5 + ["bonus", "done"]
    assert r.accepted == 5 and r.bonus is not None
    assert r.committed[:5] == d.proposals
    drawn = [f for f in r.frames if f.kind == "verify" and f.u is not None]
    assert [(f.position, f.accept_probability) for f in drawn] == [(2, F(1, 2))]
    assert r.frames.index(drawn[0]) + 1 <= 3 and drawn[0].u < F(1, 2)
    other = run_round(p.target, d.distributions, np.random.default_rng(0), d.proposals)
    assert other.frames[2].verdict == REJECTED and other.frames[2].u >= F(1, 2)  # the control: the draw decides


def test_the_divergent_authored_round_rejects_position_three_and_drops_four_and_five_in_five_frames():
    p = load_profiles(PROFILES)
    d = p.draft("divergent")
    r = run_round(p.target, d.distributions, np.random.default_rng(0), d.proposals)
    assert [f.kind for f in r.frames] == ["propose", "verify", "verify", "verify", "done"]
    rejected = r.frames[3]
    assert rejected.verdict == REJECTED and rejected.p_target == 0 and rejected.accept_probability == 0
    assert rejected.statuses == (ACCEPTED, ACCEPTED, REJECTED, DROPPED, DROPPED)
    assert rejected.replacement != d.proposals[2]
    assert len(r.committed) == 3


def test_a_round_is_reproducible_from_its_seed_and_differs_across_seeds():
    p = load_profiles(PROFILES)
    d = p.draft("divergent")
    runs = [run_round(p.target, d.distributions, np.random.default_rng(s)) for s in (5, 5, 6, 7, 8)]
    assert runs[0] == runs[1]
    assert len({r.proposals + r.committed for r in runs}) > 1


def test_each_frame_records_what_the_reader_needs():
    p = load_profiles(PROFILES)
    d = p.draft("aligned")
    r = run_round(p.target, d.distributions, np.random.default_rng(3), d.proposals)
    verify = r.frames[1]
    assert (verify.position, verify.proposal) == (1, d.proposals[0])
    assert verify.ratio == verify.p_target / verify.p_draft
    assert verify.committed == (d.proposals[0],)
    bonus = r.frames[-2]
    assert bonus.bonus_distribution == p.target[-1] and bonus.bonus_u is not None


@settings(max_examples=300, deadline=None)
@given(profile(), st.integers(0, 2**32 - 1))
def test_a_ratio_of_at_least_one_is_always_accepted(prof, seed):
    target, drafts, proposals = prof
    r = run_round(target, drafts, np.random.default_rng(seed), proposals)
    for f in r.frames:
        if f.kind == "verify" and f.ratio >= 1:
            assert f.verdict == ACCEPTED and f.u is None


@settings(max_examples=300, deadline=None)
@given(profile(), st.integers(0, 2**32 - 1))
def test_a_proposal_the_target_gives_zero_is_always_rejected(prof, seed):
    target, drafts, proposals = prof
    r = run_round(target, drafts, np.random.default_rng(seed), proposals)
    for f in r.frames:
        if f.kind == "verify" and f.p_target == 0:
            assert f.verdict == REJECTED


@settings(max_examples=300, deadline=None)
@given(profile(), st.integers(0, 2**32 - 1))
def test_a_rejection_drops_every_later_proposal_and_never_replaces_with_the_rejected_token(prof, seed):
    target, drafts, proposals = prof
    r = run_round(target, drafts, np.random.default_rng(seed), proposals)
    verdicts = [f for f in r.frames if f.kind == "verify"]
    for n, f in enumerate(verdicts):
        if f.verdict == REJECTED:
            assert n == len(verdicts) - 1
            assert all(s == DROPPED for s in f.statuses[n + 1 :])
            assert f.replacement != f.proposal
            assert f.residual[f.proposal] == 0
            assert r.frames[-1].kind == "done" and r.bonus is None
    assert len(r.committed) == len(verdicts) + (1 if r.bonus is not None else 0)


@settings(max_examples=200, deadline=None)
@given(profile(k=1, size=5))
def test_enumerating_every_outcome_gives_exactly_the_target(prof):
    """An independent reference: sum over proposals of accept + reject-then-replace, no sampling at all."""
    target, drafts, _ = prof
    t, q = target[0], drafts[0]
    res = residual(t, q)
    committed = [F(0)] * len(t)
    for x, qx in enumerate(q):
        if qx == 0:
            continue
        a = accept_probability(t[x], qx)
        committed[x] += qx * a
        if a < 1:
            for y, ry in enumerate(res):
                committed[y] += qx * (1 - a) * ry
    assert tuple(committed) == t
    assert sum(overlap(t, q)) + sum(excess(t, q)) == 1


@settings(max_examples=200, deadline=None)
@given(rows(5), rows(5, 7), st.sampled_from(["fraction", "numerator", "float"]))
def test_overlap_and_excess_are_min_and_max_0_token_by_token_with_the_rows_own_types(target, draft, kind):
    """The spelt-out forms equal min(t, d) and max(zero, t - d) in value and in type, zeros included, for rows
    of Fractions, of integer numerators over a common denominator, and of floats (a trained model's rows)."""
    if kind == "numerator":
        target, draft = tuple(int(x * 168) for x in target), tuple(int(x * 168) for x in draft)
    elif kind == "float":
        target, draft = tuple(map(float, target)), tuple(map(float, draft))
    zero = {"fraction": F(0), "numerator": 0, "float": 0.0}[kind]
    want_overlap = tuple(min(t, d) for t, d in zip(target, draft))
    want_excess = tuple(max(zero, t - d) for t, d in zip(target, draft))
    for got, want in ((overlap(target, draft), want_overlap), (excess(target, draft), want_excess)):
        assert got == want and [type(x) for x in got] == [type(x) for x in want]
    # the residual of float rows is made of floats, as when excess's zero was Fraction(0)
    if kind == "float" and residual(target, draft) is not None:
        assert all(type(x) is float for x in residual(target, draft))
