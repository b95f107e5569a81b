"""`check [DIR]`: what a reader or GitHub Pages would trip over in a built site, listed before it ships.

A page is held to what the site promises: it works from a project subpath and from file://, so
every link and asset is relative and resolves, anchors included; it loads nothing from another
origin (its CSP would block it anyway, silently); every image has alt text; and it parses as HTML
without a browser having to guess (unclosed or misnested tags, duplicate ids or attributes).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import UserError
from ..paths import BUILD
from ..render.markup import link_target, url_scheme
from ..render.reading import Element, error_text, read_page
from ..site.links import LOADING_RELS, Reference, ids_of, reference_problem, references

__all__ = ["LOADING_RELS", "Problem", "PageReport", "check_site", "read_report"]  # LOADING_RELS: site/links.py
# <script type=...> that a browser never runs: data blocks the page's scripts read.
DATA_SCRIPT_TYPES = frozenset({"application/json", "application/ld+json", "text/plain", "text/template"})
# Elements that show another document inside the page or run a plugin: the site has none of its own.
EMBEDS = frozenset({"iframe", "frame", "frameset", "object", "embed", "portal"})
# SVG elements that set another element's attribute over time: one that sets an href can make it javascript:.
SVG_ANIMATION = frozenset({"animate", "set", "animateMotion", "animateTransform"})


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


def _guess(code: str, data) -> str:
    """One of html5lib's parse errors, where the browser has to guess, in the words of this check."""
    name = data.get("name", "")
    if code == "unexpected-end-tag":
        extra = " (a block such as <div> inside a <p> ends the paragraph early)" if name == "p" else ""
        return f"</{name}> without an open <{name}>{extra}"
    if code.startswith("adoption-agency"):
        return f"</{name}> closes elements opened inside <{name}> that are still open (misnested tags)"
    if code == "end-tag-too-early":
        return f"</{name}> does not match the element open here (a stray end tag, or misnested or unclosed tags)"
    if code in ("expected-closing-tag-but-got-eof", "eof-in-element"):
        return f"<{name}> is never closed"
    if code == "duplicate-attribute":
        return "a tag has the same attribute twice (the browser keeps the first)"
    if code == "non-void-element-with-trailing-solidus":
        return f"<{name} /> is not a void element: the browser leaves it open"
    return f"the browser has to guess: {error_text(code, data)}"


@dataclass
class PageReport:
    """What `check` learns from one page: its ids, its references and its problems (line, message)."""

    ids: dict[str, int] = field(default_factory=dict)
    refs: list[Reference] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)


def _inline_allowed(csp: str, kind: str, text: str) -> bool:
    """An inline <script> or <style> runs only if the page's CSP lists its sha256 (as the 404 page does)."""
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    for part in csp.split(";"):
        words = part.split()
        if words and words[0].lower() == f"{kind}-src":
            return f"'sha256-{digest}'" in words[1:]
    return False


def read_report(text: str) -> PageReport:
    """One page as a browser reads it (html5lib), held to what the site promises (module docstring)."""
    report = PageReport()
    try:
        reading = read_page(text)
    except ValueError as exc:
        report.problems.append((1, f"not read further: {exc}"))
        return report
    report.problems += [(line, _guess(code, data)) for line, code, data in reading.errors if "doctype" not in code]
    if not reading.doctype:
        report.problems.append((1, "no <!doctype html>: the browser renders in quirks mode"))
    report.ids = ids_of(reading.elements)
    seen: dict[str, int] = {}
    csp = ""  # the page's Content-Security-Policy meta, which decides what inline code may run
    for el in reading.elements:
        problems = _element_problems(el, csp)
        if el.tag == "meta" and el.attrs.get("http-equiv", "").lower() == "content-security-policy":
            csp = el.attrs.get("content", "")
        if "id" in el.attrs:
            if el.attrs["id"] in seen:
                problems.append(f"duplicate id {el.attrs['id']!r} (first on line {seen[el.attrs['id']]})")
            seen.setdefault(el.attrs["id"], el.line)
        report.problems += [(el.line, message) for message in problems]
        report.refs += references(el)
    return report


def _element_problems(el: Element, csp: str) -> list[str]:
    a, tag, out = el.attrs, el.tag, []
    if tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
        out.append('<meta http-equiv="refresh"> moves the reader elsewhere without asking; use a link')
    if tag == "base":
        out.append("<base> changes where every relative link points (and the CSP forbids it)")
    if tag in EMBEDS and el.space == "html":
        out.append(f"<{tag}> shows another document inside the page; the site shows only its own pages")
    if el.space == "svg" and tag == "script":
        out.append("a <script> inside SVG runs code in the page; put scripts in a file under assets/")
    if el.space == "svg" and tag in SVG_ANIMATION and "href" in a.get("attributeName", "").lower():
        out.append(f"<{tag} attributeName={a['attributeName']!r}> changes an address while the page runs")
    for name in sorted(n for n in a if n.lower().startswith("on") and len(n) > 2):
        out.append(f"<{tag} {name}=...>: inline event handlers are blocked by the CSP; use a script file")
    if "style" in a:
        out.append(f"<{tag} style=...>: inline styles are blocked by the CSP; use a class in a stylesheet")
    runs = el.space == "html" and tag == "script" and "src" not in a
    runs = runs and a.get("type", "").lower() not in DATA_SCRIPT_TYPES
    if (tag == "style" or runs) and not _inline_allowed(csp, tag, el.text):
        out.append(
            f"an inline <{tag}> is blocked by the CSP (its sha256 is not in {tag}-src); put it in a file under assets/"
        )
    if tag == "img" and el.space == "html":
        hidden = a.get("aria-hidden") == "true" or a.get("role") in ("presentation", "none")
        if not a.get("alt", "").strip() and not hidden:
            out.append(f"<img src={a.get('src', '')!r}> has no alt text")
    return out


class Site:
    def __init__(self, root: Path):
        self.root = root
        self.files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        self.pages: dict[str, PageReport] = {}
        self.problems: list[Problem] = []

    def add(self, file: str, line: int, message: str) -> None:
        self.problems.append(Problem(file, line, message))

    def parse_pages(self) -> None:
        for rel in sorted(f for f in self.files if f.endswith(".html")):
            try:
                report = read_report((self.root / rel).read_text(encoding="utf-8"))
            except UnicodeDecodeError as exc:
                self.add(rel, 0, f"not UTF-8: {exc.reason}")
                continue
            self.pages[rel] = report
            for line, message in report.problems:
                self.add(rel, line, message)

    def check_references(self) -> None:
        """Every link and asset of every page, by the rules the build applies too (site/links.py)."""
        ids = {rel: report.ids for rel, report in self.pages.items()}
        for rel, report in self.pages.items():
            for ref in report.refs:
                problem = reference_problem(rel, ref, self.files, ids)
                if problem:
                    self.add(rel, ref.line, f"<{ref.tag} {ref.attr}={ref.url.strip()!r}>: {problem}")

    def check_stylesheets(self) -> None:
        for rel in sorted(f for f in self.files if f.endswith(".css")):
            text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
            for m in re.finditer(r"url\(\s*(['\"]?)([^'\")]+)\1\s*\)|@import\s+(['\"])([^'\"]+)\3", text):
                url = (m.group(2) or m.group(4)).strip()
                line = text.count("\n", 0, m.start()) + 1
                if url.startswith("data:") or url.startswith("#"):
                    continue
                if url_scheme(url) or url.startswith("/"):
                    self.add(rel, line, f"url({url!r}) loads from another origin or an absolute path")
                    continue
                target = link_target(rel, urlsplit(url).path, self.files)
                if target is None or target not in self.files:
                    self.add(rel, line, f"url({url!r}): no such file {target or url}")

    def check_figures(self) -> None:
        for rel in sorted(f for f in self.files if f.endswith(".svg")):
            try:
                tree = ET.parse(self.root / rel)
            except ET.ParseError as exc:
                self.add(rel, exc.position[0], f"not well-formed SVG: {exc}")
                continue
            for el in tree.iter():
                tag = str(el.tag).rsplit("}", 1)[-1]
                if tag == "script":
                    self.add(rel, 0, "a <script> in an SVG file runs when the file is opened; SVG figures hold no code")
                if tag == "foreignObject":
                    self.add(rel, 0, "a <foreignObject> puts HTML inside an SVG file; SVG figures hold drawings only")
                for name, value in el.attrib.items():
                    name = name.rsplit("}", 1)[-1]
                    if name.lower().startswith("on"):
                        self.add(rel, 0, f"<{tag} {name}=...>: an event handler in an SVG file runs code")
                    elif name == "href" and url_scheme(value) == "javascript":
                        self.add(rel, 0, f"<{tag} href={value[:40]!r}> runs code when followed")
                    elif name == "href" and url_scheme(value) not in ("", "data"):
                        self.add(rel, 0, f"the figure loads {value!r} from another origin")
                    elif name == "attributeName" and "href" in value.lower():
                        self.add(rel, 0, f"<{tag} attributeName={value!r}> changes an address while the file is open")
        path = self.root / "figures" / "manifest.json"
        if not path.exists():
            return
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))["figures"]
        except (ValueError, KeyError, TypeError) as exc:
            self.add("figures/manifest.json", 0, f"unreadable manifest: {exc}")
            return
        for name, entry in entries.items():
            if not str(entry.get("alt", "")).strip():
                self.add("figures/manifest.json", 0, f"figure {name!r} has no alt text")
        # Every figure's light drawing, then the dark twins.
        variants = list(entries.items())
        variants += [(name, entry["dark"]) for name, entry in entries.items() if isinstance(entry.get("dark"), dict)]
        listed: dict[str, str] = {}  # file -> figure name
        for name, variant in variants:
            rel = f"figures/{variant.get('file', '')}"
            listed[rel] = name
            if rel not in self.files:
                self.add("figures/manifest.json", 0, f"figure {name!r}: no such file {rel}")
            elif hashlib.sha256((self.root / rel).read_bytes()).hexdigest() != variant.get("sha256"):
                self.add("figures/manifest.json", 0, f"figure {name!r}: {rel} does not match its sha256")
        self.check_figures_shown(listed)

    def check_figures_shown(self, listed: dict[str, str]) -> None:
        """Every figure the manifest lists is shown on some page, and every figure a page shows is listed."""
        shown: set[str] = set()
        for rel, parser in sorted(self.pages.items()):
            for ref in parser.refs:
                url = ref.url.strip()
                if not ref.loads or url_scheme(url):
                    continue
                target = link_target(rel, urlsplit(url).path, self.files)
                if target is None or not (target.startswith("figures/") and target.endswith(".svg")):
                    continue
                shown.add(target)
                if target not in listed:
                    self.add(rel, ref.line, f"shows {target}, a figure figures/manifest.json does not list")
        for file, name in sorted(listed.items()):
            if file not in shown:
                self.add("figures/manifest.json", 0, f"figure {name!r} is drawn but no page shows it")


def check_site(root: Path) -> list[Problem]:
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder (build the site first: python -m generator build)")
    site = Site(root)
    if not any(f.endswith(".html") for f in site.files):
        site.add(".", 0, "no HTML pages")
    site.parse_pages()
    site.check_references()
    site.check_stylesheets()
    site.check_figures()
    return sorted(set(site.problems))


def add_arguments(p) -> None:
    p.add_argument("dir", nargs="?", default=str(BUILD), help="built site to check (default: %(default)s)")


def run(args) -> int:
    problems = check_site(Path(args.dir))
    for problem in problems:
        print(f"{args.dir.rstrip('/')}/{problem}")
    if problems:
        print(f"check: {len(problems)} problem{'s' if len(problems) != 1 else ''} in {args.dir}")
        return 1
    print(f"check: {args.dir} ok")
    return 0
