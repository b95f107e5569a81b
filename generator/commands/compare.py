"""`compare BASE_DIR HEAD_DIR --out DIR`: what a pull request changes in the built site, for a reviewer.

Figures are generated, so a diff of the sources says little about what readers will see. This
puts every added, removed or changed figure side by side (before | after | their pixel difference)
on one page, with the reason where the manifests tell it (the data it is drawn from, or the
drawing code), diffs the visible text of every page, and writes a Markdown summary for the job
summary and review.json for the pull-request comment. The page is a single file with every image
inline and makes no request anywhere, so it opens straight from a downloaded artifact.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

from ..errors import UserError

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "caption",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    }
)
HIDDEN = frozenset({"head", "script", "style", "template", "noscript"})


class VisibleText(HTMLParser):
    """The text a reader sees, one line per block; images count as their alt text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.hidden = 0
        self.in_title = False
        # Inside an element marked data-build-stamp: its tag, how many elements of that tag are open, its text.
        self.stamp_tag = ""
        self.stamp_depth = 0
        self.stamp: list[str] = []

    def flush(self) -> None:
        line = " ".join("".join(self.current).split())
        if line:
            self.lines.append(line)
        self.current = []

    def handle_starttag(self, tag, attrs):
        if self.stamp_depth:
            self.stamp_depth += tag == self.stamp_tag
            if tag == "img":
                self.stamp.append(f" [image: {dict(attrs).get('alt') or ''}] ")
            return
        if any(name == "data-build-stamp" for name, _ in attrs):
            # the build's date and commit differ between any two commits: they are masked, the rest is compared
            self.flush()
            self.stamp_tag, self.stamp_depth, self.stamp = tag, 1, []
            return
        if tag == "title":
            self.in_title = True
            self.flush()
        elif tag in HIDDEN:
            self.hidden += 1
        elif tag in BLOCK:
            self.flush()
        elif tag == "img" and not self.hidden:
            alt = dict(attrs).get("alt") or ""
            self.flush()
            self.lines.append(f"[image: {' '.join(alt.split())}]")

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK:
            self.flush()
        elif tag == "img":
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if self.stamp_depth:
            self.stamp_depth -= tag == self.stamp_tag
            if not self.stamp_depth:
                self.lines.append(f"[build stamp: {mask_stamp(''.join(self.stamp))}]")
            return
        if tag == "title" and self.in_title:
            self.in_title = False
            title = " ".join("".join(self.current).split())
            self.current = []
            self.lines.append(f"[title: {title}]")
        elif tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in BLOCK:
            self.flush()

    def handle_data(self, data):
        if self.stamp_depth:
            self.stamp.append(data)
        elif not self.hidden or self.in_title:
            self.current.append(data)


STAMP_COMMIT = re.compile(r"\b[0-9a-f]{7,40}\b")
STAMP_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def mask_stamp(text: str) -> str:
    """A build stamp's text with its date and commit masked: those differ between any two commits, the rest is
    reviewed like any other text (a stamp is no place to hide a change)."""
    text = STAMP_DATE.sub("DATE", " ".join(text.split()))
    return STAMP_COMMIT.sub("COMMIT", text)


def visible_text(markup: str) -> list[str]:
    parser = VisibleText()
    parser.feed(markup)
    parser.close()
    parser.flush()
    if parser.stamp_depth:  # a stamp left open to the end of the page still shows its text
        parser.lines.append(f"[build stamp: {mask_stamp(''.join(parser.stamp))}]")
    return parser.lines


def shown_name(path: Path) -> str:
    """A file name as text: one that is not UTF-8 shows its odd bytes as escapes instead of breaking the review."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass
class Build:
    root: Path
    files: dict[str, str] = field(default_factory=dict)  # name (as shown) -> sha256
    paths: dict[str, Path] = field(default_factory=dict)  # name (as shown) -> the file
    manifest: dict = field(default_factory=dict)

    @classmethod
    def load(cls, root: Path) -> Build:
        if not root.is_dir():
            raise UserError(f"{shown_name(root)}: no such folder")
        b = cls(root)
        for p in sorted(root.rglob("*")):
            # A build is read as data (the comment workflow reads a pull request's): a symlink in it is
            # never followed out of it.
            if p.is_file() and not p.is_symlink():
                name = shown_name(p.relative_to(root).as_posix())
                b.files[name] = hashlib.sha256(p.read_bytes()).hexdigest()
                b.paths[name] = p
        b.manifest = read_manifest(root / "figures" / "manifest.json")
        return b

    def figures(self) -> dict[str, str]:
        """name -> file inside figures/, from the manifest and from whatever SVGs are there.

        A dark variant is a figure of its own, NAME.dark: a change to the dark colours alone is still a change."""
        out = {}
        for name, entry in self.manifest.items():
            out[name] = f"figures/{entry.get('file', name + '.svg')}"
            if isinstance(entry.get("dark"), dict):
                out[name + ".dark"] = f"figures/{entry['dark'].get('file', name + '.dark.svg')}"
        for rel in self.files:
            if rel.startswith("figures/") and rel.endswith(".svg") and rel.count("/") == 1:
                out.setdefault(rel[len("figures/") : -len(".svg")], rel)
        return out

    def entry(self, name: str) -> dict:
        """The manifest's entry for a figure; a dark variant shares its light figure's caption and alt text."""
        return self.manifest.get(name.removesuffix(".dark"), {})

    def text(self, rel: str) -> list[str]:
        if rel not in self.files:
            return []
        return visible_text(self.paths[rel].read_text(encoding="utf-8", errors="replace"))

    def read(self, rel: str) -> bytes:
        return self.paths[rel].read_bytes()


def read_manifest(path: Path) -> dict:
    """figures/manifest.json's figures, each an object of strings and objects; anything else is one line."""
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"{shown_name(path)}: not valid JSON: {exc}") from None
    figures = raw.get("figures") if isinstance(raw, dict) else None
    if not isinstance(figures, dict):
        raise UserError(f'{shown_name(path)}: expected an object with a "figures" object')
    for name, entry in figures.items():
        if not isinstance(entry, dict) or not all(isinstance(v, str | dict) for v in entry.values()):
            raise UserError(f"{shown_name(path)}: figures.{name}: expected an object of strings and objects")
        for key in ("file", "caption", "alt"):
            if key in entry and not isinstance(entry[key], str):
                raise UserError(f"{shown_name(path)}: figures.{name}.{key}: expected a string")
    return figures


@dataclass
class FigureChange:
    name: str
    status: str  # added, removed, changed, unchanged
    before: str | None
    after: str | None
    why: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class PageChange:
    path: str
    status: str
    diff: list[str]
    added: int
    removed: int


def _why(old: dict, new: dict) -> str:
    a, b = old.get("inputs") or {}, new.get("inputs") or {}
    if not isinstance(a, dict) or not isinstance(b, dict) or not a or not b:
        return ""
    reasons = []
    if a.get("function") != b.get("function"):
        reasons.append("drawn by another function")
    if a.get("inputs_sha256") != b.get("inputs_sha256"):
        reasons.append("the numbers it is drawn from changed")
    if a.get("code_sha256") != b.get("code_sha256"):
        reasons.append("the drawing code changed")
    return "; ".join(reasons) or "same inputs and code: the environment (fonts, library versions) differs"


def figure_changes(base: Build, head: Build) -> list[FigureChange]:
    old, new = base.figures(), head.figures()
    out = []
    for name in sorted(old.keys() | new.keys()):
        # the figure's file in each build, only if that build really has it
        before = old[name] if old.get(name) in base.files else None
        after = new[name] if new.get(name) in head.files else None
        if not SAFE_NAME.match(name) or (before is None and after is None):
            continue
        if before is None or after is None:
            out.append(FigureChange(name, "added" if before is None else "removed", before, after))
            continue
        m_old, m_new = base.entry(name), head.entry(name)
        light = name.removesuffix(".dark")
        notes = [f"{key} changed" for key in ("caption", "alt") if m_old.get(key) != m_new.get(key) and light == name]
        same_picture = base.files[before] == head.files[after]
        if same_picture and not notes:
            out.append(FigureChange(name, "unchanged", before, after))
        else:
            why = "the picture is the same" if same_picture else _why(m_old, m_new)
            out.append(FigureChange(name, "changed", before, after, why, notes))
    return out


def changed_files(base: Build, head: Build) -> list[tuple[str, str]]:
    """(path, added, removed or changed) for every file that differs between the two builds."""
    out = []
    for rel in sorted(base.files.keys() | head.files.keys()):
        if base.files.get(rel) != head.files.get(rel):
            out.append((rel, "added" if rel not in base.files else "removed" if rel not in head.files else "changed"))
    return out


def page_changes(base: Build, head: Build, changed: list[tuple[str, str]]) -> list[PageChange]:
    out = []
    for rel, status in changed:
        if not rel.endswith(".html"):
            continue
        a, b = base.text(rel), head.text(rel)
        if a != b:
            diff = list(difflib.unified_diff(a, b, f"base/{rel}", f"head/{rel}", n=2, lineterm=""))
            kinds = [_line_kind(line) for line in diff]
            out.append(PageChange(rel, status, diff, kinds.count("add"), kinds.count("del")))
    return out


def _line_kind(line: str) -> str:
    """A unified diff's line as hunk, add, del or ctx; "" for the ---/+++ lines that name the files."""
    if line.startswith(("+++", "---")):
        return ""
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


# --- output -------------------------------------------------------------------------------------

STYLE = """
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:1rem 1.5rem;
color:#1f1f1f;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}h3{font-size:1rem}
.trio{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:1rem}
.trio figure{margin:0;border:1px solid #ddd;padding:.5rem}.trio figcaption{font-weight:600;margin-bottom:.25rem}
.trio img{width:100%;height:auto;display:block;background:#fff}
.difference{position:relative;isolation:isolate;filter:invert(1)}
.difference img+img{position:absolute;inset:0;mix-blend-mode:difference}
.missing{color:#666;font-style:italic;padding:2rem;text-align:center}
.why,.note{color:#444}pre.diff{background:#f7f7f7;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.add{background:#e6ffec;display:block}.del{background:#ffebe9;display:block}.hunk{color:#6e40c9;display:block}
.ctx{display:block;color:#444}code{background:#f2f2f2;padding:0 .2em}
.dark .trio img,.dark .trio figure{background:#1b1b1f}.dark .trio figcaption{color:#eee}
"""

STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")

DIFFERENCE_NOTE = (
    "The difference panel lays the after picture over the before picture so that pixels that are "
    "the same come out white and every pixel that changed keeps a colour."
)


def data_uri(svg: bytes) -> str:
    """An SVG as an inline image, so the review is one file that needs nothing beside it."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


MAX_SVG_BYTES = 2_000_000  # the largest figure drawn today is about 60 KB
MAX_SVG_ELEMENTS = 100_000  # elements drawn, each <use> counted as the elements it copies


def shown_svg(svg: bytes) -> str:
    """An SVG as an inline image, or why it is not shown: the figures come from a pull request, so one too large,
    that declares entities, that does not parse, or whose <use> elements copy other <use> elements or add up
    to more than MAX_SVG_ELEMENTS (a "use bomb" that stops a browser drawing the page) is described, not shown."""
    if len(svg) > MAX_SVG_BYTES:
        return f"not shown: {len(svg):,} bytes, over the review's limit of {MAX_SVG_BYTES:,}"
    if b"<!ENTITY" in svg.upper() or re.search(rb"<!DOCTYPE[^>\[]*\[", svg, re.IGNORECASE):
        return "not shown: the file declares entities (a DOCTYPE with an internal subset)"
    try:
        root = ElementTree.fromstring(svg)
    except ElementTree.ParseError as exc:
        return f"not shown: not well-formed XML ({exc})"
    elements = list(root.iter())
    by_id = {el.get("id"): el for el in elements if el.get("id")}
    drawn = len(elements)
    for use in (el for el in elements if el.tag.rsplit("}", 1)[-1] == "use"):
        ref = next((v for k, v in use.attrib.items() if k.rsplit("}", 1)[-1] == "href"), "")
        target = by_id.get(ref.removeprefix("#"))
        if target is None:
            continue
        copied = list(target.iter())
        if any(el.tag.rsplit("}", 1)[-1] == "use" for el in copied):
            return "not shown: a <use> element copies another <use> (nested copies can stop a browser)"
        drawn += len(copied)
    if drawn > MAX_SVG_ELEMENTS:
        return f"not shown: it draws {drawn:,} elements, over the review's limit of {MAX_SVG_ELEMENTS:,}"
    return data_uri(svg)


def _side(label: str, uri: str | None, alt: str) -> str:
    if uri is None:
        return f'<figure><figcaption>{label}</figcaption><p class="missing">not in this build</p></figure>'
    if not uri.startswith("data:"):  # the reason it is not shown
        return f'<figure><figcaption>{label}</figcaption><p class="missing">{html.escape(uri)}</p></figure>'
    return f'<figure><figcaption>{label}</figcaption><img src="{uri}" alt="{html.escape(label + ": " + alt)}"></figure>'


def _difference(before: str, after: str, name: str) -> str:
    label = html.escape(f"pixel difference of {name}: white where before and after agree, colour where they differ")
    return (
        '<figure><figcaption>difference</figcaption><div class="difference">'
        f'<img src="{before}" alt="{label}"><img src="{after}" alt="(the after picture, blended over the before)">'
        "</div></figure>"
    )


def _diff_html(lines: list[str]) -> str:
    spans = [f'<span class="{_line_kind(line)}">{html.escape(line)}</span>' for line in lines if _line_kind(line)]
    return '<pre class="diff">' + "".join(spans) + "</pre>"


def review_html(
    figs: list[FigureChange], pages: list[PageChange], others: list[tuple[str, str]], base: Build, head: Build
) -> str:
    shown = [f for f in figs if f.status != "unchanged"]
    same = [f for f in figs if f.status == "unchanged"]
    parts = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta http-equiv="Content-Security-Policy" '
        f"content=\"default-src 'none'; img-src data:; style-src '{STYLE_HASH}'\">",
        "<title>Figure review</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<h1>Figure review</h1>",
        f"<p>{html.escape(headline(figs, pages))}</p>",
        "<h2>Figures</h2>",
    ]
    parts.append(f'<p class="note">{DIFFERENCE_NOTE}</p>' if shown else "<p>No figure changed.</p>")
    for f in shown:
        m_old, m_new = base.entry(f.name), head.entry(f.name)
        before = shown_svg(base.read(f.before)) if f.before else None
        after = shown_svg(head.read(f.after)) if f.after else None
        dark = ' class="dark"' if f.name.endswith(".dark") else ""
        parts.append(
            f'<section id="figure-{html.escape(f.name)}"{dark}><h3><code>{html.escape(f.name)}</code>: {f.status}</h3>'
        )
        if f.why:
            parts.append(f'<p class="why">Why: {html.escape(f.why)}.</p>')
        trio = _side("before", before, m_old.get("alt", f.name)) + _side("after", after, m_new.get("alt", f.name))
        if before and after and before.startswith("data:") and after.startswith("data:"):
            trio += _difference(before, after, f.name)
        parts.append(f'<div class="trio">{trio}</div>')
        for key in ("caption", "alt"):
            old, new = m_old.get(key), m_new.get(key)
            if old is not None and new is not None and old != new:
                diff = difflib.unified_diff([old], [new], lineterm="", n=0)
                parts.append(f"<p>{key.capitalize()} text:</p>" + _diff_html(list(diff)))
        parts.append("</section>")
    if same:
        parts.append(
            "<h3>Unchanged</h3><ul>" + "".join(f"<li><code>{html.escape(f.name)}</code></li>" for f in same) + "</ul>"
        )
    parts.append("<h2>Page text</h2>")
    if not pages:
        parts.append("<p>No page's visible text changed.</p>")
    for p in pages:
        parts.append(
            f"<section><h3><code>{html.escape(p.path)}</code>: {p.status} (+{p.added} −{p.removed} lines)</h3>"
            + _diff_html(p.diff)
            + "</section>"
        )
    if others:
        parts.append(
            "<h2>Other files</h2><ul>"
            + "".join(f"<li><code>{html.escape(rel)}</code>: {status}</li>" for rel, status in others)
            + "</ul>"
        )
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def headline(figs: list[FigureChange], pages: list[PageChange]) -> str:
    count = {s: sum(1 for f in figs if f.status == s) for s in ("changed", "added", "removed", "unchanged")}
    page_note = (
        f"visible text changed on {len(pages)} page{'s' if len(pages) != 1 else ''}"
        if pages
        else "no page text changed"
    )
    return (
        f"{count['changed']} figures changed, {count['added']} added, {count['removed']} removed, "
        f"{count['unchanged']} unchanged; {page_note}."
    )


def summary_markdown(figs: list[FigureChange], pages: list[PageChange], others: list[tuple[str, str]]) -> str:
    lines = ["## Figure review", "", headline(figs, pages), ""]
    shown = [f for f in figs if f.status != "unchanged"]
    if shown:
        lines += ["| figure | change | why |", "| --- | --- | --- |"]
        lines += [
            f"| `{f.name}` | {f.status} | {'; '.join([f.why] * bool(f.why) + f.notes).replace('|', '/')} |"
            for f in shown
        ]
        lines.append("")
    if pages:
        lines.append("Pages whose visible text changed:")
        lines += [f"- `{p.path}` ({p.status}): +{p.added} −{p.removed} lines" for p in pages]
        lines.append("")
    if others:
        lines += ["Other files: " + ", ".join(f"`{rel}` ({status})" for rel, status in others), ""]
    same = [f.name for f in figs if f.status == "unchanged"]
    if same:
        lines += ["Unchanged figures: " + ", ".join(f"`{n}`" for n in same), ""]
    return "\n".join(lines)


def review_data(figs: list[FigureChange], pages: list[PageChange], others: list[tuple[str, str]]) -> dict:
    """The review as data, for the pull-request comment (.ci/review_comment.py): no HTML, no paths outside it."""
    return {
        "version": 1,
        "figures": [{"name": f.name, "status": f.status, "why": f.why, "notes": f.notes} for f in figs],
        "pages": [{"path": p.path, "status": p.status, "added": p.added, "removed": p.removed} for p in pages],
        "other_files": [{"path": rel, "status": status} for rel, status in others],
    }


REVIEW_MARK = ".figure-review"  # the file that says `compare` made this folder
REVIEW_FILES = frozenset({REVIEW_MARK, "index.html", "summary.md", "review.json", "pr.json"})


def prepare_out(out: Path) -> None:
    """Make OUT, or reuse a folder an earlier `compare` made; never empty or overwrite anyone else's files.

    A folder is reused only when it holds the mark `compare` leaves and nothing but the files it writes, and
    those are overwritten in place: nothing is deleted."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UserError(f"{shown_name(out)}: --out must be a folder, not a file or a link")
    if out.is_dir():
        names = {shown_name(p.name) for p in out.iterdir()}
        if names and (REVIEW_MARK not in names or not names <= REVIEW_FILES):
            raise UserError(
                f"{shown_name(out)}: refusing to write into a folder that is not empty and was not made by compare"
            )
        if any((out / name).is_symlink() for name in names):
            raise UserError(f"{shown_name(out)}: refusing to write through a link in the review folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / REVIEW_MARK).write_text("written by `python -m generator compare`; safe to delete\n", encoding="utf-8")


def write_review(base_dir: Path, head_dir: Path, out: Path) -> tuple[list[FigureChange], list[PageChange]]:
    base, head = Build.load(base_dir), Build.load(head_dir)
    figs = figure_changes(base, head)
    changed = changed_files(base, head)
    pages = page_changes(base, head, changed)
    # every other file that changed: neither a page nor a figure
    others = [
        (rel, status)
        for rel, status in changed
        if not rel.endswith(".html") and not (rel.startswith("figures/") and rel.endswith((".svg", "manifest.json")))
    ]
    prepare_out(out)
    (out / "index.html").write_text(review_html(figs, pages, others, base, head), encoding="utf-8")
    (out / "summary.md").write_text(summary_markdown(figs, pages, others), encoding="utf-8")
    (out / "review.json").write_text(
        json.dumps(review_data(figs, pages, others), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return figs, pages


def write_failure(out: Path, problem: str) -> None:
    """A review that says why the builds could not be compared, in the same three files, so the job summary and the
    pull-request comment say so instead of keeping an earlier, stale review."""
    prepare_out(out)
    text = f"The figure review could not compare the two builds: {problem}"
    (out / "index.html").write_text(
        "\n".join(
            [
                "<!doctype html>",
                '<html lang="en">',
                '<head><meta charset="utf-8"><title>Figure review</title></head>',
                f"<body><h1>Figure review</h1><p>{html.escape(text)}</p></body>",
                "</html>",
                "",
            ]
        ),
        encoding="utf-8",
    )
    (out / "summary.md").write_text(f"## Figure review\n\n{text}\n", encoding="utf-8")
    (out / "review.json").write_text(json.dumps({"version": 1, "error": problem}, indent=2) + "\n", encoding="utf-8")


def add_arguments(p) -> None:
    p.add_argument("base", help="the build before the change")
    p.add_argument("head", help="the build after the change")
    p.add_argument(
        "--out",
        default="figure-review",
        help="folder for index.html (one self-contained file), summary.md and review.json (default: %(default)s)",
    )


def run(args) -> int:
    figs, pages = write_review(Path(args.base), Path(args.head), Path(args.out))
    print(f"wrote {args.out}/index.html, summary.md and review.json: {headline(figs, pages)}")
    return 0
