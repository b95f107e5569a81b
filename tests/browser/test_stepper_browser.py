"""The published stepper in Chromium, on a phone-sized screen where it matters: every frame of every round
offered fits with its verdict in view after Next, no heading gives a verdict away, the first round shows a
draw deciding a check, the address follows the frame (and a malformed one breaks nothing), and the page
stays small."""

import re

import pytest

from browser_support import require_chromium, shared_tab, turn

pytestmark = pytest.mark.browser

sync_api = require_chromium()

PHONE = {"width": 390, "height": 844}
VERDICT_WORDS = ("accepted", "rejected", "replacement", "bonus", "dropped")
DECIDES = ("frame-verify", "frame-bonus")  # a check (and a rejection's replacement), a bonus


@pytest.fixture(scope="module")
def tab(browser):
    """The module's one tab (browser_support.shared_tab), recording script errors."""
    with shared_tab(browser, console=("error",)) as pg:
        yield pg


def open_page(pg, origin, hash_="", viewport=None):
    turn(pg, viewport)
    pg.goto(f"{origin}/draft-and-verify.html{hash_}")
    pg.wait_for_selector(".stepper.is-enhanced")
    return pg


@pytest.fixture
def page(tab, origin):
    yield open_page(tab, origin)
    assert not tab.problems, tab.problems


@pytest.fixture
def phone(tab, origin):
    tab.emulate_media(reduced_motion="reduce")
    yield open_page(tab, origin, viewport=PHONE)
    assert not tab.problems, tab.problems


def shown(pg) -> list[str]:
    return pg.eval_on_selector_all(".frame", "els => els.filter(e => e.offsetParent !== null).map(e => e.id)")


def fragment(pg) -> str:
    return pg.evaluate("location.hash")


def at_end(pg) -> bool:
    return pg.get_attribute("[data-action='next']", "aria-disabled") == "true"


IN_VIEW = """el => {
  const bar = document.querySelector('[data-stepper-bar]').getBoundingClientRect();
  return [...el.querySelectorAll('[data-verdict]')].map(v => {
    const r = v.getBoundingClientRect();
    return [v.dataset.verdict, r.top >= bar.bottom - 1 && r.bottom <= window.innerHeight && r.height > 0,
            Math.round(r.top), Math.round(r.bottom)];
  });
}"""


def test_every_frame_of_every_round_fits_a_phone_with_its_verdict_in_view(phone):
    """At 390 x 844, after each Next onto a frame that decides something, its verdicts are on screen below
    the sticky step bar; and no frame heading holds a verdict word."""
    profiles = phone.eval_on_selector_all("button[data-profile]", "bs => bs.map(b => b.dataset.profile)")
    decided = 0
    for profile in profiles:
        phone.click(f"button[data-profile='{profile}']")
        rounds = phone.eval_on_selector_all("[data-round-select] option", "os => os.map(o => o.value)")
        for value in rounds:
            phone.select_option("[data-round-select]", value)
            phone.evaluate("document.querySelector('.stepper').scrollIntoView()")
            while True:
                (frame,) = shown(phone)
                heading = phone.inner_text(f"#{frame} .frame-title").lower()
                assert not any(w in heading for w in VERDICT_WORDS), (frame, heading)
                if at_end(phone):
                    break
                phone.click("[data-action='next']")
                (frame,) = shown(phone)
                kind = phone.get_attribute(f"#{frame}", "class")
                if any(k in kind for k in DECIDES):
                    verdicts = phone.eval_on_selector(f"#{frame}", IN_VIEW)
                    assert verdicts, frame
                    assert all(ok for _, ok, _, _ in verdicts), (frame, verdicts)
                    decided += 1
                    if "frame-verify" in kind and phone.locator(f"#{frame} [data-verdict='rejected']").count():
                        assert [v for v, *_ in verdicts] == ["rejected", "replacement"], (frame, verdicts)
                        assert phone.locator(f"#{frame} svg.exact rect.bar-res").count() > 0
    assert decided > 20


def test_the_viewport_check_fails_for_a_frame_pushed_off_screen(phone):
    """Negative control: the same measurement reports a verdict below the fold as out of view."""
    phone.click("[data-action='next']")
    (frame,) = shown(phone)
    phone.evaluate(f"document.getElementById('{frame}').style.marginTop = '900px'")
    assert not all(ok for _, ok, _, _ in phone.eval_on_selector(f"#{frame}", IN_VIEW))


def test_with_no_hash_the_first_two_nexts_stay_in_the_first_drafts_worked_round_and_u_shows(phone):
    """At 390 x 844 with no hash: the worked round of the first draft, and a draw decides a check by frame 3."""
    first = phone.eval_on_selector_all("button[data-profile]", "bs => bs.map(b => b.dataset.profile)")[0]
    assert fragment(phone) == ""
    assert shown(phone) == [f"frame-{first}-authored-1"]
    assert phone.input_value("[data-round-select]") == "0"
    assert phone.inner_text("[data-round-select] option:checked").endswith("worked round")
    lines = []
    for n in (2, 3):
        phone.click("[data-action='next']")
        assert fragment(phone) == f"#frame-{first}-authored-{n}"
        (frame,) = shown(phone)
        line = phone.locator(f"#{frame} [data-u-line]")
        if line.count():
            assert line.is_visible()
            lines.append(line.get_attribute("aria-label"))
    assert lines, "no check decided by a draw within the first three frames"
    assert re.match(r"Number line from 0 to 1: threshold \d+/\d+, u = 0\.\d{4}$", lines[0]), lines


def test_every_profile_opens_on_its_worked_round(phone):
    for profile in phone.eval_on_selector_all("button[data-profile]", "bs => bs.map(b => b.dataset.profile)"):
        phone.click(f"button[data-profile='{profile}']")
        assert phone.input_value("[data-round-select]") == "0"
        assert shown(phone) == [f"frame-{profile}-authored-1"]
        note = phone.inner_text("[data-rounds-note]")
        count = phone.locator("[data-round-select] option").count()
        assert f"steps through {count} rounds" in note and phone.locator("[data-rounds-note]").is_visible()


def test_another_round_says_which_of_how_many_it_shows(phone):
    count = phone.locator("[data-round-select] option").count()
    seen = []
    for _ in range(count):
        phone.click("[data-action='another']")
        seen.append(phone.inner_text("[data-round-select] option:checked"))
    assert seen[-1] == f"1 of {count}: worked round"  # it cycles through a fixed set
    assert all(re.match(rf"{i} of {count}: sampled", t) for i, t in enumerate(seen[:-1], start=2)), seen


def test_the_page_stays_under_2000_elements_while_stepping(phone):
    counts = [phone.evaluate("document.getElementsByTagName('*').length")]
    for _ in range(6):
        phone.click("[data-action='another']")
        while not at_end(phone):
            phone.click("[data-action='next']")
        counts.append(phone.evaluate("document.getElementsByTagName('*').length"))
    assert max(counts) <= 2000, counts


@pytest.mark.parametrize("hash_", ["#%", "#%E0%A4%A", "#" + "x" * 100_000, "#frame-" + "%" * 50_000])
def test_a_malformed_address_never_throws_and_the_stepper_keeps_stepping(tab, origin, hash_):
    pg = open_page(tab, origin, hash_)
    first = shown(pg)
    assert len(first) == 1
    pg.click("[data-action='next']")
    (second,) = shown(pg)
    assert second != first[0]
    assert fragment(pg) == f"#{second}"
    pg.evaluate("location.hash = '%'")
    pg.click("[data-action='next']")
    (third,) = shown(pg)
    assert fragment(pg) == f"#{third}"
    assert not tab.problems, tab.problems


def test_stepping_puts_the_frame_in_the_address_and_the_back_button_steps_back(page):
    assert fragment(page) == ""
    page.click("button[data-profile='divergent']")
    page.select_option("[data-round-select]", index=0)
    assert page.inner_text("[data-round-select] option:checked").endswith("worked round")
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
    context = browser.new_context(viewport=PHONE)
    pg = context.new_page()
    pg.goto(f"{origin}/draft-and-verify.html#frame-aligned-authored-3")
    pg.wait_for_selector(".stepper.is-enhanced")
    assert shown(pg) == ["frame-aligned-authored-3"]
    assert re.match(r"Frame 3 of 8: ", pg.locator("[data-stepper-status]").inner_text())
    context.close()


def test_without_the_script_the_worked_rounds_read_in_full(browser, origin, view_counts):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/draft-and-verify.html")
    assert shown(pg) == [f"frame-{p}-authored-{n}" for p, count in view_counts for n in range(1, count + 1)]
    assert pg.locator(".stepper-bar").is_hidden()
    assert pg.evaluate("document.getElementsByTagName('*').length") <= 2000
    context.close()


@pytest.fixture(scope="module")
def view_counts():
    from support import site_view

    return [(p.id, p.authored.frame_count) for p in site_view().profiles]


@pytest.mark.parametrize("profile", ["aligned", "divergent"])
def test_every_check_frame_draws_p_and_q_for_every_token(page, profile):
    page.click(f"button[data-profile='{profile}']")
    page.select_option("[data-round-select]", index=0)
    assert page.inner_text("[data-round-select] option:checked").endswith("worked round")
    tokens = None
    while True:
        (frame,) = shown(page)
        locator = page.locator(f"#{frame}")
        if "frame-verify" in (locator.get_attribute("class") or ""):
            rows = locator.locator(".pq-table tbody tr")
            tokens = tokens or rows.count()
            assert rows.count() == tokens > 1
            for kind in ("bar-p", "bar-q"):
                assert locator.locator(f"rect.{kind}").count() >= tokens
            assert locator.locator(".pq-table tr.proposal").count() == 1
            assert locator.locator(".pq-table").is_visible()
        if at_end(page):
            break
        page.click("[data-action='next']")
    assert tokens


@pytest.mark.parametrize("profile", ["aligned", "divergent"])
@pytest.mark.parametrize("label,verdict", [("draw keeps", "accepted"), ("draw rejects", "rejected")])
def test_a_round_decided_by_a_draw_can_be_chosen_by_name(page, profile, label, verdict):
    page.click(f"button[data-profile='{profile}']")
    texts = page.eval_on_selector_all("[data-round-select] option", "os => os.map(o => o.textContent)")
    page.select_option("[data-round-select]", label=next(t for t in texts if t.endswith(label)))
    round_id = f"draw-{verdict}"
    assert shown(page) == [f"frame-{profile}-{round_id}-1"]
    assert fragment(page) == f"#frame-{profile}-{round_id}-1"
    word = "below" if verdict == "accepted" else "not below"
    notes = []
    while not at_end(page):
        page.click("[data-action='next']")
        (frame,) = shown(page)
        if page.locator(f"#{frame} [data-u-line]").count():
            notes.append(page.inner_text(f"#{frame} [data-verdict='{verdict}']"))
    assert any(re.search(rf"u = 0\.\d{{4}} is {word} \d+/\d+\.$", n) for n in notes), notes


READ_FRAME = """el => [...el.querySelectorAll(
    '.frame-title, .chips, .pq-table, .evidence, [data-verdict], .draw-note, svg')]
  .map(e => e.tagName === 'svg'
    ? [e.getAttribute('class'), e.getAttribute('aria-label'), [...e.querySelectorAll('*')].map(c => c.tagName + ' '
        + ['x', 'y', 'width', 'cx', 'x1'].map(k => c.getAttribute(k)).join(' ') + ' ' + c.textContent)
        .join('|')].join(' ')
    : e.textContent.replace(/\\s+/g, ''))"""


def test_the_script_draws_every_worked_frame_as_the_page_writes_it(browser, origin, view_counts):
    """Each worked frame with and without the script: the heading, the chips, the table, the evidence, every
    verdict and every picture (its marks and where they sit) read alike."""
    ids = [f"frame-{p}-authored-{n}" for p, count in view_counts for n in range(1, count + 1)]
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{origin}/draft-and-verify.html")
    written = {i: pg.eval_on_selector(f"#{i}", READ_FRAME) for i in ids}
    context.close()
    context = browser.new_context(viewport=PHONE)
    pg = context.new_page()
    pg.goto(f"{origin}/draft-and-verify.html")
    pg.wait_for_selector(".stepper.is-enhanced")
    for i in ids:
        pg.evaluate(f"location.hash = '#{i}'")
        pg.wait_for_selector(f"#{i}.frame")
        assert pg.eval_on_selector(f"#{i}", READ_FRAME) == written[i], i
    context.close()


SHIFTS = """window.__shifts = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__shifts.push(e.value); })
  .observe({ type: "layout-shift", buffered: true });"""


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desktop"])
def test_nothing_moves_when_the_script_takes_over(browser, origin, viewport):
    """The page paints as the script leaves it (controls, round list, the opening frame), so the layout shift
    Chromium measures while it loads is zero; drawn by the script, the opening frame reads as the page wrote it."""
    read_options = "os => os.map(o => o.textContent)"
    context = browser.new_context(viewport=viewport)
    pg = context.new_page()
    pg.add_init_script(SHIFTS)
    pg.goto(f"{origin}/draft-and-verify.html")
    pg.wait_for_selector(".stepper.is-enhanced")
    pg.wait_for_timeout(500)
    assert pg.evaluate("window.__shifts") == []
    drawn = pg.eval_on_selector("[data-stepper-stage] .frame", READ_FRAME)
    options = pg.eval_on_selector_all("[data-round-select] option", read_options)
    context.close()
    context = browser.new_context(viewport=viewport)
    pg = context.new_page()
    pg.route("**/assets/stepper.js", lambda route: route.abort())  # no stepper script: the page as first painted
    pg.goto(f"{origin}/draft-and-verify.html")
    assert pg.eval_on_selector("[data-stepper-stage] .frame", READ_FRAME) == drawn
    assert pg.eval_on_selector_all("[data-round-select] option", read_options) == options
    context.close()


def test_each_thing_to_notice_link_opens_the_frame_it_names(page):
    """With the script, following a "things to notice" link draws that frame in the stepper; the dropped
    proposals' link lands on the frame that prints the Dropped verdict."""
    links = page.eval_on_selector_all(
        "#four-things-to-notice ~ ul a[href^='#frame-']", "as => as.map(a => a.getAttribute('href'))"
    )
    assert len(links) == 4, links
    for i, href in enumerate(links):
        page.click(f"#four-things-to-notice ~ ul a[href='{href}']")
        page.wait_for_function(
            "id => document.querySelector('.stepper-stage .frame.is-current')?.id === id", arg=href[1:]
        )
        assert shown(page) == [href[1:]]
        if i == 2:
            assert page.locator(f"{href} [data-verdict='dropped']").count() == 1
        if i == 3:
            assert page.locator(f"{href} [data-verdict='replacement']").count() == 1
