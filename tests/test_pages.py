"""The explainer's pages: every number arrives from the context, and the built pages show the engine's numbers.

Two kinds of check. The first reads the page sources (site_src/pages/*.md and the templates) and
fails on any figure typed by hand into prose: once Jinja expressions, HTML tags and link targets
are removed, the only digits left may be structural ones inside formulas, ordered-list markers
and citation years. The second builds the site once and looks for the engine's own numbers,
formatted by the same filters the pages use, on the pages where they belong.
"""

from __future__ import annotations

import html as htmllib
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from generator.model import analysis
from generator.model.engine import run_round
from generator.render.pages import FILTERS
from generator.site.pipeline import load_inputs
from support import ROOT

PAGES = ROOT / "site_src" / "pages"
TEMPLATES = ROOT / "site_src" / "templates"
READING_ORDER = [
    "index",
    "wasted-pass",
    "positions",
    "draft-and-verify",
    "lossless",
    "speedup",
    "what-if",
    "playground",
    "limits",
]
APPENDIX = ["guarantees", "tokens-per-round", "cost", "positions-reference"]

# --- the hand-typed number checker ---------------------------------------------------------------

_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
_HTML_DROP = re.compile(r"<script\b.*?</script>|<style\b.*?</style>|<!--.*?-->", re.S | re.I)
_TAG = re.compile(r"<[^>]*>", re.S)
_ENTITY = re.compile(r"&#?\w+;")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")  # [text](target): the target is an address, not prose
_URL = re.compile(r"https?://\S+")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_LIST_MARKER = re.compile(r"^[ \t]*\d+\.[ \t]", re.M)
_CITATION_YEAR = re.compile(r"\((?:19|20)\d\d\)")
# Inside a formula: a single-digit index (alpha_1, x^2) or a lone 0, 1 or 2 ("1 - alpha", "max(0, p - q)").
_MATH_INDEX = re.compile(r"[_^]\{?\d\}?")
_MATH_SMALL = re.compile(r"(?<![\d.])[012](?![\d.])")
_DIGIT = re.compile(r"\d")
# A block assignment ({% set finder %}...{% endset %}) holds script text for an inline <script>, not prose.
_BLOCK_SET = re.compile(r"\{%-?\s*set\s+\w+\s*-?%\}.*?\{%-?\s*endset\s*-?%\}", re.S)
# Form controls show a control's current value, which the script owns; they are not prose.
_CONTROL_TEXT = re.compile(r"<(output|option|textarea)\b[^>]*>.*?</\1>", re.S | re.I)
# A code span naming a file (data/profiles.v1.json) is an address, not a figure.
_PATH_CODE = re.compile(r"`[^`\n]*[/.][A-Za-z][^`\n]*`")
# Templates have no $...$ math, so the formulas they spell out (min(1, p/q), "sums to 1") keep a lone 0 or 1.
_LONE_ZERO_ONE = re.compile(r"(?<![\d.,])[01](?![\d.,]\d|\d)")


def _blank(match: re.Match) -> str:
    """Replace a span by spaces, keeping its newlines so line numbers survive."""
    return re.sub(r"[^\n]", " ", match.group(0))


def hand_typed_numbers(text: str, kind: str = "md") -> list[tuple[int, str]]:
    """(line, excerpt) for every digit in `text` that is not data from the context or plain structure."""
    text = _BLOCK_SET.sub(_blank, text)
    text = _JINJA.sub(_blank, text)
    if kind == "html":
        text = _HTML_DROP.sub(_blank, text)
        text = _CONTROL_TEXT.sub(_blank, text)
    else:
        text = _PATH_CODE.sub(_blank, text)
    text = _TAG.sub(_blank, text)
    text = _ENTITY.sub(_blank, text)
    text = _LINK_TARGET.sub(_blank, text)
    text = _URL.sub(_blank, text)
    found = []

    def report(start: int, snippet: str) -> None:
        line = text.count("\n", 0, start) + 1
        found.append((line, snippet.strip()))

    def math(match: re.Match) -> str:
        inner = _MATH_SMALL.sub(" ", _MATH_INDEX.sub(" ", match.group(0)))
        if _DIGIT.search(inner):
            report(match.start(), match.group(0))
        return _blank(match)

    text = _MATH.sub(math, text)
    if kind == "md":
        text = _LIST_MARKER.sub(_blank, text)
    else:
        text = _LONE_ZERO_ONE.sub(" ", text)
    text = _CITATION_YEAR.sub(_blank, text)
    for m in re.finditer(r"[^\s]*\d[^\s]*", text):
        report(m.start(), text[max(0, m.start() - 30) : m.end() + 30])
    return found


def page_sources() -> list[Path]:
    return sorted(PAGES.glob("*.md")) + sorted(TEMPLATES.rglob("*.html"))


def check_sources(paths) -> list[str]:
    problems = []
    for path in paths:
        kind = "md" if path.suffix == ".md" else "html"
        for line, excerpt in hand_typed_numbers(path.read_text(encoding="utf-8"), kind):
            problems.append(f"{path}:{line}: {excerpt!r}")
    return problems


def test_no_page_or_template_has_a_number_typed_by_hand():
    problems = check_sources(page_sources())
    assert not problems, "numbers typed by hand (take them from the context):\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "planted",
    [
        "Expected tokens per round: 3.92.",
        "The aligned draft runs at 2.62× the speed.",
        "Its authored round has 8 frames.",
        "About 75% of proposals are accepted.",
        "The draft gives it $q = \\frac{3}{8}$.",
        "The speedup is $2.62$.",
        "We ran 100,000 rounds.",
        "---\ntitle: T\ndescription: eight frames, or 8\n---\nbody",
    ],
)
def test_the_checker_catches_a_planted_hand_typed_number(planted):
    assert hand_typed_numbers(planted), planted


@pytest.mark.parametrize(
    "legitimate",
    [
        "Expected tokens per round: {{ aligned.expected_tokens | fixed(2) }}.",
        "Runs at {{ aligned.speedup | times }}; {{ x | pct(1) }} of the time.",
        "Accept with probability $\\min\\left(1, \\frac{p(x)}{q(x)}\\right)$.",
        "$$ \\mathbb{E}[N] = 1 + \\alpha_1 + \\alpha_1 \\alpha_2 + \\cdots $$",
        "The error shrinks like $1/\\sqrt{n}$.",
        "Leviathan, Kalman & Matias (2023) proved it.",
        "[the paper](https://arxiv.org/abs/2211.17192)",
        "1. **Draft.** The small model\n2. **Score.** The target",
        "{% for v in aligned.positions[1:] %}{{ v.position }}{% endfor %}",
        '{{ widget("figure", name="speedup-vs-k-1-20") }}',
    ],
)
def test_the_checker_lets_context_values_and_formula_structure_through(legitimate):
    assert hand_typed_numbers(legitimate) == []


def test_a_number_planted_in_a_page_file_fails_the_source_check(tmp_path):
    page = tmp_path / "speedup.md"
    page.write_text(
        (PAGES / "speedup.md").read_text(encoding="utf-8") + "\nIn short: 2.62× faster.\n", encoding="utf-8"
    )
    problems = check_sources([page])
    assert len(problems) == 1 and "2.62×" in problems[0]
    assert check_sources([PAGES / "speedup.md"]) == []


def test_an_html_template_is_checked_for_text_but_not_for_attributes(tmp_path):
    template = tmp_path / "w.html"
    template.write_text(
        '<svg viewBox="0 0 640 360"><rect width="12"/></svg>\n<p>{{ p.k }} positions</p>\n', encoding="utf-8"
    )
    assert check_sources([template]) == []
    template.write_text("<p>Frame 3 of {{ n }}</p>\n", encoding="utf-8")
    assert check_sources([template])
    template.write_text("<p>accept with probability min(1, p/q); the residual sums to 1</p>\n", encoding="utf-8")
    assert check_sources([template]) == []
    template.write_text("<p>accepted with probability 0.75</p>\n", encoding="utf-8")
    assert check_sources([template])


def test_a_lone_digit_in_page_prose_is_still_refused():
    assert hand_typed_numbers("The round commits 1 token.")
    assert hand_typed_numbers("It has 5 positions.")
    assert hand_typed_numbers("The file is `data/profiles.v1.json`.") == []


# --- the pages as configured ---------------------------------------------------------------------


def front_matter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---", 2)[1])


def test_every_section_exists_in_reading_order_with_a_title_and_description():
    config = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))
    assert config["pages"] == READING_ORDER
    assert config["appendix"] == APPENDIX
    for slug in READING_ORDER + APPENDIX:
        meta = front_matter(PAGES / f"{slug}.md")
        assert meta.get("title") and meta.get("nav_title") and meta.get("description"), slug
        assert meta["title"] == meta["nav_title"], f"{slug}: one name in the navigation and the title"


# --- the built site ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(site_dir):
    return site_dir


@pytest.fixture(scope="module")
def engine_numbers():
    """The numbers as the engine computes them, independently of the context the pages read."""
    config, profiles = load_inputs(ROOT)
    out = {}
    for draft in profiles.drafts:
        n = analysis.summarize(draft.id, profiles.target, draft.distributions, profiles.cost_model)
        r = run_round(
            profiles.target, draft.distributions, np.random.default_rng(config.seeds.authored_round), draft.proposals
        )
        out[draft.id] = {"numbers": n, "frames": len(r.frames)}
    out["k"] = profiles.k
    out["round_cost"] = analysis.round_cost(profiles.k, profiles.cost_model.draft_step, profiles.cost_model.verify_step)
    return out


def page_text(site: Path, slug: str) -> str:
    """The article's visible text, tags dropped and whitespace collapsed."""
    raw = (site / f"{slug}.html").read_text(encoding="utf-8")
    start = raw.find("<article")
    article = raw[start : raw.find("</article>", start)] if start >= 0 else raw
    article = _HTML_DROP.sub(" ", article)
    return re.sub(r"\s+", " ", htmllib.unescape(_TAG.sub(" ", article)))


def test_the_published_figures_are_the_engine_figures(engine_numbers):
    aligned, divergent = engine_numbers["aligned"]["numbers"], engine_numbers["divergent"]["numbers"]
    assert FILTERS["fixed"](aligned.expected_tokens) == "3.92"
    assert FILTERS["fixed"](divergent.expected_tokens) == "2.62"
    assert FILTERS["times"](aligned.speedup) == "2.62×"
    assert FILTERS["times"](divergent.speedup) == "1.75×"
    assert (engine_numbers["aligned"]["frames"], engine_numbers["divergent"]["frames"]) == (8, 5)


def test_the_speedup_page_shows_expected_tokens_and_speedups(site, engine_numbers):
    text = page_text(site, "speedup")
    details = page_text(site, "tokens-per-round")
    for profile in ("aligned", "divergent"):
        n = engine_numbers[profile]["numbers"]
        assert FILTERS["fixed"](n.expected_tokens) in text, profile
        assert FILTERS["times"](n.speedup) in text, profile
        assert FILTERS["fixed"](n.expected_accepted_drafts) in details, profile
        for p in n.round_length_distribution:
            assert FILTERS["frac"](p) in details, (profile, p)
    assert FILTERS["frac"](engine_numbers["round_cost"]) in text


def test_the_appendix_shows_both_derivations_as_the_same_fraction(site, engine_numbers):
    raw = (site / "tokens-per-round.html").read_text(encoding="utf-8")
    for profile in ("aligned", "divergent"):
        n = engine_numbers[profile]["numbers"]
        assert n.expected_tokens == n.expected_tokens_partial_products
        e = Fraction(n.expected_tokens)
        # MathML writes a fraction as <mfrac>, numerator then denominator, each maybe wrapped in <mrow>
        mfrac = rf"<mfrac>(?:<mrow>)?<mn>{e.numerator}</mn>(?:</mrow>)?(?:<mrow>)?<mn>{e.denominator}</mn>"
        assert re.search(mfrac, raw), profile


def test_the_cost_appendix_is_about_cost_not_the_sites_widgets(site, engine_numbers):
    """Issue 32.8: appendix C costs a round (best, average, worst) and no longer counts the stepper's frames; the
    frame counts stay on the stepper's own page."""
    text = page_text(site, "cost")
    stepped = page_text(site, "draft-and-verify")
    assert "frame" not in text.lower()
    for profile in ("aligned", "divergent"):
        n = engine_numbers[profile]["numbers"]
        assert FILTERS["times"](n.speedup) in text and FILTERS["fixed"](n.expected_tokens) in text, profile
        assert f"{engine_numbers[profile]['frames']} frames" in stepped, profile


def test_the_landing_page_states_the_rule_and_the_headline_numbers(site, engine_numbers):
    text = page_text(site, "index")
    for profile in ("aligned", "divergent"):
        n = engine_numbers[profile]["numbers"]
        assert FILTERS["fixed"](n.expected_tokens) in text and FILTERS["times"](n.speedup) in text
    raw = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="round-aligned"' in raw or "round" in raw
    for slug in READING_ORDER[1:]:
        assert f'href="{slug}.html"' in raw, slug


def test_the_landing_page_keeps_tokens_per_round_and_speedup_in_separate_columns(site, engine_numbers):
    """Issue 26.7: "2.62x" (a speedup) and "2.62 tokens" (an expected count) once sat in one sentence. Each
    draft now has one table row: its name, its expected tokens per round, its speedup, in columns that say which."""
    raw = (site / "index.html").read_text(encoding="utf-8")
    tables = re.findall(r"<table>.*?</table>", raw, flags=re.S)
    table = next(t for t in tables if "Speedup" in t)
    head = [_TAG.sub("", c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", table, flags=re.S)]
    assert head == ["Draft", "Tokens per round", "Speedup"], head
    rows = [
        [htmllib.unescape(_TAG.sub("", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], flags=re.S)
    ]
    config, profiles = load_inputs(ROOT)
    expected = [
        [
            d.name,
            FILTERS["fixed"](engine_numbers[d.id]["numbers"].expected_tokens),
            FILTERS["times"](engine_numbers[d.id]["numbers"].speedup),
        ]
        for d in profiles.drafts
    ]
    assert rows == expected
    for sentence in re.split(r"(?<=[.!?])\s", page_text(site, "index")):
        assert not ("×" in sentence and re.search(r"\d tokens", sentence)), sentence


def test_a_check_is_costed_as_k_plus_one_positions(site, engine_numbers):
    """Issue 26.6: a check of K proposals scores K + 1 positions (the bonus position too). The arithmetic the
    wasted-pass page prints is the roofline's for K + 1 positions, recomputed here from site.yaml, not for K."""
    roofline = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))["roofline"]
    per_position_ms = 2 * float(roofline["parameters"]) / (float(roofline["peak_tflops"]) * 1e12) * 1e3
    k = engine_numbers["k"]
    text = page_text(site, "wasted-pass")
    scored, wrong = FILTERS["fixed"](per_position_ms * (k + 1), 2), FILTERS["fixed"](per_position_ms * k, 2)
    assert scored != wrong  # else this test could not tell the two apart
    assert f"comes to {scored} ms" in text
    assert f"{wrong} ms" not in text
    assert f"{k + 1} positions" in text
    assert "scores K + 1 positions" in page_text(site, "speedup").replace("\u2062", "")


@pytest.mark.parametrize(
    "slug, words",
    [
        # issue 32.6: p after the target's own settings, q exactly what the draft sampled from; zeros of top-k/top-p
        ("lossless", ("p must be the target's distribution after its own settings", "loses acceptance, not exactness")),
        ("lossless", ("so proposals there are always rejected",)),
        # issue 32.6: caches cut to the accepted prefix; the next round reads the replacement or bonus first, and
        # after a clean sweep the draft reads its own last proposal too
        ("index", ("end of the accepted proposals", "a length reset", "what it has not read", "its own last proposal")),
        # issue 32.6: from one position to the whole text, and the bonus drawn from p directly
        ("lossless", ("applied position by position, each given the prefix committed so far", "drawn from p directly")),
        ("lossless", ("round its sums differently", "the choice can flip")),  # batched verification
        ("speedup", ("scores K + 1 positions",)),  # the check's size
    ],
)
def test_each_precision_note_stands_where_its_topic_is_raised(site, slug, words):
    """Issue 26.6: the four notes an expert would miss, each on the page that raises its topic."""
    text = page_text(site, slug).replace("\u2062", "").replace("’", "'")
    for w in words:
        assert w in text, (slug, w)


def test_a_caption_names_several_positions_once(site):
    """Issue 26.7: "at position 1, position 4 and position 5" reads "at positions 1, 4 and 5"."""
    captions = " ".join(
        re.findall(r"<figcaption>(.*?)</figcaption>", (site / "speedup.html").read_text(encoding="utf-8"), flags=re.S)
    )
    assert "positions " in captions
    assert not re.search(r"position \d+(?:, | and )position \d", captions), captions


def test_a_draft_length_that_prints_the_best_speedup_is_named_as_a_tie(site):
    """Issue 26.7, ties stated as ties: where another K prints the same speedup as the best K, the page says so."""
    from support import site_view

    ctx = site_view(ROOT)
    text = page_text(site, "speedup").replace("\u2062", "")
    ties = [
        (c, k)
        for c in ctx.speedup_curves
        if c.cost == ctx.draft_step
        for k, s in c.points
        if k != c.best_k and FILTERS["times"](s) == FILTERS["times"](c.best_speedup)
    ]
    assert ties  # the data has one (K = 9 and 10 at alpha = 9/10), so this test can see the sentence
    for curve, k in ties:
        assert k in curve.ties  # the facts hold the tie; the template only prints it
        best = f"{curve.best_k} for α = {curve.alpha.numerator} / {curve.alpha.denominator}"
        assert f"{best} ({FILTERS['times'](curve.best_speedup)}, and K = {k} prints the same)" in text


def test_every_best_k_the_appendix_names_also_names_its_ties(site):
    """Issue 32.7: on Tokens per round, in full, each best K in the table names every other K that prints the same
    speedup (alpha 7/10, c 1/20: K = 5 and 6; alpha 9/10, c 1/20: K = 13 and 14), found here from the points."""
    from support import site_view

    raw = (site / "tokens-per-round.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr>(.*?)</tr>", raw, flags=re.S)
    cells = [
        [re.sub(r"<[^>]+>|\u2062", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", r, flags=re.S)] for r in rows
    ]
    seen = 0
    for c in site_view(ROOT).speedup_curves:
        shown = FILTERS["times"](c.best_speedup)
        ties = [k for k, s in c.points if k != c.best_k and FILTERS["times"](s) == shown]
        row = next(r for r in cells if len(r) == 5 and r[3] == shown and r[2].startswith(str(c.best_k)))
        assert row[2] == (f"{c.best_k} (tied: {', '.join(map(str, ties))})" if ties else str(c.best_k)), row
        seen += bool(ties)
    assert seen >= 3  # the data has three ties, so the test can see the words


def test_the_toy_datas_tables_are_in_the_appendix_linked_after_its_pictures(site):
    """Issue 26.3 and 27.4: the per-position tables are reference, on their own appendix page, so the toy data
    page shows its pictures and stays small enough for a phone; it links to the tables once, after the pictures."""
    raw = (site / "positions.html").read_text(encoding="utf-8")
    body = raw[raw.index("<main") : raw.index("</main>")]
    assert "positions-table" not in body
    link = body.index('href="positions-reference.html"')
    assert body.index("figures/profile-") < link
    reference = (site / "positions-reference.html").read_text(encoding="utf-8")
    assert reference.count('<table class="positions-table"') > 10
    assert 'href="positions.html"' in reference[reference.index("<main") :]


def test_the_guarantees_page_reports_every_convergence_case(site):
    from support import site_view

    ctx = site_view(ROOT)
    text = page_text(site, "guarantees")
    assert FILTERS["thousands"](ctx.identity.random_pairs) in text
    assert FILTERS["thousands"](ctx.convergence.rounds) in text
    for case in ctx.convergence.cases:
        assert case.label in text
    assert ctx.convergence.negative_control.caught


def test_the_negative_control_is_compared_with_the_real_sampler_on_the_same_drafts(site):
    """The broken sampler runs on the toy data's drafts only, so the page sets its distance beside the real
    sampler's on those drafts, not beside the largest over the random cases too."""
    from support import site_view

    c = site_view(ROOT).convergence
    own = max(case.worst_total_variation for case in c.authored)
    text = page_text(site, "guarantees")
    said = re.search(r"where the real sampler reaches at most ([0-9.]+) on the same drafts", text)
    assert said and said.group(1) == FILTERS["fixed"](own, 4), said
    assert FILTERS["fixed"](own, 4) != FILTERS["fixed"](c.worst_total_variation, 4)  # negative control: they differ


def test_no_template_syntax_or_raw_math_leaks_into_the_output(site):
    for slug in READING_ORDER + APPENDIX:
        raw = (site / f"{slug}.html").read_text(encoding="utf-8")
        code = " ".join(re.findall(r"<pre\b.*?</pre>", raw, flags=re.S))  # a BibTeX entry's {{Title}} is its own
        text = page_text(site, slug).replace(re.sub(r"\s+", " ", htmllib.unescape(_TAG.sub(" ", code))).strip(), " ")
        assert "{{" not in text and "{%" not in text, slug
        assert "$" not in text, slug
        assert "<math" in (site / f"{slug}.html").read_text(encoding="utf-8") or slug in (
            "limits",
            "playground",
            "positions-reference",
        ), slug


def test_every_internal_link_and_anchor_resolves(site):
    ids = {}
    for path in site.glob("*.html"):
        ids[path.name] = set(re.findall(r'\sid="([^"]+)"', path.read_text(encoding="utf-8")))
    broken = []
    for slug in READING_ORDER + APPENDIX:
        raw = (site / f"{slug}.html").read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"]+)"', raw):
            if re.match(r"[a-z]+:", href) or href.startswith("assets/") or href.startswith("figures/"):
                continue
            target, _, anchor = href.partition("#")
            target = target or f"{slug}.html"
            if not target.endswith(".html"):  # the published data: numbers.json, numbers.csv, the profiles
                if not (site / target).is_file():
                    broken.append(f"{slug}.html -> {href}")
                continue
            if target not in ids or (anchor and anchor not in ids[target]):
                broken.append(f"{slug}.html -> {href}")
    assert not broken, broken


def test_each_thing_to_notice_links_to_its_frame(site):
    from support import site_view

    ctx = site_view(ROOT)
    raw = (site / "draft-and-verify.html").read_text(encoding="utf-8")
    for name, (_, frame) in ctx.notable.items():
        assert f'href="#{frame.id}"' in raw, name
