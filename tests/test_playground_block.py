"""Block verification in the playground (issue 33 item 6; Sun et al., arXiv 2403.10444, Algorithm 2): the paper's
two-token example, exactness of what a round writes, block never below token-wise, equal at greedy, and the page."""

from __future__ import annotations

import html
import re
from fractions import Fraction

import numpy as np
import pytest

from generator.model.block_batch import kept_block, kept_token_wise, next_rows, stop_chances
from generator.playground.block import BLOCK_TEMPERATURES
from generator.playground.ngram import KINDS

SEED = 20240605


def toy_rounds(p_rows, q_rows, n, rng):
    """n rounds of a context-free draft: proposals drawn from q row by row, ratios, and the rows as (n, V) arrays."""
    k = len(q_rows)
    target = [np.tile(np.asarray(r, dtype=float), (n, 1)) for r in p_rows]
    draft = [np.tile(np.asarray(r, dtype=float), (n, 1)) for r in q_rows]
    picks = np.stack([rng.choice(len(q_rows[i]), size=n, p=q_rows[i]) for i in range(k)], axis=1)
    index = np.arange(n)
    ratios = np.stack([target[i][index, picks[:, i]] / draft[i][index, picks[:, i]] for i in range(k)], axis=1)
    return picks, ratios, target, draft


def mean_and_se(x):
    return x.mean(), x.std(ddof=1) / np.sqrt(len(x))


def test_the_papers_two_token_example_token_wise_10_9_block_11_9():
    """Target [1/3, 2/3], draft [2/3, 1/3] at both positions, K = 2: 10/9 proposals kept token-wise, 11/9 as a
    block (the paper's section 2). 400,000 seeded rounds: the means within four standard errors."""
    rng = np.random.default_rng(SEED)
    p, q = [1 / 3, 2 / 3], [2 / 3, 1 / 3]
    _, ratios, target, draft = toy_rounds([p, p, p], [q, q], 400_000, rng)
    eta = rng.random(ratios.shape)
    for kept, expected in (
        (kept_token_wise(ratios, eta), Fraction(10, 9)),
        (kept_block(ratios, eta, target, draft), Fraction(11, 9)),
    ):
        mean, se = mean_and_se(kept)
        assert abs(mean - float(expected)) < 4 * se, (mean, float(expected), se)
    # the negative control: the block's mean is far from the token-wise value (the two rules do differ)
    mean, se = mean_and_se(kept_block(ratios, eta, target, draft))
    assert abs(mean - 10 / 9) > 10 * se


def test_the_stopping_chances_follow_algorithm_2_on_the_example():
    # proposals (b, a): r = (2/1)... worked by hand: w_1 = min(1 * (2/3)/(1/3), 1) = 1, Z_2 = sum max(p - q, 0) = 1/3,
    # h_1 = (1/3) / (1/3 + 0) = 1; w_2 = min(1 * (1/3)/(2/3), 1) = 1/2 = h_2
    p, q = np.array([[1 / 3, 2 / 3]]), np.array([[2 / 3, 1 / 3]])
    h = stop_chances(np.array([[2.0, 0.5]]), [p, p, p], [q, q])
    assert h[0].tolist() == pytest.approx([1.0, 0.5])
    # proposals (a, b): w_1 = 1/2, Z_2 = max(1/6 - 2/3, 0) + max(1/3 - 1/3, 0) = 0, h_1 = 0; w_2 = min(1/2 * 2, 1) = 1
    h = stop_chances(np.array([[0.5, 2.0]]), [p, p, p], [q, q])
    assert h[0].tolist() == pytest.approx([0.0, 1.0])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_first_character_a_block_round_writes_follows_the_target(k):
    """Exactness, by Monte Carlo on a three-character toy with rows that change by position: the first character a
    round commits (its first kept proposal, or the draw after none) follows the target's first row. Threshold: no
    character's share more than 4.5 standard errors off; negative control: drawing the character after the kept
    proposals from the target's own row instead of the block residual fails the same check."""
    rng = np.random.default_rng([SEED, k])
    p_rows = [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6]][: k + 1]
    q_rows = [[0.2, 0.3, 0.5], [0.4, 0.4, 0.2], [0.6, 0.1, 0.3]][:k]
    n = 300_000
    picks, ratios, target, draft = toy_rounds(p_rows, q_rows, n, rng)
    eta = rng.random(ratios.shape)
    kept = kept_block(ratios, eta, target, draft)
    u = rng.random(n)

    def worst(rows_after):
        extra = np.minimum((np.cumsum(rows_after, axis=1) < u[:, None]).sum(axis=1), 2)
        first = np.where(kept > 0, picks[:, 0], extra)
        seen = np.bincount(first, minlength=3) / n
        return (abs(seen - p_rows[0]) / np.sqrt(np.asarray(p_rows[0]) * (1 - np.asarray(p_rows[0])) / n)).max()

    assert worst(next_rows(ratios, kept, target, draft)) < 4.5
    assert worst(target[0]) > 4.5  # the target's own row where the residual belongs


def test_block_never_keeps_fewer_on_average_and_equals_token_wise_at_greedy(built_block):
    for kind in KINDS:
        rows = built_block[kind]
        assert [r["temperature"] for r in rows] == list(BLOCK_TEMPERATURES)
        for r in rows:
            if r["temperature"] == 0:
                assert r["identical"] and r["gain"] == 0, r  # one-hot rows: the same prefix, round for round
            else:
                assert not r["identical"] and r["gain"] > 2 * r["gain_se"], r


@pytest.fixture(scope="module")
def built_block(site_dir):
    import json

    page = (site_dir / "playground.html").read_text(encoding="utf-8")
    data = json.loads(
        re.search(r'<script type="application/json" id="playground-data">(.*?)</script>', page, re.S).group(1)
    )
    return {kind: data["pairs"][kind]["block_rows"] for kind in KINDS}


def test_the_page_prints_both_rules_per_temperature_and_says_why_greedy_matches(site_dir, built_block):
    from generator.render.decimals import fixed

    page = (site_dir / "playground.html").read_text(encoding="utf-8")
    for kind in KINDS:
        table = re.search(rf'<table[^>]*id="pg-block-{kind}"[^>]*>(.*?)</table>', page, re.S)
        assert table, "the block verification table"
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", table.group(1))).split())
        for r in built_block[kind]:
            token = Fraction(r["token_total"], r["rounds"])
            block = Fraction(r["block_total"], r["rounds"])
            assert f"{fixed(token, 2)} \u00b1 {fixed(r['token_se'], 2)}" in text, (kind, r["temperature"])
            assert f"{fixed(block, 2)} \u00b1 {fixed(r['block_se'], 2)}" in text, (kind, r["temperature"])
    prose = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert '<a href="https://arxiv.org/abs/2403.10444" rel="noopener noreferrer">' in page
    assert "At temperature 0 the two rules keep the same characters in every round" in prose
