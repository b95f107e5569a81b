"""The beyond part's charts (generator/render/figures_verifiers.py): drawn through figures.draw as the registry
hands them over, legible on a phone, every text at least the house minimum, and their words
carrying the numbers."""

import re
import xml.etree.ElementTree as ET
from fractions import Fraction as F
from types import SimpleNamespace

import pytest

from generator.model import verifiers as v
from generator.model.profiles import load_profiles
from generator.render import chart, figures, figures_verifiers
from generator.render.palette import dark
from support import PROFILES

SVG = "{http://www.w3.org/2000/svg}"
T = load_profiles(PROFILES).target
DRAFTS = {d.name: d.distributions for d in load_profiles(PROFILES).drafts}


def by_k(rule, rows):
    return [rule(T[: j + 1], rows[:j]) for j in range(1, len(rows) + 1)]


def job(function, **kwargs):
    """A registry job: the figure's name, its drawing function and the arguments it is called with."""
    return SimpleNamespace(name=kwargs["name"], draw=function, kwargs=kwargs)


def drafts():
    return [
        (name, by_k(v.tokenwise_expected_accepted, rows), by_k(v.block_expected_accepted, rows))
        for name, rows in DRAFTS.items()
    ]


def legible(svg: str) -> None:
    root = ET.fromstring(svg)
    assert float(root.get("viewBox").split()[2]) == pytest.approx(chart.WIDTH * 72)
    sizes = [float(re.search(r"font-size: ([\d.]+)px", t.get("style", "")).group(1)) for t in root.iter(f"{SVG}text")]
    assert sizes and min(sizes) >= chart.MIN_FONT


def test_block_against_tokenwise_is_drawn_with_its_numbers_in_words():
    name, light, night, alt, caption = figures.draw(
        job(figures_verifiers.block_vs_tokenwise, name="block", drafts=drafts(), ks=[1, 2, 3, 4, 5])
    )
    assert (name, night) == ("block", dark(light))
    legible(light)
    assert "3175/1024" in caption and "29733/16384" in caption and "1497/512" in caption
    assert "never below" in alt


def test_tree_against_chain_is_drawn_with_its_numbers_in_words():
    tree = v.best_tree_accepted(T, 16)
    _, light, _, alt, caption = figures.draw(
        job(figures_verifiers.tree_vs_chain, name="tree", tree=list(tree), chains=drafts())
    )
    legible(light)
    assert str(tree[-1]) in caption and str(tree[4]) in caption and "with 16" in caption


def test_three_drafts_and_a_short_tree_still_draw_without_a_collision():
    three = [*drafts(), ("A third draft", [F(1, 2)] * 5, [F(3, 5)] * 5)]
    figures.draw(job(figures_verifiers.block_vs_tokenwise, name="b3", drafts=three, ks=[1, 2, 3, 4, 5]))
    figures.draw(job(figures_verifiers.tree_vs_chain, name="t3", tree=[F(1, 2), F(3, 4), F(1)], chains=three))


def test_a_chart_that_raises_is_one_line_naming_its_own_module():
    with pytest.raises(
        figures.FigureFailed,
        match=r"^generator/render/figures_verifiers\.py: t0: tree_vs_chain\(\) failed: ValueError: ",
    ):
        figures.draw(job(figures_verifiers.tree_vs_chain, name="t0", tree=[], chains=drafts()))
