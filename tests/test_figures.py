import re
import xml.etree.ElementTree as ET
from fractions import Fraction as F
from pathlib import Path

import matplotlib
import pytest

from generator import figures
from generator.analysis import best_draft_length, leviathan_speedup, round_length_distribution

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"

TOKENS = ["the", "cat", "sat", "on", "a", "mat"]


def rows(*text):
    return [[F(x) for x in row.split()] for row in text]


TARGET = rows(
    "4/8 1/8 0 1/8 2/8 0",
    "1/8 4/8 1/8 0 0 2/8",
    "0 1/8 5/8 2/8 0 0",
    "2/8 0 1/8 4/8 1/8 0",
    "3/8 0 0 0 3/8 2/8",
    "0 2/8 0 1/8 0 5/8",
)
DIVERGENT = rows(
    "2/8 1/8 2/8 1/8 2/8 0",
    "1/8 2/8 0 3/8 1/8 1/8",
    "1/8 0 3/8 2/8 2/8 0",
    "2/8 0 1/8 2/8 1/8 2/8",
    "2/8 2/8 0 2/8 1/8 1/8",
)
DIVERGENT_PROPOSALS = [0, 1, 4, 3, 0]
ALIGNED_ALPHAS = [F(3, 4), F(7, 8), F(1), F(3, 4), F(3, 4)]
DIVERGENT_ALPHAS = [F(3, 4), F(1, 2), F(5, 8), F(3, 4), F(1, 2)]
LABELS = [f"position {i}" for i in range(1, 6)] + ["bonus"]
FREQUENCIES = [
    [0.5012, 0.1247, 0.0, 0.1239, 0.2502, 0.0],
    [0.1261, 0.4991, 0.1240, 0.0, 0.0, 0.2508],
    [0.0, 0.1262, 0.6229, 0.2509, 0.0, 0.0],
    [0.2531, 0.0, 0.1228, 0.4986, 0.1255, 0.0],
    [0.3744, 0.0, 0.0, 0.0, 0.3770, 0.2486],
    [0.0, 0.2466, 0.0, 0.1281, 0.0, 0.6253],
]
SAMPLES = [100_000, 75_007, 37_300, 23_226, 17_456, 8_670]
ERROR_SERIES = [
    ("position 1", [(100, 0.05), (300, 0.021), (1000, 0.009), (3000, 0.0131), (10000, 0.0099), (100000, 0.00085)]),
    ("position 3", [(100, 0.135), (300, 0.041), (1000, 0.0172), (10000, 0.0085), (37300, 0.0021)]),
]
COST = F(1, 10)
ALPHAS = [F(1, 2), F(7, 10), F(4, 5), F(9, 10)]


def speedup_inputs():
    curves, best = [], []
    for a in ALPHAS:
        label = f"\u03b1 = {float(a):g}"
        curves.append((label, [(k, leviathan_speedup(a, k, COST)) for k in range(1, 13)]))
        k = best_draft_length(a, COST, 12)
        best.append((label, k, leviathan_speedup(a, k, COST)))
    return curves, best


POSITIONS = [2 ** e for e in range(10)]
MEMORY_MS, COMPUTE_MS = 14.0, 0.09
TIMES = [max(MEMORY_MS, COMPUTE_MS * p) + 0.4 for p in POSITIONS]
MODEL = "7B parameters in 16-bit, 1 TB/s, 100 TFLOP/s"


def profile():
    return figures.profile_bars("profile-divergent", TOKENS, TARGET, DIVERGENT, DIVERGENT_PROPOSALS, "A divergent draft")


def convergence():
    return figures.convergence_histograms(
        "convergence", TOKENS, LABELS, TARGET, FREQUENCIES, SAMPLES, "Committed tokens against the target")


def error():
    return figures.error_vs_samples("error", ERROR_SERIES, "Monte Carlo error")


def round_lengths():
    return figures.round_length_distribution("round-length", [
        ("aligned", round_length_distribution(ALIGNED_ALPHAS)),
        ("divergent", round_length_distribution(DIVERGENT_ALPHAS)),
    ], 5)


def speedup():
    return figures.speedup_vs_k("speedup", *speedup_inputs())


def roofline():
    return figures.roofline("roofline", POSITIONS, TIMES, MEMORY_MS, COMPUTE_MS, MODEL)


def acceptance():
    return figures.acceptance_bars("acceptance", ["1", "2", "3", "4", "5"],
                                   [("aligned", ALIGNED_ALPHAS), ("divergent", DIVERGENT_ALPHAS)])


BUILDERS = [profile, convergence, error, round_lengths, speedup, roofline, acceptance]


@pytest.fixture(scope="module")
def drawn():
    return {b.__name__: b() for b in BUILDERS}


def all_text(svg: str) -> str:
    return " ".join("".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text"))


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_is_parseable_svg_that_scales_with_its_container(drawn, builder):
    fig = drawn[builder.__name__]
    root = ET.fromstring(fig.svg)
    assert root.tag == f"{SVG}svg"
    assert re.fullmatch(r"0 0 [\d.]+ [\d.]+", root.get("viewBox"))
    assert fig.svg.startswith("<svg")


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_has_alt_text_and_a_caption(drawn, builder):
    fig = drawn[builder.__name__]
    assert fig.alt.strip() and fig.caption.strip()
    assert fig.name


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_keeps_its_text_as_text_and_stays_small(drawn, builder):
    svg = drawn[builder.__name__].svg
    assert ET.fromstring(svg).find(f".//{SVG}text") is not None
    assert "DejaVuSans-" not in svg  # no embedded glyph outlines
    assert len(svg.encode()) < 80_000


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_sits_on_a_light_card_with_a_transparent_surround(drawn, builder):
    svg = drawn[builder.__name__].svg
    assert "fill: #ffffff" in svg
    first_path = ET.fromstring(svg).find(f".//{SVG}path")
    assert "fill: #ffffff" not in (first_path.get("style") or "")  # the rectangular figure patch is not painted


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_no_figure_carries_a_stylesheet_that_would_leak_into_the_page(drawn, builder):
    assert "<style" not in drawn[builder.__name__].svg


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_id_left_in_a_figure_is_referenced(drawn, builder):
    svg = drawn[builder.__name__].svg
    for ident in re.findall(r' id="([^"]+)"', svg):
        assert f"#{ident}" in svg


def test_two_figures_inlined_on_one_page_share_no_ids(drawn):
    seen = {}
    for name, fig in drawn.items():
        for ident in re.findall(r' id="([^"]+)"', fig.svg):
            assert seen.setdefault(ident, name) == name


def test_profile_alt_names_each_proposal_with_both_probabilities(drawn):
    alt = drawn["profile"].alt
    assert "\u201ca\u201d, which it gives 1/4 and the target 0, so it is always rejected" in alt
    assert "\u201cthe\u201d, which it gives 1/4 and the target 1/2" in alt
    assert "\u201cmat\u201d at 5/8" in alt


def test_profile_caption_says_which_proposal_the_target_never_produces(drawn):
    caption = drawn["profile"].caption
    assert "4 of the 5 proposals" in caption
    assert "position 3" in caption


def test_profile_marks_the_proposal_in_words_not_only_colour(drawn):
    svg = drawn["profile"].svg
    assert all_text(svg).count("proposal") >= 5
    assert "<pattern" in svg  # the hatch


def test_profile_accepts_proposals_given_as_token_labels():
    by_label = figures.profile_bars("p", TOKENS, TARGET, DIVERGENT, ["the", "cat", "a", "on", "the"], "A divergent draft")
    by_index = figures.profile_bars("p", TOKENS, TARGET, DIVERGENT, DIVERGENT_PROPOSALS, "A divergent draft")
    assert by_label == by_index


def test_convergence_alt_quotes_the_sample_counts_and_the_largest_gap(drawn):
    fig = drawn["convergence"]
    assert "100,000 rounds" in fig.alt and "8,670 rounds" in fig.alt
    assert "0.0034 (bonus, \u201ccat\u201d)" in fig.caption  # |0.2466 - 1/4|


def test_error_figure_draws_and_labels_the_inverse_square_root_guide(drawn):
    fig = drawn["error"]
    assert "1/\u221an" in all_text(fig.svg)
    assert "stroke-dasharray" in fig.svg
    assert "0.00085 at 100,000" in fig.alt


def test_error_figure_refuses_a_series_with_nothing_to_plot():
    with pytest.raises(ValueError):
        figures.error_vs_samples("e", [("empty", [(100, 0.0)])], "t")


def test_round_length_text_quotes_each_expected_value(drawn):
    fig = drawn["round_lengths"]
    expected = [float(sum(n * p for n, p in enumerate(round_length_distribution(a), 1)))
                for a in (ALIGNED_ALPHAS, DIVERGENT_ALPHAS)]
    for value in expected:
        assert f"{value:.2f}" in fig.alt and f"{value:.2f}" in fig.caption
        assert f"E[N] = {value:.2f}" in all_text(fig.svg)


def test_speedup_marks_and_names_the_best_draft_length(drawn):
    fig = drawn["speedup"]
    _, best = speedup_inputs()
    text = all_text(fig.svg)
    for _label, k, s in best:
        assert f"K = {k}" in text
        assert f"best {float(s):.2f}\u00d7 at K = {k}" in fig.alt
    assert "K = 2" in fig.caption and "K = 10" in fig.caption
    assert "draft length K" in text and "speedup \u00d7" in text and "no gain" in text


def test_roofline_says_it_is_a_model_and_never_that_it_was_measured(drawn):
    fig = drawn["roofline"]
    for words in (all_text(fig.svg), fig.alt, fig.caption):
        assert "model" in words.lower()
        assert "measured" not in words.lower()
    assert "not a measurement" in all_text(fig.svg)
    assert "156" in fig.alt  # the knee, 14 ms / 0.09 ms per position


def test_acceptance_alt_quotes_the_exact_fractions(drawn):
    fig = drawn["acceptance"]
    assert "aligned: 3/4 at 1, 7/8 at 2, 1 at 3, 3/4 at 4, 3/4 at 5" in fig.alt
    assert "1/2 (at positions 2 and 5)" in fig.caption
    assert "7/8" in all_text(fig.svg)


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_drawing_the_same_figure_twice_gives_identical_bytes(builder):
    assert builder().svg.encode() == builder().svg.encode()


# Byte-identity across processes and hash seeds is checked once for every figure, by the clean build in a
# fresh process in test_build.py.


def test_drawing_leaves_global_matplotlib_settings_alone():
    before = dict(matplotlib.rcParams)
    roofline()
    assert dict(matplotlib.rcParams) == before
