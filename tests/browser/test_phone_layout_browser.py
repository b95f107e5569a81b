"""Issue 32.8 and 32.3 at a phone's width (390 x 844, Debian's chromium): no box on any page scrolls sideways (its
tables fit, stack or shrink), the page itself never does, and the toy data page's prose fits in two screens."""

from __future__ import annotations

import pytest

from browser_support import serve, shared_tab, turn

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}

# Every box whose content is wider than the box and that scrolls sideways to show it, on screen now; code blocks
# aside (a line of code keeps its shape). Named by class, label and widths, so a failure says where.
SIDEWAYS = """() => [...document.querySelectorAll('main *')].filter((e) => {
  const style = getComputedStyle(e);
  if (!['auto', 'scroll'].includes(style.overflowX) || e.closest('pre, code')) return false;
  return e.getClientRects().length > 0 && e.scrollWidth > e.clientWidth + 1;
}).map((e) => `${e.className || e.tagName} "${e.getAttribute('aria-label') || ''}" `
  + `${e.scrollWidth} > ${e.clientWidth}`)"""


@pytest.fixture(scope="module")
def origin(site_dir):
    with serve(site_dir) as url:
        yield url


@pytest.fixture(scope="module")
def tab(browser, origin):
    with shared_tab(browser, timeout_ms=15000) as pg:
        yield pg


def pages(site_dir):
    return sorted(p.name for p in site_dir.glob("*.html"))


# SIDEWAYS, and the page itself when it is wider than the screen.
WIDE = (
    "() => { const boxes = (" + SIDEWAYS + ")(); const w = document.documentElement.scrollWidth;"
    " return w > innerWidth ? [...boxes, `the page ${w} > ${innerWidth}`] : boxes; }"
)


def found_on_every_page(tab, origin, site_dir, viewport, script: str) -> dict[str, list]:
    """What `script` finds on each built page at this viewport, for the pages where it finds anything."""
    found = {}
    for name in pages(site_dir):
        turn(tab, viewport)
        tab.goto(f"{origin}/{name}", wait_until="load")
        found[name] = tab.evaluate(script)
    return {name: items for name, items in found.items() if items}


def found_on_a_control(tab, tmp_path, html: str, script: str) -> list:
    """What `script` finds on a page written for a negative control, at a phone's width."""
    (tmp_path / "control.html").write_text(html, encoding="utf-8")
    turn(tab, PHONE)
    with serve(tmp_path) as url:
        tab.goto(f"{url}/control.html")
        return tab.evaluate(script)


def test_the_check_sees_a_box_that_scrolls_sideways(tab, tmp_path):
    """Negative control: a table wider than a phone inside a scroll box is reported."""
    html = (
        '<!doctype html><meta name="viewport" content="width=device-width"><main>'
        '<div style="overflow-x:auto" aria-label="wide"><table><tr>'
        + "<td>averylongcellthatcannotwrap</td>" * 6
        + "</tr></table></div></main>"
    )
    assert found_on_a_control(tab, tmp_path, html, SIDEWAYS)


def test_no_box_on_any_page_scrolls_sideways_at_390_px(tab, origin, site_dir):
    assert found_on_every_page(tab, origin, site_dir, PHONE, WIDE) == {}


def test_every_tab_of_the_position_tables_fits_a_phone(tab, origin):
    """The appendix's per-position tables sit in one tab per draft; each tab, once shown, fits too."""
    turn(tab, PHONE)
    tab.goto(f"{origin}/positions-reference.html", wait_until="load")
    tabs = tab.locator("#positions [role='tab']")
    assert tabs.count() >= 2
    for i in range(tabs.count()):
        tabs.nth(i).click()
        assert not tab.evaluate(SIDEWAYS), tabs.nth(i).inner_text()


def test_the_toy_data_pages_prose_fits_in_two_phone_screens(tab, origin):
    """Issue 32.3: the toy data page is the data: its running text (figures aside) is at most two screens tall."""
    turn(tab, PHONE)
    tab.goto(f"{origin}/positions.html", wait_until="load")
    height = tab.evaluate(
        """() => [...document.querySelectorAll('main p, main li, main h1')]
          .filter((e) => !e.closest('figure, nav, [data-widget]') && !e.parentElement.closest('li'))
          .reduce((sum, e) => sum + e.getBoundingClientRect().height, 0)"""
    )
    assert 0 < height <= 2 * PHONE["height"], height
    assert tab.locator('[data-widget="what-if"]').count() == 0


# Every table caption on screen that is not a line of its own above the table: narrower than its table, or beside
# its first row rather than above it (a block caption in a table laid out as one is put in a cell). Captions kept
# for screen readers only (.visually-hidden, taken out of the flow) are not on screen.
SQUEEZED_CAPTIONS = """() => [...document.querySelectorAll('main table > caption')].filter((c) => {
  const cap = c.getBoundingClientRect(), table = c.parentElement.getBoundingClientRect();
  const first = c.parentElement.querySelector('tr');
  if (!cap.width || !first || getComputedStyle(c).position === 'absolute') return false;
  return cap.width < table.width - 1 || cap.bottom > first.getBoundingClientRect().top + 1;
}).map((c) => `"${c.textContent.trim().slice(0, 50)}" ${Math.round(c.getBoundingClientRect().width)} px`)"""


def test_the_caption_check_sees_a_caption_put_in_a_cell(tab, tmp_path):
    """Negative control: a block caption in a table laid out as one sits in the first column."""
    html = (
        '<!doctype html><meta name="viewport" content="width=device-width"><main><table>'
        '<caption style="display:block">A caption that a browser puts in a cell</caption>'
        "<tr><th>Corpus</th><td>Target</td><td>4 characters</td></tr></table></main>"
    )
    assert found_on_a_control(tab, tmp_path, html, SQUEEZED_CAPTIONS)


def test_every_table_caption_is_a_line_above_its_table_at_390_px(tab, origin, site_dir):
    assert found_on_every_page(tab, origin, site_dir, PHONE, SQUEEZED_CAPTIONS) == {}


LAPTOP = {"width": 1280, "height": 720}


def test_no_box_on_any_page_scrolls_sideways_at_1280_px(tab, origin, site_dir):
    """A laptop has room for every table: the playground's per-K tables were cut off at 1280 px (801 px of table in
    a 755 px box) while their rates by position stayed on one line."""
    assert found_on_every_page(tab, origin, site_dir, LAPTOP, WIDE) == {}


def test_the_side_menu_fits_a_laptop_screen_or_scrolls_on_its_own(tab, origin, site_dir):
    """At 1280 x 720 the menu of sections is taller than the screen; it scrolls by itself, so its last entries
    can be reached while reading, not only at the end of the page."""
    turn(tab, LAPTOP)
    tab.goto(f"{origin}/positions-reference.html", wait_until="load")
    menu = tab.evaluate("""() => { const n = document.querySelector('.nav-disclosure');
        const r = n.getBoundingClientRect();
        return {height: r.height, inner: innerHeight, scrolls: n.scrollHeight > n.clientHeight,
                overflow: getComputedStyle(n).overflowY}; }""")
    assert menu["height"] <= menu["inner"], menu
    assert menu["scrolls"] and menu["overflow"] == "auto", menu  # negative control: there is more than fits
    # it opens with the page's own entry in view, the last in the menu, which the top of the menu does not show
    inside = tab.evaluate("""() => { const n = document.querySelector('.nav-disclosure');
        const a = n.querySelector('[aria-current="page"]').getBoundingClientRect(), b = n.getBoundingClientRect();
        return {entry: [a.top, a.bottom], menu: [b.top, b.bottom], scrolled: n.scrollTop}; }""")
    assert inside["menu"][0] <= inside["entry"][0] and inside["entry"][1] <= inside["menu"][1], inside
    assert inside["scrolled"] > 0, inside
