"""A what-if link is the reader's address bar, so anyone can write one: a link whose numbers carry more digits
than the editor works with is refused in one sentence, and no link holds up the page (no task over 200 ms)."""

from __future__ import annotations

import json
from fractions import Fraction
from urllib.parse import quote

import pytest

from browser_support import serve, shared_tab, turn
from generator.model.profiles import MAX_TERM, load_profiles
from support import PROFILES

pytestmark = pytest.mark.browser

LONG_TASK_MS = 200
OBSERVE = """() => {
    window.wiLong = [];
    new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.wiLong.push(e.duration);
    }).observe({ type: "longtask" });
}"""


@pytest.fixture(scope="module")
def editor_page(site_dir):
    """The built page that carries the editor, wherever the reading order puts it."""
    pages = [p.name for p in sorted(site_dir.glob("*.html")) if 'id="what-if"' in p.read_text(encoding="utf-8")]
    assert len(pages) == 1, pages
    return pages[0]


@pytest.fixture(scope="module")
def tab(browser, site_dir):
    with serve(site_dir) as url, shared_tab(browser, timeout_ms=10000) as pg:
        pg.origin = url
        yield pg


def row(size: int, denominator: int) -> list[str]:
    """size probabilities over one denominator, summing to exactly 1."""
    cells = [Fraction(denominator // size + j, denominator) for j in range(size - 1)]
    return [str(f) for f in cells] + [str(1 - sum(cells))]


def fragment(denominator: int) -> str:
    profiles = load_profiles(PROFILES)
    draft = profiles.drafts[0]
    size = len(profiles.tokens)
    doc = {
        "target": [row(size, denominator + i) for i in range(len(profiles.target))],
        "draft": [row(size, denominator + 2 * i + 1) for i in range(profiles.k)],
        "proposals": [profiles.tokens[j] for j in draft.proposals],
        "cost_model": {"draft_step": "1/10", "verify_step": "1"},
    }
    return "#what-if=" + quote(json.dumps(doc), safe="")


def load_link(tab, editor_page: str, denominator: int) -> tuple[str, list[float]]:
    turn(tab)
    tab.goto(f"{tab.origin}/{editor_page}")
    tab.wait_for_selector("#what-if.is-enhanced")
    tab.evaluate(OBSERVE)
    tab.evaluate(f"() => {{ window.location.hash = {json.dumps(fragment(denominator))}; }}")
    tab.wait_for_timeout(400)
    error = tab.locator('#what-if [data-wi="error"]')
    said = error.inner_text() if error.is_visible() else ""
    return said, tab.evaluate("() => window.wiLong")


def test_a_link_with_95_digit_denominators_is_refused_in_one_sentence_without_a_long_task(tab, editor_page):
    said, long_tasks = load_link(tab, editor_page, 10**95 + 7)
    assert "more digits than the editor works with" in said, said
    assert said.count(". ") == 0 and said.endswith("."), said  # one sentence
    assert all(d <= LONG_TASK_MS for d in long_tasks), long_tasks


def test_a_link_at_the_limit_loads(tab, editor_page):
    """The negative control: six-digit denominators are the editor's own numbers and load as usual."""
    said, long_tasks = load_link(tab, editor_page, MAX_TERM - 40)
    assert said == "", said
    assert all(d <= LONG_TASK_MS for d in long_tasks), long_tasks
