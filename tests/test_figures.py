import hashlib
import re
import xml.etree.ElementTree as ET
from fractions import Fraction as F
from pathlib import Path

import pytest

from generator.model.analysis import best_draft_length, leviathan_speedup, round_length_distribution
from generator.render import figures
from generator.render.svgchart import Mark, Scale

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


def accept_probabilities(proposals=DIVERGENT_PROPOSALS):
    """min(1, p/q) of each proposal: what the analysis hands the figure."""
    return [min(F(1), TARGET[i][x] / DIVERGENT[i][x]) for i, x in enumerate(proposals)]


def profile():
    return figures.profile_bars("profile-divergent", TOKENS, TARGET, DIVERGENT, DIVERGENT_PROPOSALS, "A divergent draft",
                                accept_probabilities())


def convergence():
    return figures.convergence_histograms(
        "convergence", TOKENS, LABELS, TARGET, FREQUENCIES, SAMPLES, "Committed tokens against the target")


def error():
    return figures.error_vs_samples("error", ERROR_SERIES, "Monte Carlo error", slope=-0.51)


def round_lengths():
    return figures.round_length_distribution("round-length", [
        ("aligned", round_length_distribution(ALIGNED_ALPHAS)),
        ("divergent", round_length_distribution(DIVERGENT_ALPHAS)),
    ], 5, [expected_tokens(ALIGNED_ALPHAS), expected_tokens(DIVERGENT_ALPHAS)])


def expected_tokens(alphas):
    return sum(n * p for n, p in enumerate(round_length_distribution(alphas), 1))


def speedup():
    return figures.speedup_vs_k("speedup", *speedup_inputs())


def roofline():
    return figures.roofline("roofline", POSITIONS, TIMES, MEMORY_MS, COMPUTE_MS, MODEL, knee=MEMORY_MS / COMPUTE_MS)


def acceptance():
    return figures.acceptance_bars("acceptance", ["1", "2", "3", "4", "5"],
                                   [("aligned", ALIGNED_ALPHAS), ("divergent", DIVERGENT_ALPHAS)])


BUILDERS = [profile, convergence, error, round_lengths, speedup, roofline, acceptance]


def digest() -> str:
    return hashlib.sha256("".join(b().svg for b in BUILDERS).encode()).hexdigest()


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
    by_label = figures.profile_bars("p", TOKENS, TARGET, DIVERGENT, ["the", "cat", "a", "on", "the"], "A divergent draft",
                                    accept_probabilities())
    by_index = figures.profile_bars("p", TOKENS, TARGET, DIVERGENT, DIVERGENT_PROPOSALS, "A divergent draft",
                                    accept_probabilities())
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


# --- legibility, geometry and collisions --------------------------------------------------------

FONT_SIZE = re.compile(r"font-size: ([\d.]+)px")


def text_sizes(svg: str) -> list[float]:
    """The font size of every <text> of a figure, in SVG user units."""
    return [float(FONT_SIZE.search(t.get("style", "")).group(1)) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def legible(fig: figures.Figure) -> None:
    """What a phone needs: every text at least MIN_FONT units in a figure WIDTH inches (72 units each) wide, so
    that in the ~340 CSS px of a 390 px phone's column each renders at 11 px or more; and nothing is a path."""
    root = ET.fromstring(fig.svg)
    assert float(root.get("viewBox").split()[2]) == pytest.approx(figures.WIDTH * 72)
    sizes = text_sizes(fig.svg)
    assert sizes and min(sizes) >= figures.MIN_FONT, (fig.name, min(sizes))


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_is_drawn_for_a_phone_column_with_no_text_below_eleven_units(drawn, builder):
    legible(drawn[builder.__name__])
    # 340 CSS px (a 390 px phone's column less its padding) over 331.2 units: each unit renders at 1.03 px
    assert figures.MIN_FONT * 340 / (figures.WIDTH * 72) >= 11


def planted(chart, *, over_spine=False, over_data=False):
    """A plot area with a diagonal line and two labels, placed as each test needs (axes coordinates 0 to 1)."""
    ax = chart.add_axes(66, 43, 232, 151, Scale(0, 1), Scale(0, 1))
    ax.draw_spines()
    ax.plot([0, 1], [0, 1], Mark(figures.INK))
    ax.text(0.05, 0.9, "first label", figures.FONT)
    if over_spine:
        ax.text(-0.02, 0.6, "on the spine", figures.FONT)
    elif over_data:
        ax.text(0.5, 0.5, "on the line", figures.FONT, ha="center", va="center")
    else:
        ax.text(0.07, 0.91, "second label", figures.FONT)


def test_a_planted_overlap_stops_the_figure_and_names_both_texts():
    with pytest.raises(figures.Collision, match='planted: text "first label" overlaps "second label"'):
        figures._render("planted", planted)


def test_a_text_across_an_axis_line_or_over_the_data_it_sits_among_stops_the_figure():
    with pytest.raises(figures.Collision, match='text "on the spine" crosses the left axis line'):
        figures._render("planted", lambda fig: planted(fig, over_spine=True))
    with pytest.raises(figures.Collision, match='text "on the line" covers the data it annotates'):
        figures._render("planted", lambda fig: planted(fig, over_data=True))


def test_a_text_meant_to_sit_on_the_data_may():
    def draw(chart):
        ax = chart.add_axes(66, 43, 232, 151, Scale(0, 1), Scale(0, 1))
        ax.plot([0, 1], [0, 1], Mark(figures.INK))
        figures.on_data(ax.text(0.5, 0.5, "on purpose", figures.FONT, ha="center", va="center"))
    assert "on purpose" in all_text(figures._render("allowed", draw))


def test_a_colliding_figure_stops_the_build_with_one_line_naming_the_figure(monkeypatch):
    from types import SimpleNamespace

    def collide(name):
        return figures.Figure(name, figures._render(name, planted), "alt", "caption")
    monkeypatch.setattr(figures, "collide", collide, raising=False)
    job = SimpleNamespace(kwargs={"name": "planted"}, name="planted", ref=SimpleNamespace(function="collide"))
    with pytest.raises(figures.FigureError) as failure:
        figures.draw(job)
    assert str(failure.value) == 'generator/render/figures.py: planted: text "first label" overlaps "second label"'


def test_dark_variant_swaps_every_colour_and_nothing_else(drawn):
    from generator.render.palette import CARD, DARK, dark
    colour = re.compile(r"#[0-9a-fA-F]{6}\b")
    for fig in drawn.values():
        night = dark(fig.svg)
        assert colour.sub("#", night) == colour.sub("#", fig.svg)  # same drawing, marks, hatches and dashes
        assert f"fill: {DARK[CARD]}" in night and f"fill: {CARD}" not in night
        assert {c.lower() for c in colour.findall(night)} <= set(DARK.values())


def test_dark_variant_refuses_a_colour_it_has_no_counterpart_for():
    from generator.render.palette import dark
    with pytest.raises(ValueError, match="#123456 has no dark counterpart"):
        dark('<svg><path style="fill: #123456"/></svg>')


def test_dark_colours_stand_apart_on_the_dark_card():
    """Every series colour and the ink keep 3:1 contrast against the dark card (WCAG's bar for graphics)."""
    from generator.render.palette import CARD, DARK, INK, PALETTE

    def luminance(hex_colour):
        rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    card = luminance(DARK[CARD])
    for c in (*PALETTE, INK):
        assert (luminance(DARK[c.lower()]) + 0.05) / (card + 0.05) >= 3, c


def test_speedup_figure_names_its_draft_cost():
    fig = figures.speedup_vs_k("speedup", *speedup_inputs(), cost=COST)
    assert "c = 1/10" in all_text(fig.svg)
    assert "c = 1/10" in fig.alt and "c = 1/10" in fig.caption


def test_many_series_become_small_multiples_with_one_highlighted_per_panel():
    series = [(f"random {i:02d}", [(100, 0.1 / (1 + i / 10)), (1000, 0.03), (10000, 0.01)]) for i in range(1, 13)]
    fig = figures.error_vs_samples("many", series, "Random profiles")
    text = all_text(fig.svg)
    assert all(f"random {i:02d}" in text for i in range(1, 13))  # each panel is titled by its series
    assert "small panel per series" in fig.alt
    legible(fig)


def random_error_series(count: int) -> list[tuple[str, list[tuple[int, float]]]]:
    """Error curves shaped like the site's random profiles (their slowest positions): labelled "random 01" on,
    sampled at 100, 300, 1000, ... and ending at a ragged count of their own, falling roughly as 1/sqrt(n) with
    seeded noise."""
    import numpy as np
    rng = np.random.default_rng(1302)
    out = []
    for i in range(1, count + 1):
        last = int(rng.integers(1_500, 100_001))
        ns = [n for n in (100, 300, 1000, 3000, 10_000, 30_000) if n < last] + [last]
        scale = float(rng.uniform(0.5, 1.0))
        out.append((f"random {i:02d}", [(n, scale / n ** 0.5 * float(rng.uniform(0.6, 1.5))) for n in ns]))
    return out


@pytest.mark.parametrize("count", range(1, 21))
def test_the_random_profiles_figure_draws_without_collisions_for_every_count_from_1_to_20(count):
    """monte_carlo.random_profiles from 1 to 20: each count must draw (a collision raises figures.Collision),
    stay legible and name every profile. Up to MANY share one chart under a legend (4 and 5 once overflowed
    it, their legend measured in fewer columns than matplotlib lays out); more become small multiples."""
    series = random_error_series(count)
    fig = figures.error_vs_samples("error-vs-samples-random", series,
                                   "Random profiles: the slowest position of each", slope=-0.47)
    legible(fig)
    text = all_text(fig.svg)
    assert all(label in text for label, _ in series)
    assert ("small panel per series" in fig.alt) == (count > figures.MANY)


def stress_profiles(path: Path, k: int, tokens: list[str]) -> Path:
    """A valid profiles file of any size: an aligned draft equal to the target, and a divergent one that opens
    with a token the target never gives (so its authored round shows a rejection and a replacement)."""
    import json

    import numpy as np
    rng = np.random.default_rng(7)
    v = len(tokens)

    def row():
        w = rng.integers(0, 4, v)
        w[rng.integers(v)] += 1
        w[rng.integers(v)] = 0
        return [f"{int(x)}/{int(w.sum())}" for x in w]

    def likeliest(r):
        return tokens[max(range(v), key=lambda j: F(r[j]))]
    target = [row() for _ in range(k + 1)]
    zero = next(j for j, x in enumerate(target[0]) if F(x) == 0)
    divergent = [row() for _ in range(k)]
    divergent[0] = ["1/2" if j in (zero, (zero + 1) % v) else "0" for j in range(v)]
    data = json.loads((ROOT / "data" / "profiles.v1.json").read_text())
    data.update(tokens=tokens, target=target, drafts=[
        {"id": "aligned", "name": "An aligned draft", "description": "Equal to the target.",
         "distributions": target[:k], "proposals": [likeliest(r) for r in target[:k]]},
        {"id": "divergent", "name": "A divergent draft", "description": "Opens with a token the target never gives.",
         "distributions": divergent, "proposals": [tokens[zero]] + [likeliest(r) for r in divergent[1:]]},
    ])
    path.write_text(json.dumps(data))
    return path


WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "to", "red", "big", "house", "under", "quietly",
         "jumped", "over", "lazy", "fox"]


@pytest.mark.parametrize("k, tokens", [(15, TOKENS), (5, WORDS)], ids=["15-positions", "18-tokens"])
def test_three_times_the_authored_size_still_gives_legible_figures_without_collisions(tmp_path, k, tokens):
    """Every figure the registry draws (whoever added it), for 15 positions or 18 tokens: drawing raises on any
    collision, and each must stay legible. Fewer Monte Carlo rounds than the site: only the layout is judged."""
    import dataclasses

    from generator.model.config import load_config
    from generator.model.facts import build_facts
    from generator.model.profiles import load_profiles
    from generator.render.figure_registry import jobs

    config = load_config(ROOT / "data" / "site.yaml")
    config = dataclasses.replace(config, monte_carlo=dataclasses.replace(
        config.monte_carlo, rounds=20_000, identity_pairs=100))
    facts = build_facts(load_profiles(stress_profiles(tmp_path / "profiles.json", k, tokens)), config)
    for job in jobs(facts):
        legible(job.draw(**job.kwargs))


def test_the_timeline_counts_one_token_in_the_singular():
    fig = figures.timeline("timeline", F(1, 10), 1, F(3, 2), 5, [("A draft", ["the", "cat"]), ("Another", ["on"])])
    assert "Another: one round, 1 token" in all_text(fig.svg) and "1 tokens" not in all_text(fig.svg)
    assert "Another commits 1 token (on)" in fig.alt
    assert "A draft: one round, 2 tokens" in all_text(fig.svg)  # the control: more than one stays plural
