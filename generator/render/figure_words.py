"""The words figures use in their alt text and captions: numbers as the data states them, lists, quotes.

Plain functions of their arguments, kept apart from figures.py so the wording can be read (and tested)
without the drawing code.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .. import decimals

Number = float | int | Fraction


def significant(x: Number, figures: int = 3) -> str:
    """x to `figures` significant figures by the pages' one rounding rule (generator/decimals.py), trailing zeros
    dropped: 0.0123456 -> 0.0123, 0.125 -> 0.125, 2/3 -> 0.667, 1234.5 -> 1235 (never fewer than the whole part)."""
    value = decimals.exact(x)
    if value == 0:
        return "0"
    exponent = len(str(abs(value.numerator))) - len(str(value.denominator))  # 10^(e-1) < |x| < 10^(e+1)
    if abs(value) < Fraction(10) ** exponent:
        exponent -= 1
    text = decimals.fixed(value, max(0, figures - 1 - exponent))
    return text.rstrip("0").rstrip(".") if "." in text else text


def exact(x: Number) -> str:
    """A number as the data states it: 3/8 stays 3/8; anything long or inexact gets three figures."""
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    if isinstance(x, Fraction) and x.denominator <= 64:
        return str(x)
    return significant(x)


def decimal(x: Number, digits: int = 2) -> str:
    """x to `digits` decimals by the pages' one rounding rule: halves away from zero on the exact value.

    13/8 -> 1.63.
    """
    return decimals.fixed(x, digits)


def signed(x: Number) -> str:
    """Two decimals with a true minus sign: -0.505 -> −0.51."""
    return decimals.fixed(x, 2).replace("-", "\u2212")


def count(n: int) -> str:
    return f"{int(n):,}"


def and_(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def places(labels: Sequence[str | int]) -> str:
    """Position labels as a phrase: "positions 1, 4 and 5" from [1, 4, 5], ["1", "4", "5"] or ["position 1", ...]."""
    labels = [str(lab).removeprefix("position ") for lab in labels]
    if all(lab.isdigit() for lab in labels):
        return ("positions " if len(labels) > 1 else "position ") + and_(labels)
    return and_(labels)


def quote(token: str) -> str:
    return f"\u201c{token}\u201d"


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def argmax(values: Sequence[float]) -> int:
    """The index of the largest value, the first of equals."""
    return max(range(len(values)), key=values.__getitem__)


# --- each figure's alt text and caption, from the numbers it is drawn from -----------------------


def profile_bars_words(props, target_rows, k, accept_probabilities, tokens, draft_rows, title) -> tuple[str, str]:
    said, sure, never = [], [], []
    for i, p in enumerate(props):
        t, d, a = target_rows[i][p], draft_rows[i][p], accept_probabilities[i]
        if a == 1:
            verdict = "so it is always accepted"
            sure.append(i + 1)
        elif a == 0:
            verdict = "so it is always rejected"
            never.append(i + 1)
        else:
            verdict = f"so it is accepted with probability {exact(a)}"
        said.append(
            f"Position {i + 1}: the draft proposes {quote(tokens[p])}, which it gives {exact(d)} "
            f"and the target {exact(t)}, {verdict}"
        )
    best = argmax([float(v) for v in target_rows[k]])
    alt = (
        f"{title}. One small bar chart per position comparing the target's and the draft's probabilities for the "
        f"tokens {and_([quote(t) for t in tokens])}. "
        + "; ".join(said)
        + f". Bonus position {k + 1} shows the target alone; its most likely token is "
        f"{quote(tokens[best])} at {exact(target_rows[k][best])}."
    )
    certain = (
        f"{'All' if len(sure) == k else f'{len(sure)} of the'} {k} proposals ({places(sure)}) "
        "get at least as much probability from the target as from the draft, so they are accepted for certain"
        if sure
        else "No proposal is accepted for certain"
    )
    if never:
        certain += f"; the target never produces the proposal at {places(never)}"
    # How the bars are drawn is in each figure's legend and in the key above them, not repeated per caption.
    caption = f"{certain[0].upper()}{certain[1:]}."
    return alt, caption


def convergence_histograms_words(
    m, position_labels, tokens, title, frequencies, target_rows, counts
) -> tuple[str, str]:
    gaps, parts = [], []
    for i in range(m):
        if not counts[i]:  # no simulated round reached this position: nothing observed to compare
            parts.append(f"{position_labels[i]} (0 rounds): no round reached it")
            continue
        diffs = [
            abs(decimals.exact(f) - decimals.exact(t)) for f, t in zip(frequencies[i], target_rows[i])
        ]  # exact gaps
        j = argmax(diffs)
        gaps.append((diffs[j], i, j))
        likely = argmax([float(v) for v in target_rows[i]])
        parts.append(
            f"{position_labels[i]} ({count(counts[i])} rounds): {quote(tokens[likely])} observed "
            f"{decimal(frequencies[i][likely], 3)} against target {exact(target_rows[i][likely])}, "
            f"largest gap {decimal(diffs[j], 4)}"
        )
    worst, wi, wj = max(gaps)
    alt = (
        f"{title}. For each position, solid bars give the target probability of each token and marks the share of "
        "simulated rounds that committed it. " + "; ".join(parts) + "."
    )
    # What the bars and marks mean is said once, on the page above the figures, not in each caption.
    caption = f"The largest gap anywhere is {decimal(worst, 4)} ({position_labels[wi]}, {quote(tokens[wj])})."
    return alt, caption


def error_vs_samples_words(many, slope, drawn, title) -> tuple[str, str]:
    described = [
        f"{label}: {significant(pts[0][1])} at {count(pts[0][0])} samples down to {significant(pts[-1][1])} at "
        f"{count(pts[-1][0])}"
        for label, pts in drawn
    ]
    shape = "One small panel per series, each highlighting its own line over the others in grey. " if many else ""
    alt = (
        f"{title}. {shape}Total variation distance between the observed and the target distribution against the "
        "number of samples, both axes logarithmic, with a dashed guide line falling as 1 over the square root of n. "
        + "; ".join(described)
        + "."
    )
    # The 1/sqrt(n) guide is explained once, on the page above the figures, not in each caption.
    caption = "Dashed: the 1/\u221an guide."
    if slope is not None:
        caption += f" The fitted log-log slope, averaged over the curves, is {signed(slope)}, against \u22120.5."
    return alt, caption


def round_length_distribution_words(k, series, means, n_values) -> tuple[str, str]:
    described = [
        f"{label}: "
        + ", ".join(f"N = {n}: {decimals.pct(p, 1)}" for n, p in zip(n_values, probs))
        + f"; expected {decimal(mu)} tokens"
        for (label, probs), mu in zip(series, means)
    ]
    alt = (
        f"Bar chart of the number of tokens N one round commits, from 1 to {k + 1} (K = {k} proposals, "
        f"N = {k + 1} when every proposal is accepted and the bonus is drawn), for each draft. "
        + ". ".join(described)
        + "."
    )
    most = [
        f"{lower_first(label)} most often commits {n_values[argmax([float(p) for p in probs])]} "
        f"and expects {decimal(mu)}"
        for (label, probs), mu in zip(series, means)
    ]
    caption = (
        f"With K = {k} proposals a round commits between 1 and {k + 1} tokens; {'; '.join(most)}. "
        "Dashed lines with markers show each draft's expected tokens per round."
    )
    return alt, caption


def speedup_vs_k_words(curves, best, cost, best_of) -> tuple[str, str]:
    described = []
    for label, pts in curves:
        first, last = pts[0], pts[-1]
        text = f"{label}: {decimal(first[1])}\u00d7 at K = {first[0]}"
        if label in best_of:
            kk, s = best_of[label]
            text += f", best {decimal(s)}\u00d7 at K = {kk}"
        text += f", {decimal(last[1])}\u00d7 at K = {last[0]}"
        below = [int(kk) for kk, s in pts if float(s) < 1]
        if below:
            text += f" (below 1\u00d7 from K = {below[0]})"
        described.append(text)
    at_cost = (
        f" at draft cost c = {exact(cost)} (one draft token costs {exact(cost)} of a target step)"
        if cost is not None
        else ""
    )
    alt = (
        f"Line chart of speedup over plain decoding against draft length K{at_cost}, one line per draft quality, "
        "with a star at each line's best K and a dashed line at 1\u00d7 meaning no gain. " + "; ".join(described) + "."
    )
    ordered = sorted(best, key=lambda b: (b[1], float(b[2])))
    if ordered:
        first, last = ordered[0], ordered[-1]
        span = (
            f"The best draft length runs from K = {first[1]} ({first[0]}, {decimal(first[2])}\u00d7) "
            f"to K = {last[1]} ({last[0]}, {decimal(last[2])}\u00d7)"
        )
    else:
        span = "Speedup against draft length"
    if cost is not None:
        span = f"At draft cost c = {exact(cost)}: {lower_first(span)}"
    caption = f"{span}."  # why the curves peak, the page says once, not under each figure
    return alt, caption


def roofline_words(crossing, model_label, draft_positions, draft_ms, times, pos, flat) -> tuple[str, str]:
    knee_words = f", the knee near {decimal(crossing, 0)} positions where compute overtakes memory" if crossing else ""
    alt = (
        f"A model, not a measurement ({model_label}): modelled time per forward pass against the number of "
        f"positions scored, both axes logarithmic, with dashed lines for the memory floor and the compute slope"
        f"{knee_words}. The time stays within 10% of {significant(times[0])} ms "
        f"from {pos[0]} to {pos[flat]} positions, "
        f"because reading the weights dominates, then grows with the positions scored, "
        f"reaching {significant(times[-1])} ms "
        f"at {pos[-1]}."
    )
    if draft_positions is not None and draft_ms is not None:
        same = decimal(draft_ms) == decimal(times[0])
        caption = (
            f"Modelled for {model_label}: checking a draft of K = {draft_positions} tokens in one "
            f"pass takes {decimal(draft_ms)} ms, "
            + (
                "as long as writing a single token"
                if same
                else f"against {decimal(times[0])} ms for writing a single token"
            )
            + (
                f"; arithmetic overtakes reading the weights only near {decimal(crossing, 0)} positions."
                if crossing
                else "."
            )
        )
    else:
        ratio = times[flat] / times[0]
        caption = (
            f"Modelled for {model_label}: scoring {pos[flat]} positions in one pass "
            f"takes {decimal(ratio)}\u00d7 as long as scoring {pos[0]}"
            + (", which is why checking a whole draft costs about one target step." if ratio <= 1.2 else ".")
        )
    return alt, caption


def acceptance_bars_words(rates, labels) -> tuple[str, str]:
    described = [
        f"{profile}: " + ", ".join(f"{exact(a)} at {lab}" for lab, a in zip(labels, alphas))
        for profile, alphas in rates
    ]
    alt = (
        "Bar chart of the acceptance rate at each position, the chance that the draft's proposal there "
        "survives the target's check, for each draft. " + "; ".join(described) + "."
    )
    ranges = []
    for profile, alphas in rates:
        lo = min(alphas, key=float)
        where = [lab for lab, a in zip(labels, alphas) if float(a) == float(lo)]
        ranges.append(
            f"{lower_first(profile)}: lowest {exact(lo)} (at {places(where)}), highest {exact(max(alphas, key=float))}"
        )
    caption = (
        "Acceptance rate per position, \u03b1 = \u2211 min(p, q): the chance a proposal there is kept. "
        + upper_first("; ".join(ranges))
        + "."
    )
    return alt, caption


def round_story(accepted: int, bonus: bool, k: int) -> str:
    """One sampled round in words: what it accepted, replaced, dropped or drew, and what it committed."""
    if bonus:
        return f"all {k} accepted and the bonus drawn ({k + 1} tokens)"
    dropped = k - accepted - 1
    said = f"{accepted} accepted, the next replaced" if accepted else "the first replaced"
    if dropped:
        said += f", {dropped} dropped"
    return f"{said} ({accepted + 1} token{'' if accepted == 0 else 's'})"


def timeline_words(rounds, k, plain, draft_step, lanes, span, passes) -> tuple[str, str]:
    """`lanes`: per draft, (name, E[N], the rounds shown as (accepted, bonus drawn), tokens those committed)."""
    span_text = exact(span)
    per_lane = ". ".join(
        f"{label}, {rounds} sampled round{'' if rounds == 1 else 's'}: "
        + "; ".join(f"round {n}, {round_story(a, b, k)}" for n, (a, b) in enumerate(picked, start=1))
        + f"; {committed} tokens in all, against {decimal(rounds * expected)} expected ({decimal(expected)} a round)"
        for label, expected, picked, committed in lanes
    )
    alt = (
        f"Timeline over the same {span_text} target passes for each lane. Top lane, plain decoding: one pass per "
        f"token, {exact(plain)} tokens. Below, one lane per draft: {rounds} rounds, each {k} short draft steps of "
        f"{exact(draft_step)} pass (hatched) and one checking pass, and under each round one tile per position: "
        f"a tick for an accepted proposal, a circular arrow for the replacement drawn after a rejection, a dash "
        f"for a proposal dropped unchecked, a plus for the bonus. {per_lane}."
    )
    caption = (
        f"The same {span_text} target passes, three ways. Plain decoding commits one token a pass: {exact(plain)}. "
        f"A draft's round costs {exact(passes)} passes ({k} hatched draft steps at {exact(draft_step)}, then one "
        "checking pass), and the tiles under it show what became of each position. "
        + (f"These are the first {rounds} rounds" if rounds > 1 else "This is the first round")
        + " each draft sampled, not chosen ones. On average a round commits "
        + "; ".join(
            f"{decimal(expected)} tokens with {lower_first(label)} ({decimal(rounds * expected)} in {rounds}; "
            f"{'these' if rounds > 1 else 'this'} committed {committed})"
            for label, expected, _, committed in lanes
        )
        + "."
    )
    return alt, caption


def exactness_words(panels, tokens) -> tuple[str, str]:
    described = []
    for label, position, p, q, kept, topped, alpha in panels:
        parts = [
            f"{quote(t)}: {exact(a)} kept + {exact(b)} from the residual = {exact(pp)} (q = {exact(qq)})"
            for t, pp, qq, a, b in zip(tokens, p, q, kept, topped)
            if pp or qq
        ]
        described.append(f"{label}, position {position}, acceptance rate {exact(alpha)}: " + "; ".join(parts))
    alt = (
        "Bar chart, one panel per draft, three bars per token: the target's probability p (solid), then a stack "
        "of the mass the check keeps, min(p, q) (dark), and on top what drawing from the residual after a rejection "
        "adds, (1 \u2212 \u03b1) times r (dotted), which ends exactly at the height of p; then the draft's q "
        "(outlined). " + ". ".join(described) + "."
    )
    caption = (
        "For every token, the part the check keeps, min(p, q), plus the residual's share after a rejection, "
        "(1 \u2212 \u03b1)\u00b7r, stacks up to the target's p exactly, however far the draft's q (outlined) is "
        "from it. Shown: "
        + "; ".join(
            f"{lower_first(label)} at position {position} (\u03b1 = {exact(alpha)})"
            for label, position, *_, alpha in panels
        )
        + "."
    )
    return alt, caption


def timeline_span(passes: Fraction) -> int:
    """How many rounds the opening timeline wants in a lane, a round taking `passes` target passes: the fewest
    from 4 to 6 that fill a whole number of passes, else 4. (The figure shows fewer when its tiles would grow too
    narrow for their marks.) Here, without the drawing code, so that the registry passes only these rounds."""
    return next((n for n in range(4, 7) if (n * passes).denominator == 1), 4)
