"""The block stepper in Chromium: on a phone-sized screen every frame, reached by Next, shows its verdict under
the sticky step bar; the arrow keys step too; without the script the round is a table and no controls show."""

import pytest

from browser_support import require_chromium, serve, shared_tab, turn

pytestmark = pytest.mark.browser

sync_api = require_chromium()

PHONE = {"width": 390, "height": 844}
VERDICT_WORDS = ("accepted", "rejected", "replacement", "bonus", "dropped")

IN_VIEW = """root => {
  const bar = root.querySelector('[data-stepper-bar]').getBoundingClientRect();
  return [...root.querySelectorAll('[data-stepper-stage] [data-verdict]')].map(v => {
    const r = v.getBoundingClientRect();
    return r.top >= bar.bottom - 1 && r.bottom <= window.innerHeight && r.height > 0;
  });
}"""


@pytest.fixture(scope="module")
def origin(site_dir):
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="module")
def tab(browser):
    with shared_tab(browser, console=("error",)) as pg:
        yield pg


def open_block(pg, origin, viewport=PHONE):
    turn(pg, viewport)
    pg.goto(f"{origin}/block.html")
    pg.wait_for_selector(".block-stepper.is-enhanced")
    pg.evaluate("document.querySelector('[data-block-stepper]').scrollIntoView()")
    return pg


def title(pg) -> str:
    return pg.inner_text("[data-block-stepper] [data-stepper-stage] .frame-title")


def at_end(pg) -> bool:
    return pg.get_attribute("[data-block-stepper] [data-action='next']", "aria-disabled") == "true"


def test_every_frame_fits_a_phone_with_its_verdict_in_view(tab, origin):
    pg = open_block(tab, origin)
    seen = 0
    while True:
        assert not any(w in title(pg).lower() for w in VERDICT_WORDS), title(pg)
        in_view = pg.eval_on_selector("[data-block-stepper]", IN_VIEW)
        assert in_view == [True], (title(pg), in_view)
        seen += 1
        if at_end(pg):
            break
        pg.click("[data-block-stepper] [data-action='next']")
    assert seen == pg.evaluate("JSON.parse(document.getElementById('block-stepper-data').textContent).frames.length")
    assert not tab.problems, tab.problems


def test_the_viewport_check_fails_for_a_verdict_pushed_off_screen(tab, origin):
    """Negative control: on a screen too short for the frame, the same measurement says the verdict is out of view."""
    pg = open_block(tab, origin, {"width": 390, "height": 160})
    assert pg.eval_on_selector("[data-block-stepper]", IN_VIEW) == [False]


def test_the_arrow_keys_step_through_the_frames(tab, origin):
    pg = open_block(tab, origin)
    first = title(pg)
    pg.focus("[data-block-stepper] [data-action='next']")
    pg.keyboard.press("ArrowRight")
    assert title(pg) != first and "frame 2 of" in title(pg).lower()
    pg.keyboard.press("ArrowLeft")
    assert title(pg) == first


def test_without_javascript_the_round_is_a_table_and_no_controls_show(browser, origin):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/block.html")
    assert pg.locator("table.block-round").is_visible()
    assert not pg.locator("[data-block-stepper] [data-stepper-bar]").is_visible()
    assert not pg.locator("[data-block-stepper] [data-stepper-stage]").is_visible()
    assert pg.locator("table.block-round tbody tr").count() == pg.locator("[data-block-stepper] .chip").count()
    context.close()
