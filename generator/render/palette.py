"""The figures' one style definition: their colours, light and dark, and the function that turns a light SVG
into its dark twin.

figures.py draws every figure once, in the light colours, and figures.draw() maps that SVG through
dark(). Every colour a figure may use is a key of DARK; dark() refuses an SVG holding any other colour,
so a new colour cannot slip into a figure and stay bright on a dark page.
The light palette is Okabe-Ito (yellow left out: it vanishes on white); the dark one keeps each
hue and lifts its lightness, so the series stay as far apart for a colour-blind reader, and the
marks, hatches and dashes that carry meaning besides colour are untouched.
"""

from __future__ import annotations

import re
from types import MappingProxyType

INK = "#1f1f1f"
MUTED = "#595959"
FAINT = "#e2e2e2"
CARD = "#ffffff"
CARD_EDGE = "#cfcfcf"
GREY = "#c4c4c4"  # context lines behind a highlighted one

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")

# The roles of the shared p/q encoding (style.css names the same roles --target, --draft, --accepted, --residual):
# the target p is a solid fill in TARGET, the draft q an outline in DRAFT (no fill), the proposed token the
# draft's outline with a diagonal hatch, the accepted mass min(p, q) a solid darker shade of the target, and
# the residual top-up a lighter shade with a sparse dotted hatch.
TARGET = PALETTE[0]
DRAFT = PALETTE[1]
ACCEPTED = "#00466E"
RESIDUAL = PALETTE[5]
ON_LIGHT = "#102a3a"  # a mark drawn on a RESIDUAL fill: dark on its light shade in both themes

# Light colour -> dark colour. The dark card is the page's surface colour (style.css --surface).
DARK = MappingProxyType(
    {
        INK: "#e7e5e0",
        MUTED: "#a7abb4",
        FAINT: "#363b45",
        CARD: "#1d2026",
        CARD_EDGE: "#3a3f4a",
        GREY: "#4a505c",
        "#0072b2": "#5aa9e6",
        "#d55e00": "#f0883e",
        "#009e73": "#3cc59a",
        "#cc79a7": "#e59cc6",
        "#e69f00": "#f5b83d",
        "#56b4e9": "#a4d8f6",
        "#000000": "#f4f4f4",
        "#00466e": "#2f86c8",
        ON_LIGHT: "#0b1620",
    }
)

_COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")


def dark(svg: str) -> str:
    """The same figure for a dark page: every colour swapped for its dark counterpart, nothing else changed."""

    def swap(m: re.Match) -> str:
        colour = m.group(0).lower()
        if colour not in DARK:
            raise ValueError(f"figure colour {colour} has no dark counterpart in generator/render/palette.py")
        return DARK[colour]

    return _COLOUR.sub(swap, svg)
