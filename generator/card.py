"""The social card: a 1200 x 630 PNG that link previews show, drawn from one authored round per profile.

Data in, PNG bytes out, like figures.py: the rounds arrive as (label, chips) with each chip a
(token, state) pair the views computed; nothing here knows the rule. Drawn with matplotlib's Agg
canvas and its bundled DejaVu Sans, with no timestamp or software tag in the file, so the same
inputs give the same bytes.
"""
from __future__ import annotations

import io

WIDTH, HEIGHT, DPI = 1200, 630, 100

# The site's light palette (site_src/assets/style.css): state -> (edge and label colour, fill, label).
BG, TEXT, MUTED, ACCENT, BORDER = "#fbfaf7", "#1d1f24", "#5a5f6b", "#1f5fae", "#d9d5cb"
STATES = {
    "accepted": ("#17683a", "#e4f4ea", "accepted"),
    "rejected": ("#a4262c", "#fbe7e7", "rejected"),
    "replacement": ("#8a5a00", "#fdf1d8", "residual"),
    "dropped": ("#5a5f6b", "#fbfaf7", "dropped"),
    "bonus": ("#4b3aa8", "#ebe7fb", "bonus"),
    "proposed": ("#5a5f6b", "#ffffff", "proposed"),
}


def social_card(title: str, tagline: str, rounds: list[tuple[str, list[tuple[str, str]]]]) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch, Rectangle

    fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor=BG)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(HEIGHT, 0)  # y grows downwards, like the page
    ax.axis("off")
    font = {"family": "DejaVu Sans"}

    ax.add_patch(Rectangle((0, 0), 18, HEIGHT, color=ACCENT))
    ax.text(70, 110, title, fontsize=44, fontweight="bold", color=TEXT, va="baseline", **font)
    ax.text(72, 165, tagline, fontsize=21, color=MUTED, va="baseline", **font)

    top, row_height = 215, 170
    for r, (label, chips) in enumerate(rounds[:2]):
        y = top + r * row_height
        ax.text(72, y + 18, label, fontsize=17, color=TEXT, fontweight="bold", va="center", **font)
        chip_w, gap = 138, 14
        x = 72
        for token, state in chips[:7]:
            edge, fill, word = STATES.get(state, STATES["proposed"])
            style = {"dropped": ":", "proposed": "--"}.get(state, "-")
            ax.add_patch(FancyBboxPatch((x, y + 42), chip_w, 92, boxstyle="round,pad=0,rounding_size=10",
                                        facecolor=fill, edgecolor=edge, linewidth=3 if state == "rejected" else 2,
                                        linestyle=style))
            token_text = ax.text(x + chip_w / 2, y + 82, token, fontsize=26, fontweight="bold", ha="center",
                                 va="center", color=MUTED if state == "dropped" else TEXT, family="DejaVu Sans Mono")
            if state in ("rejected", "dropped"):
                width = min(chip_w - 30, 18 * len(token) + 10)
                ax.plot([x + chip_w / 2 - width / 2, x + chip_w / 2 + width / 2], [y + 82, y + 82],
                        color=edge, linewidth=2.5)
            token_text.set_zorder(3)
            ax.text(x + chip_w / 2, y + 118, word, fontsize=14, ha="center", va="center", color=edge, **font)
            x += chip_w + gap

    ax.plot([72, WIDTH - 72], [HEIGHT - 62, HEIGHT - 62], color=BORDER, linewidth=1.5)
    ax.text(72, HEIGHT - 30, "Accept each proposal with probability min(1, p(x) / q(x)); "
            "the first rejection is redrawn from the residual.", fontsize=14, color=MUTED, va="center", **font)

    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, facecolor=BG, metadata={"Software": None})
    return out.getvalue()
