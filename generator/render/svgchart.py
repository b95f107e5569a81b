"""A small SVG chart writer: axes, bars, lines, markers, hatches, texts and a legend, and a check that no
text collides with another, an axis line or the marks it sits among.

figures.py lays each chart out and draws it through this module. Everything is in SVG user units
(1/72 inch), measured from the top-left corner with y growing downwards, as SVG has it. Texts are
kept as <text> (the reader's browser sets them in DejaVu Sans or its own sans-serif) and measured
with DejaVu Sans's own advance widths (glyph_widths.py), so a layout computed here is the same on
every machine and needs no font, no renderer and no third-party library. Output is plain text in a
fixed order with numbers rounded to two decimals, so the same chart gives the same bytes.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from . import glyph_widths
from .palette import INK, MUTED

ASCENT, DESCENT = 0.93, 0.24  # DejaVu Sans's ascender and descender per em (1901 and 483 of 2048)
LEADING = 1.2  # the distance from one line's baseline to the next, per em
MISSING = glyph_widths.UNITS  # a character the font lacks: a whole em, the widest a fallback font is likely to set


def _advance(text: str, table: dict[int, int]) -> int:
    return sum(table.get(ord(c), MISSING) for c in text)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of one line of text in user units, as DejaVu Sans sets it (no kerning)."""
    return _advance(text, glyph_widths.BOLD if bold else glyph_widths.REGULAR) * size / glyph_widths.UNITS


def text_box(text: str, size: float, bold: bool = False) -> tuple[float, float]:
    """Width and height in user units of a text of one or more lines."""
    lines = str(text).split("\n")
    return (max(text_width(line, size, bold) for line in lines),
            size * (ASCENT + DESCENT + LEADING * (len(lines) - 1)))


def num(v: float) -> str:
    """A coordinate for the SVG: two decimals at most, no trailing zeros, never "-0"."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def dashes(pattern: Sequence[float] | None, width: float) -> str | None:
    """A dash pattern given in line widths (as matplotlib's are) in user units."""
    return None if not pattern else ",".join(num(d * width) for d in pattern)


# --- scales and ticks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    log: bool = False

    def fraction(self, v: float) -> float:
        if self.log:
            return (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        return (v - self.lo) / (self.hi - self.lo)

    def holds(self, v: float) -> bool:
        lo, hi = sorted((self.lo, self.hi))
        span = (hi - lo) * 1e-9
        return lo - span <= v <= hi + span


def nice_ticks(lo: float, hi: float, most: int, steps: Sequence[float] = (1, 2, 2.5, 5, 10)) -> list[float]:
    """Evenly spaced round values covering [lo, hi], at most most intervals apart and at least two inside
    it, as matplotlib's MaxNLocator picks them with these steps; the caller keeps those inside its limits."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / most
    scale = 10 ** math.floor(math.log10(raw))
    sizes = [s * scale for s in (*(0.1 * s for s in steps[:-1]), *steps, 10 * steps[1])]
    first = next(i for i, size in enumerate(sizes) if size >= raw)
    ticks: list[float] = []
    for size in reversed(sizes[:first + 1]):
        base = math.floor(lo / size) * size
        d, m = divmod(lo - base, size)
        low = d + 1 if abs(m / size - 1) < 1e-10 else d
        d, m = divmod(hi - base, size)
        high = d if abs(m / size) < 1e-10 else d + 1
        ticks = [round(base + i * size, 12) for i in range(int(low), int(high) + 1)]
        if sum(lo <= t <= hi for t in ticks) >= 2:
            break
    return ticks


def multiples(lo: float, hi: float, step: float) -> list[float]:
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


# --- what is drawn --------------------------------------------------------------------------------


Box = tuple[float, float, float, float]  # x0, y0, x1, y1 with y0 above y1 on the page


def meet(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def shrunk(box: Box, by: float = 0.6) -> Box:
    return (box[0] + by, box[1] + by, box[2] - by, box[3] - by)


def segment_hits(box: Box, p: tuple[float, float], q: tuple[float, float]) -> bool:
    """Does the segment p-q pass through the box? Liang-Barsky clipping."""
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


@dataclass
class Text:
    text: str
    box: Box
    owner: Axes | None
    on_data: bool


def _style(**props: object) -> str:
    return "; ".join(f"{k.replace('_', '-')}: {v}" for k, v in props.items() if v is not None)


# Markers as polygons around (0, 0) for a marker one unit across, shaped as matplotlib's of the same letter.
def _star() -> list[tuple[float, float]]:
    pts = []
    for i in range(10):
        r = 0.5 if i % 2 == 0 else 0.5 * 0.381966
        a = math.pi / 2 + i * math.pi / 5
        pts.append((r * math.cos(a), -r * math.sin(a)))
    return pts


def _cross(width: float, turn: bool) -> list[tuple[float, float]]:
    """A plus whose arms are width wide; turned an eighth, an x (a tenth larger, so its arms reach as far)."""
    w = width / 2
    arm = [(-w, -0.5), (w, -0.5), (w, -w), (0.5, -w), (0.5, w), (w, w), (w, 0.5), (-w, 0.5), (-w, w),
           (-0.5, w), (-0.5, -w), (-w, -w)]
    if not turn:
        return arm
    c = math.cos(math.pi / 4)
    return [((x - y) * c * 1.1, (x + y) * c * 1.1) for x, y in arm]


MARKER_SHAPES: dict[str, list[tuple[float, float]]] = {
    "s": [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)],
    "D": [(0, -0.5), (0.5, 0), (0, 0.5), (-0.5, 0)],
    "^": [(0, -0.5), (0.5, 0.5), (-0.5, 0.5)],
    "v": [(0, 0.5), (-0.5, -0.5), (0.5, -0.5)],
    "*": _star(),
    "P": _cross(1 / 3, False),
    "X": _cross(1 / 3, True),
}


@dataclass(frozen=True)
class Mark:
    """How a series looks: a line (colour, width, dashes), a marker, or both; also a legend's handle."""
    colour: str
    width: float = 1.5
    dash: Sequence[float] | None = None  # in line widths
    marker: str | None = None
    size: float = 6.0
    edge: str | None = None  # the marker's edge colour, its colour when None
    edge_width: float = 1.0
    line: bool = True


@dataclass(frozen=True)
class Fill:
    """How a bar or a legend's patch looks."""
    colour: str
    edge: str | None = None
    edge_width: float = 0.0
    hatch: str = ""
    hatch_colour: str = INK


@dataclass
class Chart:
    """One figure: a width, a height, and what is drawn on it, in drawing order."""

    width: float
    height: float
    name: str
    _items: list[tuple[float, int, str]] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    axes: list[Axes] = field(default_factory=list)
    _patterns: dict[tuple[str, str, float], str] = field(default_factory=dict)
    _clips: dict[Box, str] = field(default_factory=dict)

    def add(self, z: float, element: str) -> None:
        self._items.append((z, len(self._items), element))

    # -- primitives, in user units --

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: Fill, z: float = 2, rx: float = 0) -> None:
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        geometry = f'x="{num(x0)}" y="{num(y0)}" width="{num(x1 - x0)}" height="{num(y1 - y0)}"'
        if rx:
            geometry += f' rx="{num(rx)}"'
        stroke = fill.edge if fill.edge_width and fill.edge else None
        self.add(z, f'<rect {geometry} style="{_style(fill=fill.colour, stroke=stroke, stroke_width=num(fill.edge_width) if stroke else None)}"/>')
        if fill.hatch:
            pattern = self._pattern(fill.hatch, fill.hatch_colour)
            self.add(z, f'<rect {geometry} style="fill: url(#{pattern})"/>')

    def _pattern(self, hatch: str, colour: str, width: float = 0.9) -> str:
        """An SVG pattern of hatch lines, as dense as matplotlib draws the same hatch string."""
        key = (hatch, colour, width)
        if key not in self._patterns:
            self._patterns[key] = f"hatch-{self.name}-{len(self._patterns)}"
        return self._patterns[key]

    def _defs(self) -> str:
        """The hatch patterns and clip paths the drawing refers to, as one <defs> (none when it refers to none)."""
        out = []
        for (hatch, colour, width), ident in self._patterns.items():
            diagonal = hatch.count("/") + hatch.count("\\") + hatch.count("x")
            straight = hatch.count("-") + hatch.count("|") + hatch.count("+")
            lines = max(diagonal, straight) * 6  # lines per inch, matplotlib's hatch density
            s = 72 / lines
            d = []
            if "/" in hatch or "x" in hatch:
                d.append(f"M{num(-s / 2)} {num(s / 2)}L{num(s / 2)} {num(-s / 2)}M0 {num(s)}L{num(s)} 0"
                         f"M{num(s / 2)} {num(1.5 * s)}L{num(1.5 * s)} {num(s / 2)}")
            if "\\" in hatch or "x" in hatch:
                d.append(f"M{num(-s / 2)} {num(s / 2)}L{num(s / 2)} {num(1.5 * s)}M0 0L{num(s)} {num(s)}"
                         f"M{num(s / 2)} {num(-s / 2)}L{num(1.5 * s)} {num(s / 2)}")
            if "-" in hatch or "+" in hatch:
                d.append(f"M0 {num(s / 2)}L{num(s)} {num(s / 2)}")
            if "|" in hatch or "+" in hatch:
                d.append(f"M{num(s / 2)} 0L{num(s / 2)} {num(s)}")
            out.append(f'<pattern id="{ident}" patternUnits="userSpaceOnUse" width="{num(s)}" height="{num(s)}">'
                       f'<path d="{"".join(d)}" style="{_style(fill="none", stroke=colour, stroke_width=num(width))}"/>'
                       "</pattern>")
        for (x0, y0, x1, y1), ident in self._clips.items():
            out.append(f'<clipPath id="{ident}"><rect x="{num(x0)}" y="{num(y0)}" width="{num(x1 - x0)}" '
                       f'height="{num(y1 - y0)}"/></clipPath>')
        return "<defs>" + "".join(out) + "</defs>" if out else ""

    def clip(self, box: Box) -> str:
        """The id of a clip path to box, made once per box."""
        if box not in self._clips:
            self._clips[box] = f"clip-{self.name}-{len(self._clips)}"
        return self._clips[box]

    def polyline(self, points: Sequence[tuple[float, float]], mark: Mark, z: float = 2, clip: Box | None = None) -> None:
        if len(points) < 2 or not mark.line:
            return
        d = "M" + "L".join(f"{num(x)} {num(y)}" for x, y in points)
        clipped = f' clip-path="url(#{self.clip(clip)})"' if clip else ""
        self.add(z, f'<path d="{d}"{clipped} style="{_style(fill="none", stroke=mark.colour, stroke_width=num(mark.width), stroke_dasharray=dashes(mark.dash, mark.width))}"/>')

    def marker(self, x: float, y: float, mark: Mark, z: float = 2) -> Box:
        """One marker centred on (x, y); returns the box it covers."""
        s = mark.size
        edge = mark.edge or mark.colour
        if mark.marker == "o":
            self.add(z, f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(s / 2)}" style="{_style(fill=mark.colour, stroke=edge, stroke_width=num(mark.edge_width))}"/>')
        elif mark.marker == "_":
            self.add(z, f'<path d="M{num(x - s / 2)} {num(y)}L{num(x + s / 2)} {num(y)}" style="{_style(fill="none", stroke=edge, stroke_width=num(mark.edge_width))}"/>')
        else:
            pts = MARKER_SHAPES[mark.marker]
            d = "M" + "L".join(f"{num(x + px * s)} {num(y + py * s)}" for px, py in pts) + "Z"
            self.add(z, f'<path d="{d}" style="{_style(fill=mark.colour, stroke=edge, stroke_width=num(mark.edge_width))}"/>')
        return (x - s / 2, y - s / 2, x + s / 2, y + s / 2)

    def text(self, x: float, y: float, text: str, size: float, *, ha: str = "left", va: str = "top",
             colour: str = INK, bold: bool = False, upright: bool = False, owner: Axes | None = None,
             on_data: bool = False, z: float = 3) -> Text:
        """A text anchored at (x, y): ha is left, center or right of it, va top, center, baseline or bottom.
        upright turns it a quarter anticlockwise (ha and va then apply to the turned text's box)."""
        lines = str(text).split("\n")
        if upright and len(lines) > 1:
            raise ValueError(f"an upright text is one line: {text!r}")
        w, h = text_box(text, size, bold)
        bw, bh = (h, w) if upright else (w, h)
        x0 = x - {"left": 0, "center": bw / 2, "right": bw}[ha]
        y0 = y - {"top": 0, "center": bh / 2, "bottom": bh, "baseline": ASCENT * size}[va]
        anchor = {"left": "start", "center": "middle", "right": "end"}
        style = _style(font_size=f"{num(size)}px", font_weight="bold" if bold else None, fill=colour)
        if upright:
            # Turned, the text runs up from the box's bottom and its ascent reaches to the box's left.
            bx, by = x0 + ASCENT * size, y0 + bh
            element = (f'<text x="{num(bx)}" y="{num(by)}" transform="rotate(-90 {num(bx)} {num(by)})" '
                       f'style="{style}">{escape(lines[0])}</text>')
        else:
            tx = {"left": x0, "center": x0 + w / 2, "right": x0 + w}[ha]
            base = y0 + ASCENT * size
            if len(lines) == 1:
                body = escape(lines[0])
            else:
                body = "".join(f'<tspan x="{num(tx)}" y="{num(base + i * LEADING * size)}">{escape(line)}</tspan>'
                               for i, line in enumerate(lines))
            te = f' text-anchor="{anchor[ha]}"' if ha != "left" else ""
            element = f'<text x="{num(tx)}" y="{num(base)}"{te} style="{style}">{body}</text>'
        self.add(z, element)
        item = Text(str(text), (x0, y0, x0 + bw, y0 + bh), owner, on_data)
        if str(text).strip():
            self.texts.append(item)
        return item

    # -- plots --

    def add_axes(self, x0: float, y0: float, width: float, height: float, x: Scale, y: Scale) -> Axes:
        ax = Axes(self, (x0, y0, x0 + width, y0 + height), x, y)
        self.axes.append(ax)
        return ax

    def legend(self, entries: Sequence[tuple[Mark | Fill | tuple, str]], x: float, y: float, cols: int,
               size: float, handle: float = 2.0) -> None:
        """Entries in cols columns filled column by column (n // cols to each, one more to the first n % cols),
        each a handle handle ems long, 0.6 em from its label, columns 1.2 em apart, rows half an em apart."""
        em = size
        n = len(entries)
        counts = [n // cols + (c < n % cols) for c in range(cols)]
        starts = list(itertools.accumulate(counts, initial=0))
        row_h = text_box("Tg", size)[1]
        left = x
        for c in range(cols):
            column = entries[starts[c]:starts[c + 1]]
            widest = 0.0
            for r, (h, label) in enumerate(column):
                top = y + r * (row_h + 0.5 * em)
                mid = top + row_h / 2
                self._handle(h, left, mid, handle * em, em)
                t = self.text(left + (handle + 0.6) * em, top, label, size)
                widest = max(widest, t.box[2] - left)
            left += widest + 1.2 * em

    def _handle(self, h, x: float, mid: float, length: float, em: float) -> None:
        for part in (h if isinstance(h, tuple) else (h,)):
            if isinstance(part, Fill):
                self.rect(x, mid - 0.35 * em, x + length, mid + 0.35 * em, part, z=3)
            else:
                if part.line:
                    self.polyline([(x, mid), (x + length, mid)], part, z=3)
                if part.marker:
                    self.marker(x + length / 2, mid, part, z=3)

    # -- output and checks --

    def svg(self, card: str, edge: str) -> str:
        w, h = self.width, self.height
        inset = 1.44
        self.add(-100, f'<rect x="{num(inset)}" y="{num(inset)}" width="{num(w - 2 * inset)}" '
                       f'height="{num(h - 2 * inset)}" rx="10.08" style="{_style(fill=card, stroke=edge, stroke_width="0.8")}"/>')
        body = "\n".join(e for _, _, e in sorted(self._items, key=lambda item: (item[0], item[1])))
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(w)}pt" height="{num(h)}pt" '
                f'viewBox="0 0 {num(w)} {num(h)}" stroke-linejoin="round" stroke-linecap="butt" '
                f'font-family="DejaVu Sans, Verdana, sans-serif">\n{self._defs()}\n{body}\n</svg>\n')

    def collisions(self) -> list[str]:
        """What is wrong with the chart's texts, worst first; empty when every text stands clear."""
        problems = []
        inners = [shrunk(t.box) for t in self.texts]
        for t in self.texts:
            x0, y0, x1, y1 = t.box
            if x0 < 1 or y0 < 1 or x1 > self.width - 1 or y1 > self.height - 1:
                problems.append(f'text "{t.text}" runs off the figure')
        for i, a in enumerate(self.texts):
            for j in range(i + 1, len(self.texts)):
                if meet(inners[i], inners[j]):
                    problems.append(f'text "{a.text}" overlaps "{self.texts[j].text}"')
        for ax in self.axes:
            for t, inner in zip(self.texts, inners):
                for side, spine in ax.spine_boxes():
                    if meet(inner, spine):
                        problems.append(f'text "{t.text}" crosses the {side} axis line')
                if t.owner is not ax:
                    if meet(inner, ax.box):
                        problems.append(f'text "{t.text}" lies inside the plot area it does not belong to')
                    continue
                if t.on_data:
                    continue
                if any(meet(inner, b) for b in ax.boxes) or any(
                        segment_hits(inner, p, q) for path in ax.paths for p, q in itertools.pairwise(path)):
                    problems.append(f'text "{t.text}" covers the data it annotates')
        return problems


@dataclass
class Axes:
    """A plot area on a chart, with its scales; what it draws is remembered for the collision check."""

    chart: Chart
    box: Box
    x: Scale
    y: Scale
    spines: tuple[str, ...] = ("left", "bottom")
    boxes: list[Box] = field(default_factory=list)
    paths: list[list[tuple[float, float]]] = field(default_factory=list)
    spine_colour: str = MUTED

    def X(self, v: float) -> float:
        return self.box[0] + self.x.fraction(v) * (self.box[2] - self.box[0])

    def Y(self, v: float) -> float:
        return self.box[3] - self.y.fraction(v) * (self.box[3] - self.box[1])

    @property
    def width(self) -> float:
        return self.box[2] - self.box[0]

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    def spine_boxes(self) -> list[tuple[str, Box]]:
        x0, y0, x1, y1 = self.box
        where = {"left": (x0 - 0.4, y0, x0 + 0.4, y1), "bottom": (x0, y1 - 0.4, x1, y1 + 0.4)}
        return [(side, where[side]) for side in self.spines]

    def draw_spines(self) -> None:
        x0, y0, x1, y1 = self.box
        for side in self.spines:
            d = f"M{num(x0)} {num(y1)}L{num(x0)} {num(y0)}" if side == "left" else f"M{num(x0)} {num(y1)}L{num(x1)} {num(y1)}"
            self.chart.add(2.5, f'<path d="{d}" style="{_style(fill="none", stroke=self.spine_colour, stroke_width="0.8", stroke_linecap="square")}"/>')

    def bar(self, x: float, height: float, width: float, fill: Fill, bottom: float = 0.0, z: float = 2) -> None:
        """A bar centred on x, from bottom up by height (none drawn for a height of 0)."""
        if height:
            self.rect(x - width / 2, bottom, width, height, fill, z)

    def rect(self, x: float, y: float, width: float, height: float, fill: Fill, z: float = 2) -> Box:
        """A rectangle from data (x, y), width and height in data units."""
        x0, x1 = sorted((self.X(x), self.X(x + width)))
        y0, y1 = sorted((self.Y(y + height), self.Y(y)))
        self.chart.rect(x0, y0, x1, y1, fill, z)
        self.boxes.append((x0, y0, x1, y1))
        return (x0, y0, x1, y1)

    def plot(self, xs: Sequence[float], ys: Sequence[float], mark: Mark, z: float = 2) -> None:
        points = [(self.X(x), self.Y(y)) for x, y in zip(xs, ys)]
        if mark.line and len(points) > 1:
            self.chart.polyline(points, mark, z, clip=self.box)
            self.paths.append(points)
        if mark.marker:
            for px, py in points:
                self.boxes.append(self.chart.marker(px, py, mark, z))

    def grid(self, axis: str, values: Sequence[float], colour: str, width: float = 0.8) -> None:
        x0, y0, x1, y1 = self.box
        for v in values:
            if axis == "x":
                x = self.X(v)
                d = f"M{num(x)} {num(y1)}L{num(x)} {num(y0)}"
            else:
                y = self.Y(v)
                d = f"M{num(x0)} {num(y)}L{num(x1)} {num(y)}"
            self.chart.add(0.5, f'<path d="{d}" style="{_style(fill="none", stroke=colour, stroke_width=num(width), stroke_linecap="square")}"/>')

    def ticks(self, axis: str, values: Sequence[float], labels: Sequence[str] | None, size: float, *,
              length: float = 3.5, pad: float = 3.5, upright: bool = False, colour: str = MUTED,
              ink: str = INK) -> None:
        """Tick marks outside the plot area and their labels (None: marks only)."""
        x0, y0, x1, y1 = self.box
        d = []
        for i, v in enumerate(values):
            if axis == "x":
                x = self.X(v)
                if length:
                    d.append(f"M{num(x)} {num(y1)}L{num(x)} {num(y1 + length)}")
                if labels is not None and labels[i]:
                    if upright:
                        self.chart.text(x, y1 + length + pad, labels[i], size, ha="center", va="top", upright=True, colour=ink)
                    else:
                        self.chart.text(x, y1 + length + pad, labels[i], size, ha="center", va="top", colour=ink)
            else:
                y = self.Y(v)
                if length:
                    d.append(f"M{num(x0)} {num(y)}L{num(x0 - length)} {num(y)}")
                if labels is not None and labels[i]:
                    self.chart.text(x0 - length - pad, y, labels[i], size, ha="right", va="center", colour=ink)
        if d:
            self.chart.add(2.5, f'<path d="{"".join(d)}" style="{_style(fill="none", stroke=colour, stroke_width="0.8")}"/>')

    def text(self, x: float, y: float, text: str, size: float, *, dx: float = 0, dy: float = 0,
             on_data: bool = False, **kw) -> Text:
        """A text at data (x, y), moved dx, dy user units; it belongs to this plot area."""
        return self.chart.text(self.X(x) + dx, self.Y(y) + dy, text, size, owner=self, on_data=on_data, **kw)
