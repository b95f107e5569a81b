"""Every figure as a reader's browser sets its text: with the fonts this machine has, and with only Liberation Sans.

matplotlib lays a figure out in DejaVu Sans and writes its labels as real <text> in a font stack that falls back
only to families whose glyphs are no wider. A device without DejaVu Sans sets them in a fallback, so the check that
no two texts overlap must hold for the fonts readers' devices actually use: here, Chromium with the machine's
default fonts (DejaVu Sans is installed) and Chromium under a fontconfig that offers Liberation Sans alone
(Debian's fonts-liberation, metric-compatible with Arial and Helvetica).

Each figure is inlined in a page at the width the site shows it at (the width of a figure on the built home page at
390 and at 1280 px), in its light and its dark variant, and every pair of its <text> boxes, as Chromium lays them
out, is compared. Text size is the rendered-pages gate's (test_rendered_pages.py); this gate is about fonts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_support import CHROMIUM, CHROMIUM_ARGS, serve

pytestmark = pytest.mark.browser

LIBERATION = Path("/usr/share/fonts/truetype/liberation")
WIDTHS = (390, 1280)
BLANK = "__figure-fonts.html"  # a page of the site's origin without its CSP, served by the test itself
SLACK = 0.5  # CSS px two boxes may share before they count as overlapping (antialiasing, rounding)

MEASURE = r"""async ({files, width}) => {
  document.body.innerHTML = "";
  document.body.style.margin = "0";
  const found = [];
  for (const file of files) {
    const box = document.createElement("div");
    box.style.width = width + "px";
    box.innerHTML = await (await fetch(file)).text();
    document.body.append(box);
    const svg = box.querySelector("svg");
    svg.removeAttribute("height");
    svg.style.width = width + "px";
    svg.style.height = "auto";
    svg.style.display = "block";
  }
  await document.fonts.ready;
  for (const [i, file] of files.entries()) {
    const svg = document.body.children[i].querySelector("svg");
    const texts = [...svg.querySelectorAll("text")].map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom};
    });
    found.push({file, texts});
  }
  return found;
}"""


def overlaps(texts: list[dict]) -> list[str]:
    out = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            if (
                min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > SLACK
                and min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > SLACK
            ):
                out.append(f'"{a["text"]}" overlaps "{b["text"]}"')
    return out


def liberation_only(folder: Path) -> Path:
    """A fontconfig file offering Liberation Sans alone (its four faces, nothing else)."""
    faces = sorted(LIBERATION.glob("LiberationSans-*.ttf"))
    if not faces:
        pytest.skip(f"fonts-liberation is not installed ({LIBERATION})")
    fonts = folder / "fonts"
    fonts.mkdir()
    for face in faces:
        (fonts / face.name).symlink_to(face)
    conf = folder / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig><dir>{fonts}</dir>'
        f"<cachedir>{folder / 'cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    return conf


def measure(browser_type, site: Path, files: list[str], fontconfig: Path | None) -> dict:
    """{(width, variant): [{file, texts}]} for every figure file, in a Chromium under the given fontconfig,
    launched through the test process's one Playwright (a second sync Playwright in the same thread fails)."""
    import os

    env = {**os.environ, **({"FONTCONFIG_FILE": str(fontconfig)} if fontconfig else {})}
    out = {}
    with serve(site) as origin:
        browser = browser_type.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env)
        try:
            page = browser.new_page()
            page.route(
                f"{origin}/{BLANK}",
                lambda route: route.fulfill(content_type="text/html", body="<!doctype html><body></body>"),
            )
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(f"{origin}/index.html")
                shown = page.locator(".figure img").first.bounding_box()["width"]
                page.goto(f"{origin}/{BLANK}")  # the site's pages forbid inline styles (CSP), which inlined SVG uses
                for variant in ("light", "dark"):
                    wanted = [f.replace(".svg", ".dark.svg") if variant == "dark" else f for f in files]
                    out[(width, variant)] = page.evaluate(
                        MEASURE, {"files": [f"figures/{f}" for f in wanted], "width": shown}
                    )
        finally:
            browser.close()
    return out


@pytest.fixture(scope="module")
def figure_files(site) -> list[str]:
    return sorted(p.name for p in (site / "figures").glob("*.svg") if not p.name.endswith(".dark.svg"))


@pytest.fixture(scope="module")
def default_fonts(browser, site, figure_files):
    return measure(browser.browser_type, site, figure_files, None)


@pytest.fixture(scope="module")
def liberation_fonts(browser, site, figure_files, tmp_path_factory):
    return measure(browser.browser_type, site, figure_files, liberation_only(tmp_path_factory.mktemp("fontconfig")))


@pytest.mark.parametrize("fonts", ["default_fonts", "liberation_fonts"])
def test_no_two_texts_of_a_figure_overlap_in_either_font(request, fonts):
    found = request.getfixturevalue(fonts)
    problems = [
        f"{width} px, {variant}: {fig['file']}: {problem}"
        for (width, variant), figures in found.items()
        for fig in figures
        for problem in overlaps(fig["texts"])
    ]
    assert not problems, "\n".join(problems)
    assert all(fig["texts"] for figures in found.values() for fig in figures)


def test_the_liberation_fontconfig_really_sets_the_figures_in_another_font(default_fonts, liberation_fonts):
    """The control that the second run measured something else: Liberation Sans is narrower than DejaVu Sans, so
    the same labels take less room (were the fontconfig ignored, the widths would be equal)."""

    def total(found):
        return sum(t["x1"] - t["x0"] for fig in found[(390, "light")] for t in fig["texts"])

    assert total(liberation_fonts) < 0.97 * total(default_fonts)


def test_the_overlap_check_catches_two_planted_texts():
    planted = [
        {"text": "a", "x0": 0, "x1": 20, "y0": 0, "y1": 12},
        {"text": "b", "x0": 18, "x1": 40, "y0": 5, "y1": 17},
        {"text": "c", "x0": 41, "x1": 60, "y0": 0, "y1": 12},
    ]
    assert overlaps(planted) == ['"a" overlaps "b"']
