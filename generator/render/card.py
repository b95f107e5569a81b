"""The social card: a 1200 x 630 PNG that link previews show, drawn from one authored round per profile.

Data in, PNG bytes out, like figures.py: the rounds arrive as (label, chips) with each chip a (token, state)
pair the views computed; nothing here knows the rule. Drawn by matplotlib on its Agg canvas (object API, no
pyplot), at 100 dpi so a point is 100/72 pixels, on one axes spanning the card in pixel coordinates measured
down from the top. The fonts are the DejaVu faces matplotlib ships. The PNG holds no timestamp or software
tag (metadata Software: None), so the same inputs give the same bytes.
"""

from __future__ import annotations

import io
from types import MappingProxyType

WIDTH, HEIGHT = 1200, 630
DPI = 100

# The site's light palette (site_src/assets/style.css): state -> (edge and label colour, fill, label).
BG, TEXT, MUTED, ACCENT, BORDER = "#fbfaf7", "#1d1f24", "#5a5f6b", "#1f5fae", "#d9d5cb"
STATES = MappingProxyType(
    {
        "accepted": ("#17683a", "#e4f4ea", "accepted"),
        "rejected": ("#a4262c", "#fbe7e7", "rejected"),
        "replacement": ("#8a5a00", "#fdf1d8", "residual"),
        "dropped": ("#5a5f6b", "#fbfaf7", "dropped"),
        "bonus": ("#4b3aa8", "#ebe7fb", "bonus"),
        "proposed": ("#5a5f6b", "#ffffff", "proposed"),
    }
)
# a chip's edge: (width in points, dash pattern as (on, off) in multiples of the width, or None for solid)
EDGES = MappingProxyType({"rejected": (3, None), "dropped": (2, (1, 1.65)), "proposed": (2, (3.7, 1.6))})
SOLID = (2, None)
CHIP_W, CHIP_H, CHIP_GAP, RADIUS = 138, 92, 14, 10
RIGHT = WIDTH - 72  # the right margin, where the rule at the foot ends
SANS, MONO = "DejaVu Sans", "DejaVu Sans Mono"
FOOTER = "Accept each proposal with probability min(1, p(x) / q(x)); the first rejection is redrawn from the residual."


def social_card(title: str, tagline: str, rounds: list[tuple[str, list[tuple[str, str]]]]) -> bytes:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch, Rectangle

    with matplotlib.rc_context({"font.family": ["sans-serif"], "font.sans-serif": [SANS], "text.color": TEXT}):
        fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor=BG)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, WIDTH)
        ax.set_ylim(HEIGHT, 0)  # pixels, measured down from the top
        ax.set_axis_off()

        def text(x, y, s, size, *, family=SANS, bold=False, colour=TEXT, ha="left", va="baseline", room=None):
            t = ax.text(
                x,
                y,
                s,
                fontsize=size,
                family=family,
                fontweight="bold" if bold else "normal",
                color=colour,
                ha=ha,
                va=va,
            )
            if room is not None:
                fit(t, room)

        ax.add_patch(Rectangle((0, 0), 18, HEIGHT, facecolor=ACCENT, edgecolor="none"))
        # a line too long for the card shrinks to end where the rule at the foot does, rather than run off the edge
        text(70, 110, title, 44, bold=True, room=RIGHT - 70)
        text(72, 165, tagline, 21, colour=MUTED, room=RIGHT - 72)

        top, row_height = 215, 170
        for r, (label, chips) in enumerate(rounds[:2]):
            y = top + r * row_height
            text(72, y + 18, label, 17, bold=True, va="center_baseline")
            x = 72
            for token, state in chips[:7]:
                edge, fill, word = STATES.get(state, STATES["proposed"])
                width, dashes = EDGES.get(state, SOLID)
                ax.add_patch(
                    FancyBboxPatch(
                        (x, y + 42),
                        CHIP_W,
                        CHIP_H,
                        boxstyle=f"round,pad=0,rounding_size={RADIUS}",
                        facecolor=fill,
                        edgecolor=edge,
                        linewidth=width,
                        linestyle=(0, dashes) if dashes else "solid",
                    )
                )
                middle = x + CHIP_W / 2
                if state in ("rejected", "dropped"):
                    half = min(CHIP_W - 30, 18 * len(token) + 10) / 2
                    ax.plot(
                        [middle - half, middle + half],
                        [y + 82, y + 82],
                        color=edge,
                        linewidth=2.5,
                        solid_capstyle="round",
                        zorder=3,
                    )
                text(
                    middle,
                    y + 82,
                    token,
                    26,
                    family=MONO,
                    bold=True,
                    colour=MUTED if state == "dropped" else TEXT,
                    ha="center",
                    va="center_baseline",
                    room=CHIP_W - 12,
                )
                text(middle, y + 118, word, 14, colour=edge, ha="center", va="center_baseline")
                x += CHIP_W + CHIP_GAP

        ax.plot([72, RIGHT], [HEIGHT - 62, HEIGHT - 62], color=BORDER, linewidth=1.5)
        text(72, HEIGHT - 30, FOOTER, 14, colour=MUTED, va="center_baseline", room=RIGHT - 72)

        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=DPI, facecolor=BG, metadata={"Software": None})
        return out.getvalue()


def fit(t, room: float) -> None:
    """Shrink a text by half points (not below 8) until it is at most room pixels wide."""
    renderer = t.figure.canvas.get_renderer()
    while t.get_fontsize() > 8 and t.get_window_extent(renderer).width > room:
        t.set_fontsize(t.get_fontsize() - 0.5)
