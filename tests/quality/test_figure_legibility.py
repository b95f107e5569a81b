"""Figures and formulas a reader can read on a phone and on a desktop, in either colour scheme.

For every page at 390 and 1280 px, light and dark: the smallest text of every figure, as rendered
(its font size in SVG user units times the image's rendered width over the viewBox width), must be
at least 11 CSS px, and the smallest glyph of any formula inside a sentence at least 12 CSS px. In
dark mode each figure must be its dark variant, and its card no brighter than the page's own
surface colour, sampled from a screenshot rather than taken from the file.
"""
from __future__ import annotations

import io

import pytest

from quality_support import open_page

pytestmark = pytest.mark.browser

FIGURE_TEXT_PX = 11  # the floor for chart labels
INLINE_MATH_PX = 12  # and for a formula's smallest glyph inside running text

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
  for (const m of document.querySelectorAll(".math.inline math, p math:not([display=block]), li math:not([display=block])")) {
    for (const el of [m, ...m.querySelectorAll("*")]) {
      if (!el.children.length && el.textContent.trim()) {
        const size = parseFloat(getComputedStyle(el).fontSize);
        if (size < math) { math = size; glyph = el.textContent.trim(); }
      }
    }
  }
  return {figures, math, glyph};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [390, 1280])
def test_figure_text_and_inline_math_render_large_enough(browser, origin, page_name, width, scheme):
    visit = open_page(browser, origin, page_name, color_scheme=scheme, viewport={"width": width, "height": 900})
    try:
        found = visit.page.evaluate(MEASURE)
    finally:
        visit.page.context.close()
    for fig in found["figures"]:
        assert fig["texts"] > 0, fig
        assert fig["smallest"] >= FIGURE_TEXT_PX, (
            f"{page_name} at {width} px ({scheme}): {fig['src']} renders \"{fig['which']}\" at "
            f"{fig['smallest']:.1f} px in a {fig['width']:.0f} px image")
        assert fig["src"].endswith(".dark.svg") == (scheme == "dark"), fig["src"]
    if found["math"] != float("inf"):
        assert found["math"] >= INLINE_MATH_PX, (
            f"{page_name} at {width} px ({scheme}): inline formula glyph \"{found['glyph']}\" at {found['math']:.1f} px")


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
    rgb = tuple(int(surface[i:i + 2], 16) for i in (1, 3, 5))
    return [f"{src} shows a card of {colour}, brighter than the page's surface {surface}"
            for src, colour in cards if luminance(colour) > luminance(rgb) + 0.002]


@pytest.mark.parametrize("width", [390, 1280])
def test_in_dark_mode_no_figure_is_a_bright_card(browser, origin, page_name, width):
    visit = open_page(browser, origin, page_name, color_scheme="dark", viewport={"width": width, "height": 900})
    try:
        cards = card_colours(visit.page)
        problems = brighter_than_surface(visit.page, cards) if cards else []
    finally:
        visit.page.context.close()
    assert not problems, f"{page_name} at {width} px: {problems}"


def test_the_gauges_catch_a_desktop_sized_figure_a_stacked_fraction_and_a_light_card(browser, site, tmp_path):
    """Negative control: a figure drawn 614 units wide with 10-unit labels, a stacked fraction in a sentence,
    and the light figure on a dark page must each be caught by the measurements above."""
    import shutil

    from browser_support import serve

    light = next(p for p in sorted((site / "figures").glob("*.svg")) if not p.name.endswith(".dark.svg"))
    svg = light.read_text(encoding="utf-8")
    width = float(svg.split('viewBox="0 0 ')[1].split()[0])
    wide = svg.replace(f'viewBox="0 0 {svg.split("viewBox=")[1].split()[2]}', f'viewBox="0 0 {width * 614 / 331.2:g}', 1)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "wide.svg").write_text(wide, encoding="utf-8")
    (tmp_path / "figures" / "light.svg").write_text(svg, encoding="utf-8")
    shutil.copytree(site / "assets", tmp_path / "assets")
    (tmp_path / "bad.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title>'
        '<link rel="stylesheet" href="assets/style.css"></head><body><main class="prose">'
        '<figure class="figure"><img src="figures/wide.svg" alt="x"></figure>'
        '<figure class="figure"><img src="figures/light.svg" alt="y"></figure>'
        '</main></body></html>', encoding="utf-8")
    (tmp_path / "bare.html").write_text(  # without the site's stylesheet, as the issue found the pages
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>'
        '<p>A stacked <span class="math inline"><math><mfrac><mn>3</mn><mn>8</mn></mfrac></math></span>.</p>'
        '</body></html>', encoding="utf-8")
    with serve(tmp_path) as url:
        context = browser.new_context(viewport={"width": 390, "height": 900}, color_scheme="dark")
        try:
            page = context.new_page()
            page.goto(f"{url}/bad.html")
            found = page.evaluate(MEASURE)
            bright = brighter_than_surface(page, card_colours(page))
            page.goto(f"{url}/bare.html")
            bare = page.evaluate(MEASURE)
        finally:
            context.close()
    assert found["figures"][0]["smallest"] < FIGURE_TEXT_PX
    assert found["figures"][0]["src"] == "wide.svg"
    assert any(p.startswith("light.svg") for p in bright)  # the light card on a dark page
    assert bare["math"] < INLINE_MATH_PX and bare["glyph"] in ("3", "8")
