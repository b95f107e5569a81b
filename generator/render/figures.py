"""Charts for the explainer, drawn by matplotlib: numbers in, an SVG with its alt text and caption out.

Each function draws one chart from numbers the engine already computed and writes the alt text and
caption from those same numbers, so what a screen-reader user hears cannot drift from what the picture
shows. Nothing here knows about templates, pages or files; `draw(job)` is what the build calls.

How a figure is made (the same for every one):
- matplotlib's object API on the Agg canvas (no pyplot, no global state); every setting comes from
  style(name) through matplotlib.rc_context, around the whole drawing and the SVG writing.
- Drawn for a phone first: WIDTH inches (331.2 SVG units) wide, every text FONT units or more, so in the
  358 CSS px a 390 px phone gives a figure each text renders at 11.9 px; wider screens show it larger.
  Constrained layout sets the margins from the labels each chart actually has.
- After the layout, every pair of texts is compared with matplotlib's own measurements
  (get_window_extent with the figure's renderer): an overlap, or a text leaving the figure, refuses it.
- SVG with real <text> (svg.fonttype none) in a font stack that starts with DejaVu Sans, the font the
  layout was measured in, and falls back only to families whose glyphs are no wider; svg.hashsalt is the
  figure's name and the metadata holds no date, so the bytes are the same from build to build.
- Colours come from palette.py by role; draw() makes the dark variant by mapping them (palette.dark).
  Colour never carries meaning alone: each colour is paired with a hatch, a marker, a line style or a label.
"""
from __future__ import annotations

import functools
import io
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as Canvas
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch
from matplotlib.text import Text
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from . import palette
from .palette import ACCEPTED, CARD, CARD_EDGE, DRAFT, FAINT, GREY, INK, MUTED, PALETTE, RESIDUAL, TARGET
from .figure_words import and_, count, decimal, exact, lower_first, pct, places, quote, signed, tokens_word, upper_first

Number = float | int | Fraction

WIDTH = 4.6  # inches = 331.2 SVG units, drawn for a phone's column
FONT = 11.0  # SVG units (points): the smallest size any text is set in
MIN_FONT = FONT
TITLE = 12.0
PHONE_COLUMN = 358  # CSS px a figure is shown at in a 390 px wide phone (style.css: the column less its padding)
# DejaVu Sans first: matplotlib ships it and measures the layout with it. Then only families whose glyphs are no
# wider (Bitstream Vera Sans is its parent, with the same widths; Liberation Sans, Arimo, Arial and Helvetica are
# narrower), so a reader's device without DejaVu sets every label in the room it was measured for.
FONTS = ("DejaVu Sans", "Bitstream Vera Sans", "Liberation Sans", "Arimo", "Arial", "Helvetica")
HATCHES = ("", "///", "\\\\\\", "xx", "---", "|||", "++")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
SOURCE = __name__.replace(".", "/") + ".py"  # where a refused figure's drawing code is, for the one-line error


@dataclass(frozen=True)
class Figure:
    name: str  # file stem, e.g. "profile-aligned"
    svg: str
    alt: str
    caption: str


class FigureError(Exception):
    """A figure that cannot be drawn, said in one line: `generator/.../figures.py: NAME: what went wrong`."""


def style(name: str) -> dict:
    """Every matplotlib setting a figure is drawn and written with; the hash salt is the figure's own name."""
    return {
        "font.family": ["sans-serif"], "font.sans-serif": list(FONTS), "font.size": FONT,
        "axes.titlesize": FONT, "axes.labelsize": FONT, "xtick.labelsize": FONT, "ytick.labelsize": FONT,
        "legend.fontsize": FONT, "figure.titlesize": TITLE, "figure.dpi": 72, "figure.facecolor": CARD,
        "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK, "xtick.color": INK, "ytick.color": INK,
        "axes.facecolor": CARD, "axes.linewidth": 0.8, "axes.spines.top": False, "axes.spines.right": False,
        "axes.titlepad": 4.0, "axes.labelpad": 3.0, "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        "grid.color": FAINT, "grid.linewidth": 0.8, "patch.edgecolor": INK, "patch.linewidth": 0.6,
        "hatch.linewidth": 0.8, "lines.linewidth": 1.5, "lines.markersize": 5,
        "legend.frameon": False, "legend.handlelength": 1.6, "legend.handletextpad": 0.5,
        "legend.columnspacing": 1.2, "legend.borderaxespad": 0.2, "legend.borderpad": 0.2,
        "xtick.major.size": 3.5, "ytick.major.size": 3.5, "xtick.major.pad": 3.5, "ytick.major.pad": 3.5,
        "xtick.minor.size": 2, "ytick.minor.size": 2,
        "svg.fonttype": "none", "svg.hashsalt": name, "path.simplify": False,
    }


def figure(function: Callable[..., Figure]) -> Callable[..., Figure]:
    """A drawing function runs, and writes its SVG, inside its figure's style."""
    @functools.wraps(function)
    def drawn(name: str, *args, **kwargs) -> Figure:
        with matplotlib.rc_context(style(name)):
            return function(name, *args, **kwargs)
    return drawn


def draw(job) -> tuple[str, str, str, str, str]:
    """Draw one registry job: (name, light SVG, dark SVG, alt, caption), or FigureError with one line."""
    function = globals().get(job.ref.function)
    if not callable(function):
        raise FigureError(f"{SOURCE}: {job.name}: no drawing function named {job.ref.function}")
    try:
        f = function(**job.kwargs)
        return (f.name, f.svg, palette.dark(f.svg), f.alt, f.caption)
    except FigureError:
        raise
    except Exception as exc:
        raise FigureError(f"{SOURCE}: {job.name}: {job.ref.function}() failed: {type(exc).__name__}: {exc}") from None


# --- the canvas, the check and the SVG ----------------------------------------------------------


def canvas(height: float) -> Canvas:
    """A figure WIDTH inches wide on its own rounded card, laid out by matplotlib's constrained layout."""
    fig = Canvas(figsize=(WIDTH, height), layout="constrained")
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(w_pad=8 / 72, h_pad=8 / 72, wspace=0.04, hspace=0.04)
    fig.patch.set_visible(False)  # the square behind the card stays transparent
    fig.add_artist(FancyBboxPatch((0.02, 0.02), WIDTH - 0.04, height - 0.04, boxstyle="round,pad=0,rounding_size=0.14",
                                  transform=fig.dpi_scale_trans, facecolor=CARD, edgecolor=CARD_EDGE, linewidth=0.8,
                                  zorder=-10))
    return fig


def _drawn_texts(fig: Canvas) -> list[Text]:
    """Every text the figure shows: visible, not blank, and for a tick label, its tick inside the axis' view."""
    hidden = set()
    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = sorted(limits)
            slack = (hi - lo) * 1e-9
            for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks()):
                if not lo - slack <= tick.get_loc() <= hi + slack:
                    hidden.update((id(tick.label1), id(tick.label2)))
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def collisions(fig: Canvas) -> list[str]:
    """Each text that overlaps another or leaves the figure, measured by matplotlib once the layout is done."""
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _drawn_texts(fig)]
    problems = []
    for i, (a, box) in enumerate(boxes):
        if box.x0 < fig.bbox.x0 - 0.5 or box.x1 > fig.bbox.x1 + 0.5 or box.y0 < fig.bbox.y0 - 0.5 or \
                box.y1 > fig.bbox.y1 + 0.5:
            problems.append(f'text "{a}" leaves the figure')
        for b, other in boxes[i + 1:]:
            if min(box.x1, other.x1) - max(box.x0, other.x0) > 0.5 and min(box.y1, other.y1) - max(box.y0, other.y0) > 0.5:
                problems.append(f'text "{a}" overlaps "{b}"')
    return problems


def finish(fig: Canvas, name: str) -> str:
    """Lay the figure out, check its texts and return its SVG, laid out exactly as it was checked."""
    fig.draw_without_rendering()
    fig.set_layout_engine("none")  # the positions just measured are the ones written
    problems = collisions(fig)
    if problems:
        raise FigureError(f"{SOURCE}: {name}: {problems[0]}")
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def render_svg(name: str, draw_on: Callable[[Canvas], None], height: float = 3.0) -> str:
    """Draw on a fresh canvas in a figure's style, check it and return its SVG (tests plant collisions this way)."""
    with matplotlib.rc_context(style(name)):
        fig = canvas(height)
        draw_on(fig)
        return finish(fig, name)


# --- helpers ------------------------------------------------------------------------------------


def text_width(fig: Canvas, text: str, size: float = FONT) -> float:
    """A text's width in points as matplotlib sets it in this figure."""
    probe = Text(0, 0, text, fontsize=size, figure=fig)
    return probe.get_window_extent(fig.canvas.get_renderer()).width


def wrap(fig: Canvas, text: str, width: float, size: float = FONT) -> str:
    """Break at spaces so that no line is wider than width points; a no-break space holds its neighbours."""
    lines: list[str] = []
    for word in str(text).split(" "):
        if lines and text_width(fig, f"{lines[-1]} {word}", size) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines).replace("\u00a0", " ")


def heading(fig: Canvas, title: str, handles: Sequence = (), labels: Sequence[str] = (), most: int = 3) -> None:
    """The figure's title flush left across the top, wrapped to the card, and under it the legend (if any) in as
    many columns (at most `most`) as fit. One box, so the constrained layout keeps the plots below both."""
    room = WIDTH * 72 - 20
    title = wrap(fig, title, room, TITLE) if title else None
    if not labels:
        fig.suptitle(title, x=8 / 72 / WIDTH, ha="left", fontsize=TITLE)
        return
    for cols in range(min(most, len(labels)), 0, -1):
        box = fig.legend(handles, labels, loc="outside upper left", ncols=cols, title=title, alignment="left",
                         title_fontsize=TITLE)
        if box.get_window_extent(fig.canvas.get_renderer()).width <= room or cols == 1:
            return
        box.remove()


def bar_style(i: int) -> dict:
    """The i-th series' bars: its colour, and its hatch (outlined in ink) from the second series on."""
    colour, hatch = PALETTE[i % len(PALETTE)], HATCHES[i % len(HATCHES)]
    return {"facecolor": colour, "edgecolor": INK if hatch else colour, "hatch": hatch or None, "linewidth": 0.5}


TARGET_BAR = {"facecolor": TARGET, "edgecolor": TARGET, "linewidth": 0.6}
DRAFT_BAR = {"facecolor": "none", "edgecolor": DRAFT, "linewidth": 1.2}
PROPOSED_BAR = {"facecolor": "none", "edgecolor": DRAFT, "linewidth": 1.2, "hatch": "////"}


def panel_columns(fig: Canvas, tokens: Sequence[str], panels: int, left: float = 44) -> tuple[int, bool]:
    """Columns for a grid of small bar charts over tokens (at most three) such that neighbouring token labels stand
    clear, and whether they must turn upright to."""
    widths = [text_width(fig, t) for t in tokens]
    need = max(((a + b) / 2 for a, b in zip(widths, widths[1:])), default=widths[0]) + 3
    for upright in (False, True):
        for cols in (3, 2, 1):
            per_token = (WIDTH * 72 - left - 10 - (cols - 1) * 8) / cols / len(tokens)
            if cols <= panels and per_token >= (FONT * 1.4 if upright else need):
                return cols, upright
    return 1, True


def token_axes(ax, tokens: Sequence[str], ymax: float, ticks: Sequence[float], upright: bool) -> None:
    ax.set_xlim(-0.6, len(tokens) - 0.4)
    ax.set_ylim(0, ymax)
    ax.xaxis.set_major_locator(FixedLocator(range(len(tokens))))
    ax.set_xticklabels(tokens, rotation=90 if upright else 0)
    ax.tick_params(axis="x", length=0)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.grid(axis="y")
    ax.set_axisbelow(True)


def probability_ticks(ymax: float) -> list[float]:
    step = 0.5 if ymax <= 1.3 else 1.0
    return [i * step for i in range(int(ymax / step) + 1)]


def grid(fig: Canvas, panels: int, cols: int):
    rows = math.ceil(panels / cols)
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False).ravel()
    for ax in axes[panels:]:
        ax.set_visible(False)
    return list(axes[:panels])


def log_axis(axis, values: Sequence[float], label: Callable[[float], str]) -> None:
    axis.set_major_locator(FixedLocator(values))
    axis.set_major_formatter(FuncFormatter(lambda v, _: label(v)))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def decades(lo: float, hi: float, most: int) -> list[float]:
    """Powers of ten inside [lo, hi], every second or third one when more than most would crowd."""
    found = [10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) if lo <= 10.0 ** e <= hi]
    return found[::max(1, math.ceil(len(found) / most))] or [10.0 ** round(math.log10(math.sqrt(lo * hi)))]


def short_count(n: float) -> str:
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:g}{suffix}"
    return f"{n:g}"


def argmax(values: Sequence[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


# --- 1. the two distributions at each position ---------------------------------------------------


@figure
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

    accept_probabilities are min(1, p/q) of each position's proposal, as the analysis computed them. The target
    p is a solid bar, the draft q an outline beside it, the proposed token's outline hatched and marked; the
    bonus position has only the target.
    """
    tokens = list(tokens)
    k = len(draft_rows)
    props = [tokens.index(p) if isinstance(p, str) else int(p) for p in proposals]
    top = max(float(p) for row in (*target_rows, *draft_rows) for p in row)
    ymax, w = top * 1.5, 0.4
    probe = canvas(1)
    cols, upright = panel_columns(probe, tokens, k + 1)
    rows = math.ceil((k + 1) / cols)
    fig = canvas(0.75 + rows * (1.45 + (0.25 if upright else 0)))
    heading(fig, title, [Patch(**TARGET_BAR), Patch(**DRAFT_BAR), Patch(**PROPOSED_BAR)],
           ["target p", "draft q", "draft's proposal \u25bc"])
    for i, ax in enumerate(grid(fig, k + 1, cols)):
        token_axes(ax, tokens, ymax, probability_ticks(ymax), upright)
        if i % cols == 0:
            ax.set_ylabel("probability")
        t = [float(p) for p in target_rows[i]]
        if i == k:
            ax.bar(range(len(tokens)), t, 2 * w, **TARGET_BAR)
            ax.set_title(f"bonus (position {k + 1})")
            continue
        d = [float(p) for p in draft_rows[i]]
        p = props[i]
        ax.bar([j - w / 2 for j in range(len(tokens))], t, w, **TARGET_BAR)
        ax.bar([j + w / 2 for j in range(len(tokens)) if j != p], [d[j] for j in range(len(tokens)) if j != p], w,
               **DRAFT_BAR)
        ax.bar([p + w / 2], [d[p]], w, **PROPOSED_BAR)
        near = max(max(t[j], d[j]) for j in range(len(tokens)) if abs(j - p) <= 1)
        ax.plot([p + w / 2], [near + 0.07 * ymax], marker="v", color=INK, markersize=5, linestyle="none")
        side = "left" if p < len(tokens) / 2 else "right"
        ax.annotate("proposal", (p + w / 2, near + 0.12 * ymax), ha=side, va="bottom",
                    xytext=(-4 if side == "left" else 4, 0), textcoords="offset points")
        ax.set_title(f"position {i + 1}")
    svg = finish(fig, name)

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
        said.append(f"Position {i + 1}: the draft proposes {quote(tokens[p])}, which it gives {exact(d)} "
                    f"and the target {exact(t)}, {verdict}")
    bonus = target_rows[k]
    best = max(range(len(tokens)), key=lambda j: (float(bonus[j]), -j))
    alt = (f"{title}. One small bar chart per position comparing the target's and the draft's probabilities for the "
           f"tokens {and_([quote(t) for t in tokens])}. " + "; ".join(said)
           + f". Bonus position {k + 1} shows the target alone; its most likely token is "
           f"{quote(tokens[best])} at {exact(bonus[best])}.")
    certain = (f"{'All' if len(sure) == k else f'{len(sure)} of the'} {k} proposals ({places([str(s) for s in sure])}) "
               "get at least as much probability from the target as from the draft, so they are accepted for certain"
               if sure else "No proposal is accepted for certain")
    if never:
        certain += f"; the target never produces the proposal at {places([str(n) for n in never])}"
    caption = ("Solid bars are the target p, outlined bars the draft q, and the hatched outline the token the draft "
               f"proposed. {certain}.")
    return Figure(name, svg, alt, caption)


# --- 2. the sampler's output against the target -------------------------------------------------


@figure
def convergence_histograms(
    name: str,
    tokens: Sequence[str],
    position_labels: Sequence[str],
    target_rows: Sequence[Sequence[Number]],
    frequencies: Sequence[Sequence[Number]],
    samples: int | Sequence[int],
    title: str,
) -> Figure:
    """The target p as solid bars, what the sampler committed as a mark: agreement is a mark on its bar's top."""
    tokens = list(tokens)
    m = len(position_labels)
    counts = [int(s) for s in samples] if isinstance(samples, Sequence) else [int(samples)] * m
    top = max(float(v) for row in (*target_rows, *frequencies) for v in row)
    ymax = top * 1.15
    observed = {"marker": "_", "markersize": 12, "markeredgewidth": 2.2, "color": INK, "linestyle": "none"}
    probe = canvas(1)
    cols, upright = panel_columns(probe, tokens, m)
    heads = [f"{lab}, n = {count(c)}" for lab, c in zip(position_labels, counts)]
    room = (WIDTH * 72 - 60) / cols - 8
    if max(text_width(probe, h) for h in heads) > room:
        heads = [f"{lab}\nn = {count(c)}" for lab, c in zip(position_labels, counts)]
    rows = math.ceil(m / cols)
    fig = canvas(0.75 + rows * (1.5 + (0.2 if "\n" in heads[0] else 0) + (0.25 if upright else 0)))
    heading(fig, title, [Patch(**TARGET_BAR), Line2D([], [], **observed)], ["target p", "observed share"])
    for i, ax in enumerate(grid(fig, m, cols)):
        token_axes(ax, tokens, ymax, probability_ticks(ymax), upright)
        if i % cols == 0:
            ax.set_ylabel("share")
        ax.bar(range(len(tokens)), [float(v) for v in target_rows[i]], 0.62, **TARGET_BAR)
        ax.plot(range(len(tokens)), [float(v) for v in frequencies[i]], zorder=3, **observed)
        ax.set_title(heads[i])
    svg = finish(fig, name)

    gaps, parts = [], []
    for i in range(m):
        diffs = [abs(float(f) - float(t)) for f, t in zip(frequencies[i], target_rows[i])]
        j = argmax(diffs)
        gaps.append((diffs[j], i, j))
        likely = max(range(len(tokens)), key=lambda a: (float(target_rows[i][a]), -a))
        parts.append(f"{position_labels[i]} ({count(counts[i])} rounds): {quote(tokens[likely])} observed "
                     f"{float(frequencies[i][likely]):.3f} against target {exact(target_rows[i][likely])}, "
                     f"largest gap {diffs[j]:.4f}")
    worst, wi, wj = max(gaps)
    alt = (f"{title}. For each position, solid bars give the target probability of each token and marks the share of "
           "simulated rounds that committed it. " + "; ".join(parts) + ".")
    caption = ("Solid bars: the target's probability p; marks: how often each token was committed among the rounds that "
               f"reached that position (n rounds, given above each panel). The largest gap anywhere is {worst:.4f} "
               f"({position_labels[wi]}, {quote(tokens[wj])}).")
    return Figure(name, svg, alt, caption)


# --- 3. how fast the Monte Carlo error shrinks --------------------------------------------------

MANY = 6  # more series than this are drawn as small multiples, one highlighted per panel


@figure
def error_vs_samples(
    name: str,
    series: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    title: str,
    slope: float | None = None,
) -> Figure:
    """Log-log, so 1/sqrt(n) is a straight line the reader can hold each curve against.

    slope is the curves' mean fitted log-log slope, as the analysis computed it; None leaves it unsaid. Up to
    MANY series share one chart; more are drawn as small multiples, each panel one series over the others in grey.
    """
    clean = [(label, [(int(n), float(e)) for n, e in points if n > 0 and float(e) > 0]) for label, points in series]
    drawn = [(label, pts) for label, pts in clean if pts]
    everything = [pt for _, pts in drawn for pt in pts]
    if not everything:
        raise ValueError("error_vs_samples needs at least one positive (samples, error) point")
    scale = statistics.median([e * math.sqrt(n) for n, e in everything])
    lo, hi = min(n for n, _ in everything), max(n for n, _ in everything)
    lo_e = min(min(e for _, e in everything), scale / math.sqrt(hi))
    hi_e = max(max(e for _, e in everything), scale / math.sqrt(lo))
    guide_n = [lo * (hi / lo) ** (i / 11) for i in range(12)]
    guide_e = [scale / math.sqrt(n) for n in guide_n]
    xlim, ylim = (lo / 1.6, hi * 1.6), (lo_e / 1.6, hi_e * 1.6)
    guide = {"color": MUTED, "linewidth": 1.3, "linestyle": (0, (5, 3))}

    def frame(ax, most_x: int, most_y: int) -> None:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        log_axis(ax.xaxis, decades(*xlim, most_x), short_count)
        log_axis(ax.yaxis, decades(*ylim, most_y), lambda v: f"{v:g}")
        ax.grid(True)
        ax.set_axisbelow(True)
        ax.plot(guide_n, guide_e, zorder=1, **guide)

    many = len(drawn) > MANY
    if not many:
        fig = canvas(3.9)
        ax = fig.add_subplot()
        frame(ax, 4, 4)
        handles = [Line2D([], [], **guide)]
        for i, (_label, pts) in enumerate(drawn):
            lap = i // len(PALETTE)
            handles += ax.plot([n for n, _ in pts], [e for _, e in pts], color=PALETTE[i % len(PALETTE)],
                               linewidth=1.3, marker=MARKERS[(i + lap) % len(MARKERS)], markersize=5,
                               linestyle=("-", (0, (4, 2)), (0, (1, 1.5)))[lap % 3])
        heading(fig, title, handles, ["1/\u221an guide"] + [label for label, _ in drawn])
        ax.set_xlabel("samples n (log scale)")
        ax.set_ylabel("total variation (log scale)")
    else:
        cols = 3
        rows = math.ceil(len(drawn) / cols)
        fig = canvas(1.0 + rows * 1.25)
        axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).ravel()
        for ax in axes[len(drawn):]:
            ax.set_visible(False)
        for i, (ax, (label, pts)) in enumerate(zip(axes, drawn)):
            frame(ax, 2, 3)
            for other, opts in drawn:
                if other != label:
                    ax.plot([n for n, _ in opts], [e for _, e in opts], color=GREY, linewidth=0.8)
            ax.plot([n for n, _ in pts], [e for _, e in pts], color=TARGET, linewidth=1.6, marker="o", markersize=3.5,
                    zorder=3)
            ax.set_title(label)
            if i + cols < len(drawn):
                ax.tick_params(axis="x", labelbottom=False)
        fig.supxlabel("samples n", fontsize=FONT)
        fig.supylabel("total variation", fontsize=FONT)
        heading(fig, title, [Line2D([], [], color=TARGET, linewidth=1.6, marker="o", markersize=3.5),
                     Line2D([], [], color=GREY, linewidth=0.8), Line2D([], [], **guide)],
               ["the panel's profile", "the others", "1/\u221an"])
    svg = finish(fig, name)

    described = [f"{label}: {pts[0][1]:.3g} at {count(pts[0][0])} samples down to {pts[-1][1]:.3g} at "
                 f"{count(pts[-1][0])}" for label, pts in drawn]
    shape = "One small panel per series, each highlighting its own line over the others in grey. " if many else ""
    alt = (f"{title}. {shape}Total variation distance between the observed and the target distribution against the "
           "number of samples, both axes logarithmic, with a dashed guide line falling as 1 over the square root of n. "
           + "; ".join(described) + ".")
    caption = "Each tenfold increase in samples should cut the error by about \u221a10 \u2248 3.2, the dashed 1/\u221an guide."
    if slope is not None:
        caption += f" The fitted log-log slope, averaged over the curves, is {signed(slope)}, against the guide's \u22120.5."
    return Figure(name, svg, alt, caption)


# --- 4. how many tokens one round commits -------------------------------------------------------


@figure
def round_length_distribution(
    name: str,
    series: Sequence[tuple[str, Sequence[Number]]],
    k: int,
    expected: Sequence[Number],
) -> Figure:
    """Grouped bars of P(N = n), each draft's expected N marked, since the mean is what the speedup uses.

    expected holds each series' E[N], as the analysis computed it.
    """
    m = len(series)
    n_values = list(range(1, k + 2))
    width = 0.8 / m
    means = [float(e) for e in expected]
    top = max(float(p) for _, probs in series for p in probs)
    lane = 0.16 * top
    ymax = top * 1.08 + lane * (m + 0.4)
    fig = canvas(3.9)
    ax = fig.add_subplot()
    handles = []
    for i, (_label, probs) in enumerate(series):
        offset = (i - (m - 1) / 2) * width
        colour = PALETTE[i % len(PALETTE)]
        ax.bar([n + offset for n in n_values], [float(p) for p in probs], width * 0.95, **bar_style(i))
        y = ymax - lane * (i + 0.7)
        mu = means[i]
        ax.plot([mu, mu], [0, y], color=colour, linewidth=1.2, linestyle=(0, (2, 2)), zorder=3)
        pin = {"marker": MARKERS[i % len(MARKERS)], "markersize": 7, "color": colour, "markeredgecolor": INK,
               "linestyle": "none"}
        ax.plot([mu], [y], zorder=4, **pin)
        # beside its marker, on the side where no taller dashed line (an earlier draft's) and no axis edge is in the way
        span = (text_width(fig, f"E[N] = {decimal(mu)}") + 14) * (k + 1.2) / (WIDTH * 72 - 60)
        clear_right = mu + span < k + 1.6 and not any(mu < other < mu + span for other in means[:i])
        clear_left = mu - span > 0.4 and not any(mu - span < other < mu for other in means[:i])
        if clear_right or clear_left:  # else the legend alone gives this E[N]
            right = clear_right if clear_right != clear_left else mu < (0.4 + k + 1.6) / 2
            ax.annotate(f"E[N] = {decimal(mu)}", (mu, y), xytext=(7 if right else -7, 0), textcoords="offset points",
                        ha="left" if right else "right", va="center")
        handles.append((Patch(**bar_style(i)), Line2D([], [], **pin)))
    ax.set_xlim(0.4, k + 1.6)
    ax.set_ylim(0, ymax)
    ax.xaxis.set_major_locator(FixedLocator(n_values))
    ax.tick_params(axis="x", length=0)
    ax.yaxis.set_major_locator(FixedLocator([v for v in matplotlib.ticker.MaxNLocator(4).tick_values(0, top)
                                             if 0 <= v <= top * 1.1]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0%}"))
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.set_xlabel(wrap(fig, f"tokens committed in one round, N (k = {k} proposals; N = {k + 1}: all accepted plus "
                            "the bonus)", WIDTH * 72 - 60))
    ax.set_ylabel("probability")
    heading(fig, "", handles, [f"{label}, E[N] = {decimal(mu)}" for (label, _), mu in zip(series, means)], most=1)
    svg = finish(fig, name)

    described = [f"{label}: " + ", ".join(f"N = {n}: {pct(p)}" for n, p in zip(n_values, probs))
                 + f"; expected {decimal(mu)} tokens" for (label, probs), mu in zip(series, means)]
    alt = (f"Bar chart of the number of tokens N one round commits, from 1 to {k + 1} (k = {k} proposals, "
           f"N = {k + 1} when every proposal is accepted and the bonus is drawn), for each draft. "
           + ". ".join(described) + ".")
    most = [f"{lower_first(label)} most often commits {n_values[argmax([float(p) for p in probs])]} "
            f"and expects {decimal(mu)}" for (label, probs), mu in zip(series, means)]
    caption = (f"With k = {k} proposals a round commits between 1 and {k + 1} tokens; {'; '.join(most)}. "
               "Dashed lines with markers show each draft's expected tokens per round.")
    return Figure(name, svg, alt, caption)


# --- 5. speedup against draft length ------------------------------------------------------------


@figure
def speedup_vs_k(
    name: str,
    curves: Sequence[tuple[str, Sequence[tuple[int, Number]]]],
    best: Sequence[tuple[str, int, Number]],
    cost: Number | None = None,
) -> Figure:
    """Each curve rises while another draft token is likely to be kept and falls once it mostly costs; the star is
    the turn. cost is the draft's cost per token as a fraction of a target step (c); the title names it."""
    ks = sorted({int(kk) for _, pts in curves for kk, _ in pts})
    values = [float(s) for _, pts in curves for _, s in pts] + [1.0]
    best_of = {label: (kk, s) for label, kk, s in best}
    title = "Speedup against draft length K" + (f" at draft cost c\u00a0=\u00a0{exact(cost)}" if cost is not None else "")
    lo, hi = min(values), max(values)
    fig = canvas(4.0)
    ax = fig.add_subplot()
    flat = {"color": MUTED, "linewidth": 1.2, "linestyle": (0, (5, 3))}
    ax.axhline(1, zorder=1, **flat)
    handles, labels = [], []
    for i, (label, pts) in enumerate(curves):
        colour = PALETTE[i % len(PALETTE)]
        handles += ax.plot([int(kk) for kk, _ in pts], [float(s) for _, s in pts], color=colour, linewidth=1.5,
                           marker=MARKERS[i % len(MARKERS)], markersize=4.5)
        labels.append(f"{label}, best K = {best_of[label][0]}" if label in best_of else label)
        if label in best_of:
            kk, s = best_of[label]
            ax.plot([kk], [float(s)], marker="*", markersize=14, color=colour, markeredgecolor=INK,
                    markeredgewidth=0.8, linestyle="none", zorder=4)
    handles += [Line2D([], [], marker="*", markersize=12, color=MUTED, markeredgecolor=INK, linestyle="none"),
                Line2D([], [], **flat)]
    labels += ["best K", "no gain (1\u00d7)"]
    ax.set_xlim(ks[0] - 0.5, ks[-1] + 0.5)
    ax.set_ylim(min(0.8, lo - 0.1), hi + 0.12 * (hi - min(lo, 1)))
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(8, integer=True))
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}\u00d7"))
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.set_xlabel("draft length K")
    ax.set_ylabel("speedup \u00d7")
    heading(fig, title, handles, labels, most=2)
    svg = finish(fig, name)

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
    at_cost = (f" at draft cost c = {exact(cost)} (one draft token costs {exact(cost)} of a target step)"
               if cost is not None else "")
    alt = (f"Line chart of speedup over plain decoding against draft length K{at_cost}, one line per draft quality, "
           "with a star at each line's best K and a dashed line at 1\u00d7 meaning no gain. " + "; ".join(described) + ".")
    ordered = sorted(best, key=lambda b: (b[1], float(b[2])))
    if ordered:
        first, last = ordered[0], ordered[-1]
        span = (f"The best draft length runs from K = {first[1]} ({first[0]}, {decimal(first[2])}\u00d7) "
                f"to K = {last[1]} ({last[0]}, {decimal(last[2])}\u00d7)")
    else:
        span = "Speedup against draft length"
    if cost is not None:
        span = f"At draft cost c = {exact(cost)}: {lower_first(span)}"
    return Figure(name, svg, alt, f"{span}.")  # why the curves peak, the page says once, not under each figure


# --- 6. why verifying several positions costs about as much as one ------------------------------


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times each power of ten inside [lo, hi]; only the powers of ten when those would be more than eight."""
    span = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    every = [m * 10.0 ** e for e in span for m in (1, 2, 5) if lo <= m * 10.0 ** e <= hi]
    return every if len(every) <= 8 else [10.0 ** e for e in span if lo <= 10.0 ** e <= hi]


@figure
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

    memory_ms is the weight-reading floor (one number or one per position); compute_ms is either the compute time
    per scored position (one number: a straight slope) or one per position. knee is where compute overtakes
    memory, as the analysis computed it; None draws no knee.
    """
    pos = [int(p) for p in positions]
    times = [float(t) for t in times_ms]
    floor = [float(v) for v in memory_ms] if isinstance(memory_ms, Sequence) else [float(memory_ms)] * len(pos)
    slope = [float(v) for v in compute_ms] if isinstance(compute_ms, Sequence) else [float(compute_ms) * p for p in pos]
    crossing = None if knee is None else float(knee)
    flat = max(i for i, t in enumerate(times) if t <= 1.1 * times[0])
    fig = canvas(4.3)
    ax = fig.add_subplot()
    memory = {"color": PALETTE[0], "linewidth": 1.4, "linestyle": (0, (5, 3))}
    compute = {"color": PALETTE[1], "linewidth": 1.8, "linestyle": (0, (1.5, 2))}
    modelled = {"color": INK, "linewidth": 1.8, "marker": "o", "markersize": 4}
    ax.set_xscale("log")
    ax.set_yscale("log")
    xlim = (pos[0] / 1.3, pos[-1] * 1.3)
    ylim = (min(times + floor) / 1.6, max(times + slope) * 1.4)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    powers = [p for p in (2 ** e for e in range(24)) if pos[0] <= p <= pos[-1]]
    log_axis(ax.xaxis, powers[::max(1, math.ceil(len(powers) / 6))], lambda v: f"{v:g}")
    log_axis(ax.yaxis, log_ticks(*ylim), lambda v: f"{v:g}")
    ax.grid(True)
    ax.set_axisbelow(True)
    handles = ax.plot(pos, floor, **memory) + ax.plot(pos, slope, **compute) + ax.plot(pos, times, **modelled)
    if crossing is not None and pos[0] <= crossing <= pos[-1]:
        ax.axvline(crossing, color=MUTED, linewidth=0.9, linestyle=(0, (1, 1.65)))
        ax.annotate(f"knee \u2248 {crossing:.0f}", (crossing, ylim[1]), xytext=(-4, -4), textcoords="offset points",
                    ha="right", va="top", color=MUTED)
    ax.set_xlabel("positions scored in one forward pass (log scale)")
    ax.set_ylabel("time per pass, ms (log)")
    ax.set_title(wrap(fig, f"A model, not a measurement: {model_label}", WIDTH * 72 - 70), loc="left", color=MUTED)
    heading(fig, "Time per forward pass (a cost model)", handles, ["memory floor", "compute slope", "modelled time"],
            most=2)
    svg = finish(fig, name)

    knee_words = f", the knee near {crossing:.0f} positions where compute overtakes memory" if crossing else ""
    alt = (f"A model, not a measurement ({model_label}): modelled time per forward pass against the number of "
           f"positions scored, both axes logarithmic, with dashed lines for the memory floor and the compute slope"
           f"{knee_words}. The time stays within 10% of {times[0]:.3g} ms from {pos[0]} to {pos[flat]} positions, "
           f"because reading the weights dominates, then grows with the positions scored, reaching {times[-1]:.3g} ms "
           f"at {pos[-1]}.")
    if draft_positions is not None and draft_ms is not None:
        caption = (f"A model, not a measurement ({model_label}): checking a draft of K = {draft_positions} tokens in one "
                   f"pass takes {decimal(draft_ms)} ms, "
                   + ("as long as" if decimal(draft_ms) == decimal(times[0]) else "against")
                   + f" writing a single token ({decimal(times[0])} ms)"
                   + (f"; arithmetic overtakes reading the weights only near {crossing:.0f} positions." if crossing else "."))
    else:
        ratio = times[flat] / times[0]
        caption = (f"A model, not a measurement: under it ({model_label}), scoring {pos[flat]} positions in one pass "
                   f"takes {decimal(ratio)}\u00d7 as long as scoring {pos[0]}"
                   + (", which is why checking a whole draft costs about one target step." if ratio <= 1.2 else "."))
    return Figure(name, svg, alt, caption)


# --- 7. acceptance rate per position ------------------------------------------------------------


@figure
def acceptance_bars(name: str, labels: Sequence[str], rates: Sequence[tuple[str, Sequence[Number]]]) -> Figure:
    """Grouped bars with their exact values printed on them (where they fit), since the text quotes those fractions."""
    m = len(rates)
    width = 0.8 / m
    shown = [re.sub(r"^position\s+", "", str(lab)) for lab in labels]  # the axis title says "position"
    fig = canvas(3.7)
    ax = fig.add_subplot()
    values = [exact(a) for _, alphas in rates for a in alphas]
    slot = (WIDTH * 72 - 60) / len(labels) * width
    printed = max(text_width(fig, v) for v in values) + 2 <= slot
    for i, (_profile, alphas) in enumerate(rates):
        offset = (i - (m - 1) / 2) * width
        ax.bar([j + offset for j in range(len(alphas))], [float(a) for a in alphas], width * 0.92, **bar_style(i))
        if printed:
            for j, a in enumerate(alphas):
                ax.annotate(exact(a), (j + offset, float(a)), xytext=(0, 2), textcoords="offset points", ha="center",
                            va="bottom")
    ax.set_xlim(-0.5, len(labels) - 0.5)
    ax.set_ylim(0, 1.14)
    ax.xaxis.set_major_locator(FixedLocator(range(len(labels))))
    ax.set_xticklabels(shown)
    ax.tick_params(axis="x", length=0)
    ax.yaxis.set_major_locator(FixedLocator([0, 0.25, 0.5, 0.75, 1]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.set_xlabel("position")
    ax.set_ylabel("acceptance rate \u03b1")
    heading(fig, "", [Patch(**bar_style(i)) for i in range(m)], [profile for profile, _ in rates], most=2)
    svg = finish(fig, name)

    described = [f"{profile}: " + ", ".join(f"{exact(a)} at {lab}" for lab, a in zip(labels, alphas))
                 for profile, alphas in rates]
    alt = ("Bar chart of the acceptance rate at each position, the chance that the draft's proposal there "
           "survives the target's check, for each draft. " + "; ".join(described) + ".")
    ranges = []
    for profile, alphas in rates:
        lo = min(alphas, key=float)
        where = [lab for lab, a in zip(labels, alphas) if float(a) == float(lo)]
        ranges.append(f"{lower_first(profile)}: lowest {exact(lo)} (at {places(where)}), "
                      f"highest {exact(max(alphas, key=float))}")
    caption = ("Acceptance rate per position, \u03b1 = \u2211 min(p, q): the chance a proposal there is kept. "
               + upper_first("; ".join(ranges)) + ".")
    return Figure(name, svg, alt, caption)
