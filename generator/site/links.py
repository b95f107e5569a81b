"""The one link check: every link and asset a built page refers to, read as a browser reads the page
(render/reading.py, html5lib), judged by one set of rules. The build runs it on its pages before writing them
(publish.strict_check) and `check` (commands/check.py) on a built folder, so the two cannot disagree.

The rules: an address is read as a browser reads it (markup.clean_url); a link may be relative, http:,
https: or mailto:; nothing a page loads may come from another origin (data: images aside); a relative
address must stay inside the site and name a file it has, and an anchor an id on that page; no address
is absolute (it would break under a project subpath and on file://); a link that opens a new tab says
rel="noopener".
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..render.markup import clean_url, link_problem, link_target, url_scheme
from ..render.reading import Element, read_page

# rel values that make the browser contact the address by itself (preconnect and dns-prefetch open a
# connection or a lookup without fetching anything, which still tells that host the page was opened).
LOADING_RELS = frozenset(
    {
        "stylesheet",
        "icon",
        "preload",
        "modulepreload",
        "prefetch",
        "manifest",
        "apple-touch-icon",
        "preconnect",
        "dns-prefetch",
        "prerender",
    }
)
_LOADS_FROM = frozenset(
    {"img", "script", "iframe", "embed", "source", "track", "audio", "video", "input", "object", "frame"}
)


@dataclass(frozen=True)
class Reference:
    line: int
    tag: str
    attr: str
    url: str
    loads: bool  # fetched by the page itself (script, stylesheet, image), not followed by the reader
    blank_without_noopener: bool = False


def references(el: Element) -> Iterator[Reference]:
    """The addresses one element refers to, as a browser would use them."""
    a = el.attrs
    rels = set(a.get("rel", "").lower().split())
    blank = a.get("target") == "_blank" and not rels & {"noopener", "noreferrer"}
    found: list[tuple[str, str, bool]] = []
    if el.tag in ("a", "area"):
        found += [(attr, a[attr], False) for attr in ("href", "xlink:href") if attr in a]
    if el.tag == "link" and "href" in a:
        found.append(("href", a["href"], bool(rels & LOADING_RELS) or not rels))
    if el.tag in _LOADS_FROM:
        found += [(attr, a[attr], True) for attr in ("src", "poster", "data") if attr in a]
    if "srcset" in a:
        found += [("srcset", c.split()[0], True) for c in a["srcset"].split(",") if c.strip()]
    if el.tag in ("use", "image", "feImage", "feimage", "script") and el.space == "svg":
        found += [(attr, a[attr], True) for attr in ("href", "xlink:href") if attr in a]
    for attr, url, loads in found:
        yield Reference(el.line, el.tag, attr, url, loads, blank and attr == "href")


def reference_problem(
    page: str, ref: Reference, files: Collection[str], ids: Mapping[str, Collection[str]]
) -> str | None:
    """What is wrong with one reference on `page` (a path in the site), or None. `files`: the site's files;
    `ids`: each page's ids."""
    url = clean_url(ref.url)  # as a browser reads it: entities decoded, tabs and newlines dropped
    if not url:
        return "empty address"
    if ref.blank_without_noopener:
        return 'opens a new tab without rel="noopener"'
    scheme = url_scheme(url)
    if scheme:
        if scheme == "data" and ref.tag in ("img", "source", "link") and ref.loads:
            return None  # inline bytes, not a request (e.g. href="data:," stops the favicon fetch)
        if ref.loads:
            return "loads from another origin; only relative paths to files in the site are allowed"
        return link_problem(url)
    if url.startswith("/"):
        return "is an absolute path: it breaks under a project subpath and on file://; make it relative"
    parts = urlsplit(url)
    target = page if not parts.path else link_target(page, parts.path, files)
    if target is None:
        return "points outside the site"
    if target not in files:
        return f"no such file {target}"
    fragment = unquote(parts.fragment)
    if fragment and fragment != "top" and target in ids and fragment not in ids[target]:
        return f"{target} has no element with id {fragment!r}"
    return None


def broken_links(files: Mapping[str, bytes]) -> list[tuple[str, str, str]]:
    """(page, address, why) for every reference of every page in `files` (a site's files by path) that
    breaks a rule above; a page that cannot be read in linear time is one entry with no address."""
    readings, problems = {}, []
    for rel in sorted(f for f in files if f.endswith(".html")):
        try:
            readings[rel] = read_page(files[rel].decode("utf-8", errors="replace"))
        except ValueError as exc:
            problems.append((rel, "", f"its HTML cannot be read: {exc}"))
    ids = {rel: ids_of(reading.elements) for rel, reading in readings.items()}
    for rel, reading in readings.items():
        for el in reading.elements:
            for ref in references(el):
                why = reference_problem(rel, ref, files, ids)
                if why:
                    problems.append((rel, ref.url, why))
    return problems


def ids_of(elements: tuple[Element, ...]) -> dict[str, int]:
    """Every id on a page (and each <a name>), with the line of its first use."""
    ids: dict[str, int] = {}
    for el in elements:
        if "id" in el.attrs:
            ids.setdefault(el.attrs["id"], el.line)
        if el.tag == "a" and "name" in el.attrs:
            ids.setdefault(el.attrs["name"], el.line)
    return ids
