import re
import xml.etree.ElementTree as ET
from fractions import Fraction as F
from pathlib import Path

import pytest

from generator.model.analysis import best_draft_length, leviathan_speedup, round_length_distribution
from generator.model.profiles import MAX_TOKENS
from generator.render import chart, figure_timeline, figures

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


POSITIONS = [2**e for e in range(10)]
MEMORY_MS, COMPUTE_MS = 14.0, 0.09
TIMES = [max(MEMORY_MS, COMPUTE_MS * p) + 0.4 for p in POSITIONS]
MODEL = "7B parameters in 16-bit, 1 TB/s, 100 TFLOP/s"


def accept_probabilities(proposals=DIVERGENT_PROPOSALS):
    """min(1, p/q) of each proposal: what the analysis hands the figure."""
    return [min(F(1), TARGET[i][x] / DIVERGENT[i][x]) for i, x in enumerate(proposals)]


def profile():
    return figures.profile_bars(
        "profile-divergent", TOKENS, TARGET, DIVERGENT, DIVERGENT_PROPOSALS, "A divergent draft", accept_probabilities()
    )


def convergence():
    return figures.convergence_histograms(
        "convergence", TOKENS, LABELS, TARGET, FREQUENCIES, SAMPLES, "Committed tokens against the target"
    )


def error():
    return figures.error_vs_samples("error", ERROR_SERIES, "Monte Carlo error", slope=-0.51)


def round_lengths():
    return figures.round_length_distribution(
        "round-length",
        [
            ("aligned", round_length_distribution(ALIGNED_ALPHAS)),
            ("divergent", round_length_distribution(DIVERGENT_ALPHAS)),
        ],
        5,
        [expected_tokens(ALIGNED_ALPHAS), expected_tokens(DIVERGENT_ALPHAS)],
    )


def expected_tokens(alphas):
    return sum(n * p for n, p in enumerate(round_length_distribution(alphas), 1))


def speedup():
    return figures.speedup_vs_k("speedup", *speedup_inputs())


def roofline():
    return figures.roofline("roofline", POSITIONS, TIMES, MEMORY_MS, COMPUTE_MS, MODEL, knee=MEMORY_MS / COMPUTE_MS)


def acceptance():
    return figures.acceptance_bars(
        "acceptance", ["1", "2", "3", "4", "5"], [("aligned", ALIGNED_ALPHAS), ("divergent", DIVERGENT_ALPHAS)]
    )


BUILDERS = [profile, convergence, error, round_lengths, speedup, roofline, acceptance]


@pytest.fixture(scope="module")
def facts():
    from generator.model.config import load_config
    from generator.model.facts import build_facts
    from generator.model.profiles import load_profiles

    config = load_config(ROOT / "data" / "site.yaml")
    return build_facts(load_profiles(config.profiles_path()), config)


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
    assert "Matplotlib v" in fig.svg  # made by matplotlib, and it says so


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
def test_every_figure_sits_on_a_rounded_light_card_with_a_transparent_surround(drawn, builder):
    first = ET.fromstring(drawn[builder.__name__].svg).find(f".//{SVG}path")  # the figure's own square is not drawn
    assert "fill: #ffffff" in first.get("style") and " Q " in first.get("d")  # the card: white, with round corners


def test_each_figure_salts_its_ids_with_its_own_name():
    """svg.hashsalt is the figure's name: the same drawing under two names gets different hatch and clip ids, the
    same name the same ids (no random salt: the bytes repeat)."""
    a, b = (
        figures.acceptance_bars(n, ["1", "2"], [("x", [F(1, 2), F(1)]), ("y", [F(1, 4), F(3, 4)])]).svg
        for n in ("one", "two")
    )
    ids = [set(re.findall(r' id="([hp][0-9a-f]{10})"', svg)) for svg in (a, b)]
    assert ids[0] and ids[1] and not ids[0] & ids[1]
    assert "<dc:date>" not in a


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
    by_label = figures.profile_bars(
        "p", TOKENS, TARGET, DIVERGENT, ["the", "cat", "a", "on", "the"], "A divergent draft", accept_probabilities()
    )
    by_index = figures.profile_bars(
        "p", TOKENS, TARGET, DIVERGENT, DIVERGENT_PROPOSALS, "A divergent draft", accept_probabilities()
    )
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
    from generator.decimals import fixed  # the pages' rounding rule, on the exact value

    expected = [
        fixed(sum(n * p for n, p in enumerate(round_length_distribution(a), 1)))
        for a in (ALIGNED_ALPHAS, DIVERGENT_ALPHAS)
    ]
    for value in expected:
        assert value in fig.alt and value in fig.caption
        assert f"E[N] = {value}" in all_text(fig.svg)


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
    named = figures.acceptance_bars("acceptance", LABELS[:5], [("aligned", ALIGNED_ALPHAS)])
    assert "lowest 3/4 (at positions 1, 4 and 5)" in named.caption  # labels "position 1", ...: said once
    assert "7/8" in all_text(fig.svg)


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_drawing_the_same_figure_twice_gives_identical_bytes(builder):
    assert builder().svg.encode() == builder().svg.encode()


# Byte-identity across processes and hash seeds is checked once for every figure, by the clean build in a
# fresh process in test_build.py.


# --- legibility and collisions ------------------------------------------------------------------

FONT_SIZE = re.compile(r"font-size: ([\d.]+)px")


def text_sizes(svg: str) -> list[float]:
    """The font size of every <text> of a figure, in SVG units."""
    return [float(FONT_SIZE.search(t.get("style", "")).group(1)) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def legible(fig: figures.Figure) -> None:
    """What a phone needs: a figure WIDTH inches (72 units each) wide with every text at least MIN_FONT units, so
    that in the 358 CSS px a 390 px phone gives a figure each renders at 11 px or more; and nothing is a path."""
    root = ET.fromstring(fig.svg)
    assert float(root.get("viewBox").split()[2]) == pytest.approx(chart.WIDTH * 72)
    sizes = text_sizes(fig.svg)
    assert sizes and min(sizes) >= chart.MIN_FONT, (fig.name, min(sizes))


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_is_drawn_for_a_phone_column_with_no_text_below_eleven_px(drawn, builder):
    legible(drawn[builder.__name__])
    assert chart.MIN_FONT * chart.PHONE_COLUMN / (chart.WIDTH * 72) >= 11  # 11 units at 358 / 331.2 px each


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_figure_asks_for_dejavu_sans_first_and_only_narrower_fallbacks(drawn, builder):
    families = {
        re.search(r"font-family: ([^;]+);", t.get("style")).group(1)
        for t in ET.fromstring(drawn[builder.__name__].svg).iter(f"{SVG}text")
    }
    assert families == {
        "'DejaVu Sans', 'Bitstream Vera Sans', 'Liberation Sans', 'Arimo', 'Arial', 'Helvetica', sans-serif"
    }


def planted(fig, second=(0.12, 0.51)):
    """Two labels on a plot area; the second where each test needs it (axes coordinates)."""
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color=figures.INK)
    ax.text(0.1, 0.5, "first label")
    ax.text(*second, "second label")


def test_a_planted_overlap_stops_the_figure_and_names_both_texts():
    with pytest.raises(figures.FigureError) as caught:
        chart.render_svg("planted", planted)
    assert str(caught.value) == 'generator/render/figures.py: planted: text "first label" overlaps "second label"'
    assert "second label" in all_text(chart.render_svg("apart", lambda fig: planted(fig, (0.1, 0.2))))  # control


def test_a_text_that_leaves_the_figure_stops_it():
    def draw_on(fig):
        planted(fig, (0.1, 0.2))
        fig.text(0.95, 0.5, "past the edge")  # a figure text: the layout makes no room for it

    with pytest.raises(figures.FigureError, match='planted: text "past the edge" leaves the figure'):
        chart.render_svg("planted", draw_on)


def test_a_tick_label_outside_its_axis_range_is_not_counted():
    """matplotlib keeps ticks it does not draw; their labels sit anywhere and must not be checked."""
    import matplotlib

    with matplotlib.rc_context(chart.style("ticks")):
        fig = chart.canvas(2)
        ax = fig.add_subplot()
        ax.set_xticks([0, 0.5, 1, 1.5], ["0", "0.5", "1", "far"])
        ax.set_xlim(0, 1)  # 1.5 lies outside the view
        assert "far" not in all_text(chart.finish(fig, "ticks"))
        shown = [t.get_text() for t in chart.drawn_texts(fig)]
    assert "1" in shown and "far" not in shown


def test_draw_returns_both_variants_and_turns_a_collision_into_one_line():
    from types import SimpleNamespace

    from generator.render.palette import dark

    def job(function, **kwargs):
        return SimpleNamespace(name=kwargs["name"], draw=function, kwargs=kwargs)

    rates = [("aligned", ALIGNED_ALPHAS), ("divergent", DIVERGENT_ALPHAS)]
    name, light, night, alt, caption = figures.draw(
        job(figures.acceptance_bars, name="acceptance", labels=LABELS[:5], rates=rates)
    )
    assert (name, night) == ("acceptance", dark(light)) and alt and caption
    crowded = [f"the position called number {i}" for i in range(1, 6)]  # labels far wider than their slots
    with pytest.raises(figures.FigureError) as caught:
        figures.draw(job(figures.acceptance_bars, name="acceptance", labels=crowded, rates=rates))
    assert re.fullmatch(r'generator/render/figures\.py: acceptance: text "[^"]+" overlaps "[^"]+"', str(caught.value))
    with pytest.raises(
        figures.FigureError,
        match=r"^generator/render/figures\.py: e: error_vs_samples\(\) failed: "
        r"ValueError: .*positive",
    ):
        figures.draw(job(figures.error_vs_samples, name="e", series=[("empty", [(100, 0.0)])], title="t"))


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
    """Every series colour, the ink and the kept-mass shade keep 3:1 contrast against the dark card (WCAG's bar for
    graphics)."""
    from generator.render.palette import ACCEPTED, CARD, DARK, INK, PALETTE

    def luminance(hex_colour):
        rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    card = luminance(DARK[CARD])
    for c in (*PALETTE, INK, ACCEPTED):
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
        out.append((f"random {i:02d}", [(n, scale / n**0.5 * float(rng.uniform(0.6, 1.5))) for n in ns]))
    return out


@pytest.mark.parametrize("count", range(1, 21))
def test_the_random_profiles_figure_draws_without_collisions_for_every_count_from_1_to_20(count):
    """monte_carlo.random_profiles from 1 to 20: each count must draw (a collision raises figures.FigureError),
    stay legible and name every profile. Up to MANY share one chart under a legend; more become small multiples."""
    series = random_error_series(count)
    fig = figures.error_vs_samples(
        "error-vs-samples-random", series, "Random profiles: the slowest position of each", slope=-0.47
    )
    legible(fig)
    text = all_text(fig.svg)
    assert all(label in text for label, _ in series)
    assert ("small panel per series" in fig.alt) == (count > figures.MANY)


def stress_profiles(path: Path, k: int, tokens: list[str]) -> Path:
    """A valid profiles file of any size: an aligned draft equal to the target but at position 1, where it
    leaves its proposal to a draw (the stepper opens there), and a divergent one that opens with a token the
    target never gives (so its authored round shows a rejection and a replacement)."""
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
    liked = sorted((j for j in range(v) if F(target[0][j]) > 0), key=lambda j: -F(target[0][j]))
    first = [F(x) for x in target[0]]
    if len(liked) > 1:  # move half the second token's mass onto the first: the first is then a draw's to keep
        moved = first[liked[1]] / 2
        first[liked[0]] += moved
        first[liked[1]] -= moved
    else:  # one token only: share it with one the target never gives, which the draft then proposes never
        first[liked[0]], first[zero] = F(1, 2), F(1, 2)
    aligned = [[str(x) for x in first]] + target[1:k]
    divergent = [row() for _ in range(k)]
    divergent[0] = ["1/2" if j in (zero, (zero + 1) % v) else "0" for j in range(v)]
    data = json.loads((ROOT / "data" / "profiles.v1.json").read_text())
    data.update(
        tokens=tokens,
        target=target,
        drafts=[
            {
                "id": "aligned",
                "name": "An aligned draft",
                "description": "Equal to the target after position 1.",
                "distributions": aligned,
                "proposals": [likeliest(r) for r in aligned],
            },
            {
                "id": "divergent",
                "name": "A divergent draft",
                "description": "Opens with a token the target never gives.",
                "distributions": divergent,
                "proposals": [tokens[zero]] + [likeliest(r) for r in divergent[1:]],
            },
        ],
    )
    path.write_text(json.dumps(data))
    return path


WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "dog",
    "ran",
    "to",
    "red",
    "big",
    "house",
    "under",
    "quietly",
    "jumped",
    "over",
    "lazy",
    "fox",
]


@pytest.mark.parametrize(
    "k, tokens", [(15, TOKENS), (5, WORDS[:MAX_TOKENS])], ids=["15-positions", f"{MAX_TOKENS}-tokens"]
)
def test_three_times_the_authored_size_still_gives_legible_figures_without_collisions(tmp_path, k, tokens):
    """Every figure the registry draws (whoever added it), for 15 positions or as many tokens as a profile may
    have (MAX_TOKENS, 12; at three times the authored size, 18, profiles now refuse them): drawing raises on any
    collision, and each must stay legible. Fewer Monte Carlo rounds than the site: only the layout is judged."""
    import dataclasses

    from generator.model.config import load_config
    from generator.model.facts import build_facts
    from generator.model.profiles import load_profiles
    from generator.render.figure_registry import jobs

    config = load_config(ROOT / "data" / "site.yaml")
    config = dataclasses.replace(
        config, monte_carlo=dataclasses.replace(config.monte_carlo, rounds=20_000, identity_pairs=100)
    )
    facts = build_facts(load_profiles(stress_profiles(tmp_path / "profiles.json", k, tokens)), config)
    for job in jobs(facts):
        legible(job.draw(**job.kwargs))


# --- the opening timeline and the picture of exactness ------------------------------------------


ALIGNED_STREAM = [(3, False), (4, False), (0, False), (5, True)]
DIVERGENT_STREAM = [(1, False), (3, False), (5, True), (0, False)]


def marks(svg: str) -> dict[str, int]:
    text = all_text(svg)
    return {m: text.count(m) for m in ("\u2713", "\u21bb", "+", "\u2013")}


def test_the_timeline_shows_what_each_sampled_round_commits_over_the_same_time():
    """Four rounds of 3/2 passes fill 6 passes: plain decoding's 6 tokens against what each draft's four sampled
    rounds committed, tile by tile (accepted, replacement, dropped, bonus, each its own mark and named in the key),
    with the expected tokens per round stated beside the sampled count."""
    lanes = [("A draft", F(2009, 512), ALIGNED_STREAM), ("Another", F(1343, 512), DIVERGENT_STREAM)]
    fig = figure_timeline.timeline("timeline", F(1, 10), 1, F(3, 2), 5, lanes)
    text = all_text(fig.svg)
    assert "Plain decoding: 6 tokens" in text
    assert "A draft, 4 sampled rounds: 16 tokens" in text and "(expected 3.92 a round, 15.70 in 4)" in text
    assert "Another, 4 sampled rounds: 13 tokens" in text and "(expected 2.62 a round, 10.49 in 4)" in text
    assert len(re.findall(r"\bcheck\b", text)) == 8  # four rounds a lane
    for word in ("accepted", "replacement", "bonus", "dropped"):
        assert word in text  # the key says each in words
    accepted = sum(a for a, _ in ALIGNED_STREAM + DIVERGENT_STREAM)
    replaced = sum(1 for _, b in ALIGNED_STREAM + DIVERGENT_STREAM if not b)
    dropped = sum(5 - a - 1 for a, b in ALIGNED_STREAM + DIVERGENT_STREAM if not b)
    bonus = sum(1 for _, b in ALIGNED_STREAM + DIVERGENT_STREAM if b)
    # one mark per tile, and one more in the key
    assert marks(fig.svg) == {"\u2713": accepted + 1, "\u21bb": replaced + 1, "+": bonus + 1, "\u2013": dropped + 1}
    assert "sampled" in fig.caption and "not chosen" in fig.caption
    assert "3.92 tokens with a draft (15.70 in 4; these committed 16)" in fig.caption
    assert "round 3, the first replaced, 4 dropped (1 token)" in fig.alt
    assert "round 4, all 5 accepted and the bonus drawn (6 tokens)" in fig.alt


def test_the_timeline_refuses_fewer_sampled_rounds_than_it_shows():
    with pytest.raises(chart.FigureError, match="4 sampled rounds needed, 3 given"):
        figures.draw(
            type(
                "Job",
                (),
                {
                    "name": "timeline",
                    "ref": type("Ref", (), {"function": "timeline", "module": "figure_timeline"})(),
                    "draw": staticmethod(figure_timeline.timeline),
                    "kwargs": dict(
                        name="timeline",
                        draft_step=F(1, 10),
                        verify_step=1,
                        round_cost=F(3, 2),
                        k=5,
                        lanes=[("A draft", F(3), ALIGNED_STREAM[:3])],
                    ),
                },
            )()
        )


def test_a_round_cost_that_never_meets_a_whole_pass_gives_four_rounds_and_part_of_a_pass():
    fig = figure_timeline.timeline("timeline", F(7, 100), 1, F(37, 20), 5, [("A draft", F(3), ALIGNED_STREAM)])
    assert "The same 37/5 target passes" in fig.caption and "the first 4 rounds each draft sampled" in fig.caption
    assert "Plain decoding: 7.40 tokens" in all_text(fig.svg)


def test_the_site_timeline_shows_each_drafts_stream_in_the_order_it_was_sampled(facts):
    """The registry hands the figure the first rounds of each draft's seeded stream, the same stream the stepper's
    sampled rounds come from, in order: none chosen for how it looks; only the 4 to 6 a lane can show, so that the
    figure's inputs change exactly when what it may draw does."""
    from generator.render.figure_registry import jobs

    job = next(j for j in jobs(facts) if j.name == "timeline")
    for (name, expected, rounds), p in zip(job.kwargs["lanes"], facts.profiles):
        assert name == p.name and expected == p.expected_tokens
        assert (
            4 <= len(rounds) <= 6
            and rounds == [(r.accepted, r.bonus is not None) for r in p.stream_rounds][: len(rounds)]
        )
        shown = p.stream_rounds[: len(p.sampled_rounds) - 1]
        assert list(shown) == list(p.sampled_rounds[: len(shown)])  # the stepper's first sampled rounds
    fig = job.draw(**job.kwargs)
    seen = marks(fig.svg)
    assert all(seen[m] > 1 for m in seen), seen  # every kind of tile shows in the site's figure


def test_the_figure_credit_names_the_file_that_draws_it():
    from support import built_site

    html = (built_site() / "index.html").read_text(encoding="utf-8")
    assert "<code>timeline()</code> in <code>generator/render/figure_timeline.py</code>" in html
    assert (ROOT / "generator/render/figure_timeline.py").read_text(encoding="utf-8").count("def timeline(") == 1


def test_no_figure_writes_a_lower_case_k_for_the_draft_length(facts):
    """The site writes K for the number of proposals; the round-length figure once wrote "k = 5"."""
    from generator.render.figure_registry import jobs

    for job in jobs(facts):
        fig = job.draw(**job.kwargs)
        for said in (all_text(fig.svg), fig.alt, fig.caption):
            assert not re.search(r"\bk = \d", said), (job.name, said)


def test_the_exactness_stacks_reach_p_for_every_token_of_the_site_data(facts):
    """What the registry hands the figure: kept plus the residual's share is p, token by token (the control: the
    same sum with q in place of p fails somewhere)."""
    from generator.render.figure_registry import jobs

    job = next(j for j in jobs(facts) if j.name == "exactness")
    panels = job.kwargs["panels"]
    assert [(label, position) for label, position, *_ in panels] == [
        ("A closely aligned draft", 1),
        ("A divergent draft", facts.lossless_example.position),
    ]
    for _, _, p, _q, kept, topped, _ in panels:
        assert [a + b for a, b in zip(kept, topped)] == list(p)
    assert any([a + b for a, b in zip(kept, topped)] != list(q) for _, _, p, q, kept, topped, _ in panels)
    fig = figures.exactness(**job.kwargs)
    assert "\u201csat\u201d: 3/8 kept + 1/4 from the residual = 5/8 (q = 3/8)" in fig.alt
    assert "target p" in all_text(fig.svg) and "draft q" in all_text(fig.svg)


def test_the_exactness_figure_opens_the_lossless_page_before_its_first_equation():
    from support import built_site

    html = (built_site() / "lossless.html").read_text(encoding="utf-8")
    figure, equation = html.find('id="figure-exactness"'), html.find('display="block"')
    assert 0 < figure < equation, (figure, equation)


def test_a_draft_step_edit_changes_the_inputs_of_only_the_figures_that_show_it(tmp_path):
    """The cache keeps a figure under its registry inputs digest, so a draft-step edit must change the digest of
    the timeline alone (it is the only figure drawn from the cost model's draft step). Negative control: an edit to
    a draft's distribution changes the digests of many figures."""
    import json

    from generator.model.config import load_config
    from generator.model.facts import build_facts
    from generator.model.profiles import load_profiles
    from generator.render.figure_registry import jobs

    config = load_config(ROOT / "data" / "site.yaml")
    original = (ROOT / "data" / "profiles.v1.json").read_text(encoding="utf-8")

    def digests(text: str) -> dict[str, str]:
        path = tmp_path / "profiles.json"
        path.write_text(text, encoding="utf-8")
        return {j.name: j.ref.inputs for j in jobs(build_facts(load_profiles(path), config))}

    def changed(a, b):
        return sorted(name for name in a if a[name] != b[name])

    before = digests(original)
    assert '"draft_step": "1/10"' in original
    assert changed(before, digests(original.replace('"draft_step": "1/10"', '"draft_step": "1/8"'))) == ["timeline"]
    data = json.loads(original)
    row = data["drafts"][1]["distributions"][1]
    data["drafts"][1]["distributions"][1] = row[1:] + row[:1]  # the same numbers, moved one token along
    assert len(changed(before, digests(json.dumps(data)))) >= 5


def test_a_tie_prints_in_a_figure_as_on_the_page():
    """The pages' one rounding rule (generator/decimals.py, the pages' `fixed` and `pct` filters) in a figure's alt
    text, caption and labels: E[N] = 13/8 is 1.63 at two places, a share of 1/16 is 6.3% at one, not the 6.2% that
    rounding the float half to even gives."""
    from generator.render.pages import FILTERS

    mean, page_pct = F(13, 8), FILTERS["pct"]
    assert mean == 1 * F(7, 16) + 2 * F(1, 2) + 3 * F(1, 16)
    fig = figures.round_length_distribution("ties", [("A draft", [F(7, 16), F(1, 2), F(1, 16)])], 2, [mean])
    assert FILTERS["fixed"](mean) == "1.63"
    assert f"expected {FILTERS['fixed'](mean)} tokens" in fig.alt
    assert f"expects {FILTERS['fixed'](mean)}" in fig.caption
    assert f"E[N] = {FILTERS['fixed'](mean)}" in all_text(fig.svg)
    for n, share in ((1, F(7, 16)), (3, F(1, 16))):
        assert f"N = {n}: {page_pct(share, 1)}" in fig.alt
    assert "N = 3: 6.3%" in fig.alt


def test_every_number_a_figure_words_rounds_by_the_pages_rule():
    """Ties in each kind of number the alt texts and captions print, against generator/decimals.py."""
    from generator.render import figure_words as words

    assert words.exact(F(201, 200)) == "1.01"  # 1.005; its float lies just below, so "%.3g" said 1
    assert words.significant(F(2, 3)) == "0.667" and words.significant(F(1, 8), 2) == "0.13"
    assert words.significant(1234.5) == "1235" and words.significant(0) == "0"
    assert words.signed(-0.125) == "\u22120.13" and words.signed(F(5, 8)) == "0.63"
    alt, caption = words.roofline_words(2.5, "a toy", 4, 0.125, [0.125, 0.125, 8.0], [1, 2, 64], 1)
    assert "near 3 positions" in alt and "near 3 positions" in caption and "0.13 ms" in caption
    alt, caption = words.convergence_histograms_words(
        1, ["position 1"], ["a", "b"], "t", [[0.0625, 0.9375]], [[F(31, 32), F(1, 32)]], [16]
    )
    assert "observed 0.063 against target 31/32" in alt  # "%.3f" of 0.0625 said 0.062
    assert "largest gap 0.9063" in alt and "largest gap anywhere is 0.9063" in caption  # 29/32; "%.4f": 0.9062
