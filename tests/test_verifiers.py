"""Verifiers beyond token-by-token checking: every rule that claims to be exact is checked by enumerating a round's
whole output distribution, filled out with the target's rows, against the target's joint distribution; each check
has a negative control (a planted wrong residual) that it must catch. The site's numbers are pinned as well."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest

from generator.model import verifiers as v
from generator.model.analysis import random_rational_row
from generator.model.profiles import load_profiles
from generator.paths import DEFAULT_PROFILES

PROFILES = load_profiles(DEFAULT_PROFILES)
T = PROFILES.target
DRAFTS = {d.id: d.distributions for d in PROFILES.drafts}
TOKENS = {t: i for i, t in enumerate(PROFILES.tokens)}


def joint_gap(outputs, target_rows) -> F:
    """Independent of the engine's extended_tv: the full K + 1 token joint, sequence by sequence."""
    depth = len(target_rows)
    gap = F(0)
    for seq in itertools.product(range(len(target_rows[0])), repeat=depth):
        want = F(1)
        for i, x in enumerate(seq):
            want *= target_rows[i][x]
        got = F(0)
        for m in range(1, depth + 1):
            p = outputs.get(seq[:m])
            if p:
                tail = F(1)
                for i in range(m, depth):
                    tail *= target_rows[i][seq[i]]
                got += p * tail
        gap += abs(got - want)
    return gap / 2


def random_profile(rng, vocab: int, k: int, denominator: int):
    target = tuple(random_rational_row(rng, vocab, denominator) for _ in range(k + 1))
    draft = tuple(random_rational_row(rng, vocab, denominator) for _ in range(k))
    return target, draft


def wrong_block_residual(weight, target, draft):
    """The mistake of drawing the correction from the token-wise residual, ignoring the running weight."""
    return v.plain_residual(target, draft) or target


# ---------------------------------------------------------------- block verification


@pytest.mark.parametrize("draft_id", sorted(DRAFTS))
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_block_round_output_is_the_targets(draft_id, k):
    rows, draft = T[: k + 1], DRAFTS[draft_id][:k]
    out = v.block_round_outputs(rows, draft)
    assert sum(out.values()) == 1
    assert v.extended_tv(out, rows) == 0
    if k <= 3:
        assert joint_gap(out, rows) == 0


@pytest.mark.parametrize("draft_id", sorted(DRAFTS))
def test_a_wrong_block_residual_is_caught(draft_id):
    bad = v.block_round_outputs(T, DRAFTS[draft_id], residual=wrong_block_residual)
    assert v.extended_tv(bad, T) > 0


def test_block_is_exact_on_seeded_random_profiles():
    rng = np.random.default_rng(33)
    caught = 0
    for _ in range(40):
        vocab, k, den = int(rng.integers(3, 5)), int(rng.integers(2, 5)), int(rng.integers(2, 13))
        rows, draft = random_profile(rng, vocab, k, den)
        assert v.extended_tv(v.block_round_outputs(rows, draft), rows) == 0
        bad = v.block_round_outputs(rows, draft, residual=wrong_block_residual)
        gap = v.extended_tv(bad, rows)
        assert joint_gap(bad, rows) == gap
        caught += gap > 0
    assert caught >= 8  # the wrong residual shows on many of them (it can coincide with the right one)


def test_the_papers_two_token_example():
    target, draft = (F(1, 3), F(2, 3)), (F(2, 3), F(1, 3))
    rows = (target,) * 3
    assert v.tokenwise_expected_accepted(rows, (draft,) * 2) == F(10, 9)
    assert v.block_expected_accepted(rows, (draft,) * 2) == F(11, 9)
    assert v.expected_accepted_of(v.block_round_outputs(rows, (draft,) * 2)) == F(11, 9)


def test_site_numbers():
    assert v.tokenwise_expected_accepted(T, DRAFTS["aligned"]) == F(1497, 512)
    assert v.block_expected_accepted(T, DRAFTS["aligned"]) == F(3175, 1024)
    assert v.tokenwise_expected_accepted(T, DRAFTS["divergent"]) == F(831, 512)
    assert v.block_expected_accepted(T, DRAFTS["divergent"]) == F(29733, 16384)


@pytest.mark.parametrize("draft_id", sorted(DRAFTS))
def test_the_dynamic_programme_matches_enumeration(draft_id):
    out = v.block_round_outputs(T, DRAFTS[draft_id])
    assert v.expected_accepted_of(out) == v.block_expected_accepted(T, DRAFTS[draft_id])
    tok = v.tokenwise_round_outputs(T, DRAFTS[draft_id])
    assert v.expected_accepted_of(tok) == v.tokenwise_expected_accepted(T, DRAFTS[draft_id])


def test_worked_rescue_on_the_divergent_rows():
    props = [TOKENS[t] for t in ("cat", "cat", "sat", "on", "the")]
    draft = DRAFTS["divergent"]
    assert v.running_weights(T, draft, props) == (F(1, 2), 1, 1, 1, F(3, 4))
    assert v.stopping_chances(T, draft, props) == (F(1, 5), 1, 1, 1, F(3, 4))
    block = v.block_kept_distribution(T, draft, props)
    token = v.tokenwise_kept_distribution(T, draft, props)
    assert sum(i * p for i, p in enumerate(token)) == F(19, 8)
    assert sum(i * p for i, p in enumerate(block)) == F(19, 4)


def test_block_never_below_tokenwise_and_equal_when_deterministic_or_greedy():
    rng = np.random.default_rng(1302)
    above = 0
    for _ in range(200):
        vocab, k, den = int(rng.integers(3, 8)), int(rng.integers(1, 7)), int(rng.integers(2, 17))
        rows, draft = random_profile(rng, vocab, k, den)
        block, token = v.block_expected_accepted(rows, draft), v.tokenwise_expected_accepted(rows, draft)
        assert block >= token
        above += block > token
        one_hot = v.argmax_rows(draft)
        assert v.block_expected_accepted(rows, one_hot) == v.tokenwise_expected_accepted(rows, one_hot)
        greedy = v.greedy_rows(rows)
        assert v.block_expected_accepted(greedy, draft) == v.tokenwise_expected_accepted(greedy, draft)
    assert above >= 50  # the comparison is not vacuous


# ---------------------------------------------------------------- token trees


def test_tree_rule_is_exact_and_each_node_is_kept_with_its_path_probability():
    for n in (1, 3, 6, 10):
        tree = v.best_tree(T[:4], n)
        out = v.tree_round_outputs(T[:4], tree)
        assert v.extended_tv(out, T[:4]) == 0
        assert v.expected_accepted_of(out) == v.best_tree_accepted(T[:4], n)[-1]
    assert v.extended_tv(v.tree_round_outputs(T[:4], v.best_tree(T[:4], 6), renormalise=False), T[:4]) > 0


def test_tree_rule_on_random_trees():
    rng = np.random.default_rng(7)
    for _ in range(20):
        rows, _ = random_profile(rng, 4, 2, 8)
        tree = tuple(
            v.Node(x, tuple(v.Node(y) for y in rng.permutation(4)[: int(rng.integers(0, 3))].tolist()))
            for x in rng.permutation(4)[: int(rng.integers(1, 4))].tolist()
        )
        assert v.extended_tv(v.tree_round_outputs(rows, tree), rows) == 0


def test_best_tree_values():
    values = v.best_tree_accepted(T, 16)
    assert len(values) == 16
    assert (values[0], values[1], values[2], values[3], values[5], values[9], values[15]) == (
        F(1, 2),
        F(3, 4),
        1,
        F(37, 32),
        F(45, 32),
        F(29, 16),
        F(141, 64),
    )
    small = (tuple(F(x) for x in (1, 0, 0)), tuple(F(x, 2) for x in (1, 1, 0)))
    assert len(v.best_tree_accepted(small, 16)) == 1  # every node there is: one prefix of positive probability


def test_tree_attention_mask_sees_exactly_the_ancestors():
    tokens, mask = v.tree_attention_mask((v.Node(0, (v.Node(1), v.Node(2))), v.Node(3)))
    assert tokens == [0, 3, 1, 2]
    assert mask == [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]]


# ---------------------------------------------------------------- several guesses at one position


def as_row(dist, n):
    return tuple(dist.get(x, F(0)) for x in range(n))


def wrong_plain_residual(target, draft):
    return tuple(target)  # never subtracts what the guesses already covered


@pytest.mark.parametrize("k", [1, 2, 3])
def test_several_guesses_are_exact(k):
    rng = np.random.default_rng(100 + k)
    caught_rrs = caught_wor = 0
    cases = [(T[i], q[i]) for q in DRAFTS.values() for i in range(5)]
    cases += [(random_rational_row(rng, 5, 12), random_rational_row(rng, 5, 12)) for _ in range(20)]
    for p, q in cases:
        n = len(p)
        rrs = v.rrs_outputs(p, q, k)
        assert as_row(rrs, n) == tuple(p)
        assert sum(rrs.get(x, 0) for x in range(n)) == 1
        wor = v.without_replacement_outputs(p, q, k)
        assert as_row(wor, n) == tuple(p)
        caught_rrs += as_row(v.rrs_outputs(p, q, k, residual=wrong_plain_residual), n) != tuple(p)
        caught_wor += as_row(v.without_replacement_outputs(p, q, k, residual=wrong_plain_residual), n) != tuple(p)
        assert v.rrs_acceptance(p, q, k) <= v.optimal_iid_acceptance(p, q, k)
    assert caught_rrs >= 10 and caught_wor >= 10


def test_several_guess_numbers():
    p, q = T[0], DRAFTS["aligned"][0]
    assert v.rrs_acceptance(p, q, 1) == v.optimal_iid_acceptance(p, q, 1) == F(3, 4)
    assert (v.rrs_acceptance(p, q, 2), v.without_replacement_acceptance(p, q, 2)) == (F(7, 8), F(19, 21))
    assert v.optimal_iid_acceptance(p, q, 2) == F(63, 64)
    p, q = T[4], DRAFTS["divergent"][4]
    assert v.rrs_acceptance(p, q, 3) == F(79, 128)
    assert v.without_replacement_acceptance(p, q, 3) == F(1223, 1680)
    assert v.optimal_iid_acceptance(p, q, 3) == F(361, 512)


def test_the_ceiling_for_several_guesses_is_its_definition_over_every_token_set():
    """1 - max over sets S of q(S)^k - p(S), written out set by set, on rows with zeros in either or both."""
    rng = np.random.default_rng(7)

    def row(n):
        weights = rng.choice([0, 0, 1, 2, 3, 5], size=n)
        weights[rng.integers(n)] += 1
        return tuple(F(int(w), int(weights.sum())) for w in weights)

    for _ in range(60):
        n = int(rng.integers(1, 8))
        p, q = row(n), row(n)
        for k in (1, 2, 3):
            sets = itertools.chain.from_iterable(itertools.combinations(range(n), r) for r in range(n + 1))
            worst = max(sum((q[i] for i in s), F(0)) ** k - sum((p[i] for i in s), F(0)) for s in sets)
            assert v.optimal_iid_acceptance(p, q, k) == 1 - worst


# ---------------------------------------------------------------- the rule lab


def test_weaker_and_lossy_rules():
    assert v.tokenwise_expected_accepted(T, v.argmax_rows(DRAFTS["aligned"])) == F(519, 512)
    aligned = DRAFTS["aligned"]
    assert v.exact_match_expected_accepted(T, aligned) == F(52926593, 134217728)
    typical = v.typical_round_outputs(T, aligned)
    assert sum(typical.values()) == 1
    assert v.extended_tv(typical, T) > 0
    first = v.position_outputs(typical, 1)
    assert as_row(first, 6) == (F(7, 16), F(17, 64), 0, F(9, 64), F(5, 32), 0)
    assert v.tv(as_row(first, 6), T[0]) == F(5, 32)
    assert v.extended_tv(v.tokenwise_round_outputs(T, v.argmax_rows(aligned)), T) == 0


# ---------------------------------------------------------------- `numbers --json` on profiles it has not seen


def brute_block(target, draft):
    """E[tau] = sum over every draft sequence of its chance times the sum of its running weights."""
    total = F(0)
    for xs in itertools.product(*[[x for x, qx in enumerate(q) if qx] for q in draft]):
        chance, w, weights = F(1), F(1), F(0)
        for i, x in enumerate(xs):
            chance *= draft[i][x]
            w = min(F(1), w * target[i][x] / draft[i][x])
            weights += w
        total += chance * weights
    return total


def brute_tree(target, n=16):
    probs = []
    for depth in range(1, len(target)):
        for seq in itertools.product(range(len(target[0])), repeat=depth):
            p = F(1)
            for i, x in enumerate(seq):
                p *= target[i][x]
            if p:
                probs.append(p)
    probs.sort(reverse=True)
    return [sum(probs[: m + 1]) for m in range(min(n, len(probs)))]


def two_guesses(p, q):
    beta1 = sum(min(a, b) for a, b in zip(p, q))
    rest = [max(a - b, F(0)) for a, b in zip(p, q)]
    if sum(rest) == 0:
        return beta1
    rest = [r / sum(rest) for r in rest]
    beta2 = sum(min(a, b) for a, b in zip(rest, q))
    return 1 - (1 - beta1) * (1 - beta2)


def profile_document(rng, vocab, k, den):
    """Random rows in multiples of 1/den, shaped so that `validate` accepts them: the first draft's first proposal is
    a token it gives more probability than the target (and the target some), so the stepper opens on a check a
    uniform draw decides; the second draft's first proposal is accepted outright, the third draft's is a token the
    target gives probability 0."""
    target = [list(random_rational_row(rng, vocab, den)) for _ in range(k + 1)]
    target[0][1] += target[0][0]
    target[0][0] = F(0)
    j = max(range(vocab), key=lambda x: target[0][x])  # the opening draft's first proposal, below
    if target[0][j] == 1:  # leave the draft room to give it more
        target[0][j] -= F(1, den)
        target[0][1 if j != 1 else 2] += F(1, den)
    drafts = [[list(random_rational_row(rng, vocab, den)) for _ in range(k)] for _ in range(2)]
    first = drafts[1][0]
    if first[0] == 0:
        j = max(range(vocab), key=lambda x: first[x])
        first[j] -= F(1, den)
        first[0] = F(1, den)
    proposals = [
        [max((x for x in range(vocab) if r[x]), key=lambda x: target[i][x] / r[x]) for i, r in enumerate(drafts[0])],
        [0] + [max(range(vocab), key=lambda x: r[x]) for r in drafts[1][1:]],
    ]
    # the opening draft: at position 1, 1/den more on the target's likeliest token j than the target gives it
    row = [F(0)] * vocab
    row[j] = target[0][j] + F(1, den)
    row[(j + 1) % vocab] += 1 - row[j]
    drafts.insert(0, [row] + [list(r) for r in drafts[0][1:]])
    proposals.insert(0, [j] + proposals[0][1:])
    return {
        "version": 1,
        "tokens": [f"t{i}" for i in range(vocab)],
        "cost_model": {"draft_step": "1/20", "verify_step": "1"},
        "target": [[str(x) for x in r] for r in target],
        "drafts": [
            {
                "id": f"d{d}",
                "name": f"Draft {d}",
                "description": "random rows",
                "distributions": [[str(x) for x in r] for r in rows],
                "proposals": [f"t{x}" for x in props],
            }
            for d, (rows, props) in enumerate(zip(drafts, proposals))
        ],
    }


def run_cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True)


@pytest.mark.parametrize(("vocab", "k", "den"), [(3, 8, 5), (7, 4, 9), (10, 2, 12), (4, 1, 6), (5, 6, 10)])
def test_numbers_json_on_unseen_profiles(tmp_path, vocab, k, den):
    import json

    rng = np.random.default_rng(vocab * 100 + k * 10 + den)
    doc = profile_document(rng, vocab, k, den)
    path = tmp_path / "unseen.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    checked = run_cli("validate", str(path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run_cli("numbers", "--data", str(path), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    target = [tuple(F(x) for x in r) for r in doc["target"]]
    assert [F(x) for x in out["target"]["best_tree_accepted"]] == brute_tree(target)
    for d, row in zip(doc["drafts"], out["profiles"]):
        draft = [tuple(F(x) for x in r) for r in d["distributions"]]
        block = brute_block(target, draft)
        assert F(row["block_expected_accepted"]) == block
        assert F(row["block_expected_tokens"]) == block + 1
        assert [F(x) for x in row["two_guess_acceptance"]] == [two_guesses(p, q) for p, q in zip(target, draft)]
        assert len(row["three_guess_acceptance"]) == k


def test_numbers_json_on_the_papers_example(tmp_path):
    import json

    doc = {
        "version": 1,
        "tokens": ["a", "b"],
        "cost_model": {"draft_step": "0", "verify_step": "1"},
        "target": [["1/3", "2/3"]] * 3,
        "drafts": [
            {
                "id": "toy",
                "name": "Toy",
                "description": "arXiv 2403.10444, section 2",
                "distributions": [["2/3", "1/3"]] * 2,
                "proposals": ["a", "a"],
            }
        ],
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    (row,) = json.loads(run_cli("numbers", "--data", str(path), "--json").stdout)["profiles"]
    assert (row["expected_tokens"], row["block_expected_accepted"]) == ("19/9", "11/9")
