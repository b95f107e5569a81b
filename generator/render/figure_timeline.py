"""The opening picture: plain decoding and each draft's rounds over the same time, with what each round commits.

One lane per way of decoding, all over the same span of target passes. Plain decoding writes one token a pass.
Each draft's lane shows its first few rounds in the order a seeded stream sampled them (none chosen): the draft
steps and the pass that checks them, and under each round one tile per position, marked by what became of it,
accepted, replaced after a rejection, dropped unchecked, or the bonus. Each kind of tile differs from the others
by its mark and its fill or outline, never by colour alone, and the key names each in words.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from types import MappingProxyType

from .chart import WIDTH, Figure, canvas, figure, finish, heading, text_width, wrap
from .figure_words import Number, decimal, exact, timeline_span, timeline_words
from .palette import ACCEPTED, CARD, DRAFT, INK, MUTED, ON_LIGHT, RESIDUAL, TARGET

# What became of one position of a round, as a tile: (mark, tile style, mark colour). The key spells each out.
TILES = MappingProxyType(
    {
        "accepted": (
            "\u2713",
            MappingProxyType({"facecolor": ACCEPTED, "edgecolor": ACCEPTED, "linewidth": 0.8}),
            CARD,
        ),
        "replacement": (
            "\u21bb",
            MappingProxyType({"facecolor": RESIDUAL, "edgecolor": ON_LIGHT, "linewidth": 0.8}),
            ON_LIGHT,
        ),
        "bonus": ("+", MappingProxyType({"facecolor": CARD, "edgecolor": TARGET, "linewidth": 1.6}), INK),
        "dropped": (
            "\u2013",
            MappingProxyType({"facecolor": "none", "edgecolor": MUTED, "linewidth": 0.8, "linestyle": (0, (2, 1.5))}),
            MUTED,
        ),
    }
)
KEY = MappingProxyType(
    {
        "accepted": "\u2713 accepted",
        "replacement": "\u21bb replacement",
        "bonus": "+ bonus",
        "dropped": "\u2013 dropped, unchecked",
    }
)


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def outcomes(accepted: int, bonus: bool, k: int) -> list[str]:
    """What became of each of a round's k + 1 positions, given how many proposals it accepted and whether it drew
    the bonus; an empty string where nothing was committed or proposed (the bonus position of a round that
    rejected)."""
    if bonus:
        return ["accepted"] * k + ["bonus"]
    return ["accepted"] * accepted + ["replacement"] + ["dropped"] * (k - accepted - 1) + [""]


def span_rounds(passes: Fraction, most: int) -> int:
    """How many rounds a lane shows: the fewest from 4 to 6 that fill a whole number of target passes, else 4; but
    never more than `most`, the rounds whose tiles stay wide enough for their marks (at least one)."""
    return max(1, min(timeline_span(passes), most))


@figure
def timeline(
    name: str,
    draft_step: Number,
    verify_step: Number,
    round_cost: Number,
    k: int,
    lanes: Sequence[tuple[str, Number, Sequence[tuple[int, bool]]]],
) -> Figure:
    """Lanes over the same span of time, in target passes: plain decoding on top, then each draft's rounds.

    `lanes` holds, per draft, its name, its expected tokens per round E[N], and the rounds its seeded stream
    sampled first, in order, each as (proposals accepted, whether the bonus was drawn). A plain pass costs
    `verify_step`; a round is `k` draft steps of `draft_step` and one checking pass, `round_cost` in all.
    """
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, NullLocator

    passes = Fraction(round_cost) / Fraction(verify_step)  # one round, in target passes
    probe = canvas(1)
    room = WIDTH * 72 - 24
    widest = max(text_width(probe, mark) for mark, _, _ in TILES.values()) + 1  # a tile's room for its mark, points
    rounds = span_rounds(passes, math.floor(room * 0.88 / ((k + 1) * widest)))
    span = rounds * passes
    plain = span  # one token per pass
    step = float(Fraction(draft_step) / Fraction(verify_step))
    shown = []
    for label, expected, sampled in lanes:
        if len(sampled) < rounds:
            raise ValueError(f"{label}: {rounds} sampled rounds needed, {len(sampled)} given")
        picked = [(int(a), bool(b)) for a, b in sampled[:rounds]]
        committed = sum(a + 1 for a, _ in picked)
        shown.append((label, Fraction(expected), picked, committed))
    bar, tile, gap, lane_gap = 0.2, 0.2, 0.05, 0.22  # inches
    plain_text = decimal(plain, 0) if plain.denominator == 1 else decimal(plain)
    labels = [f"Plain decoding: {plain_text} tokens, one a pass"]
    labels += [
        wrap(
            probe,
            f"{label}, {plural(rounds, 'sampled round')}: {committed} tokens (expected {decimal(expected)} a round, "
            f"{decimal(rounds * expected)} in {rounds})",
            room,
        )
        for label, expected, _, committed in shown
    ]
    body = [bar] + [bar + gap + tile] * len(shown)
    heights = [b + lane_gap + 0.19 * (lab.count("\n") + 1) for b, lab in zip(body, labels)]
    fig = canvas(1.3 + sum(heights))  # the key above and the time axis below
    ax = fig.add_subplot()
    ax.set_xlim(0, float(span))
    ax.set_ylim(0, sum(heights))
    target = {"facecolor": TARGET, "edgecolor": CARD, "linewidth": 1.0}
    drafting = {"facecolor": "none", "edgecolor": DRAFT, "linewidth": 0.8, "hatch": "///"}
    unit = room / float(span)  # points per pass, about

    def target_pass(x: float, y: float, width: float, text: str) -> None:
        """A target pass (or the part of one the span holds), its label inside where the label fits."""
        ax.bar(x, bar, width, y, align="edge", **target)
        if text_width(probe, text) + 4 <= width * unit:
            ax.text(x + width / 2, y + bar / 2, text, ha="center", va="center", color=CARD, fontweight="bold")

    y = sum(heights)
    for lane, label in enumerate(labels):
        y -= heights[lane]
        top = y + body[lane]
        ax.annotate(label, (0, top), xytext=(0, 3), textcoords="offset points", va="bottom", ha="left")
        if lane == 0:
            for n in range(math.ceil(plain)):
                target_pass(n, y, min(1.0, float(plain) - n), str(n + 1))
            continue
        _, _, picked, _ = shown[lane - 1]
        time_y = y + tile + gap
        slot = float(passes) / (k + 1)
        for r, (accepted, bonus) in enumerate(picked):
            start = r * float(passes)
            ax.bar([start + j * step for j in range(k)], bar * 0.7, step, time_y + bar * 0.15, align="edge", **drafting)
            target_pass(start + k * step, time_y, 1.0, "check")
            for j, kind in enumerate(outcomes(accepted, bonus, k)):
                if not kind:
                    continue
                mark, style, colour = TILES[kind]
                x = start + j * slot + slot * 0.06
                ax.bar(x, tile, slot * 0.88, y, align="edge", **style)
                ax.text(x + slot * 0.44, y + tile / 2, mark, ha="center", va="center", color=colour, fontweight="bold")
    ax.xaxis.set_major_locator(FixedLocator(range(int(span) + 1)))
    ax.yaxis.set_major_locator(NullLocator())
    ax.spines["left"].set_visible(False)
    ax.grid(axis="x")
    ax.set_axisbelow(True)
    ax.set_xlabel("time, in target passes")
    heading(
        fig,
        "",
        [Patch(**target), Patch(**drafting), *(Patch(**TILES[kind][1]) for kind in KEY)],
        ["target pass", f"draft step ({exact(draft_step)} pass)", *KEY.values()],
        most=2,
    )
    return Figure(
        name,
        finish(fig, name),
        *timeline_words(
            rounds=rounds,
            k=k,
            plain=plain,
            draft_step=draft_step,
            lanes=[(label, expected, picked, committed) for label, expected, picked, committed in shown],
            span=span,
            passes=passes,
        ),
    )
