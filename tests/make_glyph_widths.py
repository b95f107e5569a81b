"""Write generator/render/glyph_widths.py: DejaVu Sans advance widths, read from the font matplotlib installs.

Run `python tests/make_glyph_widths.py` after changing RANGES; test_svgchart checks the stored table
still equals what this reads from the font. Only glyphs the font has are listed (a missing one draws
as the font's .notdef box, so it is compared against that box and left out).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "generator" / "glyph_widths.py"
UNITS = 2048  # DejaVu's units per em: at this size Pillow's advances are the font's own integers
# Latin, Greek, Cyrillic, punctuation, currency, letterlike, arrows, maths, box drawing and shapes.
RANGES = ((0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x4FF), (0x2000, 0x206F), (0x20A0, 0x20BF),
          (0x2100, 0x214F), (0x2190, 0x22FF), (0x2500, 0x25FF))
FACES = {"regular": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf"}


def font_path(file: str) -> Path:
    """A TTF from matplotlib's bundled fonts, found without importing matplotlib."""
    spec = importlib.util.find_spec("matplotlib")
    return Path(spec.submodule_search_locations[0]) / "mpl-data" / "fonts" / "ttf" / file


def widths(file: str) -> dict[int, int]:
    from PIL import ImageFont

    font = ImageFont.truetype(str(font_path(file)), UNITS, layout_engine=ImageFont.Layout.BASIC)
    small = ImageFont.truetype(str(font_path(file)), 40, layout_engine=ImageFont.Layout.BASIC)
    notdef = bytes(small.getmask("\u0378"))
    out = {}
    for lo, hi in RANGES:
        for code in range(lo, hi + 1):
            ch = chr(code)
            if code != 0x20 and bytes(small.getmask(ch)) == notdef:
                continue
            out[code] = round(font.getlength(ch))
    return out


def source() -> str:
    lines = ['"""DejaVu Sans advance widths in font units (2048 to the em), per code point.',
             "",
             "Written by tests/make_glyph_widths.py from the font matplotlib installs; do not edit by hand.",
             '"""', "", f"UNITS = {UNITS}", ""]
    for face, file in FACES.items():
        table = widths(file)
        lines.append(f"{face.upper()} = {{")
        items = [f"{code}: {w}" for code, w in sorted(table.items())]
        for i in range(0, len(items), 10):
            lines.append("    " + ", ".join(items[i:i + 10]) + ",")
        lines.append("}")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    OUT.write_text(source())
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
