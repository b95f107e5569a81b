"""Charts for the page "In practice", in figures.py's style: numbers quoted from engines (data/practice.yaml),
and the site's roofline applied to a batch of sequences. Each function returns a figures.Figure with its alt
text and caption, written here from the same numbers the chart is drawn from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .chart import FONT, MARKERS, WIDTH, canvas, figure, finish, heading, text_width, wrap
from .figure_words import Number, decimal
from .figures import Figure
from .palette import INK, MUTED, PALETTE

STYLES = (
    {"color": PALETTE[0], "linestyle": "-", "marker": MARKERS[0]},
    {"color": PALETTE[1], "linestyle": (0, (5, 3)), "marker": MARKERS[1]},
    {"color": PALETTE[2], "linestyle": (0, (1.5, 2)), "marker": MARKERS[2]},
)


def _axes(ax, xticks: Sequence[float]) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(list(xticks)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.grid(True)
    ax.set_axisbelow(True)


def powers_of_two(fig, last: int, share: float = 0.8) -> list[int]:
    """Ticks for a log-2 axis from 1 to `last`: every power of two if their labels fit side by side, else every
    second, third, ... one, the fewest skipped so that each label has its own room (the axis taken as `share` of
    the figure's width, with half an em between labels)."""
    top = max(0, int(last).bit_length() - 1)  # the largest e with 2 ** e <= last
    room = fig.get_figwidth() * fig.dpi * share / max(math.log2(last), 1.0)  # per octave, in text_width's units
    for stride in range(1, top + 2):
        ticks = [2**e for e in range(0, top + 1, stride)]
        if stride * room >= max(text_width(fig, f"{t:,}") for t in ticks) + FONT / 2 * fig.dpi / 72:
            return ticks
    return [1]


@figure
def k_sweep(
    name: str,
    ks: Sequence[int],
    drafts: Sequence[tuple[str, Sequence[Number], Sequence[Number], int]],
    plain_ms: Number,
    model: str,
    batch: int,
    source: str,
) -> Figure:
    """Two panels over the draft length K: mean acceptance length (rising) and time per output token (a U),
    with plain decoding's time as a line and each draft's fastest K marked. drafts: (name, lengths, ms, best K)."""
    from matplotlib.ticker import FuncFormatter

    fig = canvas(5.6)
    top, bottom = fig.subplots(2, 1, sharex=True)
    handles = []
    for i, (_label, lengths, ms, best) in enumerate(drafts):
        s = {**STYLES[i % len(STYLES)], "linewidth": 1.6, "markersize": 4.5}
        handles += top.plot(ks, [float(v) for v in lengths], **s)
        bottom.plot(ks, [float(v) for v in ms], **s)
        j = list(ks).index(best)
        bottom.plot([best], [float(ms[j])], marker="o", markersize=11, markerfacecolor="none", color=s["color"])
    top.set_ylabel("acceptance length")
    bottom.set_ylabel("ms per token")
    bottom.set_xlabel("draft length K")
    all_ms = [float(v) for _, _, ms, _ in drafts for v in ms]  # plain decoding is far above: said in words
    bottom.set_ylim(min(all_ms) * 0.96, max(all_ms) * 1.12)
    bottom.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for ax in (top, bottom):
        _axes(ax, ks)
    bottom.annotate(
        f"plain decoding: {decimal(plain_ms)} ms, off the top",
        (0.02, 0.97),
        xycoords="axes fraction",
        va="top",
        color=MUTED,
    )
    heading(fig, f"Measured: {model}, batch {batch}", handles, [d[0] for d in drafts])
    best_words = "; ".join(
        f"{label} is fastest at K = {best}, {decimal(ms[list(ks).index(best)])} ms" for label, _, ms, best in drafts
    )
    alt = (
        f"Two line charts against the draft length K from {ks[0]} to {ks[-1]}, measured on {model} at batch {batch}"
        f" ({source}). Top: tokens per round keep rising with K, "
        + "; ".join(f"{label} from {decimal(v[0])} to {decimal(v[-1])}" for label, v, _, _ in drafts)
        + f". Bottom: time per output token falls, then rises again: {best_words}, each ringed; plain decoding takes "
        f"{decimal(plain_ms)} ms, above the chart, as a note on it says."
    )
    caption = (
        f"Measured in {source}: longer drafts buy more tokens per round, yet time per token is a U ({best_words})."
    )
    return Figure(name, finish(fig, name), alt, caption)


@figure
def batch_speedup(
    name: str,
    curves: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    knee: Number,
    crossover: Number,
    k: int,
    break_even: Sequence[Number],
    model_label: str,
) -> Figure:
    """Modelled speedup against batch size b (log scale) for each draft, a line at 1, the knee b(K + 1) = X
    marked. Labelled as a model on the chart itself."""
    from matplotlib.ticker import FuncFormatter

    fig = canvas(4.4)
    ax = fig.add_subplot()
    ax.set_xscale("log", base=2)
    handles = []
    top = 0.0
    for i, (_label, points) in enumerate(curves):
        s = {**STYLES[i % len(STYLES)], "marker": None, "linewidth": 1.8}
        handles += ax.plot([b for b, _ in points], [float(v) for _, v in points], **s)
        top = max(top, max(float(v) for _, v in points))
    ax.axhline(1.0, color=INK, linewidth=0.9)
    ax.axvline(float(knee), color=MUTED, linewidth=0.9, linestyle=(0, (1, 1.65)))
    ax.annotate(
        f"knee: b \u2248 {decimal(knee, 1)}",
        (float(knee), top * 1.12),
        xytext=(4, 0),
        textcoords="offset points",
        va="top",
        color=MUTED,
    )
    last = curves[0][1][-1][0]
    _axes(ax, powers_of_two(fig, last))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{round(v):,}"))
    ax.set_xlim(1, last)
    ax.set_ylim(0, top * 1.2)
    ax.set_xlabel("sequences in the batch, b (log scale)")
    ax.set_ylabel("modelled speedup")
    ax.set_title(wrap(fig, f"A model, not a measurement: {model_label}", WIDTH * 72 - 70), loc="left", color=MUTED)
    heading(fig, "Speedup against batch size (a cost model)", handles, [label for label, _ in curves], most=2)
    each = "; ".join(
        f"{label} holds {decimal(points[0][1])}\u00d7 up to the knee and falls below 1 near b = {decimal(even, 0)}"
        for (label, points), even in zip(curves, break_even)
    )
    alt = (
        f"A model, not a measurement ({model_label}): modelled speedup against the number of sequences b in the "
        f"batch, b from 1 to {last} on a logarithmic axis, one line per draft and a horizontal line at 1. The knee is "
        f"marked at b \u2248 {decimal(knee, 1)}, where a check of K + 1 = {k + 1} positions per sequence scores about "
        f"{decimal(crossover, 0)} positions. {each}."
    )
    caption = (
        f"Modelled, not measured: up to b \u2248 {decimal(knee, 1)} the check rides on weight reads plain decoding "
        f"pays anyway; past it, its arithmetic grows with the batch."
    )
    return Figure(name, finish(fig, name), alt, caption)
