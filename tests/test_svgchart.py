"""svgchart.py, the figures' SVG writer, against references: the font's own widths and matplotlib's ticks."""
import random
import sys
from pathlib import Path

import pytest

from generator.render import glyph_widths, svgchart
from generator.render.svgchart import Chart, Fill, Mark, Scale

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_glyph_widths  # noqa: E402


def test_the_stored_glyph_widths_are_what_the_font_says():
    """The table is generated (tests/make_glyph_widths.py); a font or a range changed without regenerating fails."""
    assert make_glyph_widths.source() == Path(glyph_widths.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("text", ["proposal", "position 1, n = 100,000", "E[N] = 3.92", "speedup \u00d7",
                                  "1/\u221an guide", "acceptance rate \u03b1", "the cat sat on the mat"])
def test_text_widths_agree_with_matplotlibs_measure_of_the_same_font(text):
    """matplotlib (installed for its fonts) as the reference: the same DejaVu Sans, set with kerning, which
    the table leaves out; within 2% is well inside the 0.6-unit slack the collision check allows per side."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width = TextToPath().get_text_width_height_descent(text, FontProperties(family="DejaVu Sans", size=11), False)[0]
    assert svgchart.text_width(text, 11) == pytest.approx(width, rel=0.02)


def test_a_character_the_font_lacks_counts_a_whole_em():
    assert svgchart.text_width("\u4e00", 10) == 10  # CJK: not in the table, set by a fallback font


def test_nice_ticks_are_matplotlibs_maxnlocator_ticks_with_the_classic_steps():
    """Steps of 1, 2, 2.5 and 5 (matplotlib's default now adds 1.5, 3, 4, 6 and 8: ticks at 0.6, 1.2 and 1.8
    read less easily than at 0.5, 1 and 1.5)."""
    from matplotlib.ticker import MaxNLocator

    rng = random.Random(14)
    for _ in range(300):
        lo = rng.choice([0.0, rng.uniform(-5, 5)])
        hi = lo + 10 ** rng.uniform(-2, 3)
        n = rng.choice([3, 4, 5])
        ours = svgchart.nice_ticks(lo, hi, n)
        theirs = [float(v) for v in MaxNLocator(n, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)]
        assert ours == pytest.approx(theirs), (lo, hi, n)


def test_the_check_names_two_texts_that_overlap_and_passes_them_apart():
    chart = Chart(200, 100, "t")
    chart.text(10, 10, "left", 11)
    chart.text(10 + svgchart.text_width("left", 11) + 2, 10, "right", 11)
    assert chart.collisions() == []
    chart.text(20, 12, "over", 11)  # the negative control
    assert chart.collisions() == ['text "left" overlaps "over"', 'text "right" overlaps "over"']


def test_a_line_through_a_text_in_its_plot_area_is_caught_and_a_line_beside_it_is_not():
    chart = Chart(300, 200, "t")
    ax = chart.add_axes(40, 20, 240, 160, Scale(0, 1), Scale(0, 1))
    ax.plot([0, 1], [0, 0.1], Mark("#1f1f1f"))
    ax.text(0.5, 0.8, "clear", 11, ha="center")
    assert chart.collisions() == []
    ax.plot([0, 1], [0.75, 0.75], Mark("#1f1f1f"))
    assert chart.collisions() == ['text "clear" covers the data it annotates']


def test_the_same_chart_writes_the_same_bytes_and_every_id_is_its_own():
    def draw(name):
        chart = Chart(200, 100, name)
        ax = chart.add_axes(20, 10, 160, 80, Scale(1, 100, log=True), Scale(0, 1))
        ax.bar(10, 0.5, 5, Fill("#0072B2", "#1f1f1f", 0.5, hatch="///"))
        ax.plot([1, 100], [0, 2], Mark("#D55E00", dash=(5, 3)))  # runs past the top: clipped
        return chart.svg("#ffffff", "#cfcfcf")
    a = draw("a")
    assert a == draw("a")
    assert 'id="hatch-a-0"' in a and 'id="clip-a-0"' in a and "url(#clip-a-0)" in a
    assert "hatch-a" not in draw("b")
