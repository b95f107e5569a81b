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
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

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
        # Inside an element marked data-build-stamp: its tag, and how many elements of that tag are open.
        self.stamp_tag = ""
        self.stamp_depth = 0

    def flush(self) -> None:
        line = " ".join("".join(self.current).split())
        if line:
            self.lines.append(line)
        self.current = []

    def handle_starttag(self, tag, attrs):
        if self.stamp_depth:
            self.stamp_depth += tag == self.stamp_tag
            return
        if any(name == "data-build-stamp" for name, _ in attrs):
            # the build's date and commit differ between any two commits; they are not a change to review
            self.flush()
            self.stamp_tag, self.stamp_depth = tag, 1
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
        if not self.stamp_depth and (not self.hidden or self.in_title):
            self.current.append(data)


def visible_text(markup: str) -> list[str]:
    parser = VisibleText()
    parser.feed(markup)
    parser.close()
    parser.flush()
    return parser.lines


@dataclass
class Build:
    root: Path
    files: dict[str, str] = field(default_factory=dict)  # path -> sha256
    manifest: dict = field(default_factory=dict)

    @classmethod
    def load(cls, root: Path) -> Build:
        if not root.is_dir():
            raise UserError(f"{root}: no such folder")
        b = cls(root)
        for p in sorted(root.rglob("*")):
            # A build is read as data (the comment workflow reads a pull request's): a symlink in it is
            # never followed out of it.
            if p.is_file() and not p.is_symlink():
                b.files[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
        path = root / "figures" / "manifest.json"
        if path.exists():
            try:
                b.manifest = json.loads(path.read_text(encoding="utf-8")).get("figures", {})
            except ValueError as exc:
                raise UserError(f"{path}: not valid JSON: {exc}") from None
        return b

    def figures(self) -> dict[str, str]:
        """name -> file inside figures/, from the manifest and from whatever SVGs are there.

        A dark variant (NAME.dark.svg) is the light one with its colours swapped, so it changes exactly
        when its light figure does: the review shows the light one only."""
        out = {name: f"figures/{entry.get('file', name + '.svg')}" for name, entry in self.manifest.items()}
        for rel in self.files:
            if (
                rel.startswith("figures/")
                and rel.endswith(".svg")
                and rel.count("/") == 1
                and not rel.endswith(".dark.svg")
            ):
                out.setdefault(rel[len("figures/") : -len(".svg")], rel)
        return out

    def text(self, rel: str) -> list[str]:
        if rel not in self.files:
            return []
        return visible_text((self.root / rel).read_text(encoding="utf-8", errors="replace"))


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
    if not a or not b:
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
        m_old, m_new = base.manifest.get(name, {}), head.manifest.get(name, {})
        notes = [f"{key} changed" for key in ("caption", "alt") if m_old.get(key) != m_new.get(key)]
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
"""

STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")

DIFFERENCE_NOTE = (
    "The difference panel lays the after picture over the before picture so that pixels that are "
    "the same come out white and every pixel that changed keeps a colour."
)


def data_uri(svg: bytes) -> str:
    """An SVG as an inline image, so the review is one file that needs nothing beside it."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _side(label: str, uri: str | None, alt: str) -> str:
    if uri is None:
        return f'<figure><figcaption>{label}</figcaption><p class="missing">not in this build</p></figure>'
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
        m_old, m_new = base.manifest.get(f.name, {}), head.manifest.get(f.name, {})
        before = data_uri((base.root / f.before).read_bytes()) if f.before else None
        after = data_uri((head.root / f.after).read_bytes()) if f.after else None
        parts.append(
            f'<section id="figure-{html.escape(f.name)}"><h3><code>{html.escape(f.name)}</code>: {f.status}</h3>'
        )
        if f.why:
            parts.append(f'<p class="why">Why: {html.escape(f.why)}.</p>')
        trio = _side("before", before, m_old.get("alt", f.name)) + _side("after", after, m_new.get("alt", f.name))
        if before and after:
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
    if out.exists():
        if any(out.iterdir()) and not (out / "summary.md").exists():
            raise UserError(f"{out}: refusing to replace a folder that is not empty and is not a review")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.html").write_text(review_html(figs, pages, others, base, head), encoding="utf-8")
    (out / "summary.md").write_text(summary_markdown(figs, pages, others), encoding="utf-8")
    (out / "review.json").write_text(
        json.dumps(review_data(figs, pages, others), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return figs, pages


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
