from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.model import analysis as A
from generator.model import convergence, montecarlo
from generator.model.config import MonteCarlo, Seeds, load_config
from generator.model.engine import run_round
from generator.model.profiles import load_profiles
from support import PROFILES, ROOT

P = load_profiles(PROFILES)

# 14 cases x 6 positions = 84 chi-square tests. Bonferroni at the site's family-wise alpha (0.001 in
# data/site.yaml) gives a per-test threshold of about 1.2e-5: a correct sampler trips it once in a
# thousand seeds, while the wrong sampler below is off by a total variation of 0.02 to 0.2, which
# 100,000 rounds see at p < 1e-30.
FAMILY_ALPHA = load_config(ROOT / "data" / "site.yaml").monte_carlo.family_alpha


def identity_check(pairs, excess_fn=A.excess) -> tuple[int, int]:
    """(pairs checked, token entries checked), raising if any entry breaks the identity."""
    entries = 0
    for t, d in pairs:
        if not A.identity_holds(t, d, excess_fn):
            raise AssertionError(f"identity fails for target {t} and draft {d}")
        entries += len(t)
    return len(pairs), entries


def position_check(position: int, tokens: np.ndarray, expected) -> convergence.PositionCheck:
    """The plain reference for convergence's counting: a bincount of every prefix the checkpoints name."""
    points = convergence.error_checkpoints(len(tokens))
    prefix = [np.bincount(tokens[:m], minlength=len(expected)).tolist() for m in points]
    return convergence.check_from_counts(position, points, prefix, expected)


def numbers(draft_id):
    d = P.draft(draft_id)
    return A.summarize(d.id, P.target, d.distributions, P.cost_model)


def test_the_shipped_profiles_give_the_seed_figures():
    aligned, divergent = numbers("aligned"), numbers("divergent")
    assert f"{float(aligned.expected_tokens):.2f}" == "3.92"
    assert f"{float(divergent.expected_tokens):.2f}" == "2.62"
    assert f"{float(aligned.speedup):.2f}" == "2.62"
    assert f"{float(divergent.speedup):.2f}" == "1.75"


def test_the_acceptance_rate_is_the_overlap_not_a_statistic_of_the_authored_run():
    assert numbers("aligned").accept_rates == (F(3, 4), F(7, 8), F(1), F(3, 4), F(3, 4))
    assert numbers("divergent").accept_rates == (F(3, 4), F(1, 2), F(5, 8), F(3, 4), F(1, 2))


def test_a_round_costs_k_draft_steps_plus_one_verification():
    assert numbers("aligned").round_cost == F(5, 10) + 1


def test_the_round_length_distribution_sums_to_one_and_includes_the_bonus():
    for draft_id in ("aligned", "divergent"):
        dist = numbers(draft_id).round_length_distribution
        assert len(dist) == P.k + 1 and sum(dist) == 1


def test_accepted_drafts_are_one_fewer_than_tokens_per_round():
    n = numbers("aligned")
    assert n.expected_accepted_drafts == n.expected_tokens - 1


alphas = st.lists(st.fractions(0, 1, max_denominator=50), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(alphas)
def test_both_derivations_of_the_expected_tokens_agree_exactly(a):
    dist = A.round_length_distribution(a)
    assert sum(dist) == 1
    assert A.expected_tokens_from_distribution(dist) == A.expected_tokens_from_partial_products(a)


@settings(max_examples=200, deadline=None)
@given(st.fractions(0, 1, max_denominator=40), st.integers(1, 12), st.fractions(0, 2, max_denominator=20))
def test_the_exact_engine_matches_leviathans_closed_form_when_every_alpha_is_equal(a, k, c):
    expected = A.expected_tokens_from_partial_products([a] * k)
    assert A.speedup(expected, k, c, F(1)) == A.leviathan_speedup(a, k, c)


def test_the_best_draft_length_grows_with_the_acceptance_rate():
    ks = [A.best_draft_length(F(a, 10), F(1, 10)) for a in (5, 7, 8, 9)]
    assert ks == sorted(ks) and ks[0] < ks[-1]


def test_the_identity_holds_exactly_over_the_shipped_profiles_and_five_thousand_random_pairs():
    pairs = [(P.target[i], d.distributions[i]) for d in P.drafts for i in range(P.k)]
    rng = np.random.default_rng(Seeds().identity_pairs)
    for _ in range(MonteCarlo().identity_pairs):
        size = int(rng.integers(2, 9))
        den = int(rng.integers(1, 100))
        pairs.append(
            (A.random_rational_row(rng, size, den), A.random_rational_row(rng, size, int(rng.integers(1, 100))))
        )
    checked, entries = identity_check(pairs)
    assert checked == 10 + 5000 and entries > 5000


def test_the_integer_identity_check_draws_the_same_pairs_and_counts_the_same_as_the_fraction_one():
    fraction_rng, integer_rng = (
        np.random.default_rng(Seeds().identity_pairs),
        np.random.default_rng(Seeds().identity_pairs),
    )
    fraction_pairs = []
    for _ in range(MonteCarlo().identity_pairs):
        size = int(fraction_rng.integers(2, 9))
        fraction_pairs.append(
            (
                A.random_rational_row(fraction_rng, size, int(fraction_rng.integers(1, 100))),
                A.random_rational_row(fraction_rng, size, int(fraction_rng.integers(1, 100))),
            )
        )
    integer_pairs = A.random_identity_pairs(integer_rng, MonteCarlo().identity_pairs)
    assert identity_check(integer_pairs) == identity_check(fraction_pairs) == (5000, 25187)
    for (t, q), (ft, fq) in zip(integer_pairs, fraction_pairs):
        d = sum(t)  # each row sums to 1, so its numerators sum to the common denominator
        assert sum(q) == d and tuple(F(x, d) for x in t) == ft and tuple(F(x, d) for x in q) == fq
    assert fraction_rng.random() == integer_rng.random()  # and both consumed the same draws


def test_the_integer_identity_check_rejects_a_residual_with_target_and_draft_swapped():
    def swapped(target, draft):
        return tuple(max(0, d - t) for t, d in zip(target, draft))

    with pytest.raises(AssertionError):
        identity_check([A.over_common_denominator((F(1, 2), F(1, 2)), (F(1, 4), F(3, 4)))], swapped)


def test_the_identity_check_rejects_a_residual_with_target_and_draft_swapped():
    def swapped(target, draft):
        return tuple(max(F(0), d - t) for t, d in zip(target, draft))

    with pytest.raises(AssertionError):
        identity_check([((F(1, 2), F(1, 2)), (F(1, 4), F(3, 4)))], swapped)


def test_the_chi_square_tail_matches_known_values():
    assert convergence.chi_square_p_value(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-9)
    assert convergence.chi_square_p_value(11.070497693516351, 5) == pytest.approx(0.05, rel=1e-9)
    assert convergence.chi_square_p_value(0.5543, 5) == pytest.approx(0.99, rel=1e-3)


def suite(rule=montecarlo.residual_rows):
    cases = [(d.id, d.name, P.target, d.distributions) for d in P.drafts]
    cases += convergence.random_cases(Seeds().random_profiles, 12, 6, 5)
    return convergence.convergence_suite(cases, 100_000, Seeds().convergence, rule)


def test_random_profiles_span_low_to_high_agreement():
    cases = convergence.random_cases(Seeds().random_profiles, 12, 6, 5)
    means = [float(sum(A.acceptance_rates(t, d))) / 5 for _, _, t, d in cases]
    assert means[0] < 0.6 and means[-1] == 1


def test_the_sampler_converges_to_the_target_at_every_position_of_every_profile():
    results = suite()
    threshold = FAMILY_ALPHA / sum(len(c.checks) for c in results)
    assert len(results) >= 14
    for case in results:
        for check in case.checks:
            assert check.p_value > threshold, (case.id, check.position, check.p_value)
            assert check.samples > 1000


def test_the_error_shrinks_as_samples_grow():
    for case in suite()[:2]:
        for check in case.checks:
            first, last = check.error_curve[0], check.error_curve[-1]
            assert last[0] > first[0] and last[1] < first[1]


def test_a_sampler_that_replaces_from_the_target_instead_of_the_residual_fails_the_same_check():
    results = suite(montecarlo.target_rows_resampler)
    threshold = FAMILY_ALPHA / sum(len(c.checks) for c in results)
    failing = {case.id for case in results if case.worst_p_value < threshold}
    assert {"aligned", "divergent"} <= failing
    assert len(failing) >= 12


def test_the_vectorised_simulation_and_the_exact_engine_agree_on_round_lengths():
    d = P.draft("divergent")
    exact = [float(p) for p in A.round_length_distribution(numbers("divergent").accept_rates)]
    lengths = montecarlo.simulate(P.target, d.distributions, 40_000, np.random.default_rng(1)).committed
    vectorised = np.bincount(lengths, minlength=P.k + 2)[1:] / len(lengths)
    rng = np.random.default_rng(2)
    loop = (
        np.bincount([len(run_round(P.target, d.distributions, rng).committed) for _ in range(4000)], minlength=P.k + 2)[
            1:
        ]
        / 4000
    )
    assert np.abs(vectorised - exact).sum() / 2 < 0.01
    assert np.abs(loop - exact).sum() / 2 < 0.03


def reference_rounds(target_rows, draft_rows, rounds, rng, rule=montecarlo.residual_rows):
    """The rule by plain binary search over the same float32 uniforms, one round at a time in a Python loop."""
    target = np.array([[float(p) for p in row] for row in target_rows])
    draft = np.array([[float(p) for p in row] for row in draft_rows])
    k = len(draft)
    u = rng.random((k + 1, rounds), dtype=np.float32).astype(np.float64)
    cdf = np.cumsum(draft, axis=1)
    cdf /= cdf[:, -1:]
    ratio = np.divide(target[:k], draft, out=np.zeros_like(draft), where=draft > 0)
    accept_below = (cdf - draft) + draft * np.minimum(1.0, ratio)
    final = np.cumsum(np.vstack([rule(target[:k], draft), target[k:]]), axis=1)
    final /= final[:, -1:]
    tokens, reached = np.zeros((k + 1, rounds), dtype=np.intp), np.zeros((k + 1, rounds), dtype=bool)
    for r in range(rounds):
        for i in range(k + 1):
            reached[i, r] = True
            if i == k:
                tokens[i, r] = np.searchsorted(final[k], u[k, r], side="right")
                break
            x = np.searchsorted(cdf[i], u[i, r], side="right")
            if u[i, r] < accept_below[i, x]:
                tokens[i, r] = x
                continue
            tokens[i, r] = np.searchsorted(final[i], u[k, r], side="right")
            break
    return tokens, reached


@pytest.mark.parametrize("vocab, denominator", [(6, 64), (6, 704), (130, 1000)])
def test_the_simulator_gives_exactly_the_checks_of_a_plain_binary_search_round_by_round(vocab, denominator):
    # denominators of every kind, and a vocabulary of 130 tokens
    rng = np.random.default_rng(vocab * denominator)
    for agreement in (F(0), F(1, 2), F(9, 10)):
        target, drafts = convergence.random_profile(rng, vocab, 4, agreement, denominator)
        for rule in (montecarlo.residual_rows, montecarlo.target_rows_resampler):
            fast = convergence.convergence(target, drafts, 3000, np.random.default_rng(7), rule)
            tokens, reached = reference_rounds(target, drafts, 3000, np.random.default_rng(7), rule)
            slow = tuple(position_check(i + 1, tokens[i][reached[i]], target[i]) for i in range(len(target)))
            assert fast == slow
            simulated = montecarlo.simulate(target, drafts, 3000, np.random.default_rng(7), rule)
            assert (simulated.reached == reached).all() and (simulated.tokens[reached] == tokens[reached]).all()


def fixed_rows_at(target_rows, draft_rows, rounds):
    """rows_at for simulate_batch handing every round the same rows, as read-only broadcasts."""
    target = np.array([[float(p) for p in row] for row in target_rows])
    draft = np.array([[float(p) for p in row] for row in draft_rows])
    k = len(draft)

    def rows_at(j, going, proposals):
        assert proposals.shape == (len(going), j) and (j or len(going) == rounds)  # all rounds go at position 0
        t = np.broadcast_to(target[j], (len(going), target.shape[1]))
        return (t, None) if j == k else (t, np.broadcast_to(draft[j], (len(going), draft.shape[1])))

    return rows_at


def test_the_per_round_simulator_asks_for_rows_only_in_rounds_still_going():
    # a round that met its rejection is not asked about again (the playground's models then build rows for
    # the rounds still going only); what it commits is checked above against a plain loop, bit for bit
    rng = np.random.default_rng(5)
    target, drafts = convergence.random_profile(rng, 6, 4, F(1, 2), 64)
    rows_at = fixed_rows_at(target, drafts, 3000)
    asked = {}
    batch = montecarlo.simulate_batch(
        lambda j, going, p: asked.setdefault(j, going.copy()) is not None and rows_at(j, going, p),
        4,
        3000,
        np.random.default_rng(7),
    )
    for j in range(5):
        assert np.array_equal(asked[j], np.flatnonzero(batch.reached[j])), j
    assert 0 < len(asked[4]) < len(asked[1]) < len(asked[0]) == 3000  # rounds do stop: the check is not vacuous


def test_draft_cdfs_handed_back_by_rows_at_give_the_tokens_computed_without_them():
    # the playground tabulates its draft's CDFs once and hands them back with the rows; the simulator must
    # then commit exactly what it commits computing them itself
    rng = np.random.default_rng(9)
    target, drafts = convergence.random_profile(rng, 7, 4, F(1, 2), 100)
    plain = fixed_rows_at(target, drafts, 4000)

    def with_cdfs(shift):
        def rows_at(j, going, proposals):
            t, d = plain(j, going, proposals)
            return (t, d) if d is None else (t, d, np.roll(montecarlo.row_cdfs(d), shift, axis=1))

        return rows_at

    without = montecarlo.simulate_batch(plain, 4, 4000, np.random.default_rng(7))
    given = montecarlo.simulate_batch(with_cdfs(0), 4, 4000, np.random.default_rng(7))
    assert np.array_equal(given.tokens, without.tokens) and np.array_equal(given.reached, without.reached)
    wrong = montecarlo.simulate_batch(with_cdfs(1), 4, 4000, np.random.default_rng(7))  # the comparison can fail
    assert not np.array_equal(wrong.tokens, without.tokens)


def test_a_batch_reads_its_verdicts_and_lengths_off_the_positions_reached():
    tokens = np.array([[2, 1, 0], [0, 3, 0], [0, 4, 0]])
    reached = np.array([[True, True, True], [False, True, True], [False, True, False]])
    batch = montecarlo.Batch(
        tokens, reached
    )  # k = 2: round 0 rejects at 1, round 1 earns the bonus, round 2 rejects at 2
    assert batch.accepted.tolist() == [[False, True, True], [False, True, False]]
    assert batch.committed.tolist() == [1, 3, 2] and batch.tokens[0].tolist() == [2, 1, 0]


def test_a_suite_split_in_two_draws_exactly_what_the_whole_suite_draws():
    cases = [(d.id, d.name, P.target, d.distributions) for d in P.drafts] + convergence.random_cases(5, 3, 6, 5)
    whole = convergence.convergence_suite(cases, 2000, 11)
    assert (
        convergence.convergence_suite(cases[:2], 2000, 11) + convergence.convergence_suite(cases[2:], 2000, 11, first=2)
        == whole
    )
    assert convergence.convergence_suite(cases[2:], 2000, 11) != whole[2:]  # the offset matters


@pytest.mark.parametrize("vocab, rounds", [(6, 50_001), (2, 4_099), (16, 1_031), (1, 300), (3, 0)])
def test_checkpoint_counts_equal_a_plain_count_of_every_prefix(vocab, rounds):
    tokens = np.random.default_rng(vocab + rounds).integers(0, vocab, size=rounds)
    points = convergence.error_checkpoints(rounds)
    expected = [np.bincount(tokens[:m], minlength=vocab).tolist() for m in points]
    assert convergence.position_counts(tokens, vocab) == (points, expected)
    if rounds and vocab > 1:  # the comparison can fail: one token changed in the first checkpoint changes its counts
        tokens[0] = (tokens[0] + 1) % vocab
        assert convergence.position_counts(tokens, vocab) != (points, expected)


def test_a_position_no_round_reaches_reports_no_samples_and_undefined_statistics():
    # a draft that never agrees with the target stops every round at its first proposal
    target = ((F(1), F(0)),) * 3
    drafts = ((F(0), F(1)),) * 2
    first, second, third = convergence.convergence(target, drafts, 3000, np.random.default_rng(0))
    assert first.samples == 3000 and first.counts == (3000, 0) and first.total_variation == 0.0
    for check in (second, third):
        assert check.samples == 0 and check.counts == (0, 0) and check.p_value == 1.0
        assert np.isnan(check.total_variation) and check.error_curve[0][0] == 0 and np.isnan(check.error_curve[0][1])


@pytest.mark.parametrize("rounds", [1, 50, 100, 1025])
def test_few_rounds_give_the_checks_of_the_plain_count(rounds):
    # no checkpoint below the last, a single one, and a round count one past a block
    target, drafts = convergence.random_profile(np.random.default_rng(rounds), 6, 3, F(1, 2))
    batch = montecarlo.simulate(target, drafts, rounds, np.random.default_rng(2))
    plain = tuple(position_check(i + 1, batch.tokens[i][batch.reached[i]], target[i]) for i in range(len(target)))
    assert convergence.convergence(target, drafts, rounds, np.random.default_rng(2)) == plain
