"""Charts for the explainer: numbers in, an SVG with its alt text and caption out.

Each function draws one chart from numbers the engine already computed and writes the alt text
and caption from those same numbers, so what a screen-reader user hears cannot drift from what
the picture shows. Nothing here knows about templates, pages or files.

Drawn for a phone first. Every figure is WIDTH inches wide (331 SVG user units) and every text in
it is at least MIN_FONT points, so in the 340-360 CSS px a 390 px wide phone gives a figure each
text renders at 11 px or more; wider screens show the same drawing larger. Geometry is explicit:
margins come from the measured sizes of the labels each chart actually has (no layout engine), so
a layout is cheap, the same on every machine and never collapses however many positions or tokens
a profile has. After drawing, check() measures every text and refuses a figure in which two texts
overlap, a text crosses an axis line, covers the marks it sits among, or leaves the card.

Every SVG is byte-identical from run to run whatever matplotlibrc the machine has (the settings
are reset to matplotlib's defaults plus STYLE before drawing), sits on its own rounded card whose
colours palette.dark() swaps for the dark page, keeps its viewBox so CSS can scale it, and never
lets colour alone carry meaning: each Okabe-Ito colour is paired with a hatch, a marker, a line
style or a direct label.
"""
from __future__ import annotations

import contextlib
import functools
import io
import itertools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from . import lean_matplotlib  # noqa: F401  (first: it changes how the rest of matplotlib imports)

# isort: split
import matplotlib
import numpy as np
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure as _Canvas
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle
from matplotlib.text import Text
from matplotlib.textpath import TextToPath
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    MultipleLocator,
    NullLocator,
)

from .palette import CARD, CARD_EDGE, FAINT, GREY, INK, MUTED, PALETTE

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
FONT = 11.0  # points = SVG user units; the smallest size any text is set in
MIN_FONT = FONT
TITLE = 12.0
INSET = 0.12  # inches between the card's edge and anything drawn
GAP = 0.08  # inches between two bands (title, legend, plot)
TICK = 7 / 72  # tick length plus its pad, inches
LABELPAD = 4 / 72

HATCHES = ("", "///", "\\\\\\", "xx", "---", "|||", "++")  # line hatches: dots cost kilobytes each
MARKERS = ("o", "s", "^", "D", "v", "P", "X")

TARGET_COLOUR = PALETTE[0]
DRAFT_COLOUR = PALETTE[1]

STYLE = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": FONT,
    "axes.titlesize": FONT,
    "axes.labelsize": FONT,
    "axes.labelpad": 4.0,
    "xtick.labelsize": FONT,
    "ytick.labelsize": FONT,
    "xtick.major.size": 3.5,
    "ytick.major.size": 3.5,
    "xtick.major.pad": 3.5,
    "ytick.major.pad": 3.5,
    "legend.fontsize": FONT,
    "figure.titlesize": TITLE,
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
    "hatch.color": INK,
    "hatch.linewidth": 0.9,
    "legend.frameon": False,
    "path.simplify": True,
    "figure.dpi": 72,  # one display unit is one point is one SVG user unit
    "savefig.dpi": 72,
}


@contextlib.contextmanager
def settings(name: str) -> Iterator[None]:
    """matplotlib's own defaults plus STYLE, whatever matplotlibrc, MATPLOTLIBRC or style the machine has."""
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        # Salted by name so that two figures inlined in one page never share a clip-path id.
        matplotlib.rcParams.update({**STYLE, "svg.hashsalt": f"specdec-figure-{name}"})
        yield


# --- measuring text -----------------------------------------------------------------------------

_TEXT2PATH = TextToPath()


@functools.lru_cache(maxsize=8192)
def _line_width(line: str, size: float) -> float:
    prop = FontProperties(family="DejaVu Sans", size=size)
    return _TEXT2PATH.get_text_width_height_descent(line, prop, ismath=False)[0] / 72


def text_size(text: str, size: float = FONT) -> tuple[float, float]:
    """Width and height in inches of a text as the SVG sets it (DejaVu Sans, as the SVG renderer measures)."""
    lines = str(text).split("\n")
    return max(_line_width(line, size) for line in lines), size / 72 * (1.17 + 1.2 * (len(lines) - 1))


def _wrap(text: str, width: float, size: float = FONT) -> str:
    """Break a text at spaces so that no line is wider than width inches; a no-break space holds its
    neighbours together ("c = 1/10") and becomes a plain space in the figure."""
    lines: list[str] = []
    for word in str(text).split(" "):
        if lines and text_size(f"{lines[-1]} {word}", size)[0] <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines).replace("\u00a0", " ")


def _tick_labels(axis) -> list[str]:
    """The tick labels an axis will draw with its current limits, locator and formatter."""
    lo, hi = sorted(axis.get_view_interval())
    span = (hi - lo) * 1e-9
    locs = [v for v in axis.get_major_locator()() if lo - span <= v <= hi + span]
    return [s for s in axis.get_major_formatter().format_ticks(locs) if s]


def _widest(labels: Sequence[str], size: float = FONT) -> float:
    return max((text_size(s, size)[0] for s in labels), default=0.0)


def _tallest(labels: Sequence[str], size: float = FONT) -> float:
    return max((text_size(s, size)[1] for s in labels), default=0.0)


# --- geometry -----------------------------------------------------------------------------------


@dataclass
class Sheet:
    """Where things go, in inches from the figure's top-left corner, for one fixed-width figure."""

    fig: _Canvas
    height: float = 0.0

    def finish(self, height: float) -> None:
        self.height = height
        self.fig.set_size_inches(WIDTH, height)

    def place(self, ax, left: float, top: float, width: float, height: float) -> None:
        h = self.height
        ax.set_position((left / WIDTH, (h - top - height) / h, width / WIDTH, height / h))

    def text(self, x: float, top: float, s: str, size: float = FONT, **kw) -> Text:
        return self.fig.text(x, self.height - top, s, transform=self.fig.dpi_scale_trans, va="top",
                             fontsize=size, **kw)

    def legend(self, handles, labels, top: float, ncols: int, left: float = INSET, handlelength: float = 2.0, **kw):
        return self.fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(left, self.height - top),
                               bbox_transform=self.fig.dpi_scale_trans, ncols=ncols, borderpad=0, borderaxespad=0,
                               handlelength=handlelength, handletextpad=0.6, columnspacing=1.2, **kw)


def _legend_shape(labels: Sequence[str], width: float, handle: float = 2.0) -> tuple[int, float]:
    """How many columns fit in width inches, and the height in inches the legend then takes.

    The columns are measured as matplotlib fills them: n entries in cols columns go n // cols to a column and
    one more to each of the first n % cols (numpy.array_split), not ceil(n / cols) to every column but the
    last: 5 entries in 4 columns are 2+1+1+1, four columns wide, where the other filling gives 2+2+1, three."""
    em = FONT / 72
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


def _single_layout(fig: _Canvas, ax, *, title: str | None = None, note: str | None = None,
                   legend: tuple[list, list] | None = None, plot_height: float = 2.1,
                   legend_handle: float = 2.0) -> Sheet:
    """One axes under a title, an optional note and a legend band, margins measured from its own labels."""
    sheet = Sheet(fig)
    ytw = _widest(_tick_labels(ax.yaxis)) if ax.yaxis.get_major_locator() is not None else 0
    xtl = _tick_labels(ax.xaxis)
    xth = _tallest(xtl)
    ylabel = ax.get_ylabel()
    xlabel = ax.get_xlabel()
    left = INSET + (text_size(ylabel)[1] + LABELPAD if ylabel else 0) + ytw + TICK
    right = INSET + max(_widest(xtl[-1:]) / 2, 0.05)
    width = WIDTH - left - right
    top = INSET
    items = []
    if title:
        title = _wrap(title, WIDTH - 2 * INSET, TITLE)
        items.append(("title", top, title))
        top += text_size(title, TITLE)[1] + GAP
    if note:
        note = _wrap(note, WIDTH - 2 * INSET)
        items.append(("note", top, note))
        top += text_size(note)[1] + GAP
    if legend:
        cols, tall = _legend_shape(legend[1], WIDTH - 2 * INSET, legend_handle)
        items.append(("legend", top, cols))
        top += tall + GAP
    top += FONT / 72 / 2  # the top y tick label reaches half a line above the axes
    bottom = (xth + TICK if xtl else 0) + (text_size(xlabel)[1] + LABELPAD if xlabel else 0) + INSET
    sheet.finish(top + plot_height + bottom)
    sheet.place(ax, left, top, width, plot_height)
    for kind, y, what in items:
        if kind == "title":
            sheet.text(INSET, y, what, TITLE, ha="left")
        elif kind == "note":
            sheet.text(INSET, y, what, FONT, ha="left", color=MUTED)
        else:
            sheet.legend(*legend, top=y, ncols=what, handlelength=legend_handle)
    return sheet


def _grid(fig: _Canvas, panels: int, cols: int, *, left: float, panel_height: float, top: float,
          title_height: float, bottom_band: float, hspace: float, wspace: float = 0.12):
    """panels axes in a grid of cols columns below top inches; returns the axes and the sheet height.

    The panels share nothing: each is given the same limits instead, because matplotlib measures every
    shared sibling's tick labels to place each axis label, which costs a third of a 12-panel drawing."""
    rows = math.ceil(panels / cols)
    width = (WIDTH - left - INSET - (cols - 1) * wspace) / cols
    axes = [fig.add_axes((0, 0, 1, 1)) for _ in range(panels)]
    height = top + rows * (title_height + panel_height + bottom_band) + (rows - 1) * hspace + INSET

    def place(sheet: Sheet) -> None:
        for i, ax in enumerate(axes):
            r, c = divmod(i, cols)
            y = top + r * (title_height + panel_height + bottom_band + hspace) + title_height
            sheet.place(ax, left + c * (width + wspace), y, width, panel_height)
    return axes, height, width, place


# --- drawing and checking -----------------------------------------------------------------------


def _render(name: str, draw: Callable[[_Canvas], None]) -> str:
    """Draw on a fresh matplotlib Figure (never pyplot's global state), check it, and return tidy SVG text."""
    with settings(name):
        fig = _Canvas(figsize=(WIDTH, 3.0), dpi=72)
        fig.patch.set_facecolor("none")
        draw(fig)
        w, h = fig.get_size_inches()
        fig.add_artist(FancyBboxPatch(
            (0.02, 0.02), w - 0.04, h - 0.04, boxstyle="round,pad=0,rounding_size=0.14",
            transform=fig.dpi_scale_trans, facecolor=CARD, edgecolor=CARD_EDGE, linewidth=0.8,
            zorder=-100,
        ))
        out = io.StringIO()
        fig.savefig(out, format="svg", facecolor="none", metadata={"Date": None, "Creator": None})
        problems = collisions(fig)  # the figure is dropped, not cleared: clearing costs a sixth of a drawing
    if problems:
        raise Collision(f"{name}: {problems[0]}")
    return _tidy(out.getvalue())


def _tidy(svg: str) -> str:
    """Drop the XML prologue and every id nothing refers to, so the SVG can be inlined many times per page."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.DOTALL)
    # A <style> in inline SVG would style the whole page; these two properties inherit, so the root can carry them.
    svg = re.sub(r"\s*<style[^>]*>\*\{stroke-linejoin: round; stroke-linecap: butt\}</style>", "", svg)
    svg = svg.replace("<svg ", '<svg stroke-linejoin="round" stroke-linecap="butt" ', 1)
    svg = re.sub(r"\s*<defs>\s*</defs>", "", svg)
    used = set(re.findall(r'url\(#([^)\s]+)\)', svg)) | set(re.findall(r'href="#([^"]+)"', svg))
    return re.sub(r' id="([^"]+)"', lambda m: m.group(0) if m.group(1) in used else "", svg)


def on_data(text: Text) -> Text:
    """Mark a text as meant to sit on the marks of its axes (a label on a bar, say): check() lets it."""
    text.specdec_on_data = True
    return text


def _drawn_texts(fig: _Canvas) -> list[tuple[Text, object]]:
    """Every visible, non-empty text of a drawn figure, each with the axes it belongs inside (or None)."""
    found: list[tuple[Text, object]] = []

    def add(t: Text, owner=None) -> None:
        if t.get_visible() and t.get_text().strip():
            found.append((t, owner))

    for t in fig.texts:
        add(t)
    for legend in fig.legends:
        for t in legend.get_texts():
            add(t)
    for ax in fig.axes:
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            add(t)
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-9
            locs = axis.get_majorticklocs()
            for tick, loc in zip(axis.get_major_ticks(len(locs)), locs):
                if lo - span <= loc <= hi + span and tick.label1.get_visible() and tick.get_visible():
                    add(tick.label1)
        for t in ax.texts:
            add(t, ax)
        if ax.get_legend() is not None:
            for t in ax.get_legend().get_texts():
                add(t, ax)
    return found


def _shrunk(box: tuple[float, float, float, float], by: float = 0.6) -> tuple[float, float, float, float]:
    return (box[0] + by, box[1] + by, box[2] - by, box[3] - by)


def _corners(bbox) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = bbox.extents.tolist()
    return (x0, y0, x1, y1)


def _meet(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _segment_hits(box, p, q) -> bool:
    """Does the segment p-q pass through the box (x0, y0, x1, y1)? Liang-Barsky clipping."""
    x0, y0, x1, y1 = box
    dx, dy = q[0] - p[0], q[1] - p[1]
    t0, t1 = 0.0, 1.0
    for edge_p, edge_q in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if edge_p == 0:
            if edge_q < 0:
                return False
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def _marks(ax) -> Iterator[tuple[str, object]]:
    """What an axes draws as data, as ('box', bbox tuple) and ('path', display points) items."""
    for line in ax.lines:
        if not line.get_visible():
            continue
        pts = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        if line.get_linestyle() not in ("None", "none", "", " ") and len(pts) > 1:
            yield "path", pts
        if line.get_marker() not in (None, "None", "none", "", " "):
            r = line.get_markersize() / 2
            for x, y in pts:
                yield "box", (x - r, y - r, x + r, y + r)
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        transform = coll.get_transform()
        for path in coll.get_paths():
            pts = transform.transform(path.vertices)
            if len(pts) > 1:
                yield "path", pts
    for patch in ax.patches:
        if patch.get_visible() and isinstance(patch, Rectangle) and patch.get_height() and patch.get_width():
            b = patch.get_window_extent()
            yield "box", (b.x0, b.y0, b.x1, b.y1)


def collisions(fig: _Canvas) -> list[str]:
    """What is wrong with a drawn figure's texts, worst first; empty when every text stands clear."""
    renderer = RendererSVG(*fig.get_size_inches() * 72, io.StringIO())
    texts = [(t, owner, _corners(t.get_window_extent(renderer))) for t, owner in _drawn_texts(fig)]
    inners = [_shrunk(box) for _, _, box in texts]  # each box read and shrunk once, not once per pair
    problems = []
    cx0, cy0, cx1, cy1 = _corners(fig.bbox)
    for t, _, (x0, y0, x1, y1) in texts:
        if x0 < cx0 + 1 or y0 < cy0 + 1 or x1 > cx1 - 1 or y1 > cy1 - 1:
            problems.append(f'text "{t.get_text()}" runs off the figure')
    for i, (a, _, _) in enumerate(texts):
        inner = inners[i]
        for j in range(i + 1, len(texts)):
            if _meet(inner, inners[j]):
                problems.append(f'text "{a.get_text()}" overlaps "{texts[j][0].get_text()}"')
    for ax in fig.axes:
        area = _corners(ax.bbox)
        spines = [(side, _corners(s.get_window_extent(renderer))) for side, s in ax.spines.items() if s.get_visible()]
        marks = None
        for (t, owner, _), inner in zip(texts, inners):
            for side, sb in spines:
                if _meet(inner, sb):
                    problems.append(f'text "{t.get_text()}" crosses the {side} axis line')
            if owner is not ax:
                if _meet(inner, area):
                    problems.append(f'text "{t.get_text()}" lies inside the plot area it does not belong to')
                continue
            if getattr(t, "specdec_on_data", False):
                continue
            if marks is None:
                marks = list(_marks(ax))
            for kind, what in marks:
                if kind == "box":
                    hit = _meet(inner, what)
                else:
                    hit = any(_segment_hits(inner, p, q) for p, q in itertools.pairwise(what))
                if hit:
                    problems.append(f'text "{t.get_text()}" covers the data it annotates')
                    break
    return problems


def _every(labels: Sequence[str], width: float) -> int:
    """The smallest stride s such that every s-th of these evenly spaced labels stands clear in width inches."""
    n = len(labels)
    if n < 2:
        return 1
    need = max((text_size(a)[0] + text_size(b)[0]) / 2 for a, b in itertools.pairwise(labels)) + 4 / 72
    return max(1, math.ceil(need / (width / n)))



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



# --- panels of bars, one per position -----------------------------------------------------------


def _panel_layout(tokens: Sequence[str], panels: int, ylabel: str, ytick_width: float) -> tuple[int, bool, float]:
    """Columns for a grid of small bar charts over tokens, whether their token labels must turn upright,
    and the left margin: as many columns as let neighbouring token labels stand clear, at most three."""
    left = INSET + (text_size(ylabel)[1] + LABELPAD if ylabel else 0) + ytick_width + TICK
    n = len(tokens)
    need = max(((text_size(a)[0] + text_size(b)[0]) / 2 for a, b in itertools.pairwise(tokens)), default=0) + 4 / 72
    for cols in (3, 2, 1):
        if cols > panels:
            continue
        width = (WIDTH - left - INSET - (cols - 1) * 0.12) / cols
        if width / n >= need:
            return cols, False, left
    upright = text_size("Tg")[1] + 2 / 72  # turned a quarter, a label needs only a line's height
    for cols in (3, 2, 1):
        width = (WIDTH - left - INSET - (cols - 1) * 0.12) / cols
        if cols <= panels and width / n >= upright:
            return cols, True, left
    return 1, True, left


def _token_axis(ax, tokens: Sequence[str], upright: bool) -> None:
    x = np.arange(len(tokens))
    ax.set_xticks(x, list(tokens), rotation=90 if upright else 0)
    ax.set_xlim(-0.6, len(tokens) - 0.4)
    ax.tick_params(axis="x", length=0, pad=3)
    ax.grid(axis="y", zorder=0)
    ax.set_axisbelow(True)


def _probability_locator(top: float):
    return MultipleLocator(0.5) if top <= 1.2 else MaxNLocator(3)


def _probability_axis(ax, top: float) -> None:
    ax.yaxis.set_major_locator(_probability_locator(top))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))


def _probability_labels(ymax: float, top: float) -> list[str]:
    """The y tick labels _probability_axis gives an axis running from 0 to ymax, without making one."""
    return [f"{v:g}" for v in _probability_locator(top).tick_values(0, ymax) if -1e-9 <= v <= ymax * (1 + 1e-9)]


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
    x = np.arange(len(tokens))
    w = 0.4

    def draw(fig: _Canvas) -> None:
        ytw = _widest(_probability_labels(ymax, ymax))
        cols, upright, left = _panel_layout(tokens, k + 1, "probability", ytw)
        xband = (_widest(tokens) if upright else _tallest(tokens)) + 3 / 72
        legend_labels = ["target", "draft", "draft's proposal \u25bc"]
        lcols, ltall = _legend_shape(legend_labels, WIDTH - 2 * INSET, 1.6)
        title_text = _wrap(title, WIDTH - 2 * INSET, TITLE)
        head = INSET + text_size(title_text, TITLE)[1] + GAP + ltall + GAP
        axes, height, panel_width, place = _grid(
            fig, k + 1, cols, left=left, panel_height=1.05, top=head, title_height=text_size("p")[1] + 4 / 72,
            bottom_band=xband, hspace=0.1)
        per_inch = (len(tokens) + 0.2) / panel_width  # x data units per inch
        sheet = Sheet(fig)
        sheet.finish(height)
        place(sheet)
        for i, ax in enumerate(axes):
            t = np.array([float(p) for p in target_rows[i]])
            ax.set_ylim(0, ymax)
            _probability_axis(ax, ymax)
            _token_axis(ax, tokens, upright)
            if i % cols == 0:
                ax.set_ylabel("probability")
            else:
                ax.tick_params(axis="y", labelleft=False)
            if i == k:
                ax.bar(x, t, 2 * w, color=TARGET_COLOUR, zorder=2)
                ax.set_title(f"bonus (position {k + 1})", pad=4, y=1)  # a fixed y: matplotlib skips measuring the axes to place it
                continue
            d = np.array([float(p) for p in draft_rows[i]])
            p = props[i]
            ax.bar(x - w / 2, t, w, color=TARGET_COLOUR, zorder=2)
            bars = ax.bar(x + w / 2, d, w, color=CARD, edgecolor=DRAFT_COLOUR, linewidth=1.2, zorder=2)
            bars[p].set_hatch("////")
            # The word spans about two slots: centred over the bar, or flush with the panel's edge near it.
            half = text_size("proposal")[0] / 2 * per_inch
            cx = min(max(p + w / 2, -0.55 + half), len(tokens) - 0.45 - half)
            near = [max(t[j], d[j]) for j in range(len(tokens)) if cx - half - 0.5 < j < cx + half + 0.5]
            y = max(near) + 0.04 * ymax
            ax.plot([p + w / 2], [y + 0.03 * ymax], marker="v", color=INK, markersize=5, zorder=3)
            ax.text(cx, y + 0.08 * ymax, "proposal", ha="center", va="bottom", zorder=3)
            ax.set_title(f"position {i + 1}", pad=4, y=1)
        sheet.text(INSET, INSET, title_text, TITLE, ha="left")
        sheet.legend(
            [Patch(facecolor=TARGET_COLOUR), Patch(facecolor=CARD, edgecolor=DRAFT_COLOUR, linewidth=1.2),
             Patch(facecolor=CARD, edgecolor=DRAFT_COLOUR, linewidth=1.2, hatch="////")],
            legend_labels, top=INSET + text_size(title_text, TITLE)[1] + GAP, ncols=lcols, handlelength=1.6)

    svg = _render(name, draw)

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
    counts = [int(samples)] * m if isinstance(samples, (int, np.integer)) else [int(s) for s in samples]
    top = max(float(v) for row in (*target_rows, *frequencies) for v in row)
    x = np.arange(len(tokens))

    def draw(fig: _Canvas) -> None:
        ytw = _widest(_probability_labels(top * 1.12, top))
        cols, upright, left = _panel_layout(tokens, m, "share", ytw)
        width = (WIDTH - left - INSET - (cols - 1) * 0.12) / cols
        heads = [f"{lab}, n = {_count(c)}" for lab, c in zip(position_labels, counts)]
        if _widest(heads) > width:
            heads = [f"{lab}\nn = {_count(c)}" for lab, c in zip(position_labels, counts)]
        xband = (_widest(tokens) if upright else _tallest(tokens)) + 3 / 72
        legend_labels = ["observed frequency", "target probability"]
        lcols, ltall = _legend_shape(legend_labels, WIDTH - 2 * INSET)
        title_text = _wrap(title, WIDTH - 2 * INSET, TITLE)
        head = INSET + text_size(title_text, TITLE)[1] + GAP + ltall + GAP
        axes, height, _, place = _grid(
            fig, m, cols, left=left, panel_height=1.05, top=head, title_height=_tallest(heads) + 4 / 72,
            bottom_band=xband, hspace=0.1)
        sheet = Sheet(fig)
        sheet.finish(height)
        place(sheet)
        for i, ax in enumerate(axes):
            f = [float(v) for v in frequencies[i]]
            t = [float(v) for v in target_rows[i]]
            ax.bar(x, f, 0.62, color=PALETTE[5], edgecolor=PALETTE[0], linewidth=0.8, zorder=2)
            ax.plot(x, t, linestyle="none", marker="_", markersize=12, markeredgewidth=2.2, color=INK, zorder=3)
            ax.set_ylim(0, top * 1.12)
            _probability_axis(ax, top)
            _token_axis(ax, tokens, upright)
            ax.set_title(heads[i], pad=4, y=1)
            if i % cols == 0:
                ax.set_ylabel("share")
            else:
                ax.tick_params(axis="y", labelleft=False)
        sheet.text(INSET, INSET, title_text, TITLE, ha="left")
        sheet.legend(
            [Patch(facecolor=PALETTE[5], edgecolor=PALETTE[0]),
             Line2D([], [], linestyle="none", marker="_", markersize=12, markeredgewidth=2.2, color=INK)],
            legend_labels, top=INSET + text_size(title_text, TITLE)[1] + GAP, ncols=lcols)

    svg = _render(name, draw)

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


def _log_axes(ax, lo_n, hi_n, lo_e, hi_e, xmost: int, ymost: int) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo_n / 1.6, hi_n * 1.6)
    ax.set_ylim(lo_e / 1.6, hi_e * 1.6)
    ax.xaxis.set_major_locator(FixedLocator(_log_decades(lo_n / 1.6, hi_n * 1.6, xmost)))
    ax.xaxis.set_major_formatter(FuncFormatter(_short_count))
    ax.yaxis.set_major_locator(FixedLocator(_log_decades(lo_e / 1.6, hi_e * 1.6, ymost)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_locator(NullLocator())
    ax.grid(which="major", zorder=0)


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
    scale = float(np.median([e * math.sqrt(n) for n, e in everything]))
    lo = min(n for n, _ in everything)
    hi = max(n for n, _ in everything)
    lo_e = min(min(e for _, e in everything), scale / math.sqrt(hi))
    hi_e = max(max(e for _, e in everything), scale / math.sqrt(lo))
    guide_n = np.geomspace(lo, hi, 12)
    drawn = [(label, pts) for label, pts in clean if pts]

    def single(fig: _Canvas) -> None:
        ax = fig.add_axes((0, 0, 1, 1))
        _log_axes(ax, lo, hi, lo_e, hi_e, 4, 4)
        guide, = ax.plot(guide_n, scale / np.sqrt(guide_n), linestyle=(0, (5, 3)), color=MUTED, linewidth=1.4,
                         zorder=1)
        handles = [guide]
        for i, (_label, pts) in enumerate(drawn):
            lap = i // len(PALETTE)  # past the palette, a new marker and line style keep curves apart
            handles += ax.plot([n for n, _ in pts], [e for _, e in pts], color=PALETTE[i % len(PALETTE)],
                               marker=MARKERS[(i + lap) % len(MARKERS)], markersize=5, linewidth=1.3,
                               linestyle=("-", (0, (4, 2)), (0, (1, 1.5)))[lap % 3], zorder=2)
        ax.set_xlabel("samples n (log scale)")
        ax.set_ylabel("total variation (log scale)")
        _single_layout(fig, ax, title=title, legend=(handles, ["1/\u221an guide"] + [lab for lab, _ in drawn]),
                       plot_height=2.2, legend_handle=2.2)

    def multiples(fig: _Canvas) -> None:
        cols = 3
        # The labels _log_axes will give, measured without drawing an axes for them.
        ytw = _widest([f"{v:g}" for v in _log_decades(lo_e / 1.6, hi_e * 1.6, 3)])
        xtl = [_short_count(v) for v in _log_decades(lo / 1.6, hi * 1.6, 2)]
        left = INSET + text_size("t")[1] + LABELPAD + ytw + TICK
        title_text = _wrap(title, WIDTH - 2 * INSET, TITLE)
        note = _wrap("colour: the panel's profile; grey: the others; dashed: 1/\u221an", WIDTH - 2 * INSET)
        head = INSET + text_size(title_text, TITLE)[1] + GAP + text_size(note)[1] + GAP
        axes, height, _, place = _grid(
            fig, len(drawn), cols, left=left, panel_height=0.85, top=head, title_height=text_size("p")[1] + 4 / 72,
            bottom_band=0.0, hspace=0.06, wspace=0.1)
        rows = math.ceil(len(drawn) / cols)
        bottom = _tallest(xtl) + TICK + text_size("n")[1] + LABELPAD
        sheet = Sheet(fig)
        sheet.finish(height + bottom)
        place(sheet)
        for i, (ax, (label, pts)) in enumerate(zip(axes, drawn)):
            _log_axes(ax, lo, hi, lo_e, hi_e, 2, 3)
            ax.plot(guide_n, scale / np.sqrt(guide_n), linestyle=(0, (5, 3)), color=MUTED, linewidth=1.1, zorder=1)
            ax.add_collection(LineCollection(  # the other profiles, one artist for all of them
                [np.array(opts, dtype=float) for other, opts in drawn if other != label],
                colors=GREY, linewidths=0.8, zorder=2), autolim=False)
            ax.plot([n for n, _ in pts], [e for _, e in pts], color=PALETTE[0], marker="o", markersize=3.5,
                    linewidth=1.6, zorder=3)
            ax.set_title(label, pad=4, y=1)
            r, c = divmod(i, cols)
            below = i + cols < len(drawn)
            ax.tick_params(axis="x", labelbottom=not below)
            ax.tick_params(axis="y", labelleft=c == 0)
            if c == 0 and r == rows // 2:
                ax.set_ylabel("total variation")
            if not below and c == min(cols, len(drawn)) // 2 and r == rows - 1 or not below and r == rows - 1 and len(drawn) % cols and c == (len(drawn) % cols) // 2:
                ax.set_xlabel("samples n")
        sheet.text(INSET, INSET, title_text, TITLE, ha="left")
        sheet.text(INSET, INSET + text_size(title_text, TITLE)[1] + GAP, note, FONT, ha="left", color=MUTED)

    svg = _render(name, multiples if len(drawn) > MANY else single)

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
    n_values = np.arange(1, k + 2)
    width = 0.8 / m
    means = [float(e) for e in expected]
    top = max(float(p) for _, probs in series for p in probs)
    lane = 0.16 * top
    ymax = top * 1.08 + lane * (m + 0.4)

    def draw(fig: _Canvas) -> None:
        ax = fig.add_axes((0, 0, 1, 1))
        handles = []
        marks = []
        for i, (_label, probs) in enumerate(series):
            colour = PALETTE[i % len(PALETTE)]
            hatch = HATCHES[i % len(HATCHES)]
            offset = (i - (m - 1) / 2) * width
            ax.bar(n_values + offset, [float(p) for p in probs], width * 0.95, color=colour,
                   edgecolor=INK if hatch else colour, linewidth=0.5, hatch=hatch, zorder=2)
            y = ymax - lane * (i + 0.7)
            mu = means[i]
            ax.vlines(mu, 0, y, colors=colour, linestyles=(0, (2, 2)), linewidth=1.2, zorder=3)
            mark = Line2D([mu], [y], marker=MARKERS[i % len(MARKERS)], color=colour, markeredgecolor=INK,
                          markersize=7, linestyle="none", zorder=4)
            ax.add_line(mark)
            marks.append((mu, y))
            handles.append((Patch(facecolor=colour, edgecolor=INK if hatch else colour, linewidth=0.5, hatch=hatch),
                            Line2D([], [], marker=MARKERS[i % len(MARKERS)], color=colour, markeredgecolor=INK,
                                   markersize=7, linestyle="none")))
        ax.set_xlim(0.4, k + 1.6)
        ax.set_ylim(0, ymax)
        labels = [str(n) for n in n_values]
        ax.set_xticks(n_values[::_every(labels, 3.4)])
        ticks = [v for v in MaxNLocator(4).tick_values(0, top) if v <= top * 1.1]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:.0%}"))
        ax.set_xlabel(_wrap(f"tokens committed in one round, N (k = {k} proposals; N = {k + 1}: all accepted "
                            "plus the bonus)", 3.9))
        ax.set_ylabel("probability")
        ax.tick_params(axis="x", length=0)
        ax.grid(axis="y", zorder=0)
        ax.set_axisbelow(True)
        _single_layout(fig, ax, legend=(handles, [f"{label}, E[N] = {mu:.2f}" for (label, _), mu in zip(series, means)]),
                       plot_height=2.1)
        x_lo, x_hi = ax.get_xlim()
        per_inch = (x_hi - x_lo) / (ax.get_position().width * WIDTH)
        for i, (mu, y) in enumerate(marks):
            # To the side where no taller dashed line (an earlier lane) and no axis edge is in the way.
            span = (text_size(f"E[N] = {mu:.2f}")[0] + 0.2) * per_inch
            clear_right = mu + span < x_hi and not any(mu < other < mu + span for other, _ in marks[:i])
            clear_left = mu - span > x_lo and not any(mu - span < other < mu for other, _ in marks[:i])
            if not (clear_right or clear_left):
                continue  # no room beside the mark; the legend already gives this E[N]
            right = clear_right if clear_right != clear_left else mu < (x_lo + x_hi) / 2
            ax.annotate(f"E[N] = {mu:.2f}", xy=(mu, y), xytext=(7 if right else -7, 0),
                        textcoords="offset points", ha="left" if right else "right", va="center", zorder=5)

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

    def draw(fig: _Canvas) -> None:
        ax = fig.add_axes((0, 0, 1, 1))
        flat = ax.axhline(1, color=MUTED, linestyle=(0, (5, 3)), linewidth=1.2, zorder=1)
        handles, labels = [], []
        for label, pts in curves:
            colour, marker = colours[label]
            handles += ax.plot([int(kk) for kk, _ in pts], [float(s) for _, s in pts], color=colour, marker=marker,
                               markersize=4.5, linewidth=1.5, zorder=2)
            labels.append(f"{label}, best K = {best_of[label][0]}" if label in best_of else label)
        for label, kk, s in best:
            colour = colours.get(label, (INK, "o"))[0]
            ax.plot([kk], [float(s)], marker="*", markersize=14, color=colour, markeredgecolor=INK,
                    markeredgewidth=0.8, linestyle="none", zorder=4)
        lo, hi = min(values), max(values)
        ax.set_ylim(min(0.8, lo - 0.1), hi + 0.12 * (hi - min(lo, 1)))
        ax.set_xlim(ks[0] - 0.5, ks[-1] + 0.5)
        ax.xaxis.set_major_locator(FixedLocator(ks[::_every([str(kk) for kk in ks], 3.6)]))
        ax.yaxis.set_major_locator(MaxNLocator(5))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}\u00d7"))
        ax.set_xlabel("draft length K")
        ax.set_ylabel("speedup \u00d7")
        ax.grid(axis="y", zorder=0)
        star = Line2D([], [], marker="*", markersize=12, color=MUTED, markeredgecolor=INK, linestyle="none")
        _single_layout(fig, ax, title=heading,
                       legend=([*handles, star, flat], [*labels, "best K", "no gain (1\u00d7)"]), plot_height=2.1)

    svg = _render(name, draw)

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

    def draw(fig: _Canvas) -> None:
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        handles = ax.plot(pos, floor, linestyle=(0, (5, 3)), color=PALETTE[0], linewidth=1.4)
        handles += ax.plot(pos, slope, linestyle=(0, (1.5, 2)), color=PALETTE[1], linewidth=1.8)
        handles += ax.plot(pos, times, color=INK, marker="o", markersize=4, linewidth=1.8)
        powers = [p for p in (2 ** e for e in range(24)) if pos[0] <= p <= pos[-1]]
        ax.xaxis.set_major_locator(FixedLocator(powers[::_every([f"{p:g}" for p in powers], 3.6)]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_xlim(pos[0] / 1.3, pos[-1] * 1.3)
        ax.set_ylim(min(times + floor) / 1.6, max(times + slope) * 1.4)
        ax.set_xlabel("positions scored in one forward pass (log scale)")
        ax.set_ylabel("time per pass, ms (log)")
        ax.grid(which="major", zorder=0)
        _single_layout(fig, ax, title="Time per forward pass (a cost model)",
                       note=f"A model, not a measurement: {model_label}",
                       legend=(handles, ["memory floor", "compute slope", "modelled time"]), plot_height=2.1,
                       legend_handle=2.4)
        if crossing is not None and pos[0] <= crossing <= pos[-1]:
            ax.axvline(crossing, color=MUTED, linewidth=0.9, linestyle=":")
            ax.annotate(f"knee \u2248 {crossing:.0f}", xy=(crossing, 0.97), xycoords=("data", "axes fraction"),
                        xytext=(-5, 0), textcoords="offset points", ha="right", va="top", color=MUTED)

    svg = _render(name, draw)

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
    x = np.arange(len(labels))
    width = 0.8 / m
    shown = [re.sub(r"^position\s+", "", str(lab)) for lab in labels]  # the axis title says "position"

    def draw(fig: _Canvas) -> None:
        ax = fig.add_axes((0, 0, 1, 1))
        handles = []
        for i, (_profile, alphas) in enumerate(rates):
            colour = PALETTE[i % len(PALETTE)]
            hatch = HATCHES[i % len(HATCHES)]
            offset = (i - (m - 1) / 2) * width
            bars = ax.bar(x + offset, [float(a) for a in alphas], width * 0.92, color=colour,
                          edgecolor=INK if hatch else colour, linewidth=0.5, hatch=hatch, zorder=2)
            handles.append(bars[0])
        ax.set_ylim(0, 1.14)
        ax.set_xlim(-0.5, len(labels) - 0.5)
        ax.yaxis.set_major_locator(FixedLocator([0, 0.25, 0.5, 0.75, 1]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xticks(x[::_every(shown, 3.8)], shown[::_every(shown, 3.8)])
        ax.tick_params(axis="x", length=0)
        ax.set_xlabel("position")
        ax.set_ylabel("acceptance rate \u03b1")
        ax.grid(axis="y", zorder=0)
        ax.set_axisbelow(True)
        _single_layout(fig, ax, legend=(handles, [profile for profile, _ in rates]), plot_height=2.0)
        bar_width = ax.get_position().width * WIDTH / len(labels) * width
        values = [_exact(a) for _, alphas in rates for a in alphas]
        if _widest(values) + 2 / 72 <= bar_width:
            for container, (_, alphas) in zip(ax.containers, rates):
                ax.bar_label(container, [_exact(a) for a in alphas], padding=2)

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
        ranges.append(f"{profile[:1].lower() + profile[1:]}: lowest {_exact(lo)} (at {_places(where)}), "
                      f"highest {_exact(max(alphas, key=float))}")
    caption = (
        "Acceptance rate per position, \u03b1 = \u2211 min(p, q): the chance a proposal there is kept. "
        + "; ".join(ranges)[0].upper() + "; ".join(ranges)[1:] + "."
    )
    return Figure(name, svg, alt, caption)


# --- 8. the opening picture: plain decoding against speculative rounds on one clock -------------


def _single_margin_right(ax) -> float:
    """Inches between an axes' right edge and the figure's, as _single_layout left it."""
    return WIDTH * (1 - ax.get_position().x1)


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
    block, bar, above = 0.62, 0.24, 0.06  # inches per lane, bar height, gap between bar and its label
    plot_height = lanes * block

    def bottom_of(lane: int) -> float:
        return plot_height - (lane + 1) * block + 0.08

    def draw(fig: _Canvas) -> None:
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, horizon)
        ax.set_ylim(0, plot_height)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.xaxis.set_major_locator(MultipleLocator(pass_w))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("time, in target passes")
        ax.grid(axis="x", zorder=0)
        ax.set_axisbelow(True)
        _single_layout(fig, ax, plot_height=plot_height)
        inch = ax.get_position().width * WIDTH / horizon  # inches per target pass
        numbered = text_size(str(most))[0] + 0.06 <= pass_w * inch * 0.94
        y = bottom_of(0)
        ax.text(0, y + bar + above, "Plain decoding: one pass per token", va="bottom", ha="left")
        for n in range(most):
            ax.add_patch(Rectangle((n * pass_w, y), pass_w * 0.94, bar, facecolor=PALETTE[0], edgecolor=INK,
                                   linewidth=0.5, zorder=2))
            if numbered:
                on_data(ax.text(n * pass_w + pass_w * 0.47, y + bar / 2, str(n + 1), ha="center", va="center",
                                color=CARD, fontweight="bold", zorder=3))
        for lane, (label, toks) in enumerate(rounds, start=1):
            y = bottom_of(lane)
            ax.text(0, y + bar + above, _wrap(f"{label}: one round, {_count(len(toks))} tokens", WIDTH * 0.8),
                    va="bottom", ha="left")
            for j in range(k):
                ax.add_patch(Rectangle((j * step_w, y + bar * 0.15), step_w * 0.86, bar * 0.7, facecolor=CARD,
                                       edgecolor=PALETTE[1], hatch="////", linewidth=0.6, zorder=2))
            start = k * step_w
            ax.add_patch(Rectangle((start, y), pass_w * 0.97, bar, facecolor=PALETTE[1], edgecolor=INK,
                                   linewidth=0.5, zorder=2))
            if text_size("check")[0] + 0.06 <= pass_w * inch * 0.97:
                on_data(ax.text(start + pass_w * 0.485, y + bar / 2, "check", ha="center", va="center",
                                color=CARD, fontweight="bold", zorder=3))
            ax.plot([end, end], [y, y + bar], color=INK, linewidth=1.4, zorder=3)
            room = (horizon - end - pass_w * 0.12) * inch + _single_margin_right(ax) - INSET
            shown = " ".join(toks)
            for cut in range(len(toks) - 1, 0, -1):  # as many tokens as fit; the caption lists them all
                if text_size(shown)[0] <= room:
                    break
                shown = " ".join(toks[:cut]) + " \u2026"
            ax.text(end + pass_w * 0.12, y + bar / 2, shown, ha="left", va="center")

    svg = _render(name, draw)
    per_round = "; ".join(f"{label} commits {_count(len(toks))} tokens ({' '.join(toks)})" for label, toks in rounds)
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
