"""The context: one object every page and figure reads, computed once from the data."""
from fractions import Fraction as F

import pytest

from generator import analysis
from generator.config import load_config
from generator.context import build_context, stepper_data
from generator.profiles import load_profiles
from support import ROOT


@pytest.fixture(scope="module")
def ctx():
    config = load_config(ROOT / "data" / "site.yaml")
    return build_context(load_profiles(config.profiles_path()), config)


def test_every_profile_view_carries_the_engine_numbers(ctx):
    assert ctx.profile("aligned").expected_tokens == F(2009, 512)
    assert ctx.profile("divergent").speedup == F(1343, 768)
    for p in ctx.profiles:
        assert p.expected_tokens == p.expected_tokens_partial_products == sum(p.partial_products)
        assert sum(prob for _, prob in p.round_lengths) == 1


def test_the_authored_rounds_have_eight_and_five_frames_and_the_closed_form_agrees(ctx):
    assert ctx.profile("aligned").frame_count == 8 and ctx.profile("aligned").frame_count_bounds == (8, 8)
    assert ctx.profile("divergent").frame_count == 5 and ctx.profile("divergent").frame_count_bounds == (5, 5)


def test_frame_ids_are_unique_across_every_round(ctx):
    ids = [f.id for p in ctx.profiles for r in p.rounds for f in r.frames]
    assert len(ids) == len(set(ids))


def test_the_sampled_rounds_include_a_rejection_decided_by_a_draw(ctx):
    for p in ctx.profiles:
        assert any(f.verdict == "rejected" and f.u is not None and f.ratio < 1
                   for r in p.sampled for f in r.frames), p.id


def test_chips_mark_the_replacement_and_the_dropped_proposals(ctx):
    done = ctx.profile("divergent").authored.frames[-1]
    assert [c.state for c in done.chips] == ["accepted", "accepted", "rejected", "replacement", "dropped", "dropped"]
    bonus = ctx.profile("aligned").authored.frames[-1]
    assert bonus.chips[-1].state == "bonus"


def test_the_positions_table_shows_overlap_excess_and_residual(ctx):
    third = ctx.profile("divergent").positions[2]
    assert sum(third.overlap) == third.accept_rate == F(5, 8)
    assert third.excess_mass == 1 - third.accept_rate
    assert sum(third.residual) == 1
    assert ctx.profile("divergent").positions[-1].is_bonus


def test_the_four_worth_noticing_facts_point_at_real_frames(ctx):
    facts = ctx.facts
    assert facts["outright"][1].ratio >= 1 and facts["outright"][1].verdict == "accepted"
    assert facts["target_zero"][1].p_target == 0 and facts["target_zero"][1].verdict == "rejected"
    assert facts["replacement"][1].replacement != facts["replacement"][1].proposal


def test_speedup_curves_mark_the_best_draft_length(ctx):
    for curve in ctx.speedup_curves:
        assert curve.best_speedup == max(s for _, s in curve.points)
        assert curve.best_k == analysis.best_draft_length(curve.alpha, curve.cost, len(curve.points))


def test_the_roofline_floor_and_crossover_follow_from_the_inputs(ctx):
    r = ctx.roofline
    assert r.memory_ms == pytest.approx(r.weight_bytes / (r.memory_bandwidth_gb_s * 1e6))
    assert r.crossover_positions == pytest.approx(r.memory_ms / r.compute_ms_per_position)
    assert r.times_ms[0] == pytest.approx(r.memory_ms)


def test_the_identity_and_convergence_summaries_cover_what_the_issue_asks(ctx):
    assert ctx.identity["random_pairs"] >= 5000 and ctx.identity["failures"] == 0
    conv = ctx.convergence
    assert len(conv["cases"]) >= 14 and conv["rounds"] >= 100_000 and conv["passed"]


def test_the_stepper_json_lists_exactly_the_rendered_frames(ctx):
    data = stepper_data(ctx)
    ids = [f["id"] for p in data["profiles"] for r in p["rounds"] for f in r["frames"]]
    assert ids == [f.id for p in ctx.profiles for r in p.rounds for f in r.frames]
