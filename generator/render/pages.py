"""Markdown pages with front matter -> Jinja -> markdown-it -> the site layout, as HTML strings.

A page's source is a Jinja template first (so every number arrives as `{{ ... }}` from the
context) and Markdown second. Widgets (figures, the stepper, the Positions tab) are Jinja
partials; a page asks for one with `{{ widget("name", ...) }}` on a line of its own, which leaves
a comment placeholder that Markdown passes through untouched and that is swapped for the
rendered partial afterwards. Nothing here computes a number.
"""
from __future__ import annotations

import hashlib
import io
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from ..errors import UserError
from ..model.engine import Verdict
from ..model.readers import load_yaml, read_text, shown

if TYPE_CHECKING:  # imported by markdown_renderer, when some page's text is not in the Markdown memo
    from markdown_it import MarkdownIt

_FRONT_MATTER = re.compile(r"\A---[ \t\r]*\n(.*?)\n---[ \t\r]*\n", re.S)
_PAGE_KEYS = frozenset({"title", "nav_title", "description", "slug"})
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$", re.ASCII)
_RESERVED_SLUGS = frozenset({"404"})  # the site's own files: a page with this slug would replace them


class PageError(UserError):
    pass


@dataclass
class Heading:
    level: int
    id: str
    text: str


@dataclass
class Page:
    slug: str
    source: Path
    title: str
    nav_title: str
    description: str
    markdown: str
    body_line: int  # the source line the Markdown body starts on, for error messages
    part: str = "main"  # "main" (the reading path) or "appendix"
    html: str = ""
    headings: list[Heading] = field(default_factory=list)
    shows_numbers: bool = False
    prev: Page | None = None
    next: Page | None = None

    @property
    def url(self) -> str:
        return f"{self.slug}.html"

    def document_title(self, site_title: str) -> str:
        """The <title>: "Page · Site", or the site's title alone when the page (the home page) shares it."""
        return site_title if self.title.strip() == site_title.strip() else f"{self.title} · {site_title}"


def load_page(path: Path) -> Page:
    text = read_text(path, "page", PageError)
    m = _FRONT_MATTER.match(text)
    if not m:
        raise PageError(f"{path}: line 1: a page must start with front matter between two '---' lines")
    meta = load_yaml(m.group(1), str(path), first_line=2, error=PageError) or {}
    if not isinstance(meta, dict):
        raise PageError(f"{path}: line 2: front matter must be a mapping of keys to values")
    unknown = sorted(set(map(str, meta)) - _PAGE_KEYS)
    if unknown:
        raise PageError(f"{path}: front matter: unknown key {shown(unknown[0])} (known: {', '.join(sorted(_PAGE_KEYS))})")
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        raise PageError(f"{path}: front matter: missing 'title'")
    for key in ("nav_title", "description", "slug"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise PageError(f"{path}: front matter: {key}: must be text, not {shown(meta[key])}")
    slug = meta.get("slug") or path.stem
    if not _SLUG.match(slug) or slug in _RESERVED_SLUGS:
        raise PageError(f"{path}: front matter: slug: {shown(slug)} cannot name a page file (use lower-case letters, "
                        f"digits and hyphens; not {', '.join(sorted(_RESERVED_SLUGS))})")
    return Page(
        slug=slug, source=path, title=meta["title"],
        nav_title=meta.get("nav_title") or meta["title"], description=meta.get("description") or "",
        markdown=text[m.end():], body_line=text[: m.end()].count("\n") + 1,
    )


def load_pages(pages_dir: Path, order: tuple[str, ...], config_source: str,
               appendix: tuple[str, ...] = ()) -> list[Page]:
    """The main path then the appendix, in reading order; every Markdown file must be listed once, every listed
    page must exist, and no two pages may write the same output file."""
    found = {p.stem: p for p in sorted(pages_dir.glob("*.md"))}
    first: dict[str, str] = {}
    for key, slugs in (("pages", order), ("appendix", appendix)):
        for i, slug in enumerate(slugs):
            if slug in first:
                raise PageError(f"{config_source}: {key}[{i}]: {shown(slug)} is listed twice (first as {first[slug]})")
            first[slug] = f"{key}[{i}]"
        missing = [slug for slug in slugs if slug not in found]
        if missing:
            raise PageError(f"{config_source}: {key}: {shown(missing[0])} is listed but "
                            f"{pages_dir / (missing[0] + '.md')} does not exist")
    unlisted = sorted(set(found) - set(order) - set(appendix))
    if unlisted:
        raise PageError(f"{found[unlisted[0]]}: not listed under 'pages' or 'appendix' in {config_source}")
    pages = [load_page(found[slug]) for slug in order]
    for slug in appendix:
        page = load_page(found[slug])
        page.part = "appendix"
        pages.append(page)
    owner: dict[str, Page] = {}
    for page in pages:
        if page.url in owner:
            raise PageError(f"{page.source}: front matter: slug: {page.slug!r} would overwrite {page.url}, "
                            f"which {owner[page.url].source} already writes")
        owner[page.url] = page
    for before, after in zip(pages, pages[1:]):
        before.next, after.prev = after, before
    return pages


# --- formatting filters: presentation only -----------------------------------------------------


def fixed(value: Any, digits: int = 2) -> str:
    return f"{float(value):.{digits}f}"


def frac(value: Any) -> str:
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def pct(value: Any, digits: int = 0) -> str:
    return f"{float(value) * 100:.{digits}f}%"


def points(value: Any, digits: int = 1) -> str:
    """A difference of two shares, in percentage points: 0.058 -> "5.8 percentage points"."""
    return f"{float(value) * 100:.{digits}f} percentage points"


def times(value: Any, digits: int = 2) -> str:
    return f"{float(value):.{digits}f}×"


def sci(value: Any, digits: int = 1) -> str:
    mantissa, exponent = f"{float(value):.{digits}e}".split("e")
    return f"{mantissa} × 10^{int(exponent)}"


def thousands(value: Any) -> str:
    return f"{int(value):,}"


def mathfrac(value: Any) -> str:
    """A Fraction as LaTeX for a $...$ span: \\frac{3}{8}, or a whole number."""
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


FILTERS = MappingProxyType({
    "fixed": fixed, "frac": frac, "pct": pct, "points": points, "times": times, "sci": sci, "thousands": thousands,
    "mathfrac": mathfrac,
})


# --- Markdown ----------------------------------------------------------------------------------


class MarkupProblem(ValueError):
    """Something in a page's Markdown that would show up on the page as raw source; `needle` finds its line."""

    def __init__(self, message: str, needle: str):
        super().__init__(message)
        self.needle = needle


_UNKNOWN_MACRO = re.compile(r">\\([A-Za-z]+)<")
_LOOSE_FOOTNOTE = re.compile(r"\[\^([^\]\s]+)\]")


_MATHML_MEMO = None  # (LaTeX, display) -> MathML across builds (build.py installs a cache.ValueMemo)


def use_mathml_memo(memo) -> None:
    global _MATHML_MEMO
    _MATHML_MEMO = memo


_SEEN_MATHML: dict[tuple[str, str], str] = {}  # within one process, memo or not


def _mathml(content: str, display: str) -> str:
    key = (content, display)
    memo = _MATHML_MEMO
    if memo is not None:
        kept = memo.get(key)
        if kept is not None:
            return kept
    mathml = _SEEN_MATHML.get(key)
    if mathml is None:
        mathml = _renumbered(content, display, memo)
        if mathml is None:
            from latex2mathml.converter import convert as latex_to_mathml  # imported by the first new formula

            mathml = latex_to_mathml(content, display=display)
            _learn_shape(content, display, mathml)
        if len(_SEEN_MATHML) < 4096:
            _SEEN_MATHML[key] = mathml
    if memo is not None:
        memo.put(key, mathml)
    return mathml


# A formula that differs from one converted before only in its numbers (a data edit: "c = 1/10" becomes
# "c = 1/13") is converted by writing its numbers into the earlier MathML: latex2mathml reads a number the
# same whatever its digits (one token, one <mn>), unless it sits where one digit alone is an argument
# (x^12 is x^{1}2, \frac12 is \frac{1}{2}) or reads as a dimension (2pt). _shape leaves those out, and an
# earlier formula is used only if its MathML holds its numbers, in order, as plain <mn> elements and no
# other <mn> (tests/test_render.py checks the result against latex2mathml's).
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MN = re.compile(r"<mn>([0-9.]+)</mn>")
_SHAPES: dict[tuple[str, str], str] = {}  # (formula with its numbers as 0, display) -> an earlier MathML
_SHAPES_FROM = [None]  # the memo whose formulas _SHAPES holds
_ONE_DIGIT_ARGUMENT = re.compile(r"(?:\\[cdt]?frac[\s.]*|[\\^_]\s*)$")  # what a lone digit after it belongs to


def _shape(tex: str) -> tuple[str, tuple[str, ...]] | None:
    """(the formula with every number written as 0, its numbers), or None where a number's digits could
    change how it is read: right after ^, _, a backslash or \\frac (one digit alone is the argument), or
    before a letter (2pt is a dimension); or where there is no number."""
    numbers = []
    for m in _NUMBER.finditer(tex):
        if _ONE_DIGIT_ARGUMENT.search(tex, 0, m.start()) or tex[m.end():].lstrip()[:1].isalpha():
            return None
        numbers.append(m.group(0))
    return (_NUMBER.sub("0", tex), tuple(numbers)) if numbers else None


def _learn_shape(tex: str, display: str, mathml: str) -> None:
    found = _shape(tex)
    if found is not None and tuple(_MN.findall(mathml)) == found[1] and len(_SHAPES) < 4096:
        _SHAPES.setdefault((found[0], display), mathml)


def _renumbered(tex: str, display: str, memo) -> str | None:
    """The MathML of an earlier formula of the same shape with this formula's numbers, or None."""
    found = _shape(tex)
    if found is None:
        return None
    if memo is not None and _SHAPES_FROM[0] is not memo:  # what earlier builds converted, once per build
        _SHAPES_FROM[0] = memo
        for (known, known_display), known_mathml in memo.items():
            _learn_shape(known, known_display, known_mathml)
    earlier = _SHAPES.get((found[0], display))
    if earlier is None:
        return None
    numbers = iter(found[1])
    return _MN.sub(lambda m: f"<mn>{next(numbers)}</mn>", earlier)


def _group(tex: str, i: int) -> tuple[str, int]:
    """The brace group (or single character) starting at tex[i], without its braces, and where it ends."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex) or tex[i] != "{":
        return tex[i:i + 1], i + 1
    depth = 0
    for j in range(i, len(tex)):
        depth += {"{": 1, "}": -1}.get(tex[j], 0)
        if depth == 0:
            return tex[i + 1:j], j + 1
    return tex[i + 1:], len(tex)


_FRAC = re.compile(r"\\[dt]?frac(?![a-zA-Z])")
_SIMPLE = re.compile(r"[0-9.]+|\\?[a-zA-Z]+(?:_\{?\w+\}?)?(?:\([^()]*\))?|\\mathbb\{\w\}\[\w\]")


def slash_fractions(tex: str) -> str:
    """\\frac{a}{b} as a/b, for a formula inside a sentence: a stacked fraction there shrinks its digits to
    about two thirds of the text (7 px on a phone); a part with more than one term gets parentheses."""
    out, i = [], 0
    while (m := _FRAC.search(tex, i)) is not None:
        top, j = _group(tex, m.end())
        bottom, j = _group(tex, j)
        parts = []
        for part in (slash_fractions(top), slash_fractions(bottom)):
            part = part.strip()
            parts.append(part if _SIMPLE.fullmatch(part) else f"\\left({part}\\right)")
        out.append(f"{tex[i:m.start()]}{{{parts[0]}/{parts[1]}}}")
        i = j
    return "".join(out) + tex[i:]


_BREAK = re.compile(r"\\left\b|\\right\b|[{}()\[\]]|=|\+|-|\\approx\b|\\le\b|\\ge\b|<|>|\\q?quad\b")


def equation_lines(tex: str) -> list[str]:
    """A display equation cut before each top-level =, +, - or \\quad (never inside braces or brackets),
    so that a phone can wrap it there instead of hiding its end in a scroll box."""
    pieces, start, depth = [], 0, 0
    for m in _BREAK.finditer(tex):
        token = m.group(0)
        if token in ("{", "(", "[", "\\left"):
            depth += 1
        elif token in ("}", ")", "]", "\\right"):
            depth -= 1
        elif depth == 0 and tex[start:m.start()].strip():
            pieces.append(tex[start:m.start()])
            start = m.start()
    pieces.append(tex[start:])
    return [p.strip() for p in pieces if p.strip()]


def _checked(content: str, tex: str, display: str) -> str:
    mathml = _mathml(tex, display)
    unknown = _UNKNOWN_MACRO.search(mathml)
    if unknown:
        # latex2mathml prints a macro it does not know as its own name: the reader would see "\\foo"
        raise MarkupProblem(f"unknown LaTeX macro \\{unknown.group(1)} in ${content.strip()}$", f"\\{unknown.group(1)}")
    return mathml


def _math(content: str, options: dict) -> str:
    if not options.get("display_mode"):
        return _checked(content, slash_fractions(content), "inline")
    lines = equation_lines(content)
    if len(lines) < 2:
        return _checked(content, content, "block")
    # One <math> per piece: each keeps display size, and the line may wrap between pieces. An operator
    # that opens a piece stays a binary operator (form="infix"), spaced as it was in the whole equation.
    parts = []
    for n, line in enumerate(lines):
        mathml = _checked(content, line, "block").replace('display="block"', 'display="block" class="part"', 1)
        if n:
            mathml = re.sub(r"<mo>", '<mo form="infix">', mathml, count=1)
        parts.append(mathml)
    return "<wbr>".join(parts)


def markdown_renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.anchors import anchors_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark", {"html": True, "typographer": True}).enable(["table", "replacements", "smartquotes"])
    dollarmath_plugin(md, allow_digits=False, renderer=_math)
    footnote_plugin(md)
    anchors_plugin(md, min_level=2, max_level=3, permalink=True, permalinkSymbol="#", permalinkBefore=False)
    return md


# Raw HTML in a page's Markdown: only these harmless tags and attributes. Nothing that loads, runs or
# styles (script, style, link, meta, iframe, img, on*=, style=, href, src): links and pictures are
# written in Markdown or come from widgets, so the CSP and `check` have nothing to be surprised by.
RAW_HTML_TAGS = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "data", "dd", "del", "details", "dfn",
    "div", "dl", "dt", "em", "figcaption", "figure", "h2", "h3", "h4", "hr", "i", "ins", "kbd", "li", "mark", "ol",
    "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th",
    "thead", "time", "tr", "u", "ul", "var", "wbr",
})
RAW_HTML_ATTRIBUTES = frozenset({
    "aria-describedby", "aria-hidden", "aria-label", "class", "colspan", "datetime", "dir", "hidden", "href",
    "hreflang", "id", "lang", "open", "rel", "role", "rowspan", "scope", "title", "value",
})
# A link is followed only when clicked, so <a href> may stay; not to a scheme that runs or embeds code.
_UNSAFE_HREF = re.compile(r"^\s*(?:javascript|vbscript|data|file):", re.I)


class RawHtmlError(PageError):
    """Raw HTML outside the allowlist; `line` counts in the rendered Markdown, `snippet` is the offending tag."""

    def __init__(self, message: str, line: int, snippet: str):
        super().__init__(message)
        self.line, self.snippet = line, snippet


class _RawHtml(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problem: tuple[str, str] | None = None

    def _refuse(self, snippet: str, why: str) -> None:
        if self.problem is None:
            self.problem = (snippet, why)

    def handle_starttag(self, tag, attrs):
        snippet = self.get_starttag_text() or f"<{tag}>"
        if tag not in RAW_HTML_TAGS:
            return self._refuse(snippet, f"raw HTML <{tag}> is not allowed in a page")
        for name, value in attrs:
            if name not in RAW_HTML_ATTRIBUTES or (name == "href" and tag != "a"):
                return self._refuse(snippet, f"the attribute {shown(name)} on raw <{tag}> is not allowed in a page")
            if name == "href" and _UNSAFE_HREF.match(value or ""):
                return self._refuse(snippet, f"a link to {shown((value or '').split(':')[0] + ':')} is not allowed in a page")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag not in RAW_HTML_TAGS:
            self._refuse(f"</{tag}", f"raw HTML </{tag}> is not allowed in a page")

    def handle_decl(self, decl):
        self._refuse(f"<!{decl}", "a raw HTML declaration is not allowed in a page")

    def handle_pi(self, data):
        self._refuse(f"<?{data}", "a raw HTML processing instruction is not allowed in a page")

    def unknown_decl(self, data):
        self._refuse(f"<![{data}", "raw HTML CDATA is not allowed in a page")


def check_raw_html(tokens) -> None:
    """Refuse raw HTML beyond RAW_HTML_TAGS/RAW_HTML_ATTRIBUTES, naming the first offending tag."""
    for tok in tokens:
        line = tok.map[0] + 1 if tok.map else 0
        if tok.type == "html_block":
            parts = [tok.content]
        elif tok.type == "inline":
            parts = [c.content for c in tok.children or [] if c.type == "html_inline"]
        else:
            continue
        for part in parts:
            parser = _RawHtml()
            parser.feed(part)
            parser.close()
            if parser.problem:
                snippet, why = parser.problem
                allowed = "Markdown, a widget, or one of: " + ", ".join(sorted(RAW_HTML_TAGS))
                raise RawHtmlError(f"{why} ({shown(snippet)}); use {allowed}", line, snippet)


def render_markdown(md: MarkdownIt, text: str) -> tuple[str, list[Heading]]:
    env: dict = {}
    tokens = md.parse(text, env)
    check_raw_html(tokens)
    for tok in tokens:
        for child in tok.children or ():
            loose = _LOOSE_FOOTNOTE.search(child.content) if child.type == "text" else None
            if loose:
                raise MarkupProblem(f"footnote [^{loose.group(1)}] has no definition "
                                    f"(add a line '[^{loose.group(1)}]: ...')", loose.group(0))
    headings = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag in ("h2", "h3"):
            inline = tokens[i + 1]
            label = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
            headings.append(Heading(int(tok.tag[1]), str(tok.attrs.get("id", "")), label.strip()))
    html = label_anchors(md.renderer.render(tokens, md.options, env), headings)
    return mark_external_links(wrap_scroll_boxes(html, headings)), headings


class Markdown:
    """render_markdown, with what it returned for a text kept in `memo` (a cache.ValueMemo, or None) under the
    text's SHA-256: a page whose Jinja output is what an earlier build rendered (a number it does not show
    changed) skips markdown-it altogether, which is imported and set up only when some text is new. A text
    that fails is never kept, so it fails again with the same message."""

    LIBRARIES = ("markdown-it-py", "mdit-py-plugins", "latex2mathml")  # whose versions the memo's key must hold

    def __init__(self, memo=None):
        self.memo, self.md = memo, None

    def render(self, text: str) -> tuple[str, list[Heading]]:
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        kept = self.memo.get(key) if self.memo is not None else None
        if kept is not None:
            html, headings = kept
            return html, [Heading(*h) for h in headings]
        if self.md is None:
            self.md = markdown_renderer()
        html, headings = render_markdown(self.md, text)
        if self.memo is not None:
            self.memo.put(key, (html, tuple((h.level, h.id, h.text) for h in headings)))
        return html, headings


_ANCHOR = re.compile(r'<a class="header-anchor" href="#([^"]+)">#</a>')


def label_anchors(html: str, headings: list[Heading]) -> str:
    """Give each heading's "#" permalink a name, since a bare "#" tells a screen-reader user nothing."""
    names = {h.id: h.text for h in headings}

    def labelled(m: re.Match) -> str:
        text = names.get(m.group(1))
        if not text:
            return m.group(0)
        label = escape(f"Link to this section: {text}")
        return f'<a class="header-anchor" href="#{m.group(1)}" aria-label="{label}">#</a>'

    return _ANCHOR.sub(labelled, html)


_SECTION_OR_BOX = re.compile(r'<h[23][^>]*\bid="([^"]+)"|(<table>.*?</table>)|<div class="math block">', re.S)
_EXTERNAL_LINK = re.compile(r'<a ((?:(?!\brel=)[^>])*?\bhref="(?:https?:)?//[^"]*"(?:(?!\brel=)[^>])*)>')


def wrap_scroll_boxes(html: str, headings: list[Heading]) -> str:
    """Make every Markdown table and display equation a named, focusable scroll box.

    Both are wider than a phone; a box that scrolls but cannot take focus cannot be scrolled from the
    keyboard (WCAG 2.1.1). Only markdown-it's bare <table> and dollarmath's block <div> are touched:
    widget partials are swapped in later and label their own boxes.
    """
    names = {h.id: h.text for h in headings}
    section, seen = "", {}

    def box(m: re.Match) -> str:
        nonlocal section
        if m.group(1) is not None:
            section = names.get(m.group(1), section)
            return m.group(0)
        kind = "Table" if m.group(2) else "Equation"
        base = f"{kind}: {section}" if section else kind
        seen[base] = seen.get(base, 0) + 1
        label = escape(base if seen[base] == 1 else f"{base} ({seen[base]})")
        if kind == "Table":
            return f'<div class="table-scroll" role="region" tabindex="0" aria-label="{label}">\n{m.group(2)}\n</div>'
        return f'<div class="math block" role="group" tabindex="0" aria-label="{label}">'

    return _SECTION_OR_BOX.sub(box, html)


def mark_external_links(html: str) -> str:
    """rel="noopener noreferrer" on every link that leaves the site: the target page gets no handle on ours."""
    return _EXTERNAL_LINK.sub(lambda m: f'<a {m.group(1)} rel="noopener noreferrer">', html)


# --- Jinja -------------------------------------------------------------------------------------


def environment(templates_dir: Path, bytecode_dir: Path | None = None) -> jinja2.Environment:
    """bytecode_dir: where compiled templates are kept between builds (Jinja checks each against its source)."""
    cache = None
    if bytecode_dir is not None:
        try:
            Path(bytecode_dir).mkdir(parents=True, exist_ok=True)
            cache = jinja2.FileSystemBytecodeCache(str(bytecode_dir))
        except OSError:  # a read-only cache costs speed, not the build
            cache = None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        bytecode_cache=cache,
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.globals["Verdict"] = Verdict  # templates name a verdict as Verdict.REJECTED, never by a bare word
    return env


def _innermost_template(exc: BaseException) -> tuple[str, int] | None:
    """(file, line) of the innermost template frame in a traceback that Jinja has rewritten to template lines."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name == "<template>" or name.endswith((".html", ".md")):
            found = (name, tb.tb_lineno)
        tb = tb.tb_next
    return found


def template_error(exc: BaseException, page: Page | None = None) -> PageError:
    """One line naming the file and line a template or page failed at, whichever kind of error it was."""
    if isinstance(exc, jinja2.TemplateSyntaxError):
        name, line = exc.filename or exc.name or "<template>", exc.lineno
    else:
        name, line = _innermost_template(exc) or ("<template>", None)
    if name == "<template>" and page is not None:
        name, line = str(page.source), None if line is None else line + page.body_line - 1
    place = f"line {line}: " if line else ""
    if isinstance(exc, (jinja2.TemplateError, UserError)):
        message = getattr(exc, "message", None) or str(exc)
    else:
        message = f"{type(exc).__name__}: {exc}"
    return PageError(f"{name}: {place}{message}")


# Widgets drawn from the named variables alone (and their arguments, the environment's filters and globals):
# the template gets nothing else, so reading a name not listed here fails the build instead of slipping past
# the key, and the HTML is kept across builds by those values (Widgets.kept). A draft-step edit leaves the
# stepper's thousands of cells as they were.
KEPT_WIDGETS = MappingProxyType({"stepper": ("stepper_profiles", "stepper_json")})


def value_bytes(value: Any) -> bytes:
    """`value` pickled without the pickler's memo (fast mode), so that equal values give equal bytes however
    their objects are shared: rounds computed afresh and the same rounds loaded from the cache alike."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(value)
    return buffer.getvalue()


class Widgets:
    """Collects widget HTML while a page's Markdown is rendered, and swaps it in afterwards. `kept` (or None)
    gives the cache.ValueMemo that holds KEPT_WIDGETS' HTML under a hash of what each is drawn from, when one
    is first drawn; its key's code part must cover the templates and the views' classes (build.PagesStage)."""

    def __init__(self, env: jinja2.Environment, variables: dict, kept: Callable[[], Any] | None = None):
        self.env, self.variables, self.kept, self.rendered = env, variables, kept, []

    def __call__(self, _widget: str, /, **kwargs) -> Markup:
        try:
            template = self.env.get_template(f"widgets/{_widget}.html")
        except jinja2.TemplateNotFound:
            raise PageError(f"unknown widget {_widget!r} (no site_src/templates/widgets/{_widget}.html)") from None
        if _widget in KEPT_WIDGETS:
            html = self._drawn_from(_widget, template, {name: self.variables[name] for name in KEPT_WIDGETS[_widget]}
                                    | kwargs)
        else:
            html = template.render(**self.variables, **kwargs)
        self.rendered.append(html)
        return Markup(f"\n\n<!--widget-{len(self.rendered) - 1}-->\n\n")

    def _drawn_from(self, name: str, template: jinja2.Template, inputs: dict) -> str:
        memo = self.kept() if self.kept is not None else None
        key = memo is not None and hashlib.sha256(value_bytes((name, sorted(inputs.items())))).hexdigest()
        html = memo.get(key) if key else None
        if html is None:
            try:
                html = template.render(**inputs)
            except jinja2.UndefinedError as exc:  # say why a name every other template sees is missing here
                exc.args = (f"{exc.args[0] if exc.args else exc} (the {name} widget sees only "
                            f"{', '.join(KEPT_WIDGETS[name])})",)
                raise
            if key:
                memo.put(key, html)
        return html

    def fill(self, html: str) -> str:
        return re.sub(r"<!--widget-(\d+)-->", lambda m: self.rendered[int(m.group(1))], html)


def page_template(page: Page, env: jinja2.Environment) -> jinja2.Template:
    """The page's Markdown compiled as a template, as env.from_string would, but kept in the environment's
    bytecode cache under the page's address and checked against its text: a build that renders an unchanged
    page again (after a number changed) loads it instead of compiling it."""
    cache = env.bytecode_cache
    if cache is None:
        return env.from_string(page.markdown)
    bucket = cache.get_bucket(env, f"page-source:{page.url}", None, page.markdown)
    if bucket.code is None:
        bucket.code = env.compile(page.markdown)
        cache.set_bucket(bucket)
    return env.template_class.from_code(env, bucket.code, env.make_globals(None), None)


def render_page(page: Page, env: jinja2.Environment, markdown: Markdown, variables: dict, kept_widgets=None,
                template: jinja2.Template | None = None) -> None:
    """`template`: the page's own (page_template), where it was loaded beforehand."""
    widgets = Widgets(env, variables, kept_widgets)
    try:
        source = template or page_template(page, env)
        text = source.render(**variables, page=page, widget=widgets)
    except (jinja2.TemplateError, UserError, ArithmeticError, AttributeError, KeyError, TypeError, ValueError,
            RecursionError) as exc:
        raise template_error(exc, page) from None
    try:
        body, page.headings = markdown.render(text)
    except RawHtmlError as exc:
        at = page.markdown.find(exc.snippet)
        line = page.body_line + page.markdown.count("\n", 0, at) if at >= 0 else None
        raise PageError(f"{page.source}: {f'line {line}: ' if line else ''}{exc}") from None
    except MarkupProblem as exc:
        index = page.markdown.find(exc.needle)
        line = f"line {page.body_line + page.markdown.count(chr(10), 0, index)}: " if index >= 0 else ""
        raise PageError(f"{page.source}: {line}{exc}") from None
    page.html = widgets.fill(body)
    page.shows_numbers = "{{" in page.markdown  # its numbers (or figures) come from the build: link the data


def render_layout(page: Page, pages: list[Page], env: jinja2.Environment, variables: dict) -> str:
    try:
        return env.get_template("page.html").render({**variables, "page": page, "pages": pages})
    except (jinja2.TemplateError, ArithmeticError, AttributeError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise template_error(exc) from None
