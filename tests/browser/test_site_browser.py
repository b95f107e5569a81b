"""The stepper and the tabs in Debian's Chromium, against the fixture site test_widgets builds.

One browser for the module and one local server; every request is checked against that server so
the pages are known to fetch nothing from elsewhere.
"""

import re

import pytest
from test_widgets import build_fixture_site

from browser_support import require_chromium, serve, turn

pytestmark = pytest.mark.browser

sync_api = require_chromium()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A fixture site of this module's own (the conftest serves it as `origin`)."""
    return build_fixture_site(tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")
def real_origin(site_dir):
    """The site a reader gets, built from the project's own pages, beside the fixture site."""
    with serve(site_dir) as url:
        yield url


@pytest.fixture
def page(tab, origin):
    """The tab, blank and with nothing recorded yet."""
    turn(tab)
    pg = tab
    yield pg
    assert not pg.problems, pg.problems
    outside = [u for u in pg.requested if not (u.startswith("http://127.0.0.1:") or u.startswith("data:"))]
    assert not outside, outside


def status(pg) -> str:
    return pg.locator("[data-stepper-status]").inner_text()


def visible_frames(pg) -> list[str]:
    return pg.eval_on_selector_all(".frame", "els => els.filter(e => e.offsetParent !== null).map(e => e.id)")


def open_widgets(pg, origin, hash_=""):
    pg.goto(f"{origin}/widgets.html{hash_}")
    pg.wait_for_selector(".stepper.is-enhanced")


def choose_worked_round(pg, profile):
    """Each profile opens on its worked round, the first in the round list."""
    pg.click(f"button[data-profile='{profile}']")
    pg.select_option("[data-round-select]", index=0)


def frames_in(pg, profile, round_id) -> int:
    """How many frames a round has, from the data the stepper draws it from."""
    return pg.evaluate(
        """([p, r]) => JSON.parse(document.getElementById('stepper-data').textContent)
        .profiles.find(x => x.id === p).rounds.find(x => x.id === r).frames.length""",
        [profile, round_id],
    )


def expect_frame(pg, profile, round_id, n, total):
    assert re.match(rf"Frame {n} of {total}: ", status(pg)), status(pg)
    assert visible_frames(pg) == [f"frame-{profile}-{round_id}-{n}"]


@pytest.mark.parametrize("profile,total", [("aligned", 8), ("divergent", 5)])
def test_the_buttons_step_through_every_authored_frame_and_back(page, origin, profile, total):
    open_widgets(page, origin)
    choose_worked_round(page, profile)
    expect_frame(page, profile, "authored", 1, total)
    for n in range(2, total + 1):
        page.click("[data-action='next']")
        expect_frame(page, profile, "authored", n, total)
    page.click("[data-action='next']", force=True)  # aria-disabled at the end: a no-op, not an error
    expect_frame(page, profile, "authored", total, total)
    for n in range(total - 1, 0, -1):
        page.click("[data-action='prev']")
        expect_frame(page, profile, "authored", n, total)


@pytest.mark.parametrize("profile,total", [("aligned", 8), ("divergent", 5)])
def test_the_arrow_keys_step_through_every_authored_frame(page, origin, profile, total):
    open_widgets(page, origin)
    choose_worked_round(page, profile)
    page.focus("[data-action='next']")
    for n in range(2, total + 1):
        page.keyboard.press("ArrowRight")
        expect_frame(page, profile, "authored", n, total)
    for n in range(total - 1, 0, -1):
        page.keyboard.press("ArrowLeft")
        expect_frame(page, profile, "authored", n, total)


@pytest.mark.parametrize("profile,total", [("aligned", 8), ("divergent", 5)])
def test_the_published_draft_and_verify_page_steps_through_every_authored_frame(page, real_origin, profile, total):
    page.goto(f"{real_origin}/draft-and-verify.html")
    page.wait_for_selector(".stepper.is-enhanced")
    choose_worked_round(page, profile)
    expect_frame(page, profile, "authored", 1, total)
    for n in range(2, total + 1):
        page.click("[data-action='next']")
        expect_frame(page, profile, "authored", n, total)
    page.focus("[data-action='prev']")
    for n in range(total - 1, 0, -1):
        page.keyboard.press("ArrowLeft")
        expect_frame(page, profile, "authored", n, total)


def test_switching_profile_and_round_shows_that_rounds_first_frame(page, origin):
    open_widgets(page, origin)
    expect_frame(page, "aligned", "authored", 1, 8)
    page.click("button[data-profile='divergent']")
    assert page.get_attribute("button[data-profile='divergent']", "aria-pressed") == "true"
    assert page.get_attribute("button[data-profile='aligned']", "aria-pressed") == "false"
    expect_frame(page, "divergent", "authored", 1, 5)
    page.click("[data-action='another']")
    expect_frame(page, "divergent", "draw-accepted", 1, frames_in(page, "divergent", "draw-accepted"))
    assert page.input_value("[data-round-select]") == "1"
    page.select_option("[data-round-select]", label="6 of 6: sampled")
    expect_frame(page, "divergent", "sampled-3", 1, frames_in(page, "divergent", "sampled-3"))
    labels = page.eval_on_selector_all("[data-round-select] option", "os => os.map(o => o.textContent)")
    assert labels[:4] == [
        "1 of 6: worked round",
        "2 of 6: sampled, draw keeps",
        "3 of 6: sampled, draw rejects",
        "4 of 6: sampled",
    ]


def test_reset_returns_to_the_first_frame(page, origin):
    open_widgets(page, origin)
    choose_worked_round(page, "aligned")
    for _ in range(4):
        page.click("[data-action='next']")
    expect_frame(page, "aligned", "authored", 5, 8)
    page.click("[data-action='reset']")
    expect_frame(page, "aligned", "authored", 1, 8)


def test_play_advances_on_its_own_and_pause_stops_it(browser, origin):
    """On Playwright's fake clock, so the test waits out no interval: in a tab of its own, since the
    clock stays installed in the tab it was installed in."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.clock.install()
        open_widgets(pg, origin)
        play = pg.locator("[data-action='play']")
        play.click()
        assert play.inner_text() == "Pause"
        for _ in range(100):  # up to 10 s of page time, 100 ms at a time, until the frame moves on
            if not status(pg).startswith("Frame 1 "):
                break
            pg.clock.run_for(100)
        assert re.match(r"Frame 2 of \d+: ", status(pg)), status(pg)
        play.click()
        assert play.inner_text() == "Play"
        stopped_at = status(pg)
        pg.clock.run_for(10_000)
        assert status(pg) == stopped_at
    finally:
        context.close()
    assert not errors, errors


def test_reduced_motion_turns_off_the_frame_animation(browser, origin):
    context = browser.new_context(reduced_motion="reduce")
    pg = context.new_page()
    try:
        open_widgets(pg, origin)
        name = pg.eval_on_selector(".frame.is-current", "e => getComputedStyle(e).animationName")
        assert name == "none"
    finally:
        context.close()


def test_a_frame_anchor_shows_that_frame(page, origin):
    open_widgets(page, origin, "#frame-divergent-authored-4")
    expect_frame(page, "divergent", "authored", 4, 5)
    assert page.evaluate("document.activeElement.id") == "frame-divergent-authored-4"
    page.evaluate("location.hash = '#frame-aligned-sampled-2-3'")
    sync_api.expect(page.locator("#frame-aligned-sampled-2-3")).to_be_visible()
    expect_frame(page, "aligned", "sampled-2", 3, frames_in(page, "aligned", "sampled-2"))


def test_a_link_from_another_page_lands_on_the_frame(page, origin):
    page.goto(f"{origin}/notes.html")
    page.click("a[href='widgets.html#frame-divergent-authored-4']")
    page.wait_for_selector(".stepper.is-enhanced")
    expect_frame(page, "divergent", "authored", 4, 5)
    assert page.locator("#frame-divergent-authored-4").is_visible()


def test_the_tabs_switch_by_mouse_and_by_keyboard(page, origin):
    open_widgets(page, origin)
    tabs = page.locator("[role='tablist'] [role='tab']")
    assert tabs.count() == 2
    aligned, divergent = page.locator("#positions-aligned"), page.locator("#positions-divergent")
    assert aligned.get_attribute("role") == "tabpanel"
    assert aligned.is_visible() and not divergent.is_visible()
    tabs.nth(1).click()
    assert divergent.is_visible() and not aligned.is_visible()
    assert tabs.nth(1).get_attribute("aria-selected") == "true"
    page.keyboard.press("ArrowRight")  # wraps round to the first tab
    assert aligned.is_visible() and page.evaluate("document.activeElement.id") == "positions-aligned-tab"
    page.keyboard.press("ArrowLeft")
    assert divergent.is_visible()
    page.keyboard.press("Home")
    assert aligned.is_visible()
    page.keyboard.press("End")
    assert divergent.is_visible() and page.evaluate("document.activeElement.id") == "positions-divergent-tab"
    assert tabs.nth(0).get_attribute("tabindex") == "-1" and tabs.nth(1).get_attribute("tabindex") == "0"


def test_without_script_every_frame_and_every_panel_shows(browser, origin):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    try:
        pg.goto(f"{origin}/widgets.html")
        assert pg.locator("#frame-divergent-authored-4").is_visible()
        assert pg.locator("#frame-aligned-authored-8").is_visible()
        assert pg.locator("#positions-aligned").is_visible() and pg.locator("#positions-divergent").is_visible()
        assert not pg.locator("[data-stepper-controls]").is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("width", [360, 390, 1280])
def test_the_page_never_scrolls_sideways(browser, origin, width):
    context = browser.new_context(viewport={"width": width, "height": 800})
    pg = context.new_page()
    try:
        for name in ("widgets", "notes"):
            pg.goto(f"{origin}/{name}.html")
            assert pg.evaluate("document.documentElement.scrollWidth") <= width, name
    finally:
        context.close()
