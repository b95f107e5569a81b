"""The reader's edition: a main path within a reading budget, an appendix, and the seed's figures on the path."""

import re
from pathlib import Path

import pytest
import yaml
from reading_budget import reading_order, visible_words

from support import ROOT

BUDGET = 4000  # visible words of <main> over the whole main path, widgets' insides not counted (issue 9)
CONFIG = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(site_dir):
    return site_dir


def main_text(site: Path, slug: str) -> str:
    raw = (site / f"{slug}.html").read_text(encoding="utf-8")
    body = raw[raw.index("<main") : raw.index("</main>")]
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


# --- the counter itself ---------------------------------------------------------------------------


def test_the_counter_counts_main_only_and_skips_widgets_scripts_and_hidden_text():
    html = """<html><body><nav>five words in the nav</nav><main><h1>Two words</h1>
    <p>Three more <em>words</em> here.</p>
    <section data-widget="stepper"><p>not these ten words at all, none of them count</p></section>
    <script>var notCounted = 1;</script><span class="visually-hidden">skip me</span><p hidden>gone</p>
    <p>Then <math><mi>p</mi><mo>(</mo><mi>x</mi><mo>)</mo></math> once.</p></main></body></html>"""
    assert visible_words(html) == 2 + 4 + 3


def test_the_counter_fails_a_path_over_budget():
    """The negative control: the budget check can fail. A main path one word over the budget is caught."""
    page = "<main><p>" + " ".join(["word"] * (BUDGET + 1)) + "</p></main>"
    assert visible_words(page) > BUDGET


# --- the built site -------------------------------------------------------------------------------


def test_the_navigation_lists_the_main_path_then_the_appendix_in_site_yaml_order(site):
    main_path, appendix = reading_order(site)
    assert main_path == CONFIG["pages"]
    assert appendix == CONFIG["appendix"]
    for slug in main_path + appendix:
        raw = (site / f"{slug}.html").read_text(encoding="utf-8")
        assert "<details" in raw.split('class="site-nav"', 1)[1].split("</nav>", 1)[0], slug


def test_the_main_path_stays_within_its_reading_budget(site):
    main_path, _ = reading_order(site)
    counts = {slug: visible_words((site / f"{slug}.html").read_text(encoding="utf-8")) for slug in main_path}
    assert sum(counts.values()) <= BUDGET, counts


def test_every_widget_root_is_marked_so_the_budget_can_leave_it_out(site):
    for path in site.glob("*.html"):
        raw = path.read_text(encoding="utf-8")
        for root in re.findall(r'<[a-z]+ class="(?:stepper|tabs|playground)"[^>]*>', raw):
            assert "data-widget=" in root, (path.name, root)


def test_the_seeds_figures_appear_computed_on_the_main_path(site):
    main_path, _ = reading_order(site)
    text = " ".join(main_text(site, slug) for slug in main_path)
    for figure in ("3.92", "2.62", "2.62×", "1.75×", "8 frames", "5 frames"):
        assert figure in text, figure


def test_the_first_page_opens_with_the_timeline_before_any_formula(site):
    raw = (site / "index.html").read_text(encoding="utf-8")
    body = raw[raw.index("<main") :]
    assert "figures/timeline" in body
    assert body.index("figures/timeline") < body.index("<math")
    assert body.index("figures/timeline") < body.index("<p>")


def test_no_main_path_sentence_speaks_about_the_build_the_cache_or_the_tests(site):
    main_path, _ = reading_order(site)
    for slug in main_path:
        raw = (site / f"{slug}.html").read_text(encoding="utf-8")
        body = raw[raw.index("<main") : raw.index("</main>")]
        body = re.sub(r"<(section|div)[^>]*data-widget[^>]*>.*", " ", body, flags=re.S)  # widgets come last
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))
        talk = r"\b(?:the build|builds?|(?:the|a) cache|our tests|the tests)\b"
        found = [s for s in re.split(r"(?<=[.!?])\s+", text) if re.search(talk, s, flags=re.I)]
        assert not found, (slug, found)
