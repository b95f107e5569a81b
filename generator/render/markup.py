"""Raw HTML in a page's Markdown: the allowlist of tags and attributes, and the one rule for addresses.

An address is judged as a browser reads it: character references decoded, C0 controls and spaces cut
from both ends, tabs and newlines removed from within, the scheme compared without regard to case.
So `java&#x09;script:`, `JaVaScRiPt:` and `&#106;avascript:` are all `javascript:`. A link may be
relative, `http:`, `https:` or `mailto:`; nothing else. `check` (commands/check.py) applies the same
rule to every link in a built site.

This module imports nothing heavy: `check` uses it without Markdown or Jinja.
"""

from __future__ import annotations

import html
import posixpath
import re
from types import MappingProxyType
from urllib.parse import unquote

from ..errors import UserError
from ..model.readers import shown

LINK_SCHEMES = frozenset({"http", "https", "mailto"})  # and relative addresses
_SCHEME = re.compile(r"([a-z][a-z0-9+.-]*):")
_ENDS = "".join(map(chr, range(0x21)))  # C0 controls and the space: a browser cuts them from both ends
_WITHIN = MappingProxyType(str.maketrans("", "", "\t\n\r"))  # a browser drops these anywhere in an address
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_url(value: str) -> str:
    """The address a browser follows for an attribute value (entities decoded, ends trimmed, tabs and
    newlines removed). Decoding a value an HTML parser has decoded already only ever finds more schemes."""
    return html.unescape(value).strip(_ENDS).translate(_WITHIN)


def url_scheme(value: str) -> str:
    """The scheme of an address in lower case ("javascript"), "//" for one relative to the scheme
    (another origin), "" for a relative address; "control" when a control character is left in it."""
    url = clean_url(value)
    if _CONTROL.search(url):
        return "control"
    if m := _SCHEME.match(url.lower()):
        return m.group(1)
    return "//" if url[:2] in ("//", "\\\\", "/\\", "\\/") else ""


def link_problem(value: str) -> str | None:
    """Why a reader must not be sent to this address, or None: only relative, http:, https: and mailto: links pass."""
    scheme = url_scheme(value)
    if scheme in ("", "//") or scheme in LINK_SCHEMES:
        return None
    if scheme == "control":
        return "a link with a control character in its address is not allowed in a page"
    return f"a link to {scheme}: is not allowed in a page (only relative, http:, https: and mailto: links)"


def link_target(page: str, path: str, files) -> str | None:
    """The file of the site (`files`) a relative path names from `page`, a folder meaning its index.html;
    None when the path climbs out of the site."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(path)))
    if joined == ".." or joined.startswith("../"):
        return None
    if joined == ".":
        return "index.html"
    if joined not in files and f"{joined}/index.html" in files:
        return f"{joined}/index.html"
    return joined


def leaves_site(value: str) -> bool:
    """A link to another site (http:, https: or //), which gets rel="noopener noreferrer"."""
    return url_scheme(value) in ("http", "https", "//")


# Raw HTML in a page's Markdown: only these harmless tags and attributes. Nothing that loads, runs or
# styles (script, style, link, meta, iframe, img, on*=, style=, src): links and pictures are written in
# Markdown or come from widgets, so the CSP and `check` have nothing to be surprised by.
RAW_HTML_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "data",
        "dd",
        "del",
        "details",
        "dfn",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h2",
        "h3",
        "h4",
        "hr",
        "i",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "time",
        "tr",
        "u",
        "ul",
        "var",
        "wbr",
    }
)
RAW_HTML_ATTRIBUTES = frozenset(
    {
        "aria-describedby",
        "aria-hidden",
        "aria-label",
        "class",
        "colspan",
        "datetime",
        "dir",
        "hidden",
        "href",
        "hreflang",
        "id",
        "lang",
        "open",
        "rel",
        "role",
        "rowspan",
        "scope",
        "title",
        "value",
    }
)
NOOPENER = ' rel="noopener noreferrer"'


class MarkupProblem(UserError):
    """Something in a page's text that cannot go on the page. `needle` finds its line in the page's source;
    `line` is the line in the text after Jinja, when known (the page's own line is preferred)."""

    def __init__(self, message: str, needle: str = "", line: int | None = None):
        super().__init__(message)
        self.needle, self.line = needle, line


class RawHtmlError(MarkupProblem):
    """Raw HTML outside the allowlist; `needle` is the offending tag."""


def _refused(snippet: str, why: str, hint: bool = True) -> RawHtmlError:
    """The error for a piece of raw HTML; `hint`: whether to list the tags that are allowed."""
    allowed = "; use Markdown, a widget, or one of: " + ", ".join(sorted(RAW_HTML_TAGS)) if hint else ""
    return RawHtmlError(f"{why} ({shown(snippet)}){allowed}", snippet)


def _check_token(token, snippet: str) -> None:
    """Refuse one token of raw HTML that is outside the allowlist (`snippet`: its text)."""
    if token.kind == "start":
        if token.name not in RAW_HTML_TAGS:
            raise _refused(snippet, f"raw HTML <{token.name}> is not allowed in a page")
        for name, value in token.attrs:
            if name not in RAW_HTML_ATTRIBUTES or (name == "href" and token.name != "a"):
                raise _refused(snippet, f"the attribute {shown(name)} on raw <{token.name}> is not allowed in a page")
            if name == "href" and link_problem(value):
                raise _refused(snippet, link_problem(value), hint=False)
    elif token.kind == "end" and token.name not in RAW_HTML_TAGS:
        raise _refused(snippet, f"raw HTML </{token.name}> is not allowed in a page")
    elif token.kind == "comment" and token.name.strip().startswith("widget-"):
        why = 'a widget placeholder cannot be written by hand; use {{ widget("name") }}'
        raise _refused(snippet, why, hint=False)
    elif token.kind == "comment" and not snippet.startswith("<!--"):
        raise _refused(snippet, "a raw HTML declaration, CDATA or processing instruction is not allowed in a page")
    elif token.kind == "doctype":
        raise _refused(snippet, "a raw HTML declaration is not allowed in a page")


def check_html(text: str) -> str:
    """Refuse raw HTML beyond RAW_HTML_TAGS/RAW_HTML_ATTRIBUTES (a RawHtmlError naming the first offending tag),
    read as a browser reads it (reading.raw_tokens: comments end where a browser ends them, and a piece that
    leaves a tag, attribute or comment open is refused, since it would swallow the text after it); return the
    text with rel="noopener noreferrer" on each link that leaves the site."""
    from .reading import raw_tokens

    try:
        tokens, closed = raw_tokens(text)
    except ValueError as exc:
        raise _refused(text.strip()[:60], f"raw HTML where {exc} is not allowed in a page", hint=False) from None
    for token in tokens:
        _check_token(token, text[token.start : token.end].strip())
    if not closed:
        raise _refused(
            text.strip()[:60],
            "raw HTML that leaves a tag, an attribute value or a comment open is not allowed in a page "
            "(a browser would read the text after it as part of it)",
            hint=False,
        )
    out, done = [], 0
    for token in tokens:
        attrs = dict(token.attrs)
        if token.kind == "start" and token.name == "a" and "rel" not in attrs and leaves_site(attrs.get("href", "")):
            at = token.end - (2 if token.self_closing else 1)
            out += [text[done:at], NOOPENER]
            done = at
    return "".join(out) + text[done:] if out else text
