"""Every built page as a reader's browser renders it, in four views: light and dark, at 1280 and 390 px.

Each view is loaded once (see `rendered`) and every gate that needs a rendering engine reads what
that one load found:

- WCAG 2.1 A and AA as axe-core checks them: every rule at both widths (light at 390 px, dark at
  1280 px) and the colour-contrast rule in all four views, since a scheme changes colours and
  nothing else while a width changes what shows and where;
- a keyboard-only walk (light, 1280 px): Tab reaches every control and focus always shows;
- figure text at least 11 CSS px and any formula inside a sentence at least 12 px, in every view;
  in a dark view each figure is its dark variant and its card no brighter than the page's surface,
  sampled from a screenshot rather than taken from the file;
- nothing fetched from another origin, no failed request and a quiet console, in every view (and
  in the light desktop view, after the network has been quiet for half a second);
- at 360 px nothing scrolls sideways (the light phone view, narrowed after its other checks);
- with reduced motion nothing animates (the dark phone view asks for reduced motion).

The widgets are made to draw what they only draw on request (quality_support.exercise_widgets)
before anything is measured, so every gate judges that output too. The page CSP
(script-src 'self') blocks add_script_tag's inline script, so axe is evaluated through the DevTools
protocol, which the CSP does not govern. Under `-n 2` all of one page's tests run on one worker
(an xdist_group per page), so each view is loaded once per session, and every visit a process makes
is made in one tab (quality_support.Tab), which costs Chromium far less than a fresh one.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from quality_support import AXE, Tab, exercise_widgets, need_node_modules

pytestmark = pytest.mark.browser
SPREAD_BY_PAGE = True  # tests/quality/conftest.py: one xdist group per page

VIEWS = {
    "light-1280px": ("light", 1280),
    "dark-1280px": ("dark", 1280),
    "light-390px": ("light", 390),
    "dark-390px": ("dark", 390),
}
DARK_VIEWS = [v for v, (scheme, _) in VIEWS.items() if scheme == "dark"]
TAB_VIEW, NARROW_VIEW, MOTION_VIEW = "light-1280px", "light-390px", "dark-390px"
FULL_AXE_VIEWS = ("light-390px", "dark-1280px")  # every rule; the other two views run colour contrast only
NARROW = 360  # the phone width the layout must fit without scrolling sideways
FIGURE_TEXT_PX = 11  # the floor for a chart's labels
INLINE_MATH_PX = 12  # and for a formula's smallest glyph inside running text
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

RUN_AXE = """async (only) => {
  const result = await axe.run(document, {runOnly: only, resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(" ") + ": "
      + n.failureSummary.split("\\n").slice(1).join(" ").slice(0, 300))}));
}"""

FOCUSABLE = (
    "a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, iframe, "
    "[contenteditable=''], [contenteditable=true], [tabindex]"
)

# Marks every element that Tab should reach, and every one a composite widget takes out of the
# tab order on purpose (roving tabindex), so the walk can compare what it met against both.
MARK_TARGETS = """(selector) => {
  const composite = "[role=tablist], [role=radiogroup], [role=toolbar], [role=listbox], [role=menu], "
    + "[role=menubar], [role=grid], [role=tree]";
  const shown = el => el.checkVisibility({visibilityProperty: true}) && !el.closest("[inert]");
  const out = {reach: [], roving: [], stray: []};
  let n = 0;
  for (const el of document.querySelectorAll(selector)) {
    if (!shown(el) || el.disabled) continue;
    const key = "k" + (n++);
    el.dataset.qaKey = key;
    const label = (el.getAttribute("aria-label") || el.textContent || el.value || "").trim().slice(0, 40);
    const name = `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""} "${label}"`;
    const item = {key, name, group: el.type === "radio" ? "radio:" + el.name : null};
    if (el.getAttribute("tabindex") === null || el.tabIndex >= 0) out.reach.push(item);
    else if (el.matches("a[href], button, input, select, textarea, summary, [role=tab], [role=radio], [role=option]")) {
      const owner = el.closest(composite);
      if (owner) { owner.dataset.qaGroup ||= "g" + (n++); item.group = owner.dataset.qaGroup; out.roving.push(item); }
      else out.stray.push(item);
    }
  }
  return out;
}"""

FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const s = getComputedStyle(el);
  const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 && s.outlineColor !== "rgba(0, 0, 0, 0)";
  const shadow = s.boxShadow !== "none";
  const r = el.getBoundingClientRect();
  const group = el.type === "radio" ? "radio:" + el.name
    : (el.closest("[data-qa-group]") || {dataset: {}}).dataset.qaGroup || null;
  return {key: el.dataset.qaKey || null, group, visible: (outline || shadow) && r.width > 0 && r.height > 0,
          name: `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}`.slice(0, 80),
          style: `outline ${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}; box-shadow ${s.boxShadow}`};
}"""

MEASURE = r"""async () => {
  // Widgets hide some figures (a tab panel not chosen): show everything so every figure is measured
  // at the width its column gives it.
  document.querySelectorAll(".tab-panel[hidden], [role=tabpanel][hidden]").forEach(el => { el.hidden = false; });
  const imgs = [...document.querySelectorAll(".figure img")];
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.all(imgs.map(img => img.decode().catch(() => null)));
  const figures = [];
  for (const img of imgs) {
    const src = img.currentSrc || img.src;
    const svg = new DOMParser().parseFromString(await (await fetch(src)).text(), "image/svg+xml");
    const box = svg.documentElement.getAttribute("viewBox").split(/\s+/).map(Number);
    const width = img.getBoundingClientRect().width;
    let smallest = Infinity, which = "";
    for (const t of svg.querySelectorAll("text")) {
      const m = /font-size:\s*([\d.]+)px/.exec(t.getAttribute("style") || "");
      const size = m ? Number(m[1]) : NaN;
      if (!(size * width / box[2] >= smallest)) { smallest = size * width / box[2]; which = t.textContent; }
    }
    figures.push({src: src.split("/").pop(), width, smallest, which, texts: svg.querySelectorAll("text").length});
  }
  let math = Infinity, glyph = "";
  const inline = ".math.inline math, p math:not([display=block]), li math:not([display=block])";
  for (const m of document.querySelectorAll(inline)) {
    for (const el of [m, ...m.querySelectorAll("*")]) {
      if (!el.children.length && el.textContent.trim()) {
        const size = parseFloat(getComputedStyle(el).fontSize);
        if (size < math) { math = size; glyph = el.textContent.trim(); }
      }
    }
  }
  return {figures, math, glyph};
}"""

OVERFLOW = """(limit) => {
  const out = {scrollWidth: document.documentElement.scrollWidth, wide: [], images: [], tables: []};
  const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const clipped = el => {
    for (let a = el.parentElement; a; a = a.parentElement) if (scrolls(a)) return a;
    return null;
  };
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > limit + 0.5 && !clipped(el)) out.wide.push(`${name(el)} reaches ${Math.round(r.right)}px`);
  }
  for (const img of document.querySelectorAll("img, svg:not(svg svg), video, canvas")) {
    if (!img.checkVisibility()) continue;
    const box = img.parentElement.getBoundingClientRect();
    const r = img.getBoundingClientRect();
    if (getComputedStyle(img).maxWidth === "none" && img.tagName !== "svg")
      out.images.push(`${name(img)} has no max-width`);
    else if (r.width > box.width + 0.5 && !clipped(img))
      out.images.push(`${name(img)} is ${Math.round(r.width)}px in a ${Math.round(box.width)}px box`);
  }
  for (const t of document.querySelectorAll("table")) {
    if (!t.checkVisibility()) continue;
    const box = scrolls(t) ? t : clipped(t);
    if (!box) out.tables.push(`${name(t)} has no scroll box of its own`);
    else if (box.scrollWidth > box.clientWidth && box.tabIndex < 0
             && !box.querySelector("a[href], button, [tabindex='0']"))
      out.tables.push(`${name(t)} scrolls inside ${name(box)}, which the keyboard cannot reach`);
  }
  return out;
}"""

MOVING = """() => {
  const seconds = list => Math.max(0,
    ...list.split(",").map(s => parseFloat(s) * (s.trim().endsWith("ms") ? 0.001 : 1)));
  const out = [];
  for (const el of [document.documentElement, ...document.querySelectorAll("body, body *")]) {
    for (const pseudo of [null, "::before", "::after"]) {
      const s = getComputedStyle(el, pseudo);
      const classes = typeof el.className === "string" && el.className
        ? "." + el.className.trim().replace(/\\s+/g, ".") : "";
      const what = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + classes + (pseudo || "");
      if (s.animationName !== "none" && seconds(s.animationDuration) > 0)
        out.push(`${what}: animation ${s.animationName} ${s.animationDuration}`);
      if (s.transitionProperty !== "none" && seconds(s.transitionDuration) > 0)
        out.push(`${what}: transition ${s.transitionProperty} ${s.transitionDuration}`);
    }
    if (getComputedStyle(el).scrollBehavior === "smooth")
      out.push(`${el.tagName.toLowerCase()}: scroll-behavior smooth`);
  }
  return out;
}"""


@dataclass(frozen=True)
class Rendered:
    """What one load of a page in one view found (None: that check does not run in this view)."""

    axe: list
    measure: dict
    cards: list  # (figure file, its card colour as the screen shows it), dark views only
    bright: list[str]  # cards brighter than the page's surface
    problems: list[str]  # outside requests, failed requests, console noise
    tab: dict | None = None
    overflow: dict | None = None
    moving: list[str] | None = None


_RENDERED: dict[tuple[str, str, str], Rendered | BaseException] = {}


@pytest.fixture(scope="module")
def tab(browser, origin):
    """The one tab this process visits every page and view in (see quality_support.Tab)."""
    t = Tab(browser, origin)
    yield t
    t.close()


def rendered(tab: Tab, page_name: str, view: str) -> Rendered:
    """The page in this view, loaded and checked once per process however many tests read it."""
    key = (tab.origin, page_name, view)
    if key not in _RENDERED:
        try:
            _RENDERED[key] = visit(tab, page_name, view)
        except Exception as error:  # every test of this view fails with it, none loads the page again
            _RENDERED[key] = error
    found = _RENDERED[key]
    if isinstance(found, BaseException):
        raise found
    return found


def visit(tab: Tab, page_name: str, view: str) -> Rendered:
    scheme, width = VIEWS[view]
    axe_source = need_node_modules(AXE).read_text(encoding="utf-8")
    loaded = tab.open(
        page_name, width=width, color_scheme=scheme, reduced_motion="reduce" if view == MOTION_VIEW else "no-preference"
    )
    page, found = loaded.page, {}
    if view == TAB_VIEW:  # first, on the page as it loads
        found["tab"] = tab_walk(page, page_name)
    if view == MOTION_VIEW:
        play_one_frame(page)
    exercise_widgets(page)
    if view == MOTION_VIEW:
        found["moving"] = page.evaluate(MOVING)
    if view == TAB_VIEW:  # a late request counts too (in one view: the wait is half a second of quiet)
        page.wait_for_load_state("networkidle")
    # The page's own doing ends here: the measurements below parse SVG and inject axe, whose inline
    # styles the page's CSP refuses, with a console error each.
    problems = list(loaded.problems)
    cards = card_colours(page) if scheme == "dark" else []
    bright = brighter_than_surface(page, cards) if cards else []
    measure = page.evaluate(MEASURE)
    page.evaluate(axe_source)
    only = (
        {"type": "tag", "values": WCAG_TAGS}
        if view in FULL_AXE_VIEWS
        else {"type": "rule", "values": ["color-contrast"]}
    )
    violations = page.evaluate(RUN_AXE, only)
    if view == NARROW_VIEW:
        page.set_viewport_size({"width": NARROW, "height": 800})
        found["overflow"] = page.evaluate(OVERFLOW, NARROW)
    return Rendered(violations, measure, cards, bright, problems, **found)


def tab_walk(page, page_name: str) -> dict:
    targets = page.evaluate(MARK_TARGETS, FOCUSABLE)
    met, groups_met, invisible, order, trap = set(), set(), [], [], None
    for _ in range(2 * len(targets["reach"]) + 5):
        page.keyboard.press("Tab")
        now = page.evaluate(FOCUSED)
        if now is None or (order and now["key"] is not None and now["key"] == order[0]):
            break  # past the last control, or round to the first again
        if order and now["key"] == order[-1]:
            trap = now["name"]
            break
        order.append(now["key"])
        met.add(now["key"])
        if now["group"]:
            groups_met.add(now["group"])
        if not now["visible"]:
            invisible.append(f"{now['name']}: {now['style']}")
    unreached = [
        t["name"] for t in targets["reach"] if t["key"] not in met and not (t["group"] and t["group"] in groups_met)
    ]
    orphans = [t["name"] for t in targets["roving"] if t["group"] not in groups_met]
    return {"trap": trap, "invisible": invisible, "unreached": unreached, "orphans": orphans, "stray": targets["stray"]}


def luminance(rgb) -> float:
    lin = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def card_colours(page) -> list[tuple[str, tuple[int, int, int]]]:
    """Each visible figure's card colour as the screen shows it: its most common pixel (the rest is marks and text)."""
    from PIL import Image

    found = []
    figures = page.locator(".figure img")
    for i in range(figures.count()):
        img = figures.nth(i)
        if not img.is_visible():
            continue
        img.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
        shot = Image.open(io.BytesIO(img.screenshot())).convert("RGB")
        _, colour = max(shot.getcolors(shot.width * shot.height))
        found.append((img.evaluate("img => img.currentSrc.split('/').pop()"), colour))
    return found


def brighter_than_surface(page, cards) -> list[str]:
    surface = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--surface').trim()")
    rgb = tuple(int(surface[i : i + 2], 16) for i in (1, 3, 5))
    return [
        f"{src} shows a card of {colour}, brighter than the page's surface {surface}"
        for src, colour in cards
        if luminance(colour) > luminance(rgb) + 0.002
    ]


def play_one_frame(page) -> bool:
    """Start the stepper's Play, if the page has one, and wait for it to change frame."""
    play = page.locator("[data-action='play']")
    if not play.count() or not play.first.is_visible():
        return False
    status = page.locator("[data-stepper-status]").first
    before = status.inner_text()
    play.first.click()
    page.wait_for_function(
        "([el, text]) => el.textContent !== text", arg=[status.element_handle(), before], timeout=5000
    )
    return True


def describe(violations) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}")
        lines += [f"    {n}" for n in v["nodes"][:6]]
    return "\n".join(lines)


@pytest.mark.parametrize("view", VIEWS)
def test_axe_finds_no_wcag_a_or_aa_violation(tab, page_name, view):
    violations = rendered(tab, page_name, view).axe
    assert not violations, f"{page_name} ({view}):\n{describe(violations)}"


def test_tab_reaches_every_control_and_focus_is_always_visible(tab, page_name):
    walk = rendered(tab, page_name, TAB_VIEW).tab
    assert walk["trap"] is None, f"{page_name}: Tab does not move on from {walk['trap']}: a keyboard trap"
    assert not walk["invisible"], f"{page_name}: focus not visible on\n" + "\n".join(walk["invisible"])
    assert not walk["unreached"], f"{page_name}: Tab never reaches {walk['unreached']}"
    assert not walk["orphans"], (
        f"{page_name}: no member of these composite widgets is in the tab order: {walk['orphans']}"
    )
    assert not walk["stray"], f"{page_name}: controls taken out of the tab order (tabindex=-1): {walk['stray']}"


@pytest.mark.parametrize("view", VIEWS)
def test_figure_text_and_inline_math_render_large_enough(tab, page_name, view):
    found = rendered(tab, page_name, view).measure
    for fig in found["figures"]:
        assert fig["texts"] > 0, fig
        assert fig["smallest"] >= FIGURE_TEXT_PX, (
            f'{page_name} ({view}): {fig["src"]} renders "{fig["which"]}" at '
            f"{fig['smallest']:.1f} px in a {fig['width']:.0f} px image"
        )
        assert fig["src"].endswith(".dark.svg") == (VIEWS[view][0] == "dark"), fig["src"]
    if found["math"] != float("inf"):
        assert found["math"] >= INLINE_MATH_PX, (
            f'{page_name} ({view}): inline formula glyph "{found["glyph"]}" at {found["math"]:.1f} px'
        )


@pytest.mark.parametrize("view", DARK_VIEWS)
def test_in_dark_mode_no_figure_is_a_bright_card(tab, page_name, view):
    bright = rendered(tab, page_name, view).bright
    assert not bright, f"{page_name} ({view}): {bright}"


def test_a_page_asks_for_nothing_outside_its_site_and_logs_no_error_or_warning(tab, page_name):
    problems = [f"{view}: {p}" for view in VIEWS for p in rendered(tab, page_name, view).problems]
    assert not problems, f"{page_name}:\n" + "\n".join(problems)


def test_at_360px_nothing_scrolls_sideways_images_scale_and_tables_scroll_in_their_own_box(tab, page_name):
    found = rendered(tab, page_name, NARROW_VIEW).overflow
    assert found["scrollWidth"] <= NARROW, f"{page_name} is {found['scrollWidth']}px wide: {found['wide'][:8]}"
    assert not found["images"], f"{page_name}: {found['images']}"
    assert not found["tables"], f"{page_name}: {found['tables']}"


def test_with_reduced_motion_nothing_animates_transitions_or_scrolls_smoothly(tab, page_name):
    moving = rendered(tab, page_name, MOTION_VIEW).moving
    assert not moving, f"{page_name}:\n" + "\n".join(moving[:20])


def test_the_motion_check_sees_the_steppers_animation_when_motion_is_allowed(tab, site):
    """Negative control for the reduced-motion gate: with motion allowed, playing the stepper animates."""
    pages = [p.name for p in sorted(site.glob("*.html")) if 'data-action="play"' in p.read_text(encoding="utf-8")]
    if not pages:
        pytest.skip("no page has a stepper to play")
    loaded = tab.open(pages[0], reduced_motion="no-preference")
    assert play_one_frame(loaded.page)
    moving = loaded.page.evaluate(MOVING)
    assert any("frame-in" in m for m in moving), moving


def test_the_gauges_catch_a_desktop_sized_figure_a_stacked_fraction_a_light_card_and_axe_faults(
    browser, site, tmp_path
):
    """Negative control: a figure drawn 614 units wide with 10-unit labels, a stacked fraction in a sentence,
    the light figure on a dark page, an image without alt text (the full axe run), grey text on a
    grey ground (the contrast-only run), and a request to another origin and for a missing file must
    each be caught by the measurements above."""
    import shutil

    from browser_support import serve

    light = next(p for p in sorted((site / "figures").glob("*.svg")) if not p.name.endswith(".dark.svg"))
    svg = light.read_text(encoding="utf-8")
    width = float(svg.split('viewBox="0 0 ')[1].split()[0])
    wide = svg.replace(
        f'viewBox="0 0 {svg.split("viewBox=")[1].split()[2]}', f'viewBox="0 0 {width * 614 / 331.2:g}', 1
    )
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "wide.svg").write_text(wide, encoding="utf-8")
    (tmp_path / "figures" / "light.svg").write_text(svg, encoding="utf-8")
    shutil.copytree(site / "assets", tmp_path / "assets")
    (tmp_path / "bad.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title>'
        '<link rel="stylesheet" href="assets/style.css"></head><body><main class="prose">'
        '<figure class="figure"><img src="figures/wide.svg" alt="x"></figure>'
        '<figure class="figure"><img src="figures/light.svg" alt="y"></figure>'
        "</main></body></html>",
        encoding="utf-8",
    )
    (tmp_path / "leaky.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>'
        '<img src="https://example.org/tracker.png" alt=""><img src="figures/missing.svg" alt="">'
        "</body></html>",
        encoding="utf-8",
    )
    (tmp_path / "bare.html").write_text(  # without the site's stylesheet, as the issue found the pages
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>'
        '<p>A stacked <span class="math inline"><math><mfrac><mn>3</mn><mn>8</mn></mfrac></math></span>.</p>'
        '<img src="figures/light.svg"><p style="color:#999;background:#aaa">faint</p>'
        "</body></html>",
        encoding="utf-8",
    )
    axe_source = need_node_modules(AXE).read_text(encoding="utf-8")
    with serve(tmp_path) as url:
        leaky = Tab(browser, url)
        try:
            problems = leaky.open("leaky.html").problems
        finally:
            leaky.close()
        context = browser.new_context(viewport={"width": 390, "height": 900}, color_scheme="dark")
        try:
            page = context.new_page()
            page.goto(f"{url}/bad.html")
            found = page.evaluate(MEASURE)
            bright = brighter_than_surface(page, card_colours(page))
            page.goto(f"{url}/bare.html")
            bare = page.evaluate(MEASURE)
            page.evaluate(axe_source)
            full = {v["id"] for v in page.evaluate(RUN_AXE, {"type": "tag", "values": WCAG_TAGS})}
            contrast = {v["id"] for v in page.evaluate(RUN_AXE, {"type": "rule", "values": ["color-contrast"]})}
        finally:
            context.close()
    assert any("another origin: https://example.org/tracker.png" in p for p in problems), problems
    assert any("HTTP 404" in p and "missing.svg" in p for p in problems), problems
    assert {"image-alt", "color-contrast"} <= full and contrast == {"color-contrast"}, (full, contrast)
    assert found["figures"][0]["smallest"] < FIGURE_TEXT_PX
    assert found["figures"][0]["src"] == "wide.svg"
    assert any(p.startswith("light.svg") for p in bright)  # the light card on a dark page
    assert bare["math"] < INLINE_MATH_PX and bare["glyph"] in ("3", "8")
