"""Verifiers beyond token-by-token checking, exactly: block verification, token trees, several guesses at one
position, and the lossy or weaker rules they are compared with.

Pure functions over rows of Fractions and token indices; nothing here reads a file or knows a token's label.
The rows are context-free per position, as in the profiles file: target_rows has K + 1 rows (the last is the
bonus row), draft_rows has K. Sources: block verification, Sun et al. arXiv 2403.10444 (Algorithm 2); token trees,
Miao et al. arXiv 2305.09781 and Li et al. arXiv 2406.16858; several guesses, Miao et al. (recursive rejection
sampling), Jeon et al. arXiv 2402.14160 (without replacement), Khisti et al. arXiv 2410.18234 (the optimum);
typical acceptance, Cai et al. arXiv 2401.10774.

A round's output is given as a dict from the tokens it commits (a tuple: the kept proposals, then the
correction or bonus token) to their exact probability. `extended_tv` fills every output out to K + 1 tokens
with the target's own rows and measures how far the result lands from the target: 0 for an exact rule.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .engine import Row, excess, overlap

ZERO, ONE = Fraction(0), Fraction(1)

Outputs = dict[tuple[int, ...], Fraction]


def normalised(row: Sequence[Fraction]) -> Row | None:
    """row / sum(row), or None when the row holds no mass."""
    mass = sum(row, ZERO)
    return None if mass == 0 else tuple(x / mass for x in row)


def _add(out: Outputs, key: tuple[int, ...], p: Fraction) -> None:
    if p:
        out[key] = out.get(key, ZERO) + p


def _product(values) -> Fraction:
    total = ONE
    for v in values:
        total *= v
    return total


# ---------------------------------------------------------------- token by token


def tokenwise_expected_accepted(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> Fraction:
    """sum_i prod_{j <= i} beta_j, beta_j = sum_x min(p_j, q_j): proposals kept by the one-at-a-time rule."""
    total, reach = ZERO, ONE
    for t, q in zip(target_rows, draft_rows):
        reach *= sum(overlap(t, q), ZERO)
        total += reach
    return total


def tokenwise_kept_distribution(
    target_rows: Sequence[Row], draft_rows: Sequence[Row], proposals: Sequence[int]
) -> tuple[Fraction, ...]:
    """P(tau = i | these proposals), i = 0..K, under the one-at-a-time rule."""
    dist, reach = [], ONE
    for t, q, x in zip(target_rows, draft_rows, proposals):
        a = min(ONE, t[x] / q[x])
        dist.append(reach * (1 - a))
        reach *= a
    dist.append(reach)
    return tuple(dist)


# ---------------------------------------------------------------- block verification


def running_weights(target_rows: Sequence[Row], draft_rows: Sequence[Row], proposals: Sequence[int]) -> Row:
    """The running weights w_i = min(w_{i-1} * p(x_i) / q(x_i), 1), w_0 = 1, for i = 1..K (w_0 not included)."""
    weights, w = [], ONE
    for t, q, x in zip(target_rows, draft_rows, proposals):
        w = min(w * t[x] / q[x], ONE)
        weights.append(w)
    return tuple(weights)


def block_residual(weight: Fraction, target: Row, draft: Row) -> Row | None:
    """norm(max(weight * p - q, 0)): where the correction token comes from after keeping a prefix of weight w_tau."""
    return normalised(excess(tuple(weight * x for x in target), draft))


def stop_chance(weight: Fraction, next_target: Row, next_draft: Row) -> Fraction:
    """h_i for i < K (Algorithm 2 of arXiv 2403.10444) from the running weight w_i and the next position's rows:
    h_i = Z / (Z + 1 - w_i) with Z = sum_x max(w_i p_{i+1}(x) - q_{i+1}(x), 0). Where the denominator is 0 (w_i = 1
    and no surplus ahead) the round cannot stop at i with positive chance, and h_i = 1 is used."""
    z = sum(excess(tuple(weight * x for x in next_target), next_draft), ZERO)
    return ONE if z + 1 - weight == 0 else z / (z + 1 - weight)


def stopping_chances(target_rows: Sequence[Row], draft_rows: Sequence[Row], proposals: Sequence[int]) -> Row:
    """h_i, i = 1..K: stop_chance at each running weight, and h_K = p_K."""
    weights = running_weights(target_rows, draft_rows, proposals)
    k = len(weights)
    return tuple(
        w if i == k - 1 else stop_chance(w, target_rows[i + 1], draft_rows[i + 1]) for i, w in enumerate(weights)
    )


def kept_distribution(stops: Row) -> tuple[Fraction, ...]:
    """P(tau = i), i = 0..K, from the stopping chances h_1..h_K: tau is the largest i with u_i <= h_i (0 if none)."""
    dist, later_fail = [ZERO] * (len(stops) + 1), ONE
    for i in range(len(stops), 0, -1):
        dist[i] = stops[i - 1] * later_fail
        later_fail *= 1 - stops[i - 1]
    dist[0] = later_fail
    return tuple(dist)


def block_kept_distribution(
    target_rows: Sequence[Row], draft_rows: Sequence[Row], proposals: Sequence[int]
) -> tuple[Fraction, ...]:
    """P(tau = i | these proposals), i = 0..K, under the block rule."""
    return kept_distribution(stopping_chances(target_rows, draft_rows, proposals))


def block_expected_accepted(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> Fraction:
    """E[tau] = sum_i E_{x ~ q}[w_i]: a dynamic programme over the running weight's distribution."""
    states: dict[Fraction, Fraction] = {ONE: ONE}
    total = ZERO
    for t, q in zip(target_rows, draft_rows):
        nxt: dict[Fraction, Fraction] = {}
        for w, pw in states.items():
            for x, qx in enumerate(q):
                if qx:
                    v = min(w * t[x] / qx, ONE)
                    nxt[v] = nxt.get(v, ZERO) + pw * qx
        states = nxt
        total += sum((w * pw for w, pw in states.items()), ZERO)
    return total


ResidualFn = Callable[[Fraction, Row, Row], Row | None]


def block_round_outputs(
    target_rows: Sequence[Row], draft_rows: Sequence[Row], residual: ResidualFn = block_residual
) -> Outputs:
    """The exact distribution of what a block-verified round commits, over every draft the draft rows can make.
    `residual` lets a test plant a wrong correction distribution."""
    k = len(draft_rows)
    out: Outputs = {}
    supports = [[x for x, qx in enumerate(q) if qx] for q in draft_rows]
    stops: dict[tuple[int, Fraction], Fraction] = {}  # h_i and the correction rows depend on the running weight
    corrections: dict[tuple[int, Fraction], Row | None] = {}  # alone, which many drafts share: each made once

    def stop(i: int, w: Fraction) -> Fraction:
        if (i, w) not in stops:
            stops[i, w] = stop_chance(w, target_rows[i + 1], draft_rows[i + 1])
        return stops[i, w]

    def correction(tau: int, w: Fraction) -> Row | None:
        if tau == k:
            return target_rows[k]
        if (tau, w) not in corrections:
            corrections[tau, w] = residual(w, target_rows[tau], draft_rows[tau])
        return corrections[tau, w]

    for xs in itertools.product(*supports):
        px = _product(draft_rows[i][x] for i, x in enumerate(xs))
        weights = running_weights(target_rows, draft_rows, xs)
        kept = kept_distribution(tuple(w if i == k - 1 else stop(i, w) for i, w in enumerate(weights)))
        weights = (ONE, *weights)
        for tau, pt in enumerate(kept):
            if not pt:
                continue
            row = correction(tau, weights[tau])
            if row is None:
                raise ValueError(f"a round stops at {tau} with chance {pt} but has nothing to draw the correction from")
            mass = px * pt
            for y, py in enumerate(row):
                _add(out, (*xs[:tau], y), mass * py)
    return out


def tokenwise_round_outputs(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> Outputs:
    """The exact distribution of what a token-by-token round commits (for comparison with the block's)."""
    k = len(draft_rows)
    out: Outputs = {}

    def walk(i: int, prefix: tuple[int, ...], reach: Fraction) -> None:
        if i == k:
            for y, py in enumerate(target_rows[k]):
                _add(out, (*prefix, y), reach * py)
            return
        t, q = target_rows[i], draft_rows[i]
        rest = normalised(excess(t, q))
        for x, qx in enumerate(q):
            if not qx:
                continue
            a = min(ONE, t[x] / qx)
            if a:
                walk(i + 1, (*prefix, x), reach * qx * a)
            if a < 1 and rest is not None:
                for y, py in enumerate(rest):
                    _add(out, (*prefix, y), reach * qx * (1 - a) * py)

    walk(0, (), ONE)
    return out


# ---------------------------------------------------------------- measuring an output against the target


def extended_tv(outputs: Outputs, target_rows: Sequence[Row]) -> Fraction:
    """Total-variation distance between the target's joint over all K + 1 positions and the round's output filled
    out with the target's rows after its last token. 0 exactly when the rule is lossless."""
    depth = len(target_rows)
    starts: set[tuple[int, ...]] = set()
    for key in outputs:
        if len(key) > depth:
            raise ValueError(f"an output of {len(key)} tokens is longer than the {depth} positions")
        starts.update(key[:n] for n in range(len(key)))  # proper prefixes: an output continues below them
    total = ZERO

    def walk(prefix: tuple[int, ...], filled: Fraction, target: Fraction) -> None:
        nonlocal total
        i = len(prefix)
        if i == depth:
            total += abs(filled - target)
            return
        for a, pa in enumerate(target_rows[i]):
            nxt = (*prefix, a)
            f = filled * pa + outputs.get(nxt, ZERO)
            t = target * pa
            if nxt in starts:
                walk(nxt, f, t)
            else:  # nothing more of the output below: the rest is the target's own rows on both sides
                total += abs(f - t)

    walk((), ZERO, ONE)
    return total / 2


def position_outputs(outputs: Outputs, position: int) -> dict[int, Fraction]:
    """The distribution of the token an output commits at `position` (1-based), given it commits one there."""
    row: dict[int, Fraction] = {}
    for key, p in outputs.items():
        if len(key) >= position:
            row[key[position - 1]] = row.get(key[position - 1], ZERO) + p
    mass = sum(row.values(), ZERO)
    return {x: p / mass for x, p in sorted(row.items())}


def extended_marginal(outputs: Outputs, target_rows: Sequence[Row], position: int) -> Row:
    """The token at `position` (1-based) once every output is filled out with the target's rows: the output's own
    token where it reaches that far, the target's row where it stops short."""
    row = [ZERO] * len(target_rows[0])
    short = ZERO  # the mass of the outputs that stop before `position`
    for key, p in outputs.items():
        if len(key) >= position:
            row[key[position - 1]] += p
        else:
            short += p
    return tuple(r + short * px for r, px in zip(row, target_rows[position - 1]))


def tv(a: Sequence[Fraction], b: Sequence[Fraction]) -> Fraction:
    return sum((abs(x - y) for x, y in zip(a, b)), ZERO) / 2


# ---------------------------------------------------------------- token trees (fixed guesses)


@dataclass(frozen=True)
class Node:
    token: int
    children: tuple[Node, ...] = ()


def tree_round_outputs(
    target_rows: Sequence[Row], children: Sequence[Node], renormalise: bool = True, depth: int = 0
) -> Outputs:
    """The fixed-guess rule over a tree of distinct sibling tokens: try each child in turn, accept it with the
    target's current probability of it, else zero that token and renormalise; when every child fails, draw from
    what is left. `renormalise=False` plants the mistake of drawing from the untouched row."""
    row = tuple(target_rows[depth])
    out: Outputs = {}
    reach = ONE
    current = row
    for child in children:
        a = current[child.token]
        if a:
            below = (
                tree_round_outputs(target_rows, child.children, renormalise, depth + 1)
                if child.children
                else {(y,): py for y, py in enumerate(target_rows[depth + 1]) if py}
            )
            for key, p in below.items():
                _add(out, (child.token, *key), reach * a * p)
        reach *= 1 - a
        if renormalise:
            zeroed = tuple(ZERO if x == child.token else p for x, p in enumerate(current))
            current = normalised(zeroed) or zeroed
    if reach:
        for y, py in enumerate(current if renormalise else row):
            _add(out, (y,), reach * py)
    return out


def prefix_probabilities(target_rows: Sequence[Row], n: int) -> list[tuple[Fraction, tuple[int, ...]]]:
    """The n most probable target prefixes of lengths 1..K (K = len(target_rows) - 1), most probable first,
    zero-probability prefixes left out. Best-first: a prefix is never more probable than the one it extends."""
    depth = len(target_rows) - 1
    heap: list[tuple[Fraction, tuple[int, ...]]] = []
    for x, p in enumerate(target_rows[0]):
        if p and depth >= 1:
            heapq.heappush(heap, (-p, (x,)))
    found = []
    while heap and len(found) < n:
        negp, path = heapq.heappop(heap)
        found.append((-negp, path))
        if len(path) < depth:
            for x, p in enumerate(target_rows[len(path)]):
                if p:
                    heapq.heappush(heap, (negp * p, (*path, x)))
    return found


def best_tree_accepted(target_rows: Sequence[Row], max_nodes: int = 16) -> tuple[Fraction, ...]:
    """E[accepted] of the best n-node tree under the fixed-guess rule, n = 1..max_nodes (or every node there is):
    each node is kept with its path's target probability, so the best tree holds the n most probable prefixes."""
    totals, running = [], ZERO
    for p, _ in prefix_probabilities(target_rows, max_nodes):
        running += p
        totals.append(running)
    return tuple(totals)


def best_tree(target_rows: Sequence[Row], n: int) -> tuple[Node, ...]:
    """The best n-node tree itself, children in order of their target probability."""
    paths = [path for _, path in prefix_probabilities(target_rows, n)]

    def build(prefix: tuple[int, ...]) -> tuple[Node, ...]:
        kids = [p for p in paths if len(p) == len(prefix) + 1 and p[: len(prefix)] == prefix]
        return tuple(Node(p[-1], build(p)) for p in kids)

    return build(())


def tree_attention_mask(children: Sequence[Node]) -> tuple[list[int], list[list[bool]]]:
    """The nodes in breadth-first order (their tokens) and the mask: node j may see node i iff i is j or its
    ancestor."""
    order: list[tuple[Node, int | None]] = []
    queue: list[tuple[Node, int | None]] = [(c, None) for c in children]
    while queue:
        node, parent = queue.pop(0)
        order.append((node, parent))
        here = len(order) - 1
        queue.extend((c, here) for c in node.children)
    parents = [p for _, p in order]
    mask = []
    for j in range(len(order)):
        seen, a = {j}, parents[j]
        while a is not None:
            seen.add(a)
            a = parents[a]
        mask.append([i in seen for i in range(len(order))])
    return [node.token for node, _ in order], mask


# ---------------------------------------------------------------- several guesses at one position


def plain_residual(target: Row, draft: Row) -> Row | None:
    return normalised(excess(target, draft))


def rrs_acceptance(target: Row, draft: Row, k: int) -> Fraction:
    """Recursive rejection sampling with k i.i.d. guesses from the draft: 1 - prod_j (1 - beta_j), beta_j
    against the running residual p_1 = p, p_{j+1} = norm(max(p_j - q, 0))."""
    miss, current = ONE, tuple(target)
    for _ in range(k):
        miss *= 1 - sum(overlap(current, draft), ZERO)
        nxt = plain_residual(current, draft)
        if nxt is None:
            break
        current = nxt
    return 1 - miss


def rrs_outputs(target: Row, draft: Row, k: int, residual=plain_residual) -> dict[int, Fraction]:
    """The exact distribution of the token recursive rejection sampling (k i.i.d. guesses) emits."""
    out: dict[int, Fraction] = {}
    reach, current = ONE, tuple(target)
    for _ in range(k):
        for x, qx in enumerate(draft):
            if qx:
                a = min(ONE, current[x] / qx)
                out[x] = out.get(x, ZERO) + reach * qx * a
        reach *= 1 - sum(overlap(current, draft), ZERO)
        nxt = residual(current, draft)
        if nxt is None:
            return out
        current = nxt
    for y, py in enumerate(current):
        out[y] = out.get(y, ZERO) + reach * py
    return out


def without_replacement_parts(
    target: Row, draft: Row, k: int, residual=plain_residual
) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """Guesses drawn from the draft without replacement: after rejecting x, p <- norm(max(p - q_cur, 0)) and q_cur
    loses x and is renormalised. Returns the emitted token's exact mass in two parts: (from an accepted guess,
    from the residual once every guess is rejected)."""
    accepted: dict[int, Fraction] = {}
    fallback: dict[int, Fraction] = {}

    def walk(current: Row, q: Row, guesses: int, reach: Fraction) -> None:
        if guesses == 0 or not any(q):
            for y, py in enumerate(current):
                if py:
                    fallback[y] = fallback.get(y, ZERO) + reach * py
            return
        nxt = residual(current, q)
        for x, qx in enumerate(q):
            if not qx:
                continue
            a = min(ONE, current[x] / qx)
            if a:
                accepted[x] = accepted.get(x, ZERO) + reach * qx * a
            if a < 1 and nxt is not None:
                rest = normalised(tuple(ZERO if y == x else v for y, v in enumerate(q)))
                walk(nxt, rest or tuple(ZERO for _ in q), guesses - 1, reach * qx * (1 - a))

    walk(tuple(target), tuple(draft), k, ONE)
    return accepted, fallback


def without_replacement_outputs(target: Row, draft: Row, k: int, residual=plain_residual) -> dict[int, Fraction]:
    """The exact distribution of the token emitted with k guesses drawn without replacement."""
    accepted, fallback = without_replacement_parts(target, draft, k, residual)
    return {y: accepted.get(y, ZERO) + fallback.get(y, ZERO) for y in sorted(accepted.keys() | fallback.keys())}


def without_replacement_acceptance(target: Row, draft: Row, k: int) -> Fraction:
    """P(one of k guesses drawn without replacement is accepted): the emitted token's mass from guesses."""
    return sum(without_replacement_parts(target, draft, k)[0].values(), ZERO)


def optimal_iid_acceptance(target: Row, draft: Row, k: int) -> Fraction:
    """The most any exact verifier of k i.i.d. guesses can accept: 1 - max_S [q(S)^k - p(S)] over token sets S.

    Each set's sums are a smaller set's plus one token; a token both rows give 0 changes no set's value."""
    q_sums, p_sums = [ZERO], [ZERO]  # the empty set first
    for p, q in zip(target, draft):
        if p or q:
            q_sums += [s + q for s in q_sums]
            p_sums += [s + p for s in p_sums]
    return 1 - max(qs**k - ps for qs, ps in zip(q_sums, p_sums))


# ---------------------------------------------------------------- weaker or lossy rules


def exact_match_expected_accepted(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> Fraction:
    """Keep a proposal only when it equals the target's own sample there: sum_x p q per position, chained."""
    total, reach = ZERO, ONE
    for t, q in zip(target_rows, draft_rows):
        reach *= sum((a * b for a, b in zip(t, q)), ZERO)
        total += reach
    return total


def argmax_rows(draft_rows: Sequence[Row]) -> tuple[Row, ...]:
    """The deterministic draft that always proposes its most likely token (the first of a tie): one-hot rows."""
    rows = []
    for q in draft_rows:
        best = max(range(len(q)), key=lambda x: (q[x], -x))
        rows.append(tuple(ONE if x == best else ZERO for x in range(len(q))))
    return tuple(rows)


def greedy_rows(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Rows at temperature 0: all mass on the most likely token (the first of a tie)."""
    return argmax_rows(rows)


TYPICAL_EPSILON = Fraction(9, 100)  # Medusa's posterior_threshold
TYPICAL_DELTA = 0.3  # Medusa's posterior_alpha


def typical_threshold(target: Row) -> float:
    """min(epsilon, delta * exp(-H(p))), H the target row's entropy in nats (a float: exp is not rational)."""
    entropy = -sum(float(p) * math.log(float(p)) for p in target if p)
    return min(float(TYPICAL_EPSILON), TYPICAL_DELTA * math.exp(-entropy))


def typical_accepts(target: Row) -> tuple[bool, ...]:
    """Which tokens pass Medusa's typical acceptance: p(x) > the threshold."""
    threshold = typical_threshold(target)
    return tuple(float(p) > threshold and p > 0 for p in target)


def typical_round_outputs(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> Outputs:
    """Medusa's typical acceptance on a chain: keep proposals while each is typical for the target; the next
    token is the target's own sample at the first failure (or the bonus). Lossy: the output is not the target's."""
    k = len(draft_rows)
    out: Outputs = {}

    def walk(i: int, prefix: tuple[int, ...], reach: Fraction) -> None:
        if i == k:
            for y, py in enumerate(target_rows[k]):
                _add(out, (*prefix, y), reach * py)
            return
        ok = typical_accepts(target_rows[i])
        fail = sum((qx for x, qx in enumerate(draft_rows[i]) if not ok[x]), ZERO)
        for x, qx in enumerate(draft_rows[i]):
            if qx and ok[x]:
                walk(i + 1, (*prefix, x), reach * qx)
        if fail:
            for y, py in enumerate(target_rows[i]):
                _add(out, (*prefix, y), reach * fail * py)

    walk(0, (), ONE)
    return out


def expected_accepted_of(outputs: Outputs) -> Fraction:
    """E[proposals kept] of a round: every committed token but the last one was a kept proposal."""
    return sum(((len(key) - 1) * p for key, p in outputs.items()), ZERO)
