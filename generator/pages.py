"""Markdown pages with front matter -> Jinja -> markdown-it -> the site layout, as HTML strings.

A page's source is a Jinja template first (so every number arrives as `{{ ... }}` from the
context) and Markdown second. Widgets (figures, the stepper, the Positions tab) are Jinja
partials; a page asks for one with `{{ widget("name", ...) }}` on a line of its own, which leaves
a comment placeholder that Markdown passes through untouched and that is swapped for the
rendered partial afterwards. Nothing here computes a number.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import jinja2
import yaml
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from .errors import UserError

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_PAGE_KEYS = {"title", "nav_title", "description", "slug"}


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
    html: str = ""
    headings: list[Heading] = field(default_factory=list)
    prev: Page | None = None
    next: Page | None = None

    @property
    def url(self) -> str:
        return f"{self.slug}.html"


def load_page(path: Path) -> Page:
    text = path.read_text(encoding="utf-8")
    m = _FRONT_MATTER.match(text)
    if not m:
        raise PageError(f"{path}: line 1: a page must start with front matter between two '---' lines")
    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark else 1
        raise PageError(f"{path}: line {line}: invalid front matter: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(meta, dict):
        raise PageError(f"{path}: line 2: front matter must be a mapping of keys to values")
    unknown = sorted(set(meta) - _PAGE_KEYS)
    if unknown:
        raise PageError(f"{path}: front matter: unknown key {unknown[0]!r} (known: {', '.join(sorted(_PAGE_KEYS))})")
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        raise PageError(f"{path}: front matter: missing 'title'")
    return Page(
        slug=str(meta.get("slug") or path.stem), source=path, title=meta["title"],
        nav_title=str(meta.get("nav_title") or meta["title"]), description=str(meta.get("description") or ""),
        markdown=text[m.end():], body_line=text[: m.end()].count("\n") + 1,
    )


def load_pages(pages_dir: Path, order: tuple[str, ...], config_source: str) -> list[Page]:
    """The pages in reading order; every Markdown file must be listed, and every listed page must exist."""
    found = {p.stem: p for p in sorted(pages_dir.glob("*.md"))}
    missing = [slug for slug in order if slug not in found]
    if missing:
        raise PageError(f"{config_source}: pages: {missing[0]!r} is listed but {pages_dir / (missing[0] + '.md')} does not exist")
    unlisted = sorted(set(found) - set(order))
    if unlisted:
        raise PageError(f"{found[unlisted[0]]}: not listed under 'pages' in {config_source}")
    pages = [load_page(found[slug]) for slug in order]
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


FILTERS = {
    "fixed": fixed, "frac": frac, "pct": pct, "times": times, "sci": sci, "thousands": thousands,
    "mathfrac": mathfrac,
}


# --- Markdown ----------------------------------------------------------------------------------


def _math(content: str, options: dict) -> str:
    display = "block" if options.get("display_mode") else "inline"
    return latex_to_mathml(content, display=display)


def markdown_renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "typographer": True}).enable(["table", "replacements", "smartquotes"])
    dollarmath_plugin(md, allow_digits=False, renderer=_math)
    anchors_plugin(md, min_level=2, max_level=3, permalink=True, permalinkSymbol="#", permalinkBefore=False)
    return md


def render_markdown(md: MarkdownIt, text: str) -> tuple[str, list[Heading]]:
    env: dict = {}
    tokens = md.parse(text, env)
    headings = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag in ("h2", "h3"):
            inline = tokens[i + 1]
            label = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
            headings.append(Heading(int(tok.tag[1]), str(tok.attrs.get("id", "")), label.strip()))
    html = label_anchors(md.renderer.render(tokens, md.options, env), headings)
    return mark_external_links(wrap_scroll_boxes(html, headings)), headings


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


def environment(templates_dir: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
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


class Widgets:
    """Collects widget HTML while a page's Markdown is rendered, and swaps it in afterwards."""

    def __init__(self, env: jinja2.Environment, variables: dict):
        self.env, self.variables, self.rendered = env, variables, []

    def __call__(self, _widget: str, /, **kwargs) -> Markup:
        try:
            template = self.env.get_template(f"widgets/{_widget}.html")
        except jinja2.TemplateNotFound:
            raise PageError(f"unknown widget {_widget!r} (no site_src/templates/widgets/{_widget}.html)") from None
        html = template.render(**self.variables, **kwargs)
        self.rendered.append(html)
        return Markup(f"\n\n<!--widget-{len(self.rendered) - 1}-->\n\n")

    def fill(self, html: str) -> str:
        return re.sub(r"<!--widget-(\d+)-->", lambda m: self.rendered[int(m.group(1))], html)


def render_page(page: Page, env: jinja2.Environment, md: MarkdownIt, variables: dict) -> None:
    widgets = Widgets(env, variables)
    try:
        source = env.from_string(page.markdown)
        text = source.render(**variables, page=page, widget=widgets)
    except (jinja2.TemplateError, UserError, ArithmeticError, AttributeError, KeyError, TypeError, ValueError) as exc:
        raise template_error(exc, page) from None
    body, page.headings = render_markdown(md, text)
    page.html = widgets.fill(body)


def render_layout(page: Page, pages: list[Page], env: jinja2.Environment, variables: dict) -> str:
    try:
        return env.get_template("page.html").render({**variables, "page": page, "pages": pages})
    except (jinja2.TemplateError, ArithmeticError, AttributeError, KeyError, TypeError, ValueError) as exc:
        raise template_error(exc) from None


def json_for_script(data: Any) -> Markup:
    """JSON safe inside <script type="application/json">: no "</" can close the element early."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return Markup(text.replace("</", "<\\/"))
