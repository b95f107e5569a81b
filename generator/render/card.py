"""The social card: a 1200 x 630 PNG that link previews show, drawn from one authored round per profile.

Data in, PNG bytes out, like figures.py: the rounds arrive as (label, chips) with each chip a
(token, state) pair the views computed; nothing here knows the rule. Drawn with Pillow: the shapes at
SCALE times the size and averaged down (Pillow's own shapes have jagged edges), then the text at full
size (FreeType smooths it). The fonts are the DejaVu files matplotlib ships, read from its folder
without importing it. The PNG holds no timestamp or software tag, so the same inputs give the same bytes.
"""
from __future__ import annotations

import importlib.util
import io
import math
from functools import cache
from pathlib import Path
from types import MappingProxyType

from ..errors import UserError

WIDTH, HEIGHT = 1200, 630
PX = 100 / 72  # sizes below are in points at 100 dpi (the card's first drawing); PX turns them into pixels
SCALE = 3  # the shapes' supersampling

# The site's light palette (site_src/assets/style.css): state -> (edge and label colour, fill, label).
BG, TEXT, MUTED, ACCENT, BORDER = "#fbfaf7", "#1d1f24", "#5a5f6b", "#1f5fae", "#d9d5cb"
STATES = MappingProxyType({
    "accepted": ("#17683a", "#e4f4ea", "accepted"),
    "rejected": ("#a4262c", "#fbe7e7", "rejected"),
    "replacement": ("#8a5a00", "#fdf1d8", "residual"),
    "dropped": ("#5a5f6b", "#fbfaf7", "dropped"),
    "bonus": ("#4b3aa8", "#ebe7fb", "bonus"),
    "proposed": ("#5a5f6b", "#ffffff", "proposed"),
})
# a chip's edge: (width in points, dash pattern as (on, off) in multiples of the width, or None for solid)
EDGES = MappingProxyType({"rejected": (3, None), "dropped": (2, (1, 1.65)), "proposed": (2, (3.7, 1.6))})
SOLID = (2, None)
CHIP_W, CHIP_H, CHIP_GAP, RADIUS = 138, 92, 14, 10
RIGHT = WIDTH - 72  # the right margin, where the rule at the foot ends
SANS, BOLD, MONO_BOLD = "DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono-Bold.ttf"
FOOTER = "Accept each proposal with probability min(1, p(x) / q(x)); the first rejection is redrawn from the residual."


class MissingFont(UserError):
    pass


def font_folder() -> Path:
    """matplotlib's bundled TrueType folder, found without importing matplotlib."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        raise MissingFont("social card: matplotlib is not installed, and the card's DejaVu fonts come with it")
    return Path(spec.submodule_search_locations[0]) / "mpl-data" / "fonts" / "ttf"


@cache
def font(name: str, points: float):
    from PIL import ImageFont

    path = font_folder() / name
    if not path.is_file():
        raise MissingFont(f"social card: font {name} not found in {path.parent} (it ships with matplotlib)")
    # the basic layout (FreeType alone) spaces letters as the first drawing did, and does not vary with libraqm
    return ImageFont.truetype(str(path), points * PX, layout_engine=ImageFont.Layout.BASIC)


def social_card(title: str, tagline: str, rounds: list[tuple[str, list[tuple[str, str]]]]) -> bytes:
    from PIL import ImageDraw

    shapes = Shapes()
    texts: list[tuple] = []  # (x, y, text, font, colour, anchor, vertical): drawn after the shapes, on top

    shapes.rect(0, 0, 18, HEIGHT, ACCENT)
    # a line too long for the card shrinks to end where the rule at the foot does, rather than run off the edge
    texts.append((70, 110, title, fitted(BOLD, 44, title, RIGHT - 70), TEXT, "l", "baseline"))
    texts.append((72, 165, tagline, fitted(SANS, 21, tagline, RIGHT - 72), MUTED, "l", "baseline"))

    top, row_height = 215, 170
    for r, (label, chips) in enumerate(rounds[:2]):
        y = top + r * row_height
        texts.append((72, y + 18, label, font(BOLD, 17), TEXT, "l", "center"))
        x = 72
        for token, state in chips[:7]:
            edge, fill, word = STATES.get(state, STATES["proposed"])
            width, dashes = EDGES.get(state, SOLID)
            shapes.chip(x, y + 42, CHIP_W, CHIP_H, fill, edge, width * PX, dashes)
            middle = x + CHIP_W / 2
            if state in ("rejected", "dropped"):
                half = min(CHIP_W - 30, 18 * len(token) + 10) / 2
                shapes.line([(middle - half, y + 82), (middle + half, y + 82)], edge, 2.5 * PX)
            texts.append((middle, y + 82, token, fitted(MONO_BOLD, 26, token, CHIP_W - 12),
                          MUTED if state == "dropped" else TEXT, "m", "center"))
            texts.append((middle, y + 118, word, font(SANS, 14), edge, "m", "center"))
            x += CHIP_W + CHIP_GAP

    shapes.line([(72, HEIGHT - 62), (RIGHT, HEIGHT - 62)], BORDER, 1.5 * PX)
    texts.append((72, HEIGHT - 30, FOOTER, fitted(SANS, 14, FOOTER, RIGHT - 72), MUTED, "l", "center"))

    image = shapes.image.reduce(SCALE)  # each pixel the mean of its SCALE x SCALE block: smooth edges
    draw = ImageDraw.Draw(image)
    for x, y, text, face, colour, horizontal, vertical in texts:
        if vertical == "center":
            y = centred_baseline(face, text, y)
        draw.text((x, y), text, font=face, fill=colour, anchor=horizontal + "s")
    out = io.BytesIO()
    image.save(out, format="PNG")  # Pillow writes no time or software chunk unless asked
    return out.getvalue()


def fitted(name: str, points: float, text: str, room: float):
    """The font at the given size, or smaller (by half points) until the text fits in room pixels."""
    while points > 8 and font(name, points).getlength(text) > room:
        points -= 0.5
    return font(name, points)


def centred_baseline(face, text: str, y: float) -> float:
    """The baseline that centres a line on y the way the first drawing did: between the taller of the text's
    and "lp"'s tops and the deeper of their bottoms."""
    _, top, _, bottom = face.getbbox(text, anchor="ls")
    _, lp_top, _, lp_bottom = face.getbbox("lp", anchor="ls")
    return y - (min(top, lp_top) + max(bottom, lp_bottom)) / 2


class Shapes:
    """Rectangles, lines and chips on a SCALE-times canvas; coordinates are the card's pixels."""

    def __init__(self):
        from PIL import Image, ImageDraw

        self.image = Image.new("RGB", (WIDTH * SCALE, HEIGHT * SCALE), BG)
        self.draw = ImageDraw.Draw(self.image)

    def rect(self, x0: float, y0: float, x1: float, y1: float, colour: str) -> None:
        s = SCALE
        self.draw.rectangle((round(x0 * s), round(y0 * s), round(x1 * s) - 1, round(y1 * s) - 1), fill=colour)

    def line(self, points: list[tuple[float, float]], colour: str, width: float) -> None:
        self.draw.line([(px * SCALE, py * SCALE) for px, py in points], fill=colour,
                       width=max(1, round(width * SCALE)), joint="curve")

    def rounded(self, x: float, y: float, w: float, h: float, r: float, colour: str) -> None:
        s = SCALE
        self.draw.rounded_rectangle((round(x * s), round(y * s), round((x + w) * s) - 1, round((y + h) * s) - 1),
                                    radius=round(r * s), fill=colour)

    def chip(self, x: float, y: float, w: float, h: float, fill: str, edge: str, width: float,
             dashes: tuple[float, float] | None) -> None:
        """A rounded box whose edge is centred on its outline, solid or dashed (dash lengths scale with the width)."""
        half = width / 2
        if dashes is None:  # the edge as a ring: the outer box in the edge colour, the inner one in the fill
            self.rounded(x - half, y - half, w + width, h + width, RADIUS + half, edge)
            self.rounded(x + half, y + half, w - width, h - width, RADIUS - half, fill)
            return
        self.rounded(x, y, w, h, RADIUS, fill)
        on, off = dashes[0] * width, dashes[1] * width
        for dash in dashed(outline(x, y, w, h, RADIUS), on, off):
            self.line(dash, edge, width)


def outline(x: float, y: float, w: float, h: float, r: float, steps: int = 8) -> list[tuple[float, float]]:
    """The closed outline of a rounded box as points, clockwise from the start of its top edge."""
    corners = ((x + w - r, y + r, -90), (x + w - r, y + h - r, 0), (x + r, y + h - r, 90), (x + r, y + r, 180))
    points = [(x + r, y)]
    for cx, cy, start in corners:
        for i in range(steps + 1):
            a = math.radians(start + 90 * i / steps)
            points.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    points.append((x + r, y))
    return points


def dashed(points: list[tuple[float, float]], on: float, off: float) -> list[list[tuple[float, float]]]:
    """The pieces of a polyline that an (on, off) dash pattern keeps, each a polyline of its own."""
    dashes, current = [], []
    phase, drawing = on, True  # length left in the current on or off stretch
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0)
        done = 0.0
        if drawing and not current:
            current = [(x0, y0)]
        while length - done > phase:
            done += phase
            point = (x0 + (x1 - x0) * done / length, y0 + (y1 - y0) * done / length)
            if drawing:
                dashes.append(current + [point])
                current = []
            else:
                current = [point]
            drawing = not drawing
            phase = on if drawing else off
        phase -= length - done
        if drawing:
            current.append((x1, y1))
    if len(current) > 1:
        dashes.append(current)
    return dashes
