"""Charts for the part beyond one token at a time: block verification against the token-wise rule, and the best
token tree against the chain. Drawn like figures.py's (chart.py's canvas and checks, palette.py's colours), with
the alt text and caption written from the same numbers the chart plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .chart import MARKERS, SERIES_COLOURS, canvas, figure, finish, heading
from .figure_words import Number, and_, decimal
from .figures import Figure
from .palette import INK


def _series_style(i: int, block: bool) -> dict:
    """A draft's colour and marker; the token-wise rule dashed with open markers, the block solid and filled."""
    colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
    return {
        "color": colour,
        "marker": MARKERS[i % len(MARKERS)],
        "markersize": 6,
        "linewidth": 1.6,
        "linestyle": "-" if block else (0, (4, 3)),
        "markerfacecolor": colour if block else "none",
        "markeredgecolor": colour,
    }


@figure
def block_vs_tokenwise(
    name: str, drafts: Sequence[tuple[str, Sequence[Number], Sequence[Number]]], ks: Sequence[int]
) -> Figure:
    """Expected accepted proposals against the draft length K, per draft: token by token (dashed, open markers)
    and as a block (solid, filled). drafts holds (name, token-wise values, block values) for K in ks."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    fig = canvas(3.9)
    ax = fig.add_subplot()
    handles, labels = [], []
    top = 0.0
    for i, (label, token, block) in enumerate(drafts):
        handles += ax.plot(list(ks), [float(x) for x in token], **_series_style(i, False))
        handles += ax.plot(list(ks), [float(x) for x in block], **_series_style(i, True))
        labels += [f"{label}, token by token", f"{label}, as a block"]
        top = max(top, *(float(x) for x in block))
    ax.set_xlim(ks[0] - 0.3, ks[-1] + 0.3)
    ax.set_ylim(0, top * 1.12)
    ax.xaxis.set_major_locator(FixedLocator(list(ks)))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.set_xlabel("draft length K")
    ax.set_ylabel("accepted proposals")
    heading(fig, "Expected accepted proposals per round", handles, labels, most=2)
    last = ks[-1]
    each = [
        f"{label}: {decimal(token[-1])} token by token, {decimal(block[-1])} as a block at K = {last}"
        for label, token, block in drafts
    ]
    alt = (
        f"Line chart of expected accepted proposals per round against the draft length K from {ks[0]} to {last}, "
        f"for each draft checked token by token (dashed) and as a block (solid). The block line is never below "
        f"the token-by-token line. {and_(each)}."
    )
    gaps = [[Fraction(b) - Fraction(t) for t, b in zip(token, block)] for _, token, block in drafts]
    growing = all(all(x <= y for x, y in zip(g, g[1:])) for g in gaps)
    caption = (
        f"Expected accepted proposals per round for K = {ks[0]} to {last}: checking the draft as a block never "
        f"keeps fewer{', and its lead grows with K' if growing else ''}. At K = {last}, exactly: "
        + "; ".join(f"{label}, {Fraction(token[-1])} against {Fraction(block[-1])}" for label, token, block in drafts)
        + "."
    )
    return Figure(name, finish(fig, name), alt, caption)


@figure
def tree_vs_chain(
    name: str,
    tree: Sequence[Number],
    chains: Sequence[tuple[str, Sequence[Number], Sequence[Number]]],
) -> Figure:
    """The best token tree's expected accepted tokens against its number of nodes n (the n most probable target
    prefixes), beside each draft's K-proposal chain (K nodes) checked token by token and as a block. The canvas
    grows with the legend (one line per series), so the plot keeps its height however many drafts there are."""
    from matplotlib.ticker import MaxNLocator

    fig = canvas(3.0 + 0.22 * (1 + 2 * len(chains)))
    ax = fig.add_subplot()
    ns = list(range(1, len(tree) + 1))
    handles = ax.step(ns, [float(x) for x in tree], where="post", color=INK, linewidth=1.8)
    ax.plot(ns, [float(x) for x in tree], color=INK, marker="o", markersize=3, linestyle="none")
    labels = ["best tree of n nodes (fixed guesses)"]
    top = max(float(x) for x in tree)
    for i, (label, token, block) in enumerate(chains):
        ks = list(range(1, len(token) + 1))
        handles += ax.plot(ks, [float(x) for x in token], **_series_style(i, False))
        handles += ax.plot(ks, [float(x) for x in block], **_series_style(i, True))
        labels += [f"{label} chain, token by token", f"{label} chain, as a block"]
        top = max(top, *(float(x) for x in block))
    ax.set_xlim(0.5, ns[-1] + 0.5)
    ax.set_ylim(0, top * 1.12)
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.set_xlabel("nodes verified in one pass")
    ax.set_ylabel("expected accepted tokens")
    heading(fig, "A tree of guesses against a sampled chain", handles, labels, most=1)
    k = len(chains[0][1]) if chains else 0
    at_k = float(tree[min(k, len(tree)) - 1]) if k else 0.0  # a tree cannot have more nodes than there are
    alt = (
        f"Step chart of the best token tree's expected accepted tokens against its number of nodes, from "
        f"{decimal(tree[0])} with one node to {decimal(tree[-1])} with {len(tree)}. Beside it, each draft's chain "
        f"of 1 to {k} sampled proposals: "
        + and_(
            [
                f"{label} reaches {decimal(token[-1])} token by token and {decimal(block[-1])} as a block"
                for label, token, block in chains
            ]
        )
        + f", against {decimal(at_k)} for the best tree of {k} nodes."
    )
    caption = (
        f"The best tree of n fixed guesses keeps {Fraction(tree[0])} token in expectation with one node and "
        f"{Fraction(tree[-1])} with {len(tree)}"
        + (
            f"; with {k} nodes, {Fraction(tree[min(k, len(tree)) - 1])}, beside a sampled chain of {k} proposals."
            if k
            else "."
        )
    )
    return Figure(name, finish(fig, name), alt, caption)
