"""The canvas every figure is drawn on: the style, the layout helpers, the collision check and the SVG.

figures.py draws each chart on a canvas() inside style(name) (the @figure decorator) and ends with finish(),
which writes the SVG and then compares every pair of texts with matplotlib's own measurements. matplotlib is
imported inside the functions that draw, not at the top: the figure registry imports the drawing modules on every
build to plan the figures, and a build that finds every figure in its cache draws none.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from .palette import CARD, CARD_EDGE, DRAFT, FAINT, INK, PALETTE, RESIDUAL, TARGET

WIDTH = 4.6  # inches = 331.2 SVG units, drawn for a phone's column
FONT = 11.0  # SVG units (points): the smallest size any text is set in
MIN_FONT = FONT
TITLE = 12.0
PHONE_COLUMN = 358  # CSS px a figure is shown at in a 390 px wide phone (style.css: the column less its padding)
# DejaVu Sans first: matplotlib ships it and measures the layout with it. Then only families whose glyphs are no
# wider (Bitstream Vera Sans is its parent, with the same widths; Liberation Sans, Arimo, Arial and Helvetica are
# narrower), so a reader's device without DejaVu sets every label in the room it was measured for.
FONTS = ("DejaVu Sans", "Bitstream Vera Sans", "Liberation Sans", "Arimo", "Arial", "Helvetica")
SERIES_HATCHES = ("", "xx", "---", "|||", "++")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
SOURCE = __name__.rpartition(".")[0].replace(".", "/") + "/figures.py"  # named in a refused figure's error

if TYPE_CHECKING:
    from matplotlib.figure import Figure as Canvas
    from matplotlib.text import Text


@dataclass(frozen=True)
class Figure:
    """A drawn figure: its file stem (e.g. "profile-aligned"), its light SVG, its alt text and its caption."""

    name: str
    svg: str
    alt: str
    caption: str


class FigureError(Exception):
    """A figure that cannot be drawn, said in one line: `generator/.../figures.py: NAME: what went wrong`."""


class FigureFailed(FigureError):
    """A drawing function that raised: a fault of the figure's code, named as such, where a
    plain FigureError (texts that overlap or leave the figure) is the data's doing."""


def style(name: str) -> dict:
    """Every matplotlib setting a figure is drawn and written with; the hash salt is the figure's own name."""
    import matplotlib

    return {
        "font.family": ["sans-serif"],
        "font.sans-serif": list(FONTS),
        "font.size": FONT,
        "axes.titlesize": FONT,
        "axes.labelsize": FONT,
        "xtick.labelsize": FONT,
        "ytick.labelsize": FONT,
        "legend.fontsize": FONT,
        "figure.titlesize": TITLE,
        "figure.dpi": 72,
        "figure.facecolor": CARD,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.edgecolor": INK,
        "xtick.color": INK,
        "ytick.color": INK,
        "axes.facecolor": CARD,
        "axes.linewidth": 0.8,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.titlepad": 4.0,
        "axes.labelpad": 3.0,
        "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        "grid.color": FAINT,
        "grid.linewidth": 0.8,
        "patch.edgecolor": INK,
        "patch.linewidth": 0.6,
        "hatch.linewidth": 0.8,
        "lines.linewidth": 1.5,
        "lines.markersize": 5,
        "legend.frameon": False,
        "legend.handlelength": 1.6,
        "legend.handletextpad": 0.5,
        "legend.columnspacing": 1.2,
        "legend.borderaxespad": 0.2,
        "legend.borderpad": 0.2,
        "xtick.major.size": 3.5,
        "ytick.major.size": 3.5,
        "xtick.major.pad": 3.5,
        "ytick.major.pad": 3.5,
        "xtick.minor.size": 2,
        "ytick.minor.size": 2,
        "svg.fonttype": "none",
        "svg.hashsalt": name,
        "path.simplify": False,
    }


def figure(function: Callable) -> Callable:
    """A drawing function runs, and writes its SVG, inside its figure's style."""

    @functools.wraps(function)
    def drawn(name: str, *args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(style(name)):
            return function(name, *args, **kwargs)

    return drawn


# --- the canvas, the check and the SVG ----------------------------------------------------------


def canvas(height: float) -> Canvas:
    """A figure WIDTH inches wide on its own rounded card, laid out by matplotlib's constrained layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as Canvas
    from matplotlib.patches import FancyBboxPatch

    fig = Canvas(figsize=(WIDTH, height), layout="constrained")
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(w_pad=8 / 72, h_pad=8 / 72, wspace=0.04, hspace=0.04)
    fig.patch.set_visible(False)  # the square behind the card stays transparent
    fig.add_artist(
        FancyBboxPatch(
            (0.02, 0.02),
            WIDTH - 0.04,
            height - 0.04,
            boxstyle="round,pad=0,rounding_size=0.14",
            transform=fig.dpi_scale_trans,
            facecolor=CARD,
            edgecolor=CARD_EDGE,
            linewidth=0.8,
            zorder=-10,
        )
    )
    return fig


def drawn_texts(fig: Canvas) -> list[Text]:
    """Every text the figure shows: visible, not blank, and for a tick label, its tick inside the axis' view."""
    from matplotlib.text import Text

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
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in drawn_texts(fig)]
    problems = []
    for i, (a, box) in enumerate(boxes):
        if (
            box.x0 < fig.bbox.x0 - 0.5
            or box.x1 > fig.bbox.x1 + 0.5
            or box.y0 < fig.bbox.y0 - 0.5
            or box.y1 > fig.bbox.y1 + 0.5
        ):
            problems.append(f'text "{a}" leaves the figure')
        for b, other in boxes[i + 1 :]:
            if (
                min(box.x1, other.x1) - max(box.x0, other.x0) > 0.5
                and min(box.y1, other.y1) - max(box.y0, other.y0) > 0.5
            ):
                problems.append(f'text "{a}" overlaps "{b}"')
    return problems


def finish(fig: Canvas, name: str) -> str:
    """Lay the figure out and write its SVG, then check its texts where they were written (one drawing, not two)."""
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})  # runs the constrained layout
    fig.set_layout_engine("none")  # keep the positions just written while they are measured
    problems = collisions(fig)
    if problems:
        raise FigureError(f"{SOURCE}: {name}: {problems[0]}")
    return out.getvalue()


@figure
def render_svg(name: str, draw_on: Callable[[Canvas], None], height: float = 3.0) -> str:
    """Draw on a fresh canvas in a figure's style, check it and return its SVG (tests plant collisions this way)."""
    fig = canvas(height)
    draw_on(fig)
    return finish(fig, name)


# --- helpers ------------------------------------------------------------------------------------


def text_width(fig: Canvas, text: str, size: float = FONT) -> float:
    """A text's width in points as matplotlib sets it in this figure."""
    from matplotlib.text import Text

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


def heading(fig: Canvas, title: str, handles: Sequence, labels: Sequence[str], most: int = 3) -> None:
    """The figure's title (if any) flush left across the top, wrapped to the card, and under it the legend in as
    many columns (at most `most`) as fit. One box, so the constrained layout keeps the plots below both."""
    room = WIDTH * 72 - 20
    title = wrap(fig, title, room, TITLE) if title else None
    for cols in range(min(most, len(labels)), 0, -1):
        box = fig.legend(
            handles, labels, loc="outside upper left", ncols=cols, title=title, alignment="left", title_fontsize=TITLE
        )
        if box.get_window_extent(fig.canvas.get_renderer()).width <= room or cols == 1:
            return
        box.remove()


SERIES_COLOURS = tuple(c for c in PALETTE if c not in (TARGET, DRAFT, RESIDUAL))


def bar_style(i: int) -> dict:
    """The i-th series' bars: its colour, and its hatch (outlined in ink) from the second series on. Series
    (drafts, in the acceptance and round-length charts) take neither the target's nor the draft's colour, and
    no diagonal hatch: those mean p, q and the proposal in every figure."""
    colour, hatch = SERIES_COLOURS[i % len(SERIES_COLOURS)], SERIES_HATCHES[i % len(SERIES_HATCHES)]
    return {"facecolor": colour, "edgecolor": INK if hatch else colour, "hatch": hatch or None, "linewidth": 0.5}


TARGET_BAR = MappingProxyType({"facecolor": TARGET, "edgecolor": TARGET, "linewidth": 0.6})
DRAFT_BAR = MappingProxyType({"facecolor": "none", "edgecolor": DRAFT, "linewidth": 1.2})
PROPOSED_BAR = MappingProxyType({"facecolor": "none", "edgecolor": DRAFT, "linewidth": 1.2, "hatch": "////"})


def panel_columns(fig: Canvas, tokens: Sequence[str], panels: int) -> tuple[int, bool]:
    """Columns for a grid of small bar charts over tokens (at most three) such that neighbouring token labels stand
    clear, and whether they must turn upright to."""
    widths = [text_width(fig, t) for t in tokens]
    need = max(((a + b) / 2 for a, b in zip(widths, widths[1:])), default=widths[0]) + 3
    for upright in (False, True):
        for cols in (3, 2, 1):
            per_token = (WIDTH * 72 - 44 - 10 - (cols - 1) * 8) / cols / len(tokens)
            if cols <= panels and per_token >= (FONT * 1.4 if upright else need):
                return cols, upright
    return 1, True


def bar_axes(
    ax,
    xlim: tuple[float, float],
    ymax: float,
    xticks: Sequence[float],
    yticks: Sequence[float],
    label: Callable[[float], str] = "{:g}".format,
) -> None:
    """A bar chart's axes: unmarked ticks under the bars, and the y axis labelled at yticks with a grid behind."""
    from matplotlib.ticker import FixedLocator, FuncFormatter

    ax.set_xlim(*xlim)
    ax.set_ylim(0, ymax)
    ax.xaxis.set_major_locator(FixedLocator(xticks))
    ax.tick_params(axis="x", length=0)
    ax.yaxis.set_major_locator(FixedLocator(yticks))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: label(v)))
    ax.grid(axis="y")
    ax.set_axisbelow(True)


def grid(fig: Canvas, panels: int, cols: int, sharex: bool = False) -> list:
    """Axes for panels in rows of cols, sharing their y axis; the grid's empty places hidden."""
    rows = math.ceil(panels / cols)
    axes = fig.subplots(rows, cols, sharex=sharex, sharey=True, squeeze=False).ravel()
    for ax in axes[panels:]:
        ax.set_visible(False)
    return list(axes[:panels])


def token_grid(
    fig: Canvas, tokens: Sequence[str], panels: int, cols: int, ymax: float, upright: bool, ylabel: str
) -> list:
    """A grid() of small bar charts over tokens, the y axis labelled down the first column and marked every 0.5
    (every 1 when the bars run higher)."""
    step = 0.5 if ymax <= 1.3 else 1.0
    yticks = [j * step for j in range(int(ymax / step) + 1)]
    axes = grid(fig, panels, cols)
    for i, ax in enumerate(axes):
        bar_axes(ax, (-0.6, len(tokens) - 0.4), ymax, range(len(tokens)), yticks)
        ax.set_xticklabels(tokens, rotation=90 if upright else 0)
        if i % cols == 0:
            ax.set_ylabel(ylabel)
    return axes


def log_log(
    ax,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    xticks: Sequence[float],
    yticks: Sequence[float],
    xlabel: Callable[[float], str] = "{:g}".format,
) -> None:
    """Both axes logarithmic, labelled at the given ticks alone (no minor ones), with a grid behind the data."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: xlabel(v)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for axis, ticks in ((ax.xaxis, xticks), (ax.yaxis, yticks)):
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True)
    ax.set_axisbelow(True)


def decades(lo: float, hi: float, most: int) -> list[float]:
    """Powers of ten inside [lo, hi], every second or third one when more than most would crowd."""
    found = [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) if lo <= 10.0**e <= hi]
    return found[:: max(1, math.ceil(len(found) / most))] or [10.0 ** round(math.log10(math.sqrt(lo * hi)))]


def short_count(n: float) -> str:
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:g}{suffix}"
    return f"{n:g}"


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times each power of ten inside [lo, hi]; only the powers of ten when those are more than eight."""
    span = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    every = [m * 10.0**e for e in span for m in (1, 2, 5) if lo <= m * 10.0**e <= hi]
    return every if len(every) <= 8 else [10.0**e for e in span if lo <= 10.0**e <= hi]
