"""The main path on a phone (issue 26.3): every page but the closing one shows a picture or a widget on its first
screen, and no line starts with the full stop an inline formula pushed onto it (issue 26.7, ". For a divergent ...").

Chromium at 390 x 844, the real site. The page list is the main path of data/site.yaml, so a page added to it is
checked too; the closing page (limits and sources) is text by design.
"""

import pytest
import yaml

from browser_support import require_chromium
from support import ROOT

pytestmark = pytest.mark.browser

sync_api = require_chromium()
CONFIG = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))
PHONE = {"width": 390, "height": 844}
CHECKED = CONFIG["pages"][:-1]

# The top, in page pixels, of the first figure or widget a reader can see in <main>; null if there is none.
FIRST_PICTURE = """() => {
  const tops = [...document.querySelectorAll("main figure, main [data-widget]")]
    .filter((el) => el.checkVisibility() && el.getBoundingClientRect().height > 0)
    .map((el) => el.getBoundingClientRect().top + window.scrollY);
  return tops.length ? Math.min(...tops) : null;
}"""

# Punctuation right after an inline formula that the browser wrapped onto the next line: [formula text, char].
STRANDED = """() => [...document.querySelectorAll("main .math.inline")].flatMap((math) => {
  const next = math.nextSibling;
  if (!next || next.nodeType !== Node.TEXT_NODE || !/^[.,;:]/.test(next.data)) return [];
  const range = document.createRange();
  range.setStart(next, 0);
  range.setEnd(next, 1);
  const mark = range.getBoundingClientRect();
  const lines = math.getClientRects();
  const last = lines[lines.length - 1];
  return mark.top >= last.bottom - 1 ? [[math.textContent.slice(0, 40), next.data[0]]] : [];
})"""


@pytest.fixture(scope="module")
def phone(browser):
    context = browser.new_context(viewport=PHONE)
    yield context.new_page()
    context.close()


def test_the_closing_page_is_the_one_left_out():
    assert CONFIG["pages"][-1] == "limits" and "limits" not in CHECKED


@pytest.mark.parametrize("slug", CHECKED)
def test_the_first_phone_screen_shows_a_figure_or_a_widget(phone, origin, slug):
    phone.goto(f"{origin}/{slug}.html")
    top = phone.evaluate(FIRST_PICTURE)
    assert top is not None, f"{slug}: no figure or widget at all"
    assert top < PHONE["height"], f"{slug}: the first figure or widget starts at {top:.0f} px"


def test_the_check_fails_a_page_whose_first_picture_is_below_the_screen(phone):
    """Negative control: the same measurement on a page with a screen of text before its figure."""
    phone.goto("about:blank")  # a blank page, without the site's policy against inline styles
    phone.set_content(
        "<main><p style='height:900px'>text</p><figure><svg width='10' height='10'></svg></figure>"
        "<details><summary>more</summary><figure>hidden</figure></details></main>"
    )
    assert phone.evaluate(FIRST_PICTURE) >= PHONE["height"]


@pytest.mark.parametrize("slug", CONFIG["pages"] + CONFIG.get("beyond", []) + CONFIG["appendix"])
def test_no_line_starts_with_punctuation_a_formula_pushed_down(phone, origin, slug):
    phone.goto(f"{origin}/{slug}.html")
    assert phone.evaluate(STRANDED) == [], slug


def test_the_punctuation_check_sees_a_stranded_full_stop(phone):
    """Negative control: a formula that fills its line leaves its full stop at the start of the next."""
    phone.goto("about:blank")
    phone.set_content(
        "<main><p>x <span class='math inline' style='display:inline-block;width:100%'>a+b</span>. For y</p></main>"
    )
    assert phone.evaluate(STRANDED) == [["a+b", "."]]


KEY_STYLES = """() => Object.fromEntries([...document.querySelectorAll(".pq-key .pq-swatch")].map((el) => {
  const s = getComputedStyle(el);
  return [el.className.replace("pq-swatch pq-swatch-", ""),
          {fill: s.backgroundColor, image: s.backgroundImage, edge: s.borderTopColor,
           label: el.nextSibling.textContent}];
}))"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_pq_key_draws_target_solid_draft_outlined_proposal_hatched(browser, origin, scheme):
    """Issue 26.5: one key, where p and q first appear (the rule on the first page): each role differs by its
    mark (solid, outline, hatch) and says so in words, so colour is never the only cue; dark mode has its own
    colours."""
    context = browser.new_context(viewport=PHONE, color_scheme=scheme)
    pg = context.new_page()
    pg.goto(f"{origin}/index.html")
    key = pg.evaluate(KEY_STYLES)
    root = pg.evaluate(
        "() => ['--target', '--draft'].map((n) => getComputedStyle(document.documentElement)"
        ".getPropertyValue(n).trim())"
    )
    context.close()
    assert list(key) == ["target", "draft", "proposal"]
    clear = "rgba(0, 0, 0, 0)"
    assert key["target"]["fill"] != clear and key["target"]["fill"] == key["target"]["edge"]
    assert key["draft"]["fill"] == clear and key["draft"]["image"] == "none" and key["draft"]["edge"] != clear
    assert "repeating-linear-gradient" in key["proposal"]["image"] and key["proposal"]["edge"] == key["draft"]["edge"]
    assert (
        "solid" in key["target"]["label"] and "outline" in key["draft"]["label"] and "hatch" in key["proposal"]["label"]
    )
    expected = {"light": ["#0072b2", "#d55e00"], "dark": ["#5aa9e6", "#f0883e"]}[scheme]
    assert root == expected
