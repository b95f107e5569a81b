"""Issue 32, the text's part: terms defined where they first appear, the what-if editor on its own page after the
speedup, the toy data page kept to the data, the 2.62 coincidence named, no long sentence twice on one page."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from reading_budget import reading_order

from generator.model import analysis
from generator.render.pages import FILTERS
from generator.site.pipeline import load_inputs
from support import ROOT

CONFIG = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))
BLOCKS = {"p", "li", "td", "th", "dt", "dd", "h1", "h2", "h3", "h4", "caption", "figcaption", "summary"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# The terms a newcomer must be told before they are used (issue 32.2), as they read in running text.
TERMS = {
    "α": re.compile("α"),
    "residual": re.compile(r"\bresidual\b", re.I),
    "bonus": re.compile(r"\bbonus\b", re.I),
    "tokens per round": re.compile(r"\btokens per round\b", re.I),
}


class Blocks(HTMLParser):
    """The text blocks of <main> in reading order: (text, the texts of the <dfn> inside it).

    Left out, as not running text: widgets (`data-widget`: a reader explores them), figures (a picture with its
    caption), the page's own table of contents, scripts and hidden text. `keep_widgets` keeps figures and every
    widget but the ones named in `drop`, for checks that judge what they print too."""

    def __init__(self, keep_widgets: bool = False, drop: tuple[str, ...] = ()):
        super().__init__(convert_charrefs=True)
        self.keep_widgets, self.drop = keep_widgets, drop
        self.stack: list[tuple[str, bool]] = []
        self.in_main = False
        self.blocks: list[list] = []  # [text parts, dfn texts]
        self.open: list[list] = []
        self.dfn: list[list[str]] = []

    def _skipping(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "main":
            self.in_main = True
        if tag in VOID:
            return
        widget = a.get("data-widget")
        skip = (
            self._skipping()
            or tag in {"script", "style", "template"}
            or (tag == "figure" and not self.keep_widgets)
            or (widget is not None and (not self.keep_widgets or widget in self.drop))
            or "hidden" in a
            or "visually-hidden" in (a.get("class") or "").split()
            or "toc" in (a.get("class") or "").split()
            or tag == "nav"
        )
        self.stack.append((tag, skip))
        if skip or not self.in_main:
            return
        if tag in BLOCKS:
            block = [[], []]
            self.blocks.append(block)
            self.open.append(block)
        if tag == "dfn":
            self.dfn.append([])

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            top, skip = self.stack.pop()
            if top == tag:
                break
        if skip or not self.in_main:
            return
        if tag == "dfn" and self.dfn and self.open:
            self.open[-1][1].append("".join(self.dfn.pop()))
        if tag in BLOCKS and self.open:
            self.open.pop()
        if self.open:
            self.open[-1][0].append(" ")
        if tag == "main":
            self.in_main = False

    def handle_data(self, data):
        if self.in_main and not self._skipping() and self.open:
            self.open[-1][0].append(data)
            for d in self.dfn:
                d.append(data)


def blocks(html: str, **kw) -> list[tuple[str, list[str]]]:
    parser = Blocks(**kw)
    parser.feed(html)
    parser.close()
    return [(re.sub(r"\s+", " ", "".join(parts)).strip(), dfns) for parts, dfns in parser.blocks]


def first_uses(site: Path, slugs: list[str]) -> dict[str, tuple[str, str, list[str]]]:
    """Each term's first block along `slugs`: (page, the block's text, the <dfn>s in that block)."""
    found = {}
    for slug in slugs:
        for text, dfns in blocks((site / f"{slug}.html").read_text(encoding="utf-8")):
            for term, pattern in TERMS.items():
                if term not in found and pattern.search(text):
                    found[term] = (slug, text, dfns)
    return found


@pytest.fixture(scope="module")
def site(site_dir):
    return site_dir


# --- the checker itself ---------------------------------------------------------------------------


def test_the_checker_sees_a_term_used_before_its_definition():
    """Negative control: a page that uses "residual" a paragraph before defining it is caught; widgets, figures
    and the table of contents do not count as first uses."""
    early = (
        '<main><nav class="toc"><a>The residual</a></nav><figure><figcaption>a residual</figcaption></figure>'
        '<section data-widget="x"><p>residual</p></section><p>Then the residual tops it up.</p>'
        "<p>The <dfn>residual</dfn> is what is left.</p></main>"
    )
    (text, dfns) = next((t, d) for t, d in blocks(early) if "residual" in t)
    assert text == "Then the residual tops it up." and dfns == []
    fine = "<main><p>The <dfn>residual</dfn> is what is left.</p></main>"
    assert blocks(fine) == [("The residual is what is left.", ["residual"])]


# --- terms defined where they first appear (issue 32.2) -------------------------------------------


def test_each_term_first_appears_beside_its_definition_along_the_main_path(site):
    main_path, _ = reading_order(site)
    assert main_path == CONFIG["pages"]
    uses = first_uses(site, main_path)
    assert set(uses) == set(TERMS), uses.keys()
    for term, (slug, text, dfns) in uses.items():
        assert any(TERMS[term].search(d) for d in dfns), f"{term!r} is first used on {slug} undefined: {text[:160]}"


def test_the_context_free_assumption_is_stated_where_the_toy_is_shown_and_where_the_mean_is_derived(site):
    for slug in ("positions", "speedup", "tokens-per-round"):
        text = " ".join(t for t, _ in blocks((site / f"{slug}.html").read_text(encoding="utf-8")))
        assert re.search(r"ignore the text before", text), slug


# --- the toy data page and the what-if editor (issue 32.3) ----------------------------------------


def test_the_what_if_editor_is_on_its_own_page_after_the_speedup_and_after_alpha_is_defined(site):
    main_path, _ = reading_order(site)
    carrying = [s for s in main_path if 'data-widget="what-if"' in (site / f"{s}.html").read_text(encoding="utf-8")]
    assert carrying == ["what-if"]
    assert main_path.index("what-if") == main_path.index("speedup") + 1
    alpha_page = first_uses(site, main_path)["α"][0]
    assert main_path.index(alpha_page) < main_path.index("what-if")
    first = blocks((site / "what-if.html").read_text(encoding="utf-8"))[1][0]  # after the page's title
    assert "Try this first" in first, first


def test_the_toy_data_page_is_the_data_in_at_most_two_phone_screens_of_prose(site):
    """Its figures, the drafts' descriptions, the assumption and two links: about 120 words fill a 390 px screen."""
    raw = (site / "positions.html").read_text(encoding="utf-8")
    assert "what-if" not in raw.split("<main", 1)[1].split("</main>", 1)[0].replace('href="what-if.html"', "")
    prose = " ".join(t for t, _ in blocks(raw))
    assert len(prose.split()) <= 300, len(prose.split())  # the page footer counts too; the browser measures height
    assert raw.count('class="figure"') == len(load_inputs(ROOT)[1].drafts)


# --- the 2.62 coincidence (issue 32.1) ------------------------------------------------------------


def test_the_landing_page_names_the_coincidence_of_a_speedup_and_a_tokens_per_round_that_print_alike(site):
    _, profiles = load_inputs(ROOT)
    numbers = [analysis.summarize(d.id, profiles.target, d.distributions, profiles.cost_model) for d in profiles.drafts]
    alike = [
        (a, b)
        for a in numbers
        for b in numbers
        if FILTERS["times"](a.speedup).rstrip("×") == FILTERS["fixed"](b.expected_tokens)
    ]
    assert alike  # 2009/768 = 2.616 and 1343/512 = 2.623 both print 2.62, so the test can see the sentence
    names = {d.id: d.name.lower() for d in profiles.drafts}
    text = " ".join(t for t, _ in blocks((site / "index.html").read_text(encoding="utf-8")))
    for a, b in alike:
        shown = FILTERS["fixed"](b.expected_tokens)
        speedup = f"the speedup with {names[a.id]} is {FILTERS['fixed'](a.speedup, 3)}"
        tokens = f"the tokens per round of {names[b.id]} {FILTERS['fixed'](b.expected_tokens, 3)}"
        assert f"The two {shown}s only look alike: {speedup}, {tokens}." in text


# --- no long sentence twice on one page (issue 32.8) ----------------------------------------------


def long_sentences(html: str) -> Counter:
    """Sentences of 12 words or more in <main>, figures' captions and widgets included except the stepper, whose
    frames show one at a time (each round's frames are a separate story a reader steps through)."""
    out: Counter = Counter()
    for text, _ in blocks(html, keep_widgets=True, drop=("stepper",)):
        for sentence in re.split(r"(?<=[.!?:;])\s+(?=[A-Z0-9])", text):
            if len(sentence.split()) >= 12:
                out[sentence] += 1
    return out


def test_the_repeat_check_sees_a_sentence_written_twice():
    page = "<main><p>This sentence has twelve words in it, so it counts as a long one.</p>" * 2 + "</main>"
    assert max(long_sentences(page).values()) == 2


def test_no_page_says_a_long_sentence_twice(site):
    for path in sorted(site.glob("*.html")):
        twice = {s: n for s, n in long_sentences(path.read_text(encoding="utf-8")).items() if n > 1}
        assert not twice, (path.name, twice)


# --- K, not k (issue 32.7) --------------------------------------------------------------------------

LOWER_K = re.compile(r"(?<![-\w])k(?![-\w])")  # a lone k; "top-k" is a name


def test_the_draft_length_is_written_k_in_capitals_in_text_captions_and_alt_texts(site):
    assert LOWER_K.search("with k = 5 proposals") and not LOWER_K.search("top-k or top-p, K = 5")
    for path in sorted(site.glob("*.html")):
        raw = path.read_text(encoding="utf-8")
        texts = [t for t, _ in blocks(raw, keep_widgets=True)] + re.findall(r'alt="([^"]*)"', raw)
        lower = [t for t in texts if LOWER_K.search(t)]
        assert not lower, (path.name, lower[:3])
