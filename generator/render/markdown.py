"""A page's text after Jinja, as HTML: markdown-it with tables, footnotes, heading anchors and $math$.

Everything is done on markdown-it's tokens, never by searching the HTML it writes, so the time taken
grows with the text and no more: raw HTML is checked against the allowlist (markup.py), widget
placeholders are swapped for the widgets' HTML, formulas become MathML (math.py), each heading's "#"
link gets a name, each table and display equation becomes a named, focusable scroll box, and each
link that leaves the site gets rel="noopener noreferrer".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import escape

from .markup import NOOPENER, MarkupProblem, check_html, leaves_site, link_problem
from .math import math_renderer, to_mathml

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_LOOSE_FOOTNOTE = re.compile(r"\[\^([^\]\s]+)\]")
_PLACEHOLDER = re.compile(r"<!--widget-(\d+)-->(\s*)")


@dataclass(frozen=True)
class Heading:
    level: int
    id: str
    text: str


def placeholder(n: int) -> str:
    """What a page's text holds where its n-th widget goes: an HTML comment on lines of its own."""
    return f"\n\n<!--widget-{n}-->\n\n"


def _math_inline(self, tokens, idx, options, env) -> str:
    return f'<span class="math inline">{tokens[idx].meta["mathml"]}</span>'


def _math_block(self, tokens, idx, options, env) -> str:
    tok = tokens[idx]
    return (
        f'<div class="math block" role="group" tabindex="0" aria-label="{tok.meta["label"]}">\n'
        f"{tok.meta['mathml']}\n</div>\n"
    )


def markdown_renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark", {"html": True, "typographer": True}).enable(["table", "replacements", "smartquotes"])
    dollarmath_plugin(md, allow_digits=False, renderer=math_renderer)
    md.add_render_rule("math_inline", _math_inline)  # the MathML made in render_markdown, where the line is known
    md.add_render_rule("math_block", _math_block)
    footnote_plugin(md)
    md.core.ruler.push("anchor", _anchors)
    return md


def _anchors(state) -> None:
    """An id on each h2 and h3 from its words, and a "#" link to it after them (mdit_py_plugins' anchors, with
    the same slugs): a repeated slug gets -1, -2, ... in time that grows with the page, however many repeat."""
    from markdown_it.token import Token
    from mdit_py_plugins.anchors.index import slugify

    taken: set[str] = set()
    tried: dict[str, int] = {}  # slug -> the next suffix worth trying: every smaller one is taken already
    for i, tok in enumerate(state.tokens):
        if tok.type != "heading_open" or tok.tag not in ("h2", "h3"):
            continue
        inline = state.tokens[i + 1]
        slug = slugify("".join(c.content for c in inline.children or () if c.type in ("text", "code_inline")))
        unique, n = slug, tried.get(slug, 1)
        if unique in taken:
            while (unique := f"{slug}-{n}") in taken:
                n += 1
            tried[slug] = n + 1
        taken.add(unique)
        tok.attrSet("id", unique)
        link = Token("link_open", "a", 1)
        link.attrSet("class", "header-anchor")
        link.attrSet("href", f"#{unique}")
        inline.children = [
            *(inline.children or ()),
            Token("text", "", 0, content=" "),
            link,
            Token("html_block", "", 0, content="#"),
            Token("link_close", "a", -1),
        ]


def _check_tokens(tokens: list[Token], widgets: Sequence[str]) -> None:
    """Raw HTML, widget placeholders, formulas, links and footnote references, token by token."""
    used = [False] * len(widgets)
    for tok in tokens:
        line = tok.map[0] + 1 if tok.map else None
        try:
            widget = _PLACEHOLDER.fullmatch(tok.content) if tok.type == "html_block" else None
            if widget:  # a placeholder block: swapped for its widget's HTML
                n, written = int(widget.group(1)), widget.group(0).strip()
                if n >= len(widgets) or used[n]:
                    raise MarkupProblem(
                        f'a widget placeholder cannot be written by hand ({written}); use {{{{ widget("name") }}}}',
                        written,
                    )
                used[n] = True
                tok.content = widgets[n] + widget.group(2)
            elif tok.type == "html_block":
                tok.content = check_html(tok.content)
            elif tok.type == "math_block":
                tok.meta["mathml"] = to_mathml(tok.content.strip(), True)
            for child in tok.children or ():
                if child.type == "html_inline":
                    child.content = check_html(child.content)
                elif child.type == "math_inline":
                    child.meta["mathml"] = to_mathml(child.content.strip(), False)
                elif child.type == "link_open":
                    href = str(child.attrGet("href") or "")
                    if problem := link_problem(href):
                        raise MarkupProblem(problem, href)
                    if leaves_site(href) and child.attrGet("rel") is None:
                        child.attrSet("rel", NOOPENER.split('"')[1])
                elif child.type == "text" and (loose := _LOOSE_FOOTNOTE.search(child.content)):
                    raise MarkupProblem(
                        f"footnote [^{loose.group(1)}] has no definition (add a line '[^{loose.group(1)}]: ...')",
                        loose.group(0),
                    )
        except MarkupProblem as exc:
            if exc.line is None:
                exc.line = line
            raise exc from None
    if not all(used):
        raise MarkupProblem(
            "a widget must stand on a line of its own, outside code and lists "
            f"(widget {used.index(False) + 1} of the page did not)",
            "widget(",
        )


def _label_boxes(tokens: list[Token]) -> tuple[list[Token], list[Heading]]:
    """Name each heading's "#" link, and make every table and display equation a named, focusable scroll box;
    also the page's h2/h3 headings.

    Both are wider than a phone; a box that scrolls but cannot take focus cannot be scrolled from the
    keyboard (WCAG 2.1.1). A box is named after the section it sits in, numbered when a section has more.
    Widgets label their own boxes."""
    from markdown_it.token import Token

    headings, section, seen, out = [], "", {}, []

    def label(kind: str) -> str:
        base = f"{kind}: {section}" if section else kind
        seen[base] = seen.get(base, 0) + 1
        return str(escape(base if seen[base] == 1 else f"{base} ({seen[base]})"))

    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag in ("h2", "h3"):
            words = "".join(c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline"))
            headings.append(Heading(int(tok.tag[1]), str(tok.attrs.get("id", "")), words.strip()))
            section = headings[-1].text
        elif tok.type == "inline" and tok.children and section:
            for child in tok.children:  # a heading's "#" link is in the text just after the heading opens
                if child.type == "link_open" and child.attrGet("class") == "header-anchor":
                    child.attrSet("aria-label", f"Link to this section: {section}")
        elif tok.type == "math_block":
            tok.meta["label"] = label("Equation")
        elif tok.type == "table_open":
            box = f'<div class="table-scroll" role="region" tabindex="0" aria-label="{label("Table")}">\n'
            out.append(Token("html_block", "", 0, content=box))
        out.append(tok)
        if tok.type == "table_close":
            out.append(Token("html_block", "", 0, content="</div>\n"))
    return out, headings


def render_markdown(md: MarkdownIt, text: str, widgets: Sequence[str] = ()) -> tuple[str, list[Heading]]:
    """The page's HTML and its h2/h3 headings; `widgets`: the HTML of each placeholder(n) in the text.
    A problem is a MarkupProblem with the line in `text` where it was found."""
    env: dict = {}
    tokens = md.parse(text, env)
    _check_tokens(tokens, widgets)
    tokens, headings = _label_boxes(tokens)
    return md.renderer.render(tokens, md.options, env), headings
