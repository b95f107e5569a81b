"""Charts for the explainer: numbers in, an SVG with its alt text and caption out.

Each function draws one chart from numbers the engine already computed and writes the alt text
and caption from those same numbers, so what a screen-reader user hears cannot drift from what
the picture shows. Nothing here knows about templates, pages or files.

Every SVG is byte-identical from run to run (the built site is diffed between builds), sits on
its own light rounded card so it reads on a dark page too, keeps its viewBox so CSS can shrink it
to a phone's width, and never lets colour alone carry meaning: each Okabe-Ito colour is paired
with a hatch, a marker, a line style or a direct label.
"""
from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import matplotlib
import numpy as np
from matplotlib.figure import Figure as _Canvas
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, MultipleLocator, NullLocator

Number = float | int | Fraction


@dataclass(frozen=True)
class Figure:
    name: str  # file stem, e.g. "profile-aligned"
    svg: str
    alt: str
    caption: str


WIDTH, HEIGHT = 6.4, 3.6  # inches; about 614 px wide at its natural size

INK = "#1f1f1f"
MUTED = "#595959"
FAINT = "#e2e2e2"
CARD = "#ffffff"
CARD_EDGE = "#cfcfcf"

# Okabe-Ito, most distinct first; yellow is left out because it vanishes on a white card.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
HATCHES = ("", "///", "\\\\\\", "xx", "---", "|||", "++")  # line hatches: dots cost kilobytes each
MARKERS = ("o", "s", "^", "D", "v", "P", "X")

TARGET_COLOUR = PALETTE[0]
DRAFT_COLOUR = PALETTE[1]


def _style(name: str) -> dict:
    return {
        "svg.fonttype": "none",
        # Salted by name so that two figures inlined in one page never share a clip-path id.
        "svg.hashsalt": f"specdec-figure-{name}",
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans"],
        "font.size": 11,
        "axes.titlesize": 10.5,
        "axes.labelsize": 11,
        "xtick.labelsize": 10,
        "ytick.labelsize": 10,
        "legend.fontsize": 10,
        "figure.titlesize": 12,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.titlecolor": INK,
        "axes.edgecolor": MUTED,
        "axes.facecolor": "none",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "xtick.color": MUTED,
        "ytick.color": MUTED,
        "xtick.labelcolor": INK,
        "ytick.labelcolor": INK,
        "grid.color": FAINT,
        "grid.linewidth": 0.8,
        "hatch.linewidth": 0.9,
        "legend.frameon": False,
        "path.simplify": True,
    }


def _render(name: str, draw: Callable[[_Canvas], None], size: tuple[float, float] = (WIDTH, HEIGHT)) -> str:
    """Draw on a fresh matplotlib Figure (never pyplot's global state) and return tidy SVG text."""
    with matplotlib.rc_context(_style(name)):
        fig = _Canvas(figsize=size, layout=ConstrainedLayoutEngine(w_pad=0.12, h_pad=0.1))
        fig.patch.set_facecolor("none")
        w, h = size
        fig.add_artist(FancyBboxPatch(
            (0.02, 0.02), w - 0.04, h - 0.04, boxstyle="round,pad=0,rounding_size=0.14",
            transform=fig.dpi_scale_trans, facecolor=CARD, edgecolor=CARD_EDGE, linewidth=0.8,
            zorder=-100, in_layout=False,
        ))
        draw(fig)
        out = io.StringIO()
        fig.savefig(out, format="svg", facecolor="none", metadata={"Date": None, "Creator": None})
        fig.clear()
    return _tidy(out.getvalue())


def _tidy(svg: str) -> str:
    """Drop the XML prologue and every id nothing refers to, so the SVG can be inlined many times per page."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    # A <style> in inline SVG would style the whole page; these two properties inherit, so the root can carry them.
    svg = re.sub(r"\s*<style[^>]*>\*\{stroke-linejoin: round; stroke-linecap: butt\}</style>", "", svg)
    svg = svg.replace("<svg ", '<svg stroke-linejoin="round" stroke-linecap="butt" ', 1)
    svg = re.sub(r"\s*<defs>\s*</defs>", "", svg)
    used = set(re.findall(r'url\(#([^)\s]+)\)', svg)) | set(re.findall(r'href="#([^"]+)"', svg))
    return re.sub(r' id="([^"]+)"', lambda m: m.group(0) if m.group(1) in used else "", svg)


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


def _token_index(p: int | str, tokens: Sequence[str]) -> int:
    return tokens.index(p) if isinstance(p, str) else int(p)


def _grid_shape(panels: int) -> tuple[int, int]:
    cols = panels if panels <= 4 else math.ceil(panels / 2)
    return math.ceil(panels / cols), cols


# --- 1. target against draft, position by position ----------------------------------------------


def profile_bars(
    name: str,
    tokens: Sequence[str],
    target_rows: Sequence[Sequence[Number]],
    draft_rows: Sequence[Sequence[Number]],
    proposals: Sequence[int | str],
    title: str,
) -> Figure:
    """One small panel per position, so the reader compares two bars for the same token rather than two curves.

    Target bars are filled, draft bars outlined and the proposed token's draft bar hatched and
    labelled, so none of the three relies on colour. The bonus position has only the target.
    """
    tokens = list(tokens)
    k = len(draft_rows)
    props = [_token_index(p, tokens) for p in proposals]
    rows, cols = _grid_shape(k + 1)
    top = max(float(p) for row in (*target_rows, *draft_rows) for p in row)
    ymax = top * 1.42
    x = np.arange(len(tokens))
    w = 0.4

    def draw(fig: _Canvas) -> None:
        axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
        for i, ax in enumerate(axes):
            if i > k:
                ax.remove()
                continue
            t = np.array([float(p) for p in target_rows[i]])
            ax.set_ylim(0, ymax)
            ax.yaxis.set_major_locator(MultipleLocator(0.25) if ymax <= 1.2 else MaxNLocator(3))
            ax.set_xticks(x, tokens, fontsize=9)
            ax.tick_params(axis="x", length=0, pad=2)
            ax.grid(axis="y", zorder=0)
            ax.set_axisbelow(True)
            if i % cols == 0:
                ax.set_ylabel("probability")
            if i == k:
                ax.bar(x, t, 2 * w, color=TARGET_COLOUR, zorder=2)
                ax.set_title(f"bonus (position {k + 1})", pad=3)
                continue
            d = np.array([float(p) for p in draft_rows[i]])
            p = props[i]
            ax.bar(x - w / 2, t, w, color=TARGET_COLOUR, zorder=2)
            draft_face = [CARD] * len(tokens)
            bars = ax.bar(x + w / 2, d, w, color=draft_face, edgecolor=DRAFT_COLOUR, linewidth=1.2, zorder=2)
            bars[p].set_hatch("////")
            near = [max(t[j], d[j]) for j in range(max(0, p - 1), min(len(tokens), p + 2))]
            y = max(near) + 0.03 * ymax
            ax.plot([p + w / 2], [y + 0.03 * ymax], marker="v", color=INK, markersize=5, zorder=3)
            ax.text(p + w / 2, y + 0.07 * ymax, "proposal", ha="center", va="bottom", fontsize=9.5, zorder=3)
            ax.set_title(f"position {i + 1}", pad=3)
        fig.legend(
            handles=[
                Patch(facecolor=TARGET_COLOUR, label="target"),
                Patch(facecolor=CARD, edgecolor=DRAFT_COLOUR, linewidth=1.2, label="draft"),
                Patch(facecolor=CARD, edgecolor=DRAFT_COLOUR, linewidth=1.2, hatch="////",
                      label="draft's proposal \u25bc"),
            ],
            loc="outside lower center", ncols=3, handlelength=1.6,
        )
        fig.suptitle(title)

    svg = _render(name, draw, (WIDTH, 2.0 + 1.55 * rows))

    said = []
    sure, never = [], []
    for i, p in enumerate(props):
        t, d = target_rows[i][p], draft_rows[i][p]
        if float(t) >= float(d):
            verdict = "so it is always accepted"
            sure.append(i + 1)
        elif float(t) == 0:
            verdict = "so it is always rejected"
            never.append(i + 1)
        else:
            ratio = Fraction(t) / Fraction(d) if all(isinstance(v, (int, Fraction)) for v in (t, d)) else float(t) / float(d)
            verdict = f"so it is accepted with probability {_exact(ratio)}"
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
    counts = [int(samples)] * m if isinstance(samples, (int, np.integer)) else [int(s) for s in samples]
    rows, cols = _grid_shape(m)
    top = max(float(v) for row in (*target_rows, *frequencies) for v in row)
    x = np.arange(len(tokens))

    def draw(fig: _Canvas) -> None:
        axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
        for i, ax in enumerate(axes):
            if i >= m:
                ax.remove()
                continue
            f = [float(v) for v in frequencies[i]]
            t = [float(v) for v in target_rows[i]]
            ax.bar(x, f, 0.62, color=PALETTE[5], edgecolor=PALETTE[0], linewidth=0.8, zorder=2)
            ax.plot(x, t, linestyle="none", marker="_", markersize=13, markeredgewidth=2.2, color=INK, zorder=3)
            ax.set_ylim(0, top * 1.12)
            ax.yaxis.set_major_locator(MultipleLocator(0.25) if top <= 1 else MaxNLocator(3))
            ax.set_xticks(x, tokens, fontsize=9)
            ax.tick_params(axis="x", length=0, pad=2)
            ax.grid(axis="y", zorder=0)
            ax.set_axisbelow(True)
            ax.set_title(f"{position_labels[i]} (n = {_count(counts[i])})", fontsize=9.5, pad=3)
            if i % cols == 0:
                ax.set_ylabel("share")
        fig.legend(
            handles=[
                Patch(facecolor=PALETTE[5], edgecolor=PALETTE[0], label="observed frequency"),
                Line2D([], [], linestyle="none", marker="_", markersize=13, markeredgewidth=2.2, color=INK,
                       label="target probability"),
            ],
            loc="outside lower center", ncols=2,
        )
        fig.suptitle(title)

    svg = _render(name, draw, (WIDTH, 2.0 + 1.55 * rows))

    gaps = []
    parts = []
    for i in range(m):
        diffs = [abs(float(f) - float(t)) for f, t in zip(frequencies[i], target_rows[i])]
        j = int(np.argmax(diffs))
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
        f"Bars: how often each token was committed among the rounds that reached that position; "
        f"markers: the target's probability. The largest gap anywhere is {worst:.4f} "
        f"({position_labels[wi]}, {_q(tokens[wj])})."
    )
    return Figure(name, svg, alt, caption)


# --- 3. how fast the Monte Carlo error shrinks --------------------------------------------------


def error_vs_samples(
    name: str,
    series: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    title: str,
) -> Figure:
    """Log-log, so 1/sqrt(n) is a straight line the reader can hold each curve against."""
    clean = [
        (label, [(int(n), float(e)) for n, e in points if n > 0 and float(e) > 0])
        for label, points in series
    ]
    everything = [pt for _, pts in clean for pt in pts]
    if not everything:
        raise ValueError("error_vs_samples needs at least one positive (samples, error) point")
    scale = float(np.median([e * math.sqrt(n) for n, e in everything]))
    lo = min(n for n, _ in everything)
    hi = max(n for n, _ in everything)
    slopes = [np.polyfit(np.log10([n for n, _ in p]), np.log10([e for _, e in p]), 1)[0]
              for _, p in clean if len(p) >= 2]

    def draw(fig: _Canvas) -> None:
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        guide_n = np.geomspace(lo, hi, 50)
        ax.plot(guide_n, scale / np.sqrt(guide_n), linestyle=(0, (5, 3)), color=MUTED, linewidth=1.4,
                label="1/\u221an guide", zorder=1)
        ax.annotate("1/\u221an", xy=(hi, scale / math.sqrt(hi)), xytext=(4, 0),
                    textcoords="offset points", ha="left", va="center", color=MUTED, fontsize=10)
        for i, (label, pts) in enumerate(clean):
            if not pts:
                continue
            lap = i // len(PALETTE)  # past the palette, a new marker and line style keep curves apart
            ax.plot([n for n, _ in pts], [e for _, e in pts], color=PALETTE[i % len(PALETTE)],
                    marker=MARKERS[(i + lap) % len(MARKERS)], markersize=5, linewidth=1.3,
                    linestyle=("-", (0, (4, 2)), (0, (1, 1.5)))[lap % 3], label=label, zorder=2)
        ax.set_xlim(lo / 1.6, hi * 3)
        ax.xaxis.set_major_formatter(FuncFormatter(_short_count))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("samples n (log scale)")
        ax.set_ylabel("total variation (log scale)")
        ax.grid(which="major", zorder=0)
        fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper", handlelength=2.2)
        ax.set_title(title, fontsize=11)

    svg = _render(name, draw)

    described = [
        f"{label}: {pts[0][1]:.3g} at {_count(pts[0][0])} samples down to {pts[-1][1]:.3g} at {_count(pts[-1][0])}"
        for label, pts in clean if pts
    ]
    alt = (
        f"{title}. Total variation distance between the observed and the target distribution against the "
        "number of samples, both axes logarithmic, with a dashed guide line falling as 1 over the square root of n. "
        + "; ".join(described) + "."
    )
    caption = "Each tenfold increase in samples should cut the error by about \u221a10 \u2248 3.2, the dashed 1/\u221an guide."
    if slopes:
        caption += f" The fitted log-log slope, averaged over the {len(slopes)} curves, is {_signed(float(np.mean(slopes)))}, against the guide's \u22120.5."
    return Figure(name, svg, alt, caption)


# --- 4. how many tokens one round commits -------------------------------------------------------


def round_length_distribution(
    name: str,
    series: Sequence[tuple[str, Sequence[Number]]],
    k: int,
) -> Figure:
    """Grouped bars of P(N = n), with each profile's expected N marked, since the mean is what the speedup uses."""
    m = len(series)
    n_values = np.arange(1, k + 2)
    width = 0.8 / m
    means = [sum(n * float(p) for n, p in zip(n_values, probs)) for _, probs in series]
    top = max(float(p) for _, probs in series for p in probs)
    lane = 0.13 * top
    ymax = top * 1.08 + lane * (m + 0.6)

    def draw(fig: _Canvas) -> None:
        ax = fig.add_subplot()
        for i, (label, probs) in enumerate(series):
            colour = PALETTE[i % len(PALETTE)]
            offset = (i - (m - 1) / 2) * width
            ax.bar(n_values + offset, [float(p) for p in probs], width * 0.95, color=colour,
                   edgecolor=INK if HATCHES[i % len(HATCHES)] else colour, linewidth=0.5,
                   hatch=HATCHES[i % len(HATCHES)], label=label, zorder=2)
            y = ymax - lane * (i + 0.7)
            mu = means[i]
            ax.vlines(mu, 0, y, colors=colour, linestyles=(0, (2, 2)), linewidth=1.2, zorder=3)
            ax.plot([mu], [y], marker=MARKERS[i % len(MARKERS)], color=colour, markeredgecolor=INK,
                    markersize=7, zorder=4)
            right = mu < (1 + k + 1) / 2
            ax.annotate(f"{label}: E[N] = {mu:.2f}", xy=(mu, y), xytext=(7 if right else -7, 0),
                        textcoords="offset points", ha="left" if right else "right", va="center", fontsize=10,
                        bbox=dict(boxstyle="square,pad=0.15", facecolor=CARD, edgecolor="none", alpha=0.9), zorder=5)
        ax.set_xticks(n_values, [f"{n}" if n <= k else f"{n}\n(all + bonus)" for n in n_values])
        ax.set_ylim(0, ymax)
        ticks = [v for v in MaxNLocator(4).tick_values(0, top) if v <= top * 1.1]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:.0%}"))
        ax.set_xlabel(f"tokens committed in one round, N  (k = {k} proposals)")
        ax.set_ylabel("probability")
        ax.tick_params(axis="x", length=0)
        ax.grid(axis="y", zorder=0)
        ax.set_axisbelow(True)
        fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper")

    svg = _render(name, draw)

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
        f"{label[:1].lower() + label[1:]} most often commits {int(n_values[int(np.argmax([float(p) for p in probs]))])} "
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
) -> Figure:
    """Each curve rises while another draft token is likely to be kept and falls once it mostly costs; the star is the turn."""
    colours = {label: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]) for i, (label, _) in enumerate(curves)}
    ks = sorted({int(kk) for _, pts in curves for kk, _ in pts})
    values = [float(s) for _, pts in curves for _, s in pts] + [1.0]

    def draw(fig: _Canvas) -> None:
        ax = fig.add_subplot()
        ax.axhline(1, color=MUTED, linestyle=(0, (5, 3)), linewidth=1.2, zorder=1)
        ax.annotate("no gain (1\u00d7)", xy=(1, 1), xycoords=("axes fraction", "data"), xytext=(0, 3),
                    textcoords="offset points", ha="right", va="bottom", color=MUTED, fontsize=10)
        lines = []
        for label, pts in curves:
            colour, marker = colours[label]
            lines += ax.plot([int(kk) for kk, _ in pts], [float(s) for _, s in pts], color=colour, marker=marker,
                    markersize=4.5, linewidth=1.5, label=label, zorder=2)
        for label, kk, s in best:
            colour = colours.get(label, (INK, "o"))[0]
            ax.plot([kk], [float(s)], marker="*", markersize=15, color=colour, markeredgecolor=INK,
                    markeredgewidth=0.8, linestyle="none", zorder=4)
            ax.annotate(f"K = {kk}", xy=(kk, float(s)), xytext=(0, 9),
                        textcoords="offset points", ha="center", va="bottom", fontsize=10, zorder=5,
                        bbox=dict(boxstyle="round,pad=0.15", facecolor=CARD, edgecolor="none", alpha=0.9))
        lo, hi = min(values), max(values)
        ax.set_ylim(min(0.8, lo - 0.1), hi + 0.22 * (hi - min(lo, 1)))
        ax.set_xlim(ks[0] - 0.5, ks[-1] + 0.5)
        ax.xaxis.set_major_locator(FixedLocator(ks))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}\u00d7"))
        ax.set_xlabel("draft length K")
        ax.set_ylabel("speedup \u00d7")
        ax.grid(axis="y", zorder=0)
        fig.legend(handles=[
            *lines,
            Line2D([], [], marker="*", markersize=12, color=MUTED, markeredgecolor=INK, linestyle="none", label="best K"),
        ], loc="outside right upper")

    svg = _render(name, draw)

    best_of = {label: (kk, s) for label, kk, s in best}
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
    alt = (
        "Line chart of speedup over plain decoding against draft length K, one line per draft quality, "
        "with a star at each line's best K and a dashed line at 1\u00d7 meaning no gain. " + "; ".join(described) + "."
    )
    ordered = sorted(best, key=lambda b: (b[1], float(b[2])))
    if ordered:
        first, last = ordered[0], ordered[-1]
        span = (f"The best draft length runs from K = {first[1]} ({first[0]}, {float(first[2]):.2f}\u00d7) "
                f"to K = {last[1]} ({last[0]}, {float(last[2]):.2f}\u00d7)")
    else:
        span = "Speedup against draft length"
    caption = (
        f"{span}; each curve peaks where one more draft token costs more than it is expected to earn. "
        "Below the dashed line speculation would be slower than plain decoding."
    )
    return Figure(name, svg, alt, caption)


# --- 6. why verifying several positions costs about as much as one ------------------------------


def roofline(
    name: str,
    positions: Sequence[int],
    times_ms: Sequence[Number],
    memory_ms: Number | Sequence[Number],
    compute_ms: Number | Sequence[Number],
    model_label: str,
) -> Figure:
    """A cost model, drawn so it cannot be mistaken for a benchmark: the words 'model' and 'not a measurement' are on it.

    memory_ms is the weight-reading floor (one number or one per position); compute_ms is either
    the compute time per scored position (one number, giving a straight slope) or one per position.
    """
    pos = [int(p) for p in positions]
    times = [float(t) for t in times_ms]
    floor = [float(v) for v in memory_ms] if isinstance(memory_ms, Sequence) else [float(memory_ms)] * len(pos)
    slope = ([float(v) for v in compute_ms] if isinstance(compute_ms, Sequence)
             else [float(compute_ms) * p for p in pos])
    crossing = next((p for p, f, c in zip(pos, floor, slope) if c >= f), None)
    if not isinstance(memory_ms, Sequence) and not isinstance(compute_ms, Sequence) and float(compute_ms) > 0:
        crossing = float(memory_ms) / float(compute_ms)
    flat = max(i for i, t in enumerate(times) if t <= 1.1 * times[0])

    def draw(fig: _Canvas) -> None:
        ax = fig.add_subplot()
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.plot(pos, floor, linestyle=(0, (5, 3)), color=PALETTE[0], linewidth=1.4, label="memory floor")
        ax.plot(pos, slope, linestyle=(0, (1.5, 2)), color=PALETTE[1], linewidth=1.8, label="compute slope")
        ax.plot(pos, times, color=INK, marker="o", markersize=4, linewidth=1.8, label="modelled time")
        if crossing is not None and pos[0] <= crossing <= pos[-1]:
            ax.axvline(crossing, color=MUTED, linewidth=0.9, linestyle=":")
            ax.annotate(f"knee \u2248 {crossing:.0f}", xy=(crossing, 0.03), xycoords=("data", "axes fraction"),
                        xytext=(4, 0), textcoords="offset points", ha="left", va="bottom", fontsize=10, color=MUTED)
        ax.xaxis.set_major_locator(FixedLocator([p for p in (2 ** e for e in range(0, 20)) if pos[0] <= p <= pos[-1]]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_ylim(min(times + floor) / 1.6, max(times) * 1.4)
        ax.set_xlabel("positions scored in one forward pass (log scale)")
        ax.set_ylabel("time per pass, ms (log scale)")
        ax.grid(which="major", zorder=0)
        ax.text(0.02, 0.97, f"A model, not a measurement:\n{model_label}", transform=ax.transAxes, ha="left",
                va="top", fontsize=10, bbox=dict(boxstyle="round,pad=0.35", facecolor="#f3f3f3", edgecolor=CARD_EDGE))
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3, handlelength=2.4)
        ax.set_title("Time per forward pass (a cost model)", fontsize=11)

    svg = _render(name, draw)

    knee = f", the knee near {crossing:.0f} positions where compute overtakes memory" if crossing else ""
    alt = (
        f"A model, not a measurement ({model_label}): modelled time per forward pass against the number of "
        f"positions scored, both axes logarithmic, with dashed lines for the memory floor and the compute slope{knee}. "
        f"The time stays within 10% of {times[0]:.3g} ms from {pos[0]} to {pos[flat]} positions, because reading "
        f"the weights dominates, then grows with the positions scored, reaching {times[-1]:.3g} ms at {pos[-1]}."
    )
    ratio = times[flat] / times[0]
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
    """Grouped bars with their exact values printed on them, since the text quotes those same fractions."""
    m = len(rates)
    x = np.arange(len(labels))
    width = 0.8 / m

    def draw(fig: _Canvas) -> None:
        ax = fig.add_subplot()
        for i, (profile, alphas) in enumerate(rates):
            colour = PALETTE[i % len(PALETTE)]
            hatch = HATCHES[i % len(HATCHES)]
            offset = (i - (m - 1) / 2) * width
            bars = ax.bar(x + offset, [float(a) for a in alphas], width * 0.92, color=colour,
                          edgecolor=INK if hatch else colour, linewidth=0.5, hatch=hatch, label=profile, zorder=2)
            if m <= 3:
                ax.bar_label(bars, [_exact(a) for a in alphas], padding=2, fontsize=10)
        ax.set_ylim(0, 1.12)
        ax.yaxis.set_major_locator(FixedLocator([0, 0.25, 0.5, 0.75, 1]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xticks(x, list(labels))
        ax.tick_params(axis="x", length=0)
        ax.set_xlabel("position")
        ax.set_ylabel("acceptance rate \u03b1")
        ax.grid(axis="y", zorder=0)
        ax.set_axisbelow(True)
        fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper")

    svg = _render(name, draw)

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
        ranges.append(f"the {profile} draft's lowest is {_exact(lo)} (at {_places(where)}) "
                      f"and its highest {_exact(max(alphas, key=float))}")
    caption = (
        "Acceptance rate per position, \u03b1 = \u2211 min(p, q): the chance a proposal there is kept. "
        + "; ".join(ranges)[0].upper() + "; ".join(ranges)[1:] + "."
    )
    return Figure(name, svg, alt, caption)
