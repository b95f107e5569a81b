"""Gates that need a rendering engine: nothing fetched from elsewhere, a quiet console, a layout
that fits a 360 px phone, and no motion for a reader who asked for none.
"""
from __future__ import annotations

import pytest

from quality_support import exercise_widgets, open_page

pytestmark = pytest.mark.browser

NARROW = 360


def test_a_page_asks_for_nothing_outside_its_site_and_logs_no_error_or_warning(browser, origin, page_name):
    visit = open_page(browser, origin, page_name, settle=True)
    try:
        exercise_widgets(visit.page)
    finally:
        visit.page.context.close()
    assert not visit.problems, f"{page_name}:\n" + "\n".join(visit.problems)


OVERFLOW = """(limit) => {
  const out = {scrollWidth: document.documentElement.scrollWidth, wide: [], images: [], tables: []};
  const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const clipped = el => { for (let a = el.parentElement; a; a = a.parentElement) if (scrolls(a)) return a; return null; };
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > limit + 0.5 && !clipped(el)) out.wide.push(`${name(el)} reaches ${Math.round(r.right)}px`);
  }
  for (const img of document.querySelectorAll("img, svg:not(svg svg), video, canvas")) {
    if (!img.checkVisibility()) continue;
    const box = img.parentElement.getBoundingClientRect();
    const r = img.getBoundingClientRect();
    if (getComputedStyle(img).maxWidth === "none" && img.tagName !== "svg") out.images.push(`${name(img)} has no max-width`);
    else if (r.width > box.width + 0.5 && !clipped(img)) out.images.push(`${name(img)} is ${Math.round(r.width)}px in a ${Math.round(box.width)}px box`);
  }
  for (const t of document.querySelectorAll("table")) {
    if (!t.checkVisibility()) continue;
    const box = scrolls(t) ? t : clipped(t);
    if (!box) out.tables.push(`${name(t)} has no scroll box of its own`);
    else if (box.scrollWidth > box.clientWidth && box.tabIndex < 0 && !box.querySelector("a[href], button, [tabindex='0']"))
      out.tables.push(`${name(t)} scrolls inside ${name(box)}, which the keyboard cannot reach`);
  }
  return out;
}"""


def test_at_360px_nothing_scrolls_sideways_images_scale_and_tables_scroll_in_their_own_box(browser, origin, page_name):
    visit = open_page(browser, origin, page_name, viewport={"width": NARROW, "height": 800})
    try:
        exercise_widgets(visit.page)
        found = visit.page.evaluate(OVERFLOW, NARROW)
    finally:
        visit.page.context.close()
    assert found["scrollWidth"] <= NARROW, f"{page_name} is {found['scrollWidth']}px wide: {found['wide'][:8]}"
    assert not found["images"], f"{page_name}: {found['images']}"
    assert not found["tables"], f"{page_name}: {found['tables']}"


MOVING = """() => {
  const seconds = list => Math.max(0, ...list.split(",").map(s => parseFloat(s) * (s.trim().endsWith("ms") ? 0.001 : 1)));
  const out = [];
  for (const el of [document.documentElement, ...document.querySelectorAll("body, body *")]) {
    for (const pseudo of [null, "::before", "::after"]) {
      const s = getComputedStyle(el, pseudo);
      const what = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className ? "." + el.className.trim().replace(/\\s+/g, ".") : "") + (pseudo || "");
      if (s.animationName !== "none" && seconds(s.animationDuration) > 0) out.push(`${what}: animation ${s.animationName} ${s.animationDuration}`);
      if (s.transitionProperty !== "none" && seconds(s.transitionDuration) > 0) out.push(`${what}: transition ${s.transitionProperty} ${s.transitionDuration}`);
    }
    if (getComputedStyle(el).scrollBehavior === "smooth") out.push(`${el.tagName.toLowerCase()}: scroll-behavior smooth`);
  }
  return out;
}"""


def play_one_frame(page) -> bool:
    """Start the stepper's Play, if the page has one, and wait for it to change frame."""
    play = page.locator("[data-action='play']")
    if not play.count() or not play.first.is_visible():
        return False
    status = page.locator("[data-stepper-status]").first
    before = status.inner_text()
    play.first.click()
    page.wait_for_function("([el, text]) => el.textContent !== text", arg=[status.element_handle(), before], timeout=5000)
    return True


def test_with_reduced_motion_nothing_animates_transitions_or_scrolls_smoothly(browser, origin, page_name):
    visit = open_page(browser, origin, page_name, reduced_motion="reduce")
    try:
        play_one_frame(visit.page)
        exercise_widgets(visit.page)
        moving = visit.page.evaluate(MOVING)
    finally:
        visit.page.context.close()
    assert not moving, f"{page_name}:\n" + "\n".join(moving[:20])


def test_the_motion_check_sees_the_steppers_animation_when_motion_is_allowed(browser, origin, site):
    pages = [p.name for p in sorted(site.glob("*.html")) if 'data-action="play"' in p.read_text(encoding="utf-8")]
    if not pages:
        pytest.skip("no page has a stepper to play")
    visit = open_page(browser, origin, pages[0], reduced_motion="no-preference")
    try:
        assert play_one_frame(visit.page)
        moving = visit.page.evaluate(MOVING)
    finally:
        visit.page.context.close()
    assert any("frame-in" in m for m in moving), moving
