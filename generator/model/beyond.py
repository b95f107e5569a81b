"""The facts the part beyond one token at a time shows: block verification against the token-wise rule, token
trees, several guesses at one position, the rule lab, and the worked block round the block stepper plays.

Computed once from the profiles and the settings by verifiers.py; every value is exact except the worked
round's uniform draws, which are the exact Fractions of a seeded Generator's doubles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import verifiers as v
from .engine import Row, accept_probability, draw, excess, uniform
from .profiles import Profiles

ENUMERATION_LIMIT = 20_000  # the most drafts (or target sequences) the rule lab lists one by one
SUBSET_LIMIT = 16  # the most tokens whose every subset the ceiling for several guesses tries
TREE_NODES = 16
SMALL_TREE_NODES = 5
SEARCH_ROUNDS = 200  # draws searched for a round where the block keeps more than the one-at-a-time check


@dataclass(frozen=True)
class GuessFacts:
    """Several guesses at one position, each exact: the chance one of them is accepted."""

    position: int
    one: Fraction  # one guess: beta = sum min(p, q)
    two: Fraction  # recursive rejection sampling, two i.i.d. guesses
    three: Fraction
    two_without: Fraction  # two guesses drawn without replacement
    three_without: Fraction
    two_optimum: Fraction | None  # the most any exact verifier of two i.i.d. guesses accepts (None: too many tokens)
    three_optimum: Fraction | None


@dataclass(frozen=True)
class WideChain:
    """k guesses at each of K positions, every guess extended: a full k-ary tree of k + k^2 + ... + k^K nodes.
    The rows are context-free, so a position's acceptance chance does not depend on which guess came before."""

    guesses: int
    nodes: int
    with_replacement: Fraction  # expected accepted tokens, recursive rejection sampling
    without_replacement: Fraction


@dataclass(frozen=True)
class RuleFacts:
    """One verification rule on one draft at its full K: expected accepted proposals and how far the round's
    output lands from the target (total variation over all K + 1 positions; 0 for an exact rule)."""

    id: str
    expected_accepted: Fraction
    tv: Fraction | None  # None: too many outcomes to list (an exact rule's is 0 by its proof)
    position_tv: tuple[Fraction, ...] | None  # the same distance position by position (where the output drifts)


@dataclass(frozen=True)
class DraftBeyond:
    id: str
    name: str
    tokenwise_by_k: tuple[Fraction, ...]  # expected accepted proposals, K = 1..k
    block_by_k: tuple[Fraction, ...]
    guesses: tuple[GuessFacts, ...]
    rules: tuple[RuleFacts, ...]
    wide: tuple[WideChain, ...]  # several guesses at every position of a K-deep chain: a full tree
    drafts_possible: int  # the K-token drafts this draft gives a chance: what the rule lab lists

    @property
    def tokenwise(self) -> Fraction:
        return self.tokenwise_by_k[-1]

    @property
    def block(self) -> Fraction:
        return self.block_by_k[-1]

    @property
    def gain(self) -> Fraction:
        """The block's relative gain in accepted proposals over the one-at-a-time rule."""
        return self.block / self.tokenwise - 1

    @property
    def lab_listed(self) -> bool:
        """Whether the rule lab listed every outcome (and so has every distance)."""
        return all(r.tv is not None for r in self.rules)

    def rule(self, rule_id: str) -> RuleFacts:
        return next(r for r in self.rules if r.id == rule_id)


@dataclass(frozen=True)
class BlockStep:
    position: int
    proposal: str
    p: Fraction
    q: Fraction
    ratio: Fraction
    weight: Fraction  # the running weight w_i
    stop: Fraction  # the stopping chance h_i
    surplus: Fraction | None  # Z_{i+1} = sum_x max(w_i p_{i+1}(x) - q_{i+1}(x), 0); None at the last position
    u: Fraction
    kept_so_far: int  # tau after this position: the largest i so far with u_i <= h_i


@dataclass(frozen=True)
class WorkedBlock:
    """One block-verified round, its draws, and what the one-at-a-time check makes of the same draws."""

    draft_id: str
    draft_name: str
    proposals: tuple[str, ...]
    steps: tuple[BlockStep, ...]
    tau: int
    correction_row: Row  # the bonus row when all K are kept, else norm(max(p_tau * p - q, 0))
    correction_u: Fraction
    correction: str
    block_kept: tuple[Fraction, ...]  # P(tau = i | these proposals), i = 0..K
    tokenwise_kept: tuple[Fraction, ...]
    block_expected: Fraction
    tokenwise_expected: Fraction
    tokenwise_accepted: int  # how many the one-at-a-time check keeps with the same draws
    tokenwise_correction: str
    tokenwise_correction_row: Row
    tokens: tuple[str, ...]  # the vocabulary, for the correction row's labels

    @property
    def committed(self) -> tuple[str, ...]:
        return (*self.proposals[: self.tau], self.correction)


@dataclass(frozen=True)
class BeyondFacts:
    k: int
    drafts: tuple[DraftBeyond, ...]
    tree: tuple[Fraction, ...]  # the best tree's expected accepted tokens, n = 1..TREE_NODES
    small_tree: tuple[tuple[str, int | None], ...]  # breadth-first (token, parent index) of the best small tree
    small_tree_mask: tuple[tuple[bool, ...], ...]
    small_tree_value: Fraction
    small_tree_tv: Fraction  # the small tree's round output against the target, every outcome listed: 0 if exact
    worked: WorkedBlock
    paper_tokenwise: Fraction  # arXiv 2403.10444, section 2: two tokens, target (1/3, 2/3), draft (2/3, 1/3)
    paper_block: Fraction
    typical_keeps_every_allowed: bool  # every token the target allows at a position passes typical acceptance
    paper_target: Row = (Fraction(1, 3), Fraction(2, 3))  # the example's rows, the same at both positions
    paper_draft: Row = (Fraction(2, 3), Fraction(1, 3))
    typical_epsilon: float = float(v.TYPICAL_EPSILON)  # Medusa's defaults, as the rule lab uses them
    typical_delta: float = v.TYPICAL_DELTA

    def draft(self, draft_id: str) -> DraftBeyond:
        return next(d for d in self.drafts if d.id == draft_id)


def guess_facts(target: Row, draft: Row, position: int) -> GuessFacts:
    return GuessFacts(
        position,
        v.rrs_acceptance(target, draft, 1),
        v.rrs_acceptance(target, draft, 2),
        v.rrs_acceptance(target, draft, 3),
        v.without_replacement_acceptance(target, draft, 2),
        v.without_replacement_acceptance(target, draft, 3),
        v.optimal_iid_acceptance(target, draft, 2) if len(target) <= SUBSET_LIMIT else None,
        v.optimal_iid_acceptance(target, draft, 3) if len(target) <= SUBSET_LIMIT else None,
    )


def chained(chances) -> Fraction:
    """sum_i prod_{j <= i} a_j: expected accepted tokens of a chain whose position j passes with chance a_j."""
    total, reach = Fraction(0), Fraction(1)
    for a in chances:
        reach *= a
        total += reach
    return total


def wide_chains(guesses: tuple[GuessFacts, ...]) -> tuple[WideChain, ...]:
    k = len(guesses)
    return tuple(
        WideChain(
            n,
            sum(n**i for i in range(1, k + 1)),
            chained(g.two if n == 2 else g.three for g in guesses),
            chained(g.two_without if n == 2 else g.three_without for g in guesses),
        )
        for n in (2, 3)
    )


def outcomes(rows) -> int:
    """How many token sequences the rows give positive probability: what listing every outcome walks."""
    return math.prod(sum(1 for p in row if p) for row in rows)


def rule_facts(target_rows, draft_rows) -> tuple[RuleFacts, ...]:
    """The rule lab: each rule's round output enumerated exactly and measured against the target. Where there are
    more than ENUMERATION_LIMIT drafts or target sequences to list, the expectations come from their closed forms
    and the distances are left out (None)."""
    k = len(draft_rows)
    exact_match = v.exact_match_expected_accepted(target_rows, draft_rows)
    one_hot = v.argmax_rows(draft_rows)
    if max(outcomes(draft_rows), outcomes(target_rows)) > ENUMERATION_LIMIT:
        typical = chained(
            sum((q for q, ok in zip(d, v.typical_accepts(t)) if ok), Fraction(0))
            for t, d in zip(target_rows, draft_rows)
        )
        return (
            RuleFacts("tokenwise", v.tokenwise_expected_accepted(target_rows, draft_rows), Fraction(0), None),
            RuleFacts("block", v.block_expected_accepted(target_rows, draft_rows), Fraction(0), None),
            RuleFacts("exact-match", exact_match, Fraction(0), None),
            RuleFacts("argmax", v.tokenwise_expected_accepted(target_rows, one_hot), Fraction(0), None),
            RuleFacts("typical", typical, None, None),
        )
    outputs = {
        "tokenwise": v.tokenwise_round_outputs(target_rows, draft_rows),
        "block": v.block_round_outputs(target_rows, draft_rows),
        "argmax": v.tokenwise_round_outputs(target_rows, one_hot),
        "typical": v.typical_round_outputs(target_rows, draft_rows),
    }
    rules = []
    for rule_id in ("tokenwise", "block", "exact-match", "argmax", "typical"):
        if rule_id == "exact-match":  # the output is the target's own samples: exact by construction
            rules.append(RuleFacts(rule_id, exact_match, Fraction(0), tuple(Fraction(0) for _ in range(k + 1))))
            continue
        out = outputs[rule_id]
        per_position = tuple(
            v.tv(v.extended_marginal(out, target_rows, i), target_rows[i - 1]) for i in range(1, k + 2)
        )
        rules.append(RuleFacts(rule_id, v.expected_accepted_of(out), v.extended_tv(out, target_rows), per_position))
    return tuple(rules)


def worked_proposals(profiles: Profiles, draft_id: str, proposals: tuple[str, ...]):
    """(draft, proposal indices) as the settings name them, or the first draft's own where they do not fit."""
    index = {t: i for i, t in enumerate(profiles.tokens)}
    draft = next((d for d in profiles.drafts if d.id == draft_id), None)
    if draft is not None and len(proposals) == profiles.k and all(t in index for t in proposals):
        xs = tuple(index[t] for t in proposals)
        if all(row[x] > 0 for row, x in zip(draft.distributions, xs)):
            return draft, xs
    return profiles.drafts[0], profiles.drafts[0].proposals


def worked_block(profiles: Profiles, seed: int, draft_id: str, proposals: tuple[str, ...]) -> WorkedBlock:
    """The worked round: the first draws from a Generator seeded with `seed` under which the one-at-a-time check
    keeps fewer proposals than the block (the first draws at all, if no such round turns up)."""
    draft, xs = worked_proposals(profiles, draft_id, proposals)
    target, rows = profiles.target, draft.distributions
    k = len(xs)
    weights = v.running_weights(target, rows, xs)
    hs = v.stopping_chances(target, rows, xs)
    rng = np.random.default_rng(seed)
    chosen = None
    for _ in range(SEARCH_ROUNDS):
        us = tuple(uniform(rng) for _ in range(k))
        cu = uniform(rng)
        tau = max((i + 1 for i in range(k) if us[i] <= hs[i]), default=0)
        token_kept = next((i for i in range(k) if not us[i] < accept_probability(target[i][xs[i]], rows[i][xs[i]])), k)
        if chosen is None:
            chosen = (us, cu, tau, token_kept)
        if token_kept < tau:
            chosen = (us, cu, tau, token_kept)
            break
    us, cu, tau, token_kept = chosen
    steps, so_far = [], 0
    for i, x in enumerate(xs):
        if us[i] <= hs[i]:
            so_far = i + 1
        steps.append(
            BlockStep(
                i + 1,
                profiles.tokens[x],
                target[i][x],
                rows[i][x],
                target[i][x] / rows[i][x],
                weights[i],
                hs[i],
                None
                if i == k - 1
                else sum(excess(tuple(weights[i] * t for t in target[i + 1]), rows[i + 1]), Fraction(0)),
                us[i],
                so_far,
            )
        )
    weight = Fraction(1) if tau == 0 else weights[tau - 1]
    row = target[k] if tau == k else v.block_residual(weight, target[tau], rows[tau])
    token_row = target[k] if token_kept == k else v.plain_residual(target[token_kept], rows[token_kept])
    block_kept = v.block_kept_distribution(target, rows, xs)
    token_dist = v.tokenwise_kept_distribution(target, rows, xs)
    return WorkedBlock(
        draft.id,
        draft.name,
        tuple(profiles.tokens[x] for x in xs),
        tuple(steps),
        tau,
        row,
        cu,
        profiles.tokens[draw(row, cu)],
        block_kept,
        token_dist,
        sum((i * p for i, p in enumerate(block_kept)), Fraction(0)),
        sum((i * p for i, p in enumerate(token_dist)), Fraction(0)),
        token_kept,
        profiles.tokens[draw(token_row, cu)],
        token_row,
        profiles.tokens,
    )


def beyond_facts(
    profiles: Profiles,
    seed: int,
    draft_id: str,
    proposals: tuple[str, ...],
    memo: Callable = lambda kind, inputs, f: f(),
) -> BeyondFacts:
    """The part beyond the main path. `memo(kind, inputs, compute)` keeps the rule lab's enumeration (the slow
    part: every draft and target sequence listed exactly) between builds, as the facts' Monte Carlo is kept."""
    target, k = profiles.target, profiles.k
    drafts = []
    for d in profiles.drafts:
        rows = d.distributions
        drafts.append(
            DraftBeyond(
                d.id,
                d.name,
                tuple(v.tokenwise_expected_accepted(target[: j + 1], rows[:j]) for j in range(1, k + 1)),
                tuple(v.block_expected_accepted(target[: j + 1], rows[:j]) for j in range(1, k + 1)),
                guesses := tuple(guess_facts(target[i], rows[i], i + 1) for i in range(k)),
                memo("rule-lab", (target, rows), lambda rows=rows: rule_facts(target, rows)),
                wide_chains(guesses),
                outcomes(rows),
            )
        )
    small = v.best_tree(target, SMALL_TREE_NODES)
    tokens, mask = v.tree_attention_mask(small)
    parents = small_tree_parents(small)
    toy_target, toy_draft = BeyondFacts.paper_target, BeyondFacts.paper_draft
    return BeyondFacts(
        k,
        tuple(drafts),
        v.best_tree_accepted(target, TREE_NODES),
        tuple((profiles.tokens[t], p) for t, p in zip(tokens, parents)),
        tuple(tuple(row) for row in mask),
        v.best_tree_accepted(target, SMALL_TREE_NODES)[-1],
        v.extended_tv(v.tree_round_outputs(target, small), target),
        worked_block(profiles, seed, draft_id, proposals),
        v.tokenwise_expected_accepted((toy_target,) * 3, (toy_draft,) * 2),
        v.block_expected_accepted((toy_target,) * 3, (toy_draft,) * 2),
        all(ok == (p > 0) for row in target[:k] for ok, p in zip(v.typical_accepts(row), row)),
    )


def small_tree_parents(children) -> list[int | None]:
    """Each node's parent in the breadth-first order tree_attention_mask uses."""
    order: list[int | None] = []
    queue = [(c, None) for c in children]
    while queue:
        node, parent = queue.pop(0)
        order.append(parent)
        here = len(order) - 1
        queue.extend((c, here) for c in node.children)
    return order
