"""Charts for the explainer: numbers in, an SVG with its alt text and caption out.

Each function draws one chart from numbers the engine already computed and writes the alt text
and caption from those same numbers, so what a screen-reader user hears cannot drift from what
the picture shows. Nothing here knows about templates, pages or files.

Drawn for a phone first. Every figure is WIDTH inches wide (331.2 SVG user units) and every text in
it is at least MIN_FONT units, so in the 340-360 CSS px a 390 px wide phone gives a figure each
text renders at 11 px or more; wider screens show the same drawing larger. Geometry is explicit:
margins come from the measured sizes of the labels each chart actually has (DejaVu Sans's advance
widths, see svgchart.py), so a layout is cheap, the same on every machine and never collapses however
many positions or tokens a profile has. After drawing, the chart's texts are checked and a figure
in which two texts overlap, a text crosses an axis line, covers the marks it sits among, or leaves
the card is refused.

Every SVG is byte-identical from run to run and machine to machine (svgchart.py writes it in plain
Python: no plotting library, no font file, no settings), sits on its own rounded card whose colours
palette.dark() swaps for the dark page, keeps its viewBox so CSS can scale it, and never lets colour
alone carry meaning: each Okabe-Ito colour is paired with a hatch, a marker, a line style or a
direct label. All lengths below are SVG user units (1/72 inch), measured down from the top.
"""
from __future__ import annotations

import itertools
import math
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .palette import CARD, CARD_EDGE, FAINT, GREY, INK, MUTED, PALETTE
from .svgchart import Axes, Chart, Fill, Mark, Scale, multiples, nice_ticks, text_box

Number = float | int | Fraction


@dataclass(frozen=True)
class Figure:
    name: str  # file stem, e.g. "profile-aligned"
    svg: str
    alt: str
    caption: str


class Collision(ValueError):
    """Two texts of a drawn figure overlap, or a text crosses what it must not; the message names both."""


WIDTH = 4.6  # inches = 331.2 SVG user units, about the phone column's CSS width
W = WIDTH * 72
FONT = 11.0  # SVG user units; the smallest size any text is set in
MIN_FONT = FONT
TITLE = 12.0
INSET = 8.64  # between the card's edge and anything drawn
GAP = 5.76  # between two bands (title, legend, plot)
TICK_LENGTH = 3.5
TICK = 7.0  # tick length plus its pad
LABELPAD = 4.0

HATCHES = ("", "///", "\\\\\\", "xx", "---", "|||", "++")  # line hatches, as dense as matplotlib's
MARKERS = ("o", "s", "^", "D", "v", "P", "X")

TARGET_COLOUR = PALETTE[0]
DRAFT_COLOUR = PALETTE[1]


# --- measuring text -----------------------------------------------------------------------------


def text_size(text: str, size: float = FONT) -> tuple[float, float]:
    """Width and height in user units of a text as the SVG sets it (DejaVu Sans)."""
    return text_box(str(text), size)


def _wrap(text: str, width: float, size: float = FONT) -> str:
    """Break a text at spaces so that no line is wider than width; a no-break space holds its
    neighbours together ("c = 1/10") and becomes a plain space in the figure."""
    lines: list[str] = []
    for word in str(text).split(" "):
        if lines and text_size(f"{lines[-1]} {word}", size)[0] <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines).replace("\u00a0", " ")


def _widest(labels: Sequence[str], size: float = FONT) -> float:
    return max((text_size(s, size)[0] for s in labels), default=0.0)


def _tallest(labels: Sequence[str], size: float = FONT) -> float:
    return max((text_size(s, size)[1] for s in labels), default=0.0)


def _every(labels: Sequence[str], width: float) -> int:
    """The smallest stride s such that every s-th of these evenly spaced labels stands clear in width units."""
    n = len(labels)
    if n < 2:
        return 1
    need = max((text_size(a)[0] + text_size(b)[0]) / 2 for a, b in itertools.pairwise(labels)) + 4
    return max(1, math.ceil(need / (width / n)))


# --- geometry -----------------------------------------------------------------------------------


Ticks = Sequence[tuple[float, str]]  # (value, label) pairs; an empty label draws the mark alone


def _legend_shape(labels: Sequence[str], width: float, handle: float = 2.0) -> tuple[int, float]:
    """How many columns fit in width, and the height the legend then takes.

    n entries in cols columns go n // cols to a column and one more to each of the first n % cols,
    not ceil(n / cols) to every column but the last: 5 entries in 4 columns are 2+1+1+1."""
    em = FONT
    entry = [(handle + 0.6) * em + text_size(s)[0] for s in labels]
    n = len(labels)
    for cols in range(min(n, 4), 0, -1):
        sizes = [n // cols + (c < n % cols) for c in range(cols)]
        starts = list(itertools.accumulate(sizes, initial=0))
        widths = [max(entry[starts[c]:starts[c + 1]]) for c in range(cols)]
        if sum(widths) + (cols - 1) * 1.2 * em <= width:
            break
    rows = math.ceil(n / cols)
    tall = max(text_size(s)[1] for s in labels) if labels else 0
    return cols, rows * tall + (rows - 1) * 0.5 * em


def _head(chart: Chart, title: str | None, note: str | None = None,
          legend: Sequence[tuple[object, str]] | None = None, handle: float = 2.0, draw: bool = True) -> float:
    """The title, note and legend bands from the top; returns where the next band starts."""
    top = INSET
    if title:
        title = _wrap(title, W - 2 * INSET, TITLE)
        if draw:
            chart.text(INSET, top, title, TITLE)
        top += text_size(title, TITLE)[1] + GAP
    if note:
        note = _wrap(note, W - 2 * INSET)
        if draw:
            chart.text(INSET, top, note, FONT, colour=MUTED)
        top += text_size(note)[1] + GAP
    if legend:
        cols, tall = _legend_shape([label for _, label in legend], W - 2 * INSET, handle)
        if draw:
            chart.legend(legend, INSET, top, cols, FONT, handle)
        top += tall + GAP
    return top


def _frame(ax: Axes, xticks: Ticks, yticks: Ticks, *, grid: str | None = "y", xtick_length: float = TICK_LENGTH,
           upright: bool = False, xlabels: bool = True, ylabels: bool = True) -> None:
    """Grid lines under the marks, tick marks and labels, and the axis lines."""
    xs, ys = [v for v, _ in xticks if ax.x.holds(v)], [v for v, _ in yticks if ax.y.holds(v)]
    if grid in ("x", "both"):
        ax.grid("x", xs, FAINT)
    if grid in ("y", "both"):
        ax.grid("y", ys, FAINT)
    ax.ticks("x", xs, [s for v, s in xticks if ax.x.holds(v)] if xlabels else None, FONT, length=xtick_length,
             upright=upright)
    if "left" in ax.spines:
        ax.ticks("y", ys, [s for v, s in yticks if ax.y.holds(v)] if ylabels else None, FONT)
    ax.draw_spines()


def _single(name: str, x: Scale, y: Scale, xticks: Ticks, yticks: Ticks, *, xlabel: str = "", ylabel: str = "",
            title: str | None = None, note: str | None = None, legend: Sequence[tuple[object, str]] | None = None,
            plot_height: float = 151.2, legend_handle: float = 2.0, grid: str | None = "y",
            xtick_length: float = TICK_LENGTH, spines: tuple[str, ...] = ("left", "bottom")) -> tuple[Chart, Axes]:
    """One plot area under a title, an optional note and a legend band, its margins measured from its own labels."""
    shown_y = [s for v, s in yticks if y.holds(v)] if "left" in spines else []
    shown_x = [s for v, s in xticks if x.holds(v)]
    left = INSET + (text_size(ylabel)[1] + LABELPAD if ylabel else 0) + _widest(shown_y) + TICK
    right = INSET + max(_widest(shown_x[-1:]) / 2, 3.6)
    probe = Chart(W, 0, name)
    top = _head(probe, title, note, legend, legend_handle, draw=False) + FONT / 2  # the top y label reaches half a line up
    ticks_band = _tallest(shown_x) + xtick_length + TICK - TICK_LENGTH if shown_x else 0  # marks, pad and labels
    below = ticks_band + (text_size(xlabel)[1] + LABELPAD if xlabel else 0)
    chart = Chart(W, top + plot_height + below + INSET, name)
    _head(chart, title, note, legend, legend_handle)
    ax = chart.add_axes(left, top, W - left - right, plot_height, x, y)
    ax.spines = spines
    _frame(ax, xticks, yticks, grid=grid, xtick_length=xtick_length)
    if xlabel:
        chart.text((ax.box[0] + ax.box[2]) / 2, ax.box[3] + ticks_band + LABELPAD, xlabel, FONT, ha="center")
    if ylabel:
        _ylabel(ax, ylabel, left - TICK - _widest(shown_y) - LABELPAD)
    return chart, ax


def _grid(chart: Chart, panels: int, cols: int, *, left: float, panel_height: float, top: float,
          title_height: float, bottom_band: float, hspace: float, wspace: float = 8.64
          ) -> list[tuple[float, float, float, float]]:
    """Where panels plot areas go in a grid of cols columns below top: (x0, y0, width, height) each."""
    width = (W - left - INSET - (cols - 1) * wspace) / cols
    out = []
    for i in range(panels):
        r, c = divmod(i, cols)
        y = top + r * (title_height + panel_height + bottom_band + hspace) + title_height
        out.append((left + c * (width + wspace), y, width, panel_height))
    return out


def _grid_height(panels: int, cols: int, *, panel_height: float, top: float, title_height: float,
                 bottom_band: float, hspace: float) -> float:
    rows = math.ceil(panels / cols)
    return top + rows * (title_height + panel_height + bottom_band) + (rows - 1) * hspace + INSET


def _ylabel(ax: Axes, text: str, right: float) -> None:
    """An axis title turned upright, its right edge at right, centred on the plot area's height."""
    ax.chart.text(right, (ax.box[1] + ax.box[3]) / 2, text, FONT, ha="right", va="center", upright=True)


def _series_fill(i: int) -> Fill:
    """The i-th series' bars: its colour, and its hatch (outlined in ink) from the second series on."""
    colour, hatch = PALETTE[i % len(PALETTE)], HATCHES[i % len(HATCHES)]
    return Fill(colour, INK if hatch else colour, 0.5, hatch)


def _panel_title(ax: Axes, text: str) -> None:
    ax.chart.text((ax.box[0] + ax.box[2]) / 2, ax.box[1] - 4, text, FONT, ha="center", va="bottom")


def _finish(chart: Chart) -> str:
    """Check the drawn chart's texts and return its SVG."""
    problems = chart.collisions()
    if problems:
        raise Collision(f"{chart.name}: {problems[0]}")
    return chart.svg(CARD, CARD_EDGE)


def _render(name: str, draw: Callable[[Chart], None], height: float = 216.0) -> str:
    """Draw on a fresh chart WIDTH inches wide, check it and return its SVG (tests plant collisions this way)."""
    chart = Chart(W, height, name)
    draw(chart)
    return _finish(chart)


def on_data(text):
    """Mark a text as meant to sit on the marks of its axes (a label on a bar, say): the check lets it."""
    text.on_data = True
    return text


# --- words --------------------------------------------------------------------------------------


def _exact(x: Number) -> str:
    """A number as the data states it: 3/8 stays 3/8; anything long or inexact gets three figures."""
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    if isinstance(x, Fraction) and x.denominator <= 64:
        return str(x)
    return f"{float(x):.3g}"


def _pct(x: Number) -> str:
    return f"{100 * float(x):.1f}%"


def _signed(x: float) -> str:
    return f"{x:.2f}".replace("-", "\u2212")


def _count(n: int) -> str:
    return f"{int(n):,}"


def _tokens(n: int) -> str:
    return f"{_count(n)} token" + ("" if n == 1 else "s")


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _places(labels: Sequence[str]) -> str:
    labels = list(labels)
    if all(str(lab).isdigit() for lab in labels):
        return ("positions " if len(labels) > 1 else "position ") + _and([str(lab) for lab in labels])
    return _and([str(lab) for lab in labels])


def _q(token: str) -> str:
    return f"\u201c{token}\u201d"


def _short_count(n: float, _pos=None) -> str:
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= size:
            v = n / size
            return f"{v:g}{suffix}"
    return f"{n:g}"


def _argmax(values: Sequence[float]) -> int:
    """The index of the largest value, the first of equals."""
    return max(range(len(values)), key=values.__getitem__)


def _token_index(p: int | str, tokens: Sequence[str]) -> int:
    return tokens.index(p) if isinstance(p, str) else int(p)



# --- panels of bars, one per position -----------------------------------------------------------

WSPACE = 8.64  # between two panels side by side


def _panel_layout(tokens: Sequence[str], panels: int, ylabel: str, ytick_width: float) -> tuple[int, bool, float]:
    """Columns for a grid of small bar charts over tokens, whether their token labels must turn upright,
    and the left margin: as many columns as let neighbouring token labels stand clear, at most three."""
    left = INSET + (text_size(ylabel)[1] + LABELPAD if ylabel else 0) + ytick_width + TICK
    n = len(tokens)
    need = max(((text_size(a)[0] + text_size(b)[0]) / 2 for a, b in itertools.pairwise(tokens)), default=0) + 4
    for cols in (3, 2, 1):
        if cols > panels:
            continue
        width = (W - left - INSET - (cols - 1) * WSPACE) / cols
        if width / n >= need:
            return cols, False, left
    upright = text_size("Tg")[1] + 2  # turned a quarter, a label needs only a line's height
    for cols in (3, 2, 1):
        width = (W - left - INSET - (cols - 1) * WSPACE) / cols
        if cols <= panels and width / n >= upright:
            return cols, True, left
    return 1, True, left


def _probability_ticks(ymax: float, top: float) -> list[tuple[float, str]]:
    """Ticks for an axis running from 0 to ymax: every 0.5 up to a top of 1.2, else three round steps."""
    values = multiples(0, ymax, 0.5) if top <= 1.2 else nice_ticks(0, ymax, 3)
    return [(v, f"{v:g}") for v in values if -1e-9 <= v <= ymax * (1 + 1e-9)]


def _token_panel(chart: Chart, box, tokens: Sequence[str], ymax: float, yticks, upright: bool, *,
                 ylabel: str | None, ylabel_x: float) -> Axes:
    """One small panel over the tokens: token labels under it, probability ticks, a grid under the bars."""
    ax = chart.add_axes(*box, Scale(-0.6, len(tokens) - 0.4), Scale(0, ymax))
    xticks = [(i, t) for i, t in enumerate(tokens)]
    ax.grid("y", [v for v, _ in yticks], FAINT)
    ax.ticks("x", [v for v, _ in xticks], [t for _, t in xticks], FONT, length=0, pad=3, upright=upright)
    ax.ticks("y", [v for v, _ in yticks], [s for _, s in yticks] if ylabel else None, FONT)
    ax.draw_spines()
    if ylabel:
        _ylabel(ax, ylabel, ylabel_x)
    return ax


def profile_bars(
    name: str,
    tokens: Sequence[str],
    target_rows: Sequence[Sequence[Number]],
    draft_rows: Sequence[Sequence[Number]],
    proposals: Sequence[int | str],
    title: str,
    accept_probabilities: Sequence[Number],
) -> Figure:
    """One small panel per position, so the reader compares two bars for the same token rather than two curves.

    accept_probabilities are min(1, p/q) of each position's proposal, as the analysis computed them.

    Target bars are filled, draft bars outlined and the proposed token's draft bar hatched and
    marked, so none of the three relies on colour. The bonus position has only the target.
    """
    tokens = list(tokens)
    k = len(draft_rows)
    props = [_token_index(p, tokens) for p in proposals]
    top = max(float(p) for row in (*target_rows, *draft_rows) for p in row)
    ymax = top * 1.5
    w = 0.4
    target = Fill(TARGET_COLOUR)
    draft = Fill(CARD, DRAFT_COLOUR, 1.2)
    proposed = Fill(CARD, DRAFT_COLOUR, 1.2, hatch="////")

    yticks = _probability_ticks(ymax, ymax)
    ytw = _widest([s for _, s in yticks])
    cols, upright, left = _panel_layout(tokens, k + 1, "probability", ytw)
    xband = (_widest(tokens) if upright else _tallest(tokens)) + 3
    legend = [(target, "target"), (draft, "draft"), (proposed, "draft's proposal \u25bc")]
    probe = Chart(W, 0, name)
    head = _head(probe, title, legend=legend, handle=1.6, draw=False)
    shape = dict(panel_height=75.6, top=head, title_height=text_size("p")[1] + 4, bottom_band=xband, hspace=7.2)
    chart = Chart(W, _grid_height(k + 1, cols, **shape), name)
    _head(chart, title, legend=legend, handle=1.6)
    for i, box in enumerate(_grid(chart, k + 1, cols, left=left, **shape)):
        t = [float(p) for p in target_rows[i]]
        ax = _token_panel(chart, box, tokens, ymax, yticks, upright, ylabel="probability" if i % cols == 0 else None,
                          ylabel_x=left - TICK - ytw - LABELPAD)
        if i == k:
            for j, v in enumerate(t):
                ax.bar(j, v, 2 * w, target)
            _panel_title(ax, f"bonus (position {k + 1})")
            continue
        d = [float(p) for p in draft_rows[i]]
        p = props[i]
        for j in range(len(tokens)):
            ax.bar(j - w / 2, t[j], w, target)
            ax.bar(j + w / 2, d[j], w, proposed if j == p else draft)
        # The word spans about two slots: centred over the bar, or flush with the panel's edge near it.
        per_unit = (len(tokens) + 0.2) / ax.width  # x data units per user unit
        half = text_size("proposal")[0] / 2 * per_unit
        cx = min(max(p + w / 2, -0.55 + half), len(tokens) - 0.45 - half)
        near = [max(t[j], d[j]) for j in range(len(tokens)) if cx - half - 0.5 < j < cx + half + 0.5]
        y = max(near) + 0.04 * ymax
        ax.plot([p + w / 2], [y + 0.03 * ymax], Mark(INK, marker="v", size=5, line=False), z=3)
        ax.text(cx, y + 0.08 * ymax, "proposal", FONT, ha="center", va="bottom")
        _panel_title(ax, f"position {i + 1}")

    svg = _finish(chart)

    said = []
    sure, never = [], []
    for i, p in enumerate(props):
        t, d, a = target_rows[i][p], draft_rows[i][p], accept_probabilities[i]
        if a == 1:
            verdict = "so it is always accepted"
            sure.append(i + 1)
        elif a == 0:
            verdict = "so it is always rejected"
            never.append(i + 1)
        else:
            verdict = f"so it is accepted with probability {_exact(a)}"
        said.append(
            f"position {i + 1}: the draft proposes {_q(tokens[p])}, which it gives {_exact(d)} "
            f"and the target {_exact(t)}, {verdict}"
        )
    bonus = target_rows[k]
    best = max(range(len(tokens)), key=lambda j: (float(bonus[j]), -j))
    alt = (
        f"{title}. One small bar chart per position comparing the target's and the draft's "
        f"probabilities for the tokens {_and([_q(t) for t in tokens])}. "
        + "; ".join(s[0].upper() + s[1:] for s in said)
        + f". Bonus position {k + 1} shows the target alone; its most likely token is "
        f"{_q(tokens[best])} at {_exact(bonus[best])}."
    )
    certain = (
        f"{'All' if len(sure) == k else f'{len(sure)} of the'} {k} proposals (positions {_and([str(s) for s in sure])}) get at least as much "
        "probability from the target as from the draft, so they are accepted for certain"
        if sure else "No proposal is accepted for certain"
    )
    if never:
        certain += f"; the target never produces the proposal at position {_and([str(n) for n in never])}"
    caption = (
        "Filled bars are the target, outlined bars the draft, and the hatched bar the token the draft "
        f"proposed. {certain}."
    )
    return Figure(name, svg, alt, caption)


# --- 2. the sampler's output against the target -------------------------------------------------


def convergence_histograms(
    name: str,
    tokens: Sequence[str],
    position_labels: Sequence[str],
    target_rows: Sequence[Sequence[Number]],
    frequencies: Sequence[Sequence[Number]],
    samples: int | Sequence[int],
    title: str,
) -> Figure:
    """Bars for what the sampler committed, a marker for what the target says: agreement is a bar touching its marker."""
    tokens = list(tokens)
    m = len(position_labels)
    counts = [int(s) for s in samples] if isinstance(samples, Sequence) else [int(samples)] * m
    top = max(float(v) for row in (*target_rows, *frequencies) for v in row)
    observed = Fill(PALETTE[5], PALETTE[0], 0.8)
    expected = Mark(INK, marker="_", size=12, edge_width=2.2, line=False)

    ymax = top * 1.12
    yticks = _probability_ticks(ymax, top)
    ytw = _widest([s for _, s in yticks])
    cols, upright, left = _panel_layout(tokens, m, "share", ytw)
    width = (W - left - INSET - (cols - 1) * WSPACE) / cols
    heads = [f"{lab}, n = {_count(c)}" for lab, c in zip(position_labels, counts)]
    if _widest(heads) > width - WSPACE:  # neighbouring titles would all but touch: two lines each
        heads = [f"{lab}\nn = {_count(c)}" for lab, c in zip(position_labels, counts)]
    xband = (_widest(tokens) if upright else _tallest(tokens)) + 3
    legend = [(observed, "observed frequency"), (expected, "target probability")]
    head = _head(Chart(W, 0, name), title, legend=legend, draw=False)
    shape = dict(panel_height=75.6, top=head, title_height=_tallest(heads) + 4, bottom_band=xband, hspace=7.2)
    chart = Chart(W, _grid_height(m, cols, **shape), name)
    _head(chart, title, legend=legend)
    for i, box in enumerate(_grid(chart, m, cols, left=left, **shape)):
        ax = _token_panel(chart, box, tokens, ymax, yticks, upright, ylabel="share" if i % cols == 0 else None,
                          ylabel_x=left - TICK - ytw - LABELPAD)
        for j, v in enumerate(frequencies[i]):
            ax.bar(j, float(v), 0.62, observed)
        ax.plot(range(len(tokens)), [float(v) for v in target_rows[i]], expected, z=3)
        _panel_title(ax, heads[i])

    svg = _finish(chart)

    gaps = []
    parts = []
    for i in range(m):
        diffs = [abs(float(f) - float(t)) for f, t in zip(frequencies[i], target_rows[i])]
        j = _argmax(diffs)
        gaps.append((diffs[j], i, j))
        likely = max(range(len(tokens)), key=lambda a: (float(target_rows[i][a]), -a))
        parts.append(
            f"{position_labels[i]} ({_count(counts[i])} rounds): {_q(tokens[likely])} observed "
            f"{float(frequencies[i][likely]):.3f} against target {_exact(target_rows[i][likely])}, "
            f"largest gap {diffs[j]:.4f}"
        )
    worst, wi, wj = max(gaps)
    alt = (
        f"{title}. For each position, bars give the share of simulated rounds that committed each token "
        "and markers the target probability. " + "; ".join(parts) + "."
    )
    caption = (
        f"Bars: how often each token was committed among the rounds that reached that position "
        f"(n rounds, given above each panel); markers: the target's probability. The largest gap anywhere is {worst:.4f} "
        f"({position_labels[wi]}, {_q(tokens[wj])})."
    )
    return Figure(name, svg, alt, caption)



# --- 3. how fast the Monte Carlo error shrinks --------------------------------------------------

MANY = 6  # more series than this are drawn as small multiples, one highlighted per panel


def _log_decades(lo: float, hi: float, most: int) -> list[float]:
    """Powers of ten covering [lo, hi], every second or third one when more than most would crowd."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    decades = [10.0 ** e for e in range(first, last + 1) if lo <= 10.0 ** e <= hi]
    stride = max(1, math.ceil(len(decades) / most))
    return decades[::stride] or [10.0 ** round(math.log10(math.sqrt(lo * hi)))]


def _geomspace(lo: float, hi: float, n: int) -> list[float]:
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


def error_vs_samples(
    name: str,
    series: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    title: str,
    slope: float | None = None,
) -> Figure:
    """Log-log, so 1/sqrt(n) is a straight line the reader can hold each curve against.

    slope is the curves' mean fitted log-log slope, as the analysis computed it; None leaves it unsaid.

    Up to MANY series share one chart; more are drawn as small multiples, each panel showing one
    series in colour over the others in grey, so a reader can follow every line.
    """
    clean = [
        (label, [(int(n), float(e)) for n, e in points if n > 0 and float(e) > 0])
        for label, points in series
    ]
    everything = [pt for _, pts in clean for pt in pts]
    if not everything:
        raise ValueError("error_vs_samples needs at least one positive (samples, error) point")
    scale = statistics.median([e * math.sqrt(n) for n, e in everything])
    lo = min(n for n, _ in everything)
    hi = max(n for n, _ in everything)
    lo_e = min(min(e for _, e in everything), scale / math.sqrt(hi))
    hi_e = max(max(e for _, e in everything), scale / math.sqrt(lo))
    guide_n = _geomspace(lo, hi, 12)
    guide_e = [scale / math.sqrt(n) for n in guide_n]
    drawn = [(label, pts) for label, pts in clean if pts]
    x = Scale(lo / 1.6, hi * 1.6, log=True)
    y = Scale(lo_e / 1.6, hi_e * 1.6, log=True)

    def ticks(scale_: Scale, most: int, label: Callable[[float], str]) -> list[tuple[float, str]]:
        return [(v, label(v)) for v in _log_decades(scale_.lo, scale_.hi, most)]

    def single() -> Chart:
        guide = Mark(MUTED, width=1.4, dash=(5, 3))
        marks = []
        for i, _ in enumerate(drawn):
            lap = i // len(PALETTE)  # past the palette, a new marker and line style keep curves apart
            marks.append(Mark(PALETTE[i % len(PALETTE)], width=1.3, dash=(None, (4, 2), (1, 1.5))[lap % 3],
                              marker=MARKERS[(i + lap) % len(MARKERS)], size=5))
        legend = [(guide, "1/\u221an guide")] + [(mark, label) for mark, (label, _) in zip(marks, drawn)]
        chart, ax = _single(name, x, y, ticks(x, 4, _short_count), ticks(y, 4, lambda v: f"{v:g}"),
                            xlabel="samples n (log scale)", ylabel="total variation (log scale)", title=title,
                            legend=legend, plot_height=158.4, legend_handle=2.2, grid="both")
        ax.plot(guide_n, guide_e, guide, z=1)
        for mark, (_, pts) in zip(marks, drawn):
            ax.plot([n for n, _ in pts], [e for _, e in pts], mark)
        return chart

    def small_multiples() -> Chart:
        cols = 3
        yticks = ticks(y, 3, lambda v: f"{v:g}")
        xticks = ticks(x, 2, _short_count)
        ytw = _widest([s for _, s in yticks])
        xth = _tallest([s for _, s in xticks])
        left = INSET + text_size("t")[1] + LABELPAD + ytw + TICK
        note = "colour: the panel's profile; grey: the others; dashed: 1/\u221an"
        head = _head(Chart(W, 0, name), title, note, draw=False)
        shape = dict(panel_height=61.2, top=head, title_height=text_size("p")[1] + 4, bottom_band=0.0, hspace=4.32)
        bottom = xth + TICK + text_size("n")[1] + LABELPAD
        chart = Chart(W, _grid_height(len(drawn), cols, **shape) + bottom, name)
        _head(chart, title, note)
        rows = math.ceil(len(drawn) / cols)
        guide = Mark(MUTED, width=1.1, dash=(5, 3))
        others = Mark(GREY, width=0.8)
        own = Mark(PALETTE[0], width=1.6, marker="o", size=3.5)
        boxes = _grid(chart, len(drawn), cols, left=left, wspace=7.2, **shape)
        for i, (box, (label, pts)) in enumerate(zip(boxes, drawn)):
            r, c = divmod(i, cols)
            below = i + cols < len(drawn)
            ax = chart.add_axes(*box, x, y)
            _frame(ax, xticks, yticks, grid="both", xlabels=not below, ylabels=c == 0)
            ax.plot(guide_n, guide_e, guide, z=1)
            for other, opts in drawn:
                if other != label:
                    ax.plot([n for n, _ in opts], [e for _, e in opts], others)
            ax.plot([n for n, _ in pts], [e for _, e in pts], own, z=3)
            _panel_title(ax, label)
            if c == 0 and r == rows // 2:
                _ylabel(ax, "total variation", left - TICK - ytw - LABELPAD)
            last_row = not below and r == rows - 1
            if last_row and (c == min(cols, len(drawn)) // 2 or len(drawn) % cols and c == (len(drawn) % cols) // 2):
                chart.text((ax.box[0] + ax.box[2]) / 2, ax.box[3] + xth + TICK + LABELPAD, "samples n", FONT,
                           ha="center")
        return chart

    svg = _finish(small_multiples() if len(drawn) > MANY else single())

    described = [
        f"{label}: {pts[0][1]:.3g} at {_count(pts[0][0])} samples down to {pts[-1][1]:.3g} at {_count(pts[-1][0])}"
        for label, pts in clean if pts
    ]
    shape = ("One small panel per series, each highlighting its own line over the others in grey. "
             if len(drawn) > MANY else "")
    alt = (
        f"{title}. {shape}Total variation distance between the observed and the target distribution against the "
        "number of samples, both axes logarithmic, with a dashed guide line falling as 1 over the square root of n. "
        + "; ".join(described) + "."
    )
    caption = "Each tenfold increase in samples should cut the error by about \u221a10 \u2248 3.2, the dashed 1/\u221an guide."
    if slope is not None:
        caption += f" The fitted log-log slope, averaged over the curves, is {_signed(slope)}, against the guide's \u22120.5."
    return Figure(name, svg, alt, caption)


# --- 4. how many tokens one round commits -------------------------------------------------------


def round_length_distribution(
    name: str,
    series: Sequence[tuple[str, Sequence[Number]]],
    k: int,
    expected: Sequence[Number],
) -> Figure:
    """Grouped bars of P(N = n), with each profile's expected N marked, since the mean is what the speedup uses.

    expected holds each series' E[N], as the analysis computed it.
    """
    m = len(series)
    n_values = list(range(1, k + 2))
    width = 0.8 / m
    means = [float(e) for e in expected]
    top = max(float(p) for _, probs in series for p in probs)
    lane = 0.16 * top
    ymax = top * 1.08 + lane * (m + 0.4)
    fills = [_series_fill(i) for i in range(m)]
    pins = [Mark(PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)], size=7, edge=INK, line=False)
            for i in range(m)]
    labels = [str(n) for n in n_values]
    xticks = [(n, str(n)) for n in n_values[::_every(labels, 244.8)]]
    yticks = [(v, f"{v:.0%}") for v in nice_ticks(0, top, 4) if 0 <= v <= top * 1.1]
    chart, ax = _single(
        name, Scale(0.4, k + 1.6), Scale(0, ymax), xticks, yticks,
        xlabel=_wrap(f"tokens committed in one round, N (k = {k} proposals; N = {k + 1}: all accepted plus the bonus)",
                     280.8),
        ylabel="probability", xtick_length=0,
        legend=[((fill, pin), f"{label}, E[N] = {mu:.2f}") for fill, pin, (label, _), mu in zip(fills, pins, series, means)])
    marks = []
    for i, (_label, probs) in enumerate(series):
        offset = (i - (m - 1) / 2) * width
        for n, p in zip(n_values, probs):
            ax.bar(n + offset, float(p), width * 0.95, fills[i])
        y = ymax - lane * (i + 0.7)
        mu = means[i]
        ax.plot([mu, mu], [0, y], Mark(PALETTE[i % len(PALETTE)], width=1.2, dash=(2, 2)), z=3)
        ax.plot([mu], [y], pins[i], z=4)
        marks.append((mu, y))
    x_lo, x_hi = ax.x.lo, ax.x.hi
    per_unit = (x_hi - x_lo) / ax.width
    for i, (mu, y) in enumerate(marks):
        # To the side where no taller dashed line (an earlier lane) and no axis edge is in the way.
        span = (text_size(f"E[N] = {mu:.2f}")[0] + 14.4) * per_unit
        clear_right = mu + span < x_hi and not any(mu < other < mu + span for other, _ in marks[:i])
        clear_left = mu - span > x_lo and not any(mu - span < other < mu for other, _ in marks[:i])
        if not (clear_right or clear_left):
            continue  # no room beside the mark; the legend already gives this E[N]
        right = clear_right if clear_right != clear_left else mu < (x_lo + x_hi) / 2
        ax.text(mu, y, f"E[N] = {mu:.2f}", FONT, dx=7 if right else -7, ha="left" if right else "right",
                va="center", z=5)

    svg = _finish(chart)

    described = [
        f"{label}: " + ", ".join(f"N = {n}: {_pct(p)}" for n, p in zip(n_values, probs))
        + f"; expected {mu:.2f} tokens"
        for (label, probs), mu in zip(series, means)
    ]
    alt = (
        f"Bar chart of the number of tokens N one round commits, from 1 to {k + 1} (k = {k} proposals, "
        f"N = {k + 1} when every proposal is accepted and the bonus is drawn), for each draft. "
        + ". ".join(described) + "."
    )
    most = [
        f"{label[:1].lower() + label[1:]} most often commits {n_values[_argmax([float(p) for p in probs])]} "
        f"and expects {mu:.2f}"
        for (label, probs), mu in zip(series, means)
    ]
    caption = (
        f"With k = {k} proposals a round commits between 1 and {k + 1} tokens; {'; '.join(most)}. "
        "Dashed lines with markers show each draft's expected tokens per round."
    )
    return Figure(name, svg, alt, caption)


# --- 5. speedup against draft length ------------------------------------------------------------


def speedup_vs_k(
    name: str,
    curves: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    best: Sequence[tuple[str, int, Number]],
    cost: Number | None = None,
) -> Figure:
    """Each curve rises while another draft token is likely to be kept and falls once it mostly costs; the star is the turn.

    cost is the draft's cost per token as a fraction of a target step (c); the title names it.
    """
    colours = {label: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]) for i, (label, _) in enumerate(curves)}
    ks = sorted({int(kk) for _, pts in curves for kk, _ in pts})
    values = [float(s) for _, pts in curves for _, s in pts] + [1.0]
    best_of = {label: (kk, s) for label, kk, s in best}
    heading = "Speedup against draft length K" + (f" at draft cost c\u00a0=\u00a0{_exact(cost)}" if cost is not None else "")

    lo, hi = min(values), max(values)
    y = Scale(min(0.8, lo - 0.1), hi + 0.12 * (hi - min(lo, 1)))
    x = Scale(ks[0] - 0.5, ks[-1] + 0.5)
    flat = Mark(MUTED, width=1.2, dash=(5, 3))
    lines = {label: Mark(colours[label][0], width=1.5, marker=colours[label][1], size=4.5) for label, _ in curves}
    legend = [(lines[label], f"{label}, best K = {best_of[label][0]}" if label in best_of else label)
              for label, _ in curves]
    legend += [(Mark(MUTED, marker="*", size=12, edge=INK, line=False), "best K"), (flat, "no gain (1\u00d7)")]
    xticks = [(kk, str(kk)) for kk in ks[::_every([str(kk) for kk in ks], 259.2)]]
    yticks = [(v, f"{v:g}\u00d7") for v in nice_ticks(y.lo, y.hi, 5)]
    chart, ax = _single(name, x, y, xticks, yticks, xlabel="draft length K", ylabel="speedup \u00d7", title=heading,
                        legend=legend)
    ax.plot([x.lo, x.hi], [1, 1], flat, z=1)
    for label, pts in curves:
        ax.plot([int(kk) for kk, _ in pts], [float(s) for _, s in pts], lines[label])
    for label, kk, s in best:
        colour = colours.get(label, (INK, "o"))[0]
        ax.plot([kk], [float(s)], Mark(colour, marker="*", size=14, edge=INK, edge_width=0.8, line=False), z=4)

    svg = _finish(chart)

    described = []
    for label, pts in curves:
        first, last = pts[0], pts[-1]
        text = f"{label}: {float(first[1]):.2f}\u00d7 at K = {first[0]}"
        if label in best_of:
            kk, s = best_of[label]
            text += f", best {float(s):.2f}\u00d7 at K = {kk}"
        text += f", {float(last[1]):.2f}\u00d7 at K = {last[0]}"
        below = [int(kk) for kk, s in pts if float(s) < 1]
        if below:
            text += f" (below 1\u00d7 from K = {below[0]})"
        described.append(text)
    at_cost = f" at draft cost c = {_exact(cost)} (one draft token costs {_exact(cost)} of a target step)" if cost is not None else ""
    alt = (
        f"Line chart of speedup over plain decoding against draft length K{at_cost}, one line per draft quality, "
        "with a star at each line's best K and a dashed line at 1\u00d7 meaning no gain. " + "; ".join(described) + "."
    )
    ordered = sorted(best, key=lambda b: (b[1], float(b[2])))
    if ordered:
        first, last = ordered[0], ordered[-1]
        span = (f"The best draft length runs from K = {first[1]} ({first[0]}, {float(first[2]):.2f}\u00d7) "
                f"to K = {last[1]} ({last[0]}, {float(last[2]):.2f}\u00d7)")
    else:
        span = "Speedup against draft length"
    if cost is not None:
        span = f"At draft cost c = {_exact(cost)}: {span[:1].lower()}{span[1:]}"
    caption = f"{span}."  # why the curves peak, the page says once, not under each of its figures
    return Figure(name, svg, alt, caption)


# --- 6. why verifying several positions costs about as much as one ------------------------------


def _log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times each power of ten inside [lo, hi]; only the powers of ten when those would be more than eight."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    every = [m * 10.0 ** e for e in decades for m in (1, 2, 5) if lo <= m * 10.0 ** e <= hi]
    return every if len(every) <= 8 else [10.0 ** e for e in decades if lo <= 10.0 ** e <= hi]


def roofline(
    name: str,
    positions: Sequence[int],
    times_ms: Sequence[Number],
    memory_ms: Number | Sequence[Number],
    compute_ms: Number | Sequence[Number],
    model_label: str,
    knee: Number | None = None,
    draft_positions: int | None = None,
    draft_ms: Number | None = None,
) -> Figure:
    """A cost model, drawn so it cannot be mistaken for a benchmark: the words 'model' and 'not a measurement' are on it.

    memory_ms is the weight-reading floor (one number or one per position); compute_ms is either
    the compute time per scored position (one number, giving a straight slope) or one per position.
    knee is where compute overtakes memory, as the analysis computed it; None draws no knee.
    """
    pos = [int(p) for p in positions]
    times = [float(t) for t in times_ms]
    floor = [float(v) for v in memory_ms] if isinstance(memory_ms, Sequence) else [float(memory_ms)] * len(pos)
    slope = ([float(v) for v in compute_ms] if isinstance(compute_ms, Sequence)
             else [float(compute_ms) * p for p in pos])
    crossing = None if knee is None else float(knee)
    flat = max(i for i, t in enumerate(times) if t <= 1.1 * times[0])

    memory = Mark(PALETTE[0], width=1.4, dash=(5, 3))
    compute = Mark(PALETTE[1], width=1.8, dash=(1.5, 2))
    modelled = Mark(INK, width=1.8, marker="o", size=4)
    x = Scale(pos[0] / 1.3, pos[-1] * 1.3, log=True)
    y = Scale(min(times + floor) / 1.6, max(times + slope) * 1.4, log=True)
    powers = [p for p in (2 ** e for e in range(24)) if pos[0] <= p <= pos[-1]]
    xticks = [(p, f"{p:g}") for p in powers[::_every([f"{p:g}" for p in powers], 259.2)]]
    yticks = [(v, f"{v:g}") for v in _log_ticks(y.lo, y.hi)]
    chart, ax = _single(name, x, y, xticks, yticks, xlabel="positions scored in one forward pass (log scale)",
                        ylabel="time per pass, ms (log)", title="Time per forward pass (a cost model)",
                        note=f"A model, not a measurement: {model_label}",
                        legend=[(memory, "memory floor"), (compute, "compute slope"), (modelled, "modelled time")],
                        legend_handle=2.4, grid="both")
    ax.plot(pos, floor, memory)
    ax.plot(pos, slope, compute)
    ax.plot(pos, times, modelled)
    if crossing is not None and pos[0] <= crossing <= pos[-1]:
        ax.plot([crossing, crossing], [y.lo, y.hi], Mark(MUTED, width=0.9, dash=(1, 1.65)))
        ax.chart.text(ax.X(crossing) - 5, ax.box[1] + 0.03 * ax.height, f"knee \u2248 {crossing:.0f}", FONT,
                      ha="right", va="top", colour=MUTED, owner=ax)

    svg = _finish(chart)

    knee = f", the knee near {crossing:.0f} positions where compute overtakes memory" if crossing else ""
    alt = (
        f"A model, not a measurement ({model_label}): modelled time per forward pass against the number of "
        f"positions scored, both axes logarithmic, with dashed lines for the memory floor and the compute slope{knee}. "
        f"The time stays within 10% of {times[0]:.3g} ms from {pos[0]} to {pos[flat]} positions, because reading "
        f"the weights dominates, then grows with the positions scored, reaching {times[-1]:.3g} ms at {pos[-1]}."
    )
    ratio = times[flat] / times[0]
    if draft_positions is not None and draft_ms is not None:
        caption = (
            f"A model, not a measurement ({model_label}): checking a draft of K = {draft_positions} tokens in one "
            f"pass takes {float(draft_ms):.2f} ms, "
            + ("as long as" if f"{float(draft_ms):.2f}" == f"{times[0]:.2f}" else "against")
            + f" writing a single token ({times[0]:.2f} ms)"
            + (f"; arithmetic overtakes reading the weights only near {crossing:.0f} positions." if crossing else ".")
        )
    else:
        caption = (
            f"A model, not a measurement: under it ({model_label}), scoring {pos[flat]} positions in one pass "
            f"takes {ratio:.2f}\u00d7 as long as scoring {pos[0]}"
            + (", which is why checking a whole draft costs about one target step." if ratio <= 1.2 else ".")
        )
    return Figure(name, svg, alt, caption)


# --- 7. acceptance rate per position ------------------------------------------------------------


def acceptance_bars(
    name: str,
    labels: Sequence[str],
    rates: Sequence[tuple[str, Sequence[Number]]],
) -> Figure:
    """Grouped bars with their exact values printed on them (where they fit), since the text quotes those same fractions."""
    m = len(rates)
    width = 0.8 / m
    shown = [re.sub(r"^position\s+", "", str(lab)) for lab in labels]  # the axis title says "position"
    fills = [_series_fill(i) for i in range(m)]
    stride = _every(shown, 273.6)
    chart, ax = _single(
        name, Scale(-0.5, len(labels) - 0.5), Scale(0, 1.14), [(i, shown[i]) for i in range(0, len(shown), stride)],
        [(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1)], xlabel="position", ylabel="acceptance rate \u03b1",
        xtick_length=0, legend=[(fill, profile) for fill, (profile, _) in zip(fills, rates)], plot_height=144.0)
    values = [_exact(a) for _, alphas in rates for a in alphas]
    printed = _widest(values) + 2 <= ax.width / len(labels) * width
    for i, (_profile, alphas) in enumerate(rates):
        offset = (i - (m - 1) / 2) * width
        for j, a in enumerate(alphas):
            ax.bar(j + offset, float(a), width * 0.92, fills[i])
            if printed:
                ax.text(j + offset, float(a), _exact(a), FONT, dy=-2, ha="center", va="bottom")

    svg = _finish(chart)

    described = [
        f"{profile}: " + ", ".join(f"{_exact(a)} at {lab}" for lab, a in zip(labels, alphas))
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
        ranges.append(f"{profile[:1].lower() + profile[1:]}: lowest {_exact(lo)} (at {_places(where)}), "
                      f"highest {_exact(max(alphas, key=float))}")
    caption = (
        "Acceptance rate per position, \u03b1 = \u2211 min(p, q): the chance a proposal there is kept. "
        + "; ".join(ranges)[0].upper() + "; ".join(ranges)[1:] + "."
    )
    return Figure(name, svg, alt, caption)


# --- 8. the opening picture: plain decoding against speculative rounds on one clock -------------


def timeline(
    name: str,
    draft_step: Number,
    verify_step: Number,
    round_cost: Number,
    k: int,
    rounds: Sequence[tuple[str, Sequence[str]]],
) -> Figure:
    """Lanes on one wall-clock axis, in target passes: plain decoding on top, then one round of each draft.

    `rounds` holds, per draft, its name and the tokens its worked round commits. A plain pass costs
    `verify_step`; a speculative round is `k` draft steps of `draft_step` and one checking pass of
    `verify_step`, `round_cost` in all. The plain lane runs until it has committed as many tokens as the
    best round, so the reader sees how long plain decoding needs for what one round commits.
    """
    most = max(len(toks) for _, toks in rounds)
    pass_w, step_w, end = float(verify_step), float(draft_step), float(round_cost)
    horizon = pass_w * most
    lanes = 1 + len(rounds)
    block, bar, above = 44.64, 17.28, 4.32  # per lane, the bar's height, the gap between a bar and its label
    plot_height = lanes * block

    def bottom_of(lane: int) -> float:
        return plot_height - (lane + 1) * block + 5.76

    x = Scale(0, horizon)
    chart, ax = _single(name, x, Scale(0, plot_height), [(v, f"{v:g}") for v in multiples(0, horizon, pass_w)], [],
                        xlabel="time, in target passes", plot_height=plot_height, grid="x", spines=("bottom",))
    unit = ax.width / horizon  # user units per target pass
    numbered = text_size(str(most))[0] + 4.32 <= pass_w * unit * 0.94
    plain = Fill(PALETTE[0], INK, 0.5)
    step = Fill(CARD, PALETTE[1], 0.6, hatch="////")
    check = Fill(PALETTE[1], INK, 0.5)
    y = bottom_of(0)
    ax.text(0, y + bar + above, "Plain decoding: one pass per token", FONT, va="bottom")
    for n in range(most):
        ax.rect(n * pass_w, y, pass_w * 0.94, bar, plain)
        if numbered:
            ax.text(n * pass_w + pass_w * 0.47, y + bar / 2, str(n + 1), FONT, ha="center", va="center", colour=CARD,
                    bold=True, on_data=True)
    for lane, (label, toks) in enumerate(rounds, start=1):
        y = bottom_of(lane)
        ax.text(0, y + bar + above, _wrap(f"{label}: one round, {_tokens(len(toks))}", W * 0.8), FONT,
                va="bottom")
        for j in range(k):
            ax.rect(j * step_w, y + bar * 0.15, step_w * 0.86, bar * 0.7, step)
        start = k * step_w
        ax.rect(start, y, pass_w * 0.97, bar, check)
        if text_size("check")[0] + 4.32 <= pass_w * unit * 0.97:
            ax.text(start + pass_w * 0.485, y + bar / 2, "check", FONT, ha="center", va="center", colour=CARD,
                    bold=True, on_data=True)
        ax.plot([end, end], [y, y + bar], Mark(INK, width=1.4), z=3)
        room = (horizon - end - pass_w * 0.12) * unit + (W - ax.box[2]) - INSET
        shown = " ".join(toks)
        for cut in range(len(toks) - 1, 0, -1):  # as many tokens as fit; the caption lists them all
            if text_size(shown)[0] <= room:
                break
            shown = " ".join(toks[:cut]) + " \u2026"
        ax.text(end + pass_w * 0.12, y + bar / 2, shown, FONT, va="center")

    svg = _finish(chart)
    per_round = "; ".join(f"{label} commits {_tokens(len(toks))} ({' '.join(toks)})" for label, toks in rounds)
    alt = (
        f"Timeline in units of one target pass. Top lane, plain decoding: {_count(most)} passes one after another, "
        f"one token each. Below, one lane per draft: {k} short draft steps of {_exact(draft_step)} pass each "
        f"(hatched), then one checking pass, the round ending at {_exact(round_cost)} passes. {per_round}."
    )
    caption = (
        f"One round costs {_exact(round_cost)} target passes: {k} draft steps at {_exact(draft_step)} each "
        "(hatched), then one pass that checks them all. By then plain decoding has committed one token; "
        + "; ".join(f"{label[:1].lower() + label[1:]} commits {_count(len(toks))}" for label, toks in rounds) + "."
    )
    return Figure(name, svg, alt, caption)


# --- the one entry point the build calls ---------------------------------------------------------


class FigureError(Exception):
    """A figure that could not be drawn, as one line."""


def draw(job) -> tuple[str, str, str, str, str]:
    """Draw one figure_registry.FigureJob: (name, light SVG, dark SVG, alt text, caption)."""
    from .palette import dark

    try:
        f = getattr(sys.modules[__name__], job.ref.function)(**job.kwargs)
    except Collision as exc:  # a drawing whose labels collide: the figure code must lay it out differently
        raise FigureError(f"generator/render/figures.py: {exc}") from None
    except Exception as exc:
        raise FigureError(f"generator/render/figures.py: {job.ref.function}({job.name!r}) failed: "
                          f"{type(exc).__name__}: {exc}") from None
    return (f.name, f.svg, dark(f.svg), f.alt, f.caption)
