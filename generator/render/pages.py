"""Markdown pages with front matter -> Jinja (sandboxed) -> markdown-it -> the site layout, as HTML strings.

A page's source is a Jinja template first (so every number arrives as `{{ ... }}` from the
context) and Markdown second (markdown.py). Widgets (figures, the stepper, the Positions tab) are
Jinja partials; a page asks for one with `{{ widget("name", ...) }}` on a line of its own, which
leaves a comment placeholder that becomes a block of its own in Markdown and is swapped for the
rendered partial there. Nothing here computes a number, and nothing a page writes can run code: the
templates run in Jinja's sandbox. Every failure is one line naming the page (or template) and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from ..decimals import fixed, pct, points, sci, times  # the one rounding rule, shared with the pages' JavaScript
from ..errors import UserError
from ..model.engine import Verdict
from ..model.readers import load_yaml, outside_project, read_text, shown
from .markdown import Heading, placeholder, render_markdown
from .markup import MarkupProblem
from .sandbox import BudgetError, Record, sandbox

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

MAX_PAGE_BYTES = 2_000_000  # a page's file, and its text after Jinja: larger ones are refused
_FRONT_MATTER = re.compile(r"\A---[ \t\r]*\n(.*?)\n---[ \t\r]*\n", re.S)
_PAGE_KEYS = frozenset({"title", "nav_title", "description", "slug"})
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$", re.ASCII)
_RESERVED_SLUGS = frozenset({"404"})  # the site's own files: a page with this slug would replace them


class PageError(UserError):
    pass


@dataclass
class Page:
    slug: str
    source: Path
    title: str
    nav_title: str
    description: str
    markdown: str
    body_line: int  # the source line the Markdown body starts on, for error messages
    part: str = "main"  # "main" (the reading path), "beyond" (other verifiers) or "appendix"
    html: str = ""
    headings: list[Heading] = field(default_factory=list)
    shows_numbers: bool = False
    prev: Page | None = None
    next: Page | None = None

    @property
    def url(self) -> str:
        return f"{self.slug}.html"

    def document_title(self, site_title: str) -> str:
        return document_title(self.title, site_title)


@dataclass(frozen=True)
class PageView:
    """A page as templates read it: its words and addresses, not its file."""

    slug: str
    url: str
    title: str
    nav_title: str
    description: str
    part: str
    html: str
    headings: tuple[Heading, ...]
    shows_numbers: bool
    prev: PageView | None = None  # the neighbours, as views without neighbours of their own
    next: PageView | None = None

    def document_title(self, site_title: str) -> str:
        return document_title(self.title, site_title)


def document_title(title: str, site_title: str) -> str:
    """The <title>: "Page · Site", or the site's title alone when the page (the home page) shares it."""
    return site_title if title.strip() == site_title.strip() else f"{title} · {site_title}"


def page_view(page: Page | None, neighbours: bool = True) -> PageView | None:
    if page is None:
        return None
    return PageView(
        slug=page.slug,
        url=page.url,
        title=page.title,
        nav_title=page.nav_title,
        description=page.description,
        part=page.part,
        html=page.html,
        headings=tuple(page.headings),
        shows_numbers=page.shows_numbers,
        prev=page_view(page.prev, False) if neighbours else None,
        next=page_view(page.next, False) if neighbours else None,
    )


def load_page(path: Path, part: str = "main") -> Page:
    try:
        size = Path(path).stat().st_size
    except OSError:
        size = 0  # read_text says why it cannot be read
    if size > MAX_PAGE_BYTES:
        raise PageError(
            f"{path}: line 1: the page is {size:,} bytes; a page may be at most "
            f"{MAX_PAGE_BYTES // 1_000_000} MB (split it into several pages)"
        )
    text = read_text(path, "page", PageError)
    m = _FRONT_MATTER.match(text)
    if not m:
        raise PageError(f"{path}: line 1: a page must start with front matter between two '---' lines")
    meta = load_yaml(m.group(1), str(path), first_line=2, error=PageError) or {}
    if not isinstance(meta, dict):
        raise PageError(f"{path}: line 2: front matter must be a mapping of keys to values")
    unknown = sorted(set(map(str, meta)) - _PAGE_KEYS)
    if unknown:
        raise PageError(
            f"{path}: front matter: unknown key {shown(unknown[0])} (known: {', '.join(sorted(_PAGE_KEYS))})"
        )
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        raise PageError(f"{path}: front matter: missing 'title'")
    for key in ("nav_title", "description", "slug"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise PageError(f"{path}: front matter: {key}: must be text, not {shown(meta[key])}")
    slug = meta.get("slug") or path.stem
    if not _SLUG.match(slug) or slug in _RESERVED_SLUGS:
        raise PageError(
            f"{path}: front matter: slug: {shown(slug)} cannot name a page file (use lower-case letters, "
            f"digits and hyphens; not {', '.join(sorted(_RESERVED_SLUGS))})"
        )
    return Page(
        slug=slug,
        source=path,
        title=meta["title"],
        nav_title=meta.get("nav_title") or meta["title"],
        description=meta.get("description") or "",
        markdown=text[m.end() :],
        body_line=text[: m.end()].count("\n") + 1,
        part=part,
    )


def load_pages(
    pages_dir: Path,
    order: tuple[str, ...],
    config_source: str,
    appendix: tuple[str, ...] = (),
    beyond: tuple[str, ...] = (),
) -> list[Page]:
    """The main path, the part beyond it, then the appendix, in reading order; every Markdown file must be listed
    once, every listed page must exist, and no two pages may write the same output file."""
    found = {p.stem: p for p in sorted(pages_dir.glob("*.md"))}
    first: dict[str, str] = {}
    parts = (("pages", order), ("beyond", beyond), ("appendix", appendix))
    for key, slugs in parts:
        for i, slug in enumerate(slugs):
            if slug in first:
                raise PageError(f"{config_source}: {key}[{i}]: {shown(slug)} is listed twice (first as {first[slug]})")
            first[slug] = f"{key}[{i}]"
        missing = [slug for slug in slugs if slug not in found]
        if missing:
            raise PageError(
                f"{config_source}: {key}: {shown(missing[0])} is listed but "
                f"{pages_dir / (missing[0] + '.md')} does not exist"
            )
    unlisted = sorted(set(found) - set(order) - set(beyond) - set(appendix))
    if unlisted:
        raise PageError(f"{found[unlisted[0]]}: not listed under 'pages', 'beyond' or 'appendix' in {config_source}")
    pages = [load_page(found[slug], "main" if key == "pages" else key) for key, slugs in parts for slug in slugs]
    owner: dict[str, Page] = {}
    for page in pages:
        if page.url in owner:
            raise PageError(
                f"{page.source}: front matter: slug: {page.slug!r} would overwrite {page.url}, "
                f"which {owner[page.url].source} already writes"
            )
        owner[page.url] = page
    for before, after in zip(pages, pages[1:]):
        before.next, after.prev = after, before
    return pages


# --- formatting filters: presentation only -----------------------------------------------------


def frac(value: Any) -> str:
    return str(Fraction(value))  # "3/8", or "2" for a whole number


def frac_wrap(value: Any) -> Markup:
    """frac with a line break allowed after the slash alone (<wbr>): in a narrow cell a long fraction wraps as its
    numerator over its denominator, never inside a number."""
    return Markup("/<wbr>").join(frac(value).split("/"))


def thousands(value: Any) -> str:
    return f"{int(value):,}"


def mathfrac(value: Any) -> str:
    """A Fraction as LaTeX for a $...$ span: \\frac{3}{8}, or a whole number."""
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


FILTERS = MappingProxyType(
    {
        "fixed": fixed,
        "frac": frac,
        "frac_wrap": frac_wrap,
        "pct": pct,
        "points": points,
        "times": times,
        "sci": sci,
        "thousands": thousands,
        "mathfrac": mathfrac,
    }
)


# --- Jinja -------------------------------------------------------------------------------------


class _ProjectLoader(jinja2.FileSystemLoader):
    """Templates from their folder, but none that is a symlink leading out of the project."""

    def get_source(self, environment, template):
        source, filename, is_current = super().get_source(environment, template)
        problem = outside_project(Path(filename))
        if problem:
            raise PageError(problem)
        return source, filename, is_current


def environment(templates_dir: Path) -> jinja2.Environment:
    """Jinja in its sandbox (sandbox.py): a page or template reads the data it is given and calls the functions
    written for it, within budgets of loop turns, sizes and time, and nothing more (no attribute starting with
    "_", no path, file or module, no changing a list or dict, no range over 100,000)."""
    verdicts = Record(**{v.name: v for v in Verdict})  # templates name a verdict as Verdict.REJECTED
    return sandbox(_ProjectLoader(str(templates_dir)), FILTERS, {"Verdict": verdicts})


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
    if name == "<template>" and isinstance(page, Page):
        name, line = str(page.source), (line or 1) + page.body_line - 1
    place = f"line {line}: " if line else ""
    if isinstance(exc, BudgetError):
        message = str(exc)
    elif isinstance(exc, jinja2.exceptions.SecurityError):
        message = f"not allowed in a page or template: {exc}"
    elif isinstance(exc, (jinja2.TemplateError, UserError)):
        message = getattr(exc, "message", None) or str(exc)
    elif isinstance(exc, (MemoryError, RecursionError)):
        message = "the page asks for more memory or deeper calls than a page may use"
    else:
        message = f"{type(exc).__name__}: {exc}"
    return PageError(f"{name}: {place}{' '.join(message.split())}")


class Widgets:
    """`widget("name", **kwargs)` for a page: renders site_src/templates/widgets/NAME.html with the page's
    variables and leaves a placeholder that render_markdown swaps for the HTML."""

    def __init__(self, env: jinja2.Environment, variables: dict):
        self.env, self.variables, self.rendered = env, variables, []

    def __call__(self, _widget: str, /, **kwargs) -> Markup:
        try:
            template = self.env.get_template(f"widgets/{_widget}.html")
        except jinja2.TemplateNotFound:
            raise PageError(f"unknown widget {_widget!r} (no site_src/templates/widgets/{_widget}.html)") from None
        self.rendered.append(template.render(**self.variables, **kwargs))
        return Markup(placeholder(len(self.rendered) - 1))


def _source_line(page: Page, exc: MarkupProblem) -> int | None:
    """Where a problem sits in the page's file: where its text is written, else the line it was found on."""
    at = page.markdown.find(exc.needle) if exc.needle else -1
    if at >= 0:
        return page.body_line + page.markdown.count("\n", 0, at)
    return None if exc.line is None else page.body_line + exc.line - 1


def render_page(page: Page, env: jinja2.Environment, md: MarkdownIt, variables: dict) -> None:
    """Fill in page.html and page.headings (`md`: markdown_renderer()). Any failure is a PageError naming the
    page's file and line."""
    widgets = Widgets(env, variables)
    pieces, size = [], 0
    env.start_render()
    try:
        for piece in env.from_string(page.markdown).generate(**variables, page=page_view(page), widget=widgets):
            pieces.append(piece)
            size += len(piece)
            if size > MAX_PAGE_BYTES:
                break
    except Exception as exc:  # Jinja, the sandbox, a filter given the wrong value, a widget's template
        raise template_error(exc, page) from None
    if size > MAX_PAGE_BYTES:
        raise PageError(
            f"{page.source}: line {page.body_line}: the page's text grows past "
            f"{MAX_PAGE_BYTES // 1_000_000} MB when its templates run (the limit for a page)"
        )
    try:
        page.html, page.headings = render_markdown(md, "".join(pieces), widgets.rendered)
    except MarkupProblem as exc:
        line = _source_line(page, exc)
        raise PageError(f"{page.source}: {f'line {line}: ' if line else ''}{exc}") from None
    except Exception as exc:  # markdown-it or a plugin failing on this text
        raise PageError(
            f"{page.source}: line {page.body_line}: the Markdown cannot be rendered "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
        ) from None
    page.shows_numbers = "{{" in page.markdown  # its numbers (or figures) come from the build: link the data


def render_layout(page: Page, pages: list[Page], env: jinja2.Environment, variables: dict) -> str:
    env.start_render()
    try:
        views = [page_view(p) for p in pages]
        this = next((v for p, v in zip(pages, views) if p is page), None) or page_view(page)  # `is sameas` holds
        return env.get_template("page.html").render({**variables, "page": this, "pages": views})
    except Exception as exc:
        raise template_error(exc) from None
