"""The published stepper in Chromium: the address follows the frame (links and the back button work), every
check frame draws p and q for every token, and the rounds a draw decided can be chosen by name."""
import re

import pytest

from browser_support import require_chromium, serve, shared_tab, turn

pytestmark = pytest.mark.browser

sync_api = require_chromium()


@pytest.fixture(scope="module")
def origin(site_dir):
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="module")
def tab(browser):
    """The module's one tab (browser_support.shared_tab), recording script errors."""
    with shared_tab(browser, console=("error",)) as pg:
        yield pg


@pytest.fixture
def page(tab, origin):
    turn(tab)
    pg = tab
    pg.goto(f"{origin}/draft-and-verify.html")
    pg.wait_for_selector(".stepper.is-enhanced")
    yield pg
    assert not pg.problems, pg.problems


def shown(pg) -> list[str]:
    return pg.eval_on_selector_all(".frame", "els => els.filter(e => e.offsetParent !== null).map(e => e.id)")


def fragment(pg) -> str:
    return pg.evaluate("location.hash")


def test_stepping_puts_the_frame_in_the_address_and_the_back_button_steps_back(page):
    assert fragment(page) == ""
    page.click("button[data-profile='divergent']")
    first = shown(page)[0]
    assert fragment(page) == f"#{first}"
    visited = [first]
    for _ in range(3):
        page.click("[data-action='next']")
        (current,) = shown(page)
        assert fragment(page) == f"#{current}"
        visited.append(current)
    assert visited == [f"frame-divergent-authored-{n}" for n in range(1, 5)]
    for expected in reversed(visited[:-1]):
        page.go_back()
        page.wait_for_function("id => location.hash === '#' + id", arg=expected)
        assert shown(page) == [expected]
    page.go_forward()
    page.wait_for_function("() => location.hash === '#frame-divergent-authored-2'")
    assert shown(page) == ["frame-divergent-authored-2"]


def test_a_frame_address_opened_fresh_shows_that_frame(browser, origin):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    pg = context.new_page()
    pg.goto(f"{origin}/draft-and-verify.html#frame-aligned-authored-3")
    pg.wait_for_selector(".stepper.is-enhanced")
    assert shown(pg) == ["frame-aligned-authored-3"]
    assert re.match(r"Frame 3 of 8: ", pg.locator("[data-stepper-status]").inner_text())
    context.close()


@pytest.mark.parametrize("profile", ["aligned", "divergent"])
def test_every_check_frame_draws_p_and_q_for_every_token(page, profile):
    page.click(f"button[data-profile='{profile}']")
    tokens = None
    while True:
        (frame,) = shown(page)
        locator = page.locator(f"#{frame}")
        if "frame-verify" in (locator.get_attribute("class") or ""):
            rows = locator.locator(".pq-table tbody tr")
            tokens = tokens or rows.count()
            assert rows.count() == tokens > 1
            for kind in ("m-p", "m-q"):
                assert locator.locator(f"meter.{kind}").count() == tokens
            assert locator.locator(".pq-table tr.proposal").count() == 1
            assert locator.locator(".pq-table").is_visible()
        if page.get_attribute("[data-action='next']", "aria-disabled") == "true":
            break
        page.click("[data-action='next']")
    assert tokens


@pytest.mark.parametrize("profile", ["aligned", "divergent"])
@pytest.mark.parametrize("label,verdict", [("Kept by the draw", "accepted"), ("Rejected by the draw", "rejected")])
def test_a_round_decided_by_a_draw_can_be_chosen_by_name(page, profile, label, verdict):
    page.click(f"button[data-profile='{profile}']")
    page.select_option("[data-round-select]", label=label)
    round_id = f"draw-{verdict}"
    assert shown(page) == [f"frame-{profile}-{round_id}-1"]
    assert fragment(page) == f"#frame-{profile}-{round_id}-1"
    drawn = page.locator(f"#rounds-{profile}-{round_id} .frame-verify .draw dd")
    texts = [drawn.nth(i).inner_text() for i in range(drawn.count())]
    word = "below" if verdict == "accepted" else "not below"
    assert any(re.match(rf"0\.\d{{4}}, {word} ", t.strip()) for t in texts), texts
