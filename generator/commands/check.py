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
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from types import MappingProxyType
from urllib.parse import unquote, urlsplit

from ..errors import UserError
from ..paths import BUILD
from ..render.markup import clean_url, link_problem, link_target, url_scheme

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
# End tags HTML lets an author leave out; the next sibling or the parent's end closes them.
OPTIONAL_END = frozenset(
    {
        "p",
        "li",
        "dt",
        "dd",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "option",
        "optgroup",
        "colgroup",
        "caption",
        "rb",
        "rt",
        "rtc",
        "rp",
        "html",
        "head",
        "body",
    }
)
CLOSED_BY = MappingProxyType(
    {
        "li": {"li"},
        "dt": {"dt", "dd"},
        "dd": {"dt", "dd"},
        "tr": {"tr"},
        "td": {"td", "th", "tr"},
        "th": {"td", "th", "tr"},
        "option": {"option", "optgroup"},
        "optgroup": {"optgroup"},
        "thead": {"tbody", "tfoot"},
        "tbody": {"tbody", "tfoot"},
    }
)
# A <p> cannot hold these: the browser ends the paragraph early and the later </p> makes an empty one.
ENDS_P = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "details",
        "dialog",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "ul",
    }
)
FOREIGN = frozenset({"svg", "math"})
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
# <script type=...> that a browser never runs: data blocks the page's scripts read.
DATA_SCRIPT_TYPES = frozenset({"application/json", "application/ld+json", "text/plain", "text/template"})


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


@dataclass(frozen=True)
class Reference:
    line: int
    tag: str
    attr: str
    url: str
    loads: bool  # fetched by the page itself (script, stylesheet, image), not followed by the reader
    blank_without_noopener: bool = False


class PageParser(HTMLParser):
    """Collects ids, references and structural problems of one page; html.parser alone forgives everything."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, int]] = []
        self.ids: dict[str, int] = {}
        self.refs: list[Reference] = []
        self.problems: list[tuple[int, str]] = []
        self.doctype = False
        self.foreign = 0
        self.csp = ""  # the page's Content-Security-Policy meta, which decides what inline code may run
        self.inline: tuple[str, int, list[str]] | None = None  # an open inline <script> or <style>: tag, line, text

    def problem(self, message: str) -> None:
        self.problems.append((self.getpos()[0], message))

    def handle_data(self, data: str) -> None:
        if self.inline is not None:
            self.inline[2].append(data)

    def _inline_allowed(self, kind: str, text: str) -> bool:
        """An inline <script> or <style> runs only if the page's CSP lists its sha256 (as the 404 page does)."""
        digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
        for part in self.csp.split(";"):
            words = part.split()
            if words and words[0].lower() == f"{kind}-src":
                return f"'sha256-{digest}'" in words[1:]
        return False

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype"):
            self.doctype = True

    def handle_starttag(self, tag: str, attrs) -> None:
        self._element(tag, attrs)
        if tag in VOID and not self.foreign:
            return
        if not self.foreign:
            if tag in ENDS_P and any(t == "p" for t, _ in self.stack):
                if self.stack[-1][0] == "p" and tag == "p":
                    self.stack.pop()
                else:
                    opened = next(line for t, line in reversed(self.stack) if t == "p")
                    self.problem(
                        f"<{tag}> inside an open <p> (opened on line {opened}): the browser ends the paragraph early"
                    )
            top = self.stack[-1][0] if self.stack else None
            if top in CLOSED_BY and tag in CLOSED_BY[top]:
                self.stack.pop()
        if tag in FOREIGN:
            self.foreign += 1
        self.stack.append((tag, self.getpos()[0]))

    def handle_startendtag(self, tag: str, attrs) -> None:
        self._element(tag, attrs)
        if not self.foreign and tag not in VOID:
            self.problem(f"<{tag} /> is not a void element: the browser leaves it open")
            self.stack.append((tag, self.getpos()[0]))

    def handle_endtag(self, tag: str) -> None:
        if self.inline is not None and tag == self.inline[0]:
            kind, line, parts = self.inline
            self.inline = None
            if not self._inline_allowed(kind, "".join(parts)):
                self.problems.append(
                    (
                        line,
                        f"an inline <{kind}> is blocked by the CSP (its sha256 is not in "
                        f"{kind}-src); put it in a file under assets/",
                    )
                )
        if tag in VOID and not self.foreign:
            self.problem(f"</{tag}>: {tag} is a void element and has no end tag")
            return
        if not any(t == tag for t, _ in self.stack):
            self.problem(f"</{tag}> without an open <{tag}>")
            return
        while self.stack:
            open_tag, line = self.stack.pop()
            if open_tag in FOREIGN:
                self.foreign -= 1
            if open_tag == tag:
                break
            if open_tag not in OPTIONAL_END or self.foreign:
                self.problem(f"<{open_tag}> opened on line {line} is not closed before </{tag}> (misnested tags)")

    def close(self) -> None:
        super().close()
        for tag, line in self.stack:
            if tag not in OPTIONAL_END:
                self.problems.append((line, f"<{tag}> is never closed"))
        if not self.doctype:
            self.problems.append((1, "no <!doctype html>: the browser renders in quirks mode"))

    def _element(self, tag: str, attrs) -> None:
        names = [name for name, _ in attrs]
        for name in sorted({n for n in names if names.count(n) > 1}):
            self.problem(f"<{tag}> has the attribute {name!r} twice")
        a = {name: (value or "") for name, value in attrs}
        line = self.getpos()[0]
        if tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy":
            self.csp = a.get("content", "")
        if tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            self.problem('<meta http-equiv="refresh"> moves the reader elsewhere without asking; use a link')
        if tag == "base":
            self.problem("<base> changes where every relative link points (and the CSP forbids it)")
        for name in sorted(n for n in a if n.startswith("on") and len(n) > 2):
            self.problem(f"<{tag} {name}=...>: inline event handlers are blocked by the CSP; use a script file")
        if "style" in a:
            self.problem(f"<{tag} style=...>: inline styles are blocked by the CSP; use a class in a stylesheet")
        runs = tag == "script" and "src" not in a and a.get("type", "").lower() not in DATA_SCRIPT_TYPES
        if tag == "style" or runs:
            self.inline = (tag, line, [])
        if "id" in a:
            if a["id"] in self.ids:
                self.problem(f"duplicate id {a['id']!r} (first on line {self.ids[a['id']]})")
            else:
                self.ids[a["id"]] = line
        if tag == "a" and "name" in a:
            self.ids.setdefault(a["name"], line)
        if tag == "img" and not self.foreign:
            hidden = a.get("aria-hidden") == "true" or a.get("role") in ("presentation", "none")
            if not a.get("alt", "").strip() and not hidden:
                self.problem(f"<img src={a.get('src', '')!r}> has no alt text")
        rels = set(a.get("rel", "").lower().split())
        blank = a.get("target") == "_blank" and not rels & {"noopener", "noreferrer"}
        for attr, url, loads in _urls(tag, a, rels):
            self.refs.append(Reference(line, tag, attr, url, loads, blank and attr == "href"))


def _urls(tag: str, a: dict, rels: set):
    if tag in ("a", "area") and "href" in a:
        yield "href", a["href"], False
    if tag == "link" and "href" in a:
        yield "href", a["href"], bool(rels & LOADING_RELS) or not rels
    for attr in ("src", "poster", "data"):
        if attr in a and tag in (
            "img",
            "script",
            "iframe",
            "embed",
            "source",
            "track",
            "audio",
            "video",
            "input",
            "object",
            "frame",
        ):
            yield attr, a[attr], True
    if "srcset" in a:
        for candidate in a["srcset"].split(","):
            if candidate.strip():
                yield "srcset", candidate.split()[0], True
    if tag in ("use", "image", "feimage"):
        for attr in ("href", "xlink:href"):
            if attr in a:
                yield attr, a[attr], True


class Site:
    def __init__(self, root: Path):
        self.root = root
        self.files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        self.pages: dict[str, PageParser] = {}
        self.problems: list[Problem] = []

    def add(self, file: str, line: int, message: str) -> None:
        self.problems.append(Problem(file, line, message))

    def parse_pages(self) -> None:
        for rel in sorted(f for f in self.files if f.endswith(".html")):
            parser = PageParser()
            try:
                parser.feed((self.root / rel).read_text(encoding="utf-8"))
                parser.close()
            except UnicodeDecodeError as exc:
                self.add(rel, 0, f"not UTF-8: {exc.reason}")
                continue
            self.pages[rel] = parser
            for line, message in parser.problems:
                self.add(rel, line, message)

    def check_reference(self, page: str, ref: Reference) -> None:
        url = clean_url(ref.url)  # as a browser reads it: entities decoded, tabs and newlines dropped
        what = f"<{ref.tag} {ref.attr}={ref.url.strip()!r}>"
        if not url:
            self.add(page, ref.line, f"{what}: empty address")
            return
        if ref.blank_without_noopener:
            self.add(page, ref.line, f'{what} opens a new tab without rel="noopener"')
        scheme = url_scheme(url)
        if scheme:
            if scheme == "data" and ref.tag in ("img", "source", "link") and ref.loads:
                return  # inline bytes, not a request (e.g. href="data:," stops the favicon fetch)
            if ref.loads:
                self.add(
                    page,
                    ref.line,
                    f"{what} loads from another origin; only relative paths to files in the site are allowed",
                )
            elif link_problem(url):
                self.add(page, ref.line, f"{what}: {link_problem(url)}")
            return
        if url.startswith("/"):
            self.add(
                page,
                ref.line,
                f"{what} is an absolute path: it breaks under a project subpath and on file://; make it relative",
            )
            return
        parts = urlsplit(url)
        target = page if not parts.path else link_target(page, parts.path, self.files)
        if target is None:
            self.add(page, ref.line, f"{what} points outside the site")
            return
        if target not in self.files:
            self.add(page, ref.line, f"{what}: no such file {target}")
            return
        fragment = unquote(parts.fragment)
        known = target.endswith(".html") and target in self.pages
        if fragment and fragment != "top" and known and fragment not in self.pages[target].ids:
            self.add(page, ref.line, f"{what}: {target} has no element with id {fragment!r}")

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
                for name, value in el.attrib.items():
                    if name.endswith("href") and url_scheme(value) not in ("", "data"):
                        self.add(rel, 0, f"the figure loads {value!r} from another origin")
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
    for rel, parser in site.pages.items():
        for ref in parser.refs:
            site.check_reference(rel, ref)
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
