"""The log reader on the page "In practice", in Debian's chromium: what it prints from the address, from counts
and from keyboard input equals what generator/model/logreader.py computes, printed by the pages' one rounding
rule; a rising list typed as unconditional gets one sentence and no exception; without JavaScript the page says
what the reader does."""

from __future__ import annotations

from fractions import Fraction

import pytest

from browser_support import serve, shared_tab, turn
from generator.model.logreader import readout
from generator.render import decimals

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def origin(site_dir):
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="module")
def tab(browser, origin):
    with shared_tab(browser, timeout_ms=10000) as pg:
        pg.origin = origin
        yield pg


@pytest.fixture
def page(tab):
    turn(tab)
    yield tab
    assert not tab.problems, tab.problems


def open_reader(page, fragment: str = ""):
    page.goto(f"{page.origin}/practice.html{fragment}")
    page.wait_for_selector('[data-lr="app"]:not([hidden])')
    return page


def shown(page, name: str) -> str:
    return page.locator(f'[data-readout="{name}"]').inner_text().strip()


def test_the_address_fills_the_reader_with_the_llama_cpp_log(page):
    open_reader(page, "#rates=0.805,0.632,0.483")
    assert shown(page, "mean-length") == "2.92"
    assert shown(page, "conditional") == "0.805, 0.785, 0.764"
    assert shown(page, "unconditional") == "0.805, 0.632, 0.483"
    want = readout({"convention": "unconditional", "rates": "0.805,0.632,0.483", "cost": "1/10"})
    assert shown(page, "alpha").startswith(decimals.fixed(Fraction(want["alpha_thousandths"], 1000), 3))
    assert shown(page, "speedup").startswith(decimals.times(Fraction(want["speedup"]), 2))
    assert f"K = {want['iid_best_k']}" in shown(page, "best-k")
    assert "unconditional" in shown(page, "convention")
    assert page.locator('[data-readout="error"]').is_hidden()


def test_counts_typed_from_the_keyboard_give_the_same_length(page):
    open_reader(page)
    page.locator('[data-lr="convention"][value="unconditional"]').focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # radio buttons move with the arrow keys: now "counts"
    assert page.locator('[data-lr="convention"][value="counts"]').is_checked()
    page.get_by_role("textbox", name="Rounds drafted").fill("87")
    page.get_by_role("textbox", name="Proposals accepted").fill("167")
    page.get_by_role("textbox", name="Draft length K").fill("3")
    assert shown(page, "mean-length") == "2.92"
    assert "counts" in shown(page, "convention") and page.url.endswith("#rounds=87&accepted=167&k=3&c=1/10")


def test_a_rising_list_typed_as_unconditional_gets_one_sentence_and_no_exception(page):
    open_reader(page)
    page.get_by_label("Acceptance per position").fill("0.483, 0.632, 0.805")
    error = page.locator('[data-readout="error"]')
    assert error.is_visible()
    text = error.inner_text().strip()
    assert "cannot be unconditional" in text and text.count(". ") == 0 and "\n" not in text
    page.get_by_label("Per position, conditional", exact=False).check()  # the same rates, read as conditional
    assert error.is_hidden()
    want = readout({"convention": "conditional", "rates": "0.483, 0.632, 0.805", "cost": "1/10"})
    assert shown(page, "mean-length") == decimals.fixed(Fraction(want["mean_length"]), 2)


def test_a_malformed_address_or_input_never_throws(page):
    open_reader(page, "#rates=%E0%A4%A&c=zero")
    page.get_by_label("Draft step cost", exact=False).fill("zero")
    assert "draft cost" in shown(page, "error")
    page.get_by_label("Draft step cost", exact=False).fill("1/20")
    page.get_by_label("Acceptance per position").fill("1.5")
    assert "between 0 and 1" in shown(page, "error")


def test_without_javascript_the_page_says_what_the_reader_does(browser, origin):
    context = browser.new_context(java_script_enabled=False)
    try:
        pg = context.new_page()
        pg.goto(f"{origin}/practice.html")
        note = pg.locator(".log-reader-nojs")
        assert note.is_visible() and "mean acceptance length" in note.inner_text()
        assert pg.locator('[data-lr="app"]').is_hidden()
    finally:
        context.close()
