"""HTML as a browser reads it: html5lib, which follows the WHATWG parsing algorithm, for every page we publish
or check.

Two readings:
- `read_page(text)`: a whole page, parsed the way a browser builds its document (comments ended where a
  browser ends them, script and style text read as text, SVG and MathML as foreign content), as a list of
  elements in document order, each with the line its start tag ends on, and the parse errors a browser
  would recover from by guessing.
- `raw_tokens(text)`: a piece of raw HTML in a page's Markdown, tokenized as a browser tokenizes it where it
  stands (the allowlist in markup.py admits only elements that keep the tokenizer in its data state), with
  whether the piece ends where it seems to: outside any tag, attribute, comment or declaration.

html5lib's tree construction takes time that grows with the page times how deep elements nest, and its
tokenizer time that grows with the square of a tag's attributes; HTML is refused before it is read if its
elements nest deeper than MAX_DEPTH, its nesting work passes MAX_WORK or a tag has more than MAX_ATTRIBUTES
(too_costly: a linear estimate from the tags alone), so hostile input is refused fast instead of read slowly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from xml.etree import ElementTree

import html5lib
from html5lib import constants

MAX_DEPTH = 512  # Chromium's parser stops nesting elements at 512 and reads deeper ones differently
MAX_WORK = 5_000_000  # the sum of the nesting depth at each start tag: tree building costs about this much
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "param"}
)
MAX_ATTRIBUTES = 200  # per tag
# A tag from "<" to the ">" that ends it, stepping over quoted values whole, which (as in a browser) start only
# after "=" (possessive quantifiers: linear time); then its attributes, counted with the values taken out.
_TAG = re.compile(r"""<(/?)([A-Za-z][^\s/>]*+)(?:[^>"'=]++|=\s*+"[^"]*+"|=\s*+'[^']*+'|[="'])*+>?""")
_QUOTED = re.compile(r"""=\s*+(?:"[^"]*+"|'[^']*+')""")
_ATTRIBUTE = re.compile(r"[\s/]++[^\s/>]")
_HTML = constants.namespaces["html"]
NAMESPACES = MappingProxyType(
    {_HTML: "html", constants.namespaces["svg"]: "svg", constants.namespaces["mathml"]: "math"}
)
_SENTINEL = "raw html ends here"


@dataclass(frozen=True)
class Element:
    tag: str  # the local name: "a", "script", "svg", "foreignObject"
    space: str  # "html", "svg" or "math"
    attrs: Mapping[str, str]  # names as a browser reports them ("href", "xlink:href"); values decoded
    line: int
    text: str = ""  # the text of a <script> or <style>


@dataclass(frozen=True)
class Reading:
    elements: tuple[Element, ...]  # in document order
    errors: tuple[tuple[int, str, Mapping], ...]  # (line, html5lib's code, its details): where the browser guesses
    doctype: bool


def too_costly(text: str) -> str | None:
    """Why html5lib would take more than linear time over `text`, or None: elements nested too deep, or a tag
    with too many attributes (html5lib compares each attribute with those before it). An estimate from the
    tags alone, in linear time, that errs towards refusing."""
    depth, work, open_count = 0, 0, {}
    for m in _TAG.finditer(text):
        tag = m.group(0)
        if len(_ATTRIBUTE.findall(_QUOTED.sub("=", tag))) > MAX_ATTRIBUTES:
            return f"a tag has more than {MAX_ATTRIBUTES} attributes ({tag[:40]!r}...)"
        name = m.group(2).lower()
        if m.group(1):
            if open_count.get(name):
                open_count[name] -= 1
                depth -= 1
        elif name not in VOID and not tag.endswith("/>"):
            open_count[name] = open_count.get(name, 0) + 1
            depth += 1
            work += depth
            if depth > MAX_DEPTH:
                return f"elements nest more than {MAX_DEPTH} deep (a browser reads deeper nesting differently)"
            if work > MAX_WORK:
                return "elements nest too deeply too often to be read in a reasonable time"
    return None


def _builder():
    etree = html5lib.getTreeBuilder("etree", ElementTree, fullTree=True)  # the whole document, doctype included

    class WithLines(etree):
        """html5lib's ElementTree builder, noting the line each element's start tag ends on."""

        where = staticmethod(lambda: 0)

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.lines = {}

        def elementClass(self, name, namespace=None):  # noqa: N802 (html5lib's name)
            node = super().elementClass(name, namespace)
            self.lines[node._element] = self.where()
            return node

    return WithLines


# An attribute in a foreign namespace ("{http://www.w3.org/1999/xlink}href") by the name a browser reports
# ("xlink:href"), from html5lib's own table of the attributes it adjusts in SVG and MathML.
FOREIGN_ATTRIBUTES = MappingProxyType(
    {f"{{{ns}}}{local}": name for name, (_, local, ns) in constants.adjustForeignAttributes.items()}
)


def error_text(code: str, data: Mapping | None) -> str:
    """html5lib's words for one of its parse errors."""
    try:
        return constants.E.get(code, code) % (data or {})
    except (KeyError, TypeError, ValueError):
        return code


def read_page(text: str) -> Reading:
    """A whole page as a browser reads it (module docstring). Raises ValueError when it nests too deeply."""
    problem = too_costly(text)
    if problem:
        raise ValueError(problem)
    parser = html5lib.HTMLParser(tree=_builder())
    parser.tree.where = lambda: parser.tokenizer.stream.position()[0]
    document = parser.parse(text)
    lines = parser.tree.lines
    elements, doctype = [], False
    for node in document.iter():  # document order
        if node.tag == "<!DOCTYPE>":
            doctype = doctype or (node.text or "").lower() == "html"
        elif isinstance(node.tag, str) and node.tag.startswith("{"):  # an element (not a comment or the root)
            namespace, _, tag = node.tag[1:].partition("}")
            attrs = {FOREIGN_ATTRIBUTES.get(name, name): value for name, value in node.attrib.items()}
            inline = (node.text or "") + "".join(child.tail or "" for child in node)
            text_of = inline if tag in ("script", "style") else ""
            space = NAMESPACES.get(namespace, "other")
            elements.append(Element(tag, space, MappingProxyType(attrs), lines.get(node, 0), text_of))
    errors = tuple((line, code, MappingProxyType(dict(data or {}))) for (line, _), code, data in parser.errors)
    return Reading(tuple(elements), errors, doctype)


@dataclass(frozen=True)
class Token:
    kind: str  # "start", "end", "comment", "doctype", "characters"
    name: str  # the tag's name, or the comment's or doctype's text
    attrs: tuple[tuple[str, str], ...]  # in the order written; a repeated name is dropped, as a browser does
    self_closing: bool
    start: int  # where the token's text starts in the piece, and ends (just after it)
    end: int


def raw_tokens(text: str) -> tuple[list[Token], bool]:
    """The tokens of a piece of raw HTML in the tokenizer's data state, and whether the piece ends in that state
    (a tag, attribute, comment or declaration left open would swallow the page's text after it). Raises
    ValueError when reading it would take more than linear time (too_costly)."""
    from html5lib._tokenizer import HTMLTokenizer  # the WHATWG tokenizer (html5lib's module; pinned in the lock)

    problem = too_costly(text)
    if problem:
        raise ValueError(problem)
    tokenizer = HTMLTokenizer(f"{text}<!--{_SENTINEL}-->")
    kinds = {"StartTag": "start", "EmptyTag": "start", "EndTag": "end", "Comment": "comment", "Doctype": "doctype"}
    kinds |= {"Characters": "characters", "SpaceCharacters": "characters"}
    types = {value: key for key, value in constants.tokenTypes.items()}
    starts = [0] + [m.end() for m in re.finditer("\n", text)]  # where each line begins, as html5lib counts
    out, done = [], 0
    for tok in tokenizer:
        kind = kinds.get(types.get(tok["type"], ""))
        if kind is None:
            continue  # a parse error: the tokens say what the browser made of it
        attrs = tuple(tok["data"].items()) if kind == "start" else ()
        name = tok.get("name", "") if kind in ("start", "end", "doctype") else tok.get("data", "")
        line, column = tokenizer.stream.position()
        end = min(starts[line - 1] + column, len(text)) if line <= len(starts) else len(text)
        out.append(Token(kind, name, attrs, bool(tok.get("selfClosing")), done, end))
        done = end
    closed = bool(out) and out[-1].kind == "comment" and out[-1].name == _SENTINEL
    return out[:-1] if closed else out, closed
