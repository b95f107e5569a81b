"""Count the words a reader sees in a built page's <main>, leaving out the inside of widgets.

A widget's root element carries `data-widget`; its inside (frames, tables, playground controls) is
something a reader explores, not reads through, so it does not count toward the reading budget.
Also left out: what is never visible (<script>, <style>, <template>, `hidden` elements and the
screen-reader-only `.visually-hidden` text). A MathML formula counts its text run together, so
$\\min(1, p(x)/q(x))$ is a couple of words, not twenty.

    python tests/reading_budget.py [BUILD_DIR]   # prints words per page of `pages:` and `appendix:`
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
NEVER_SHOWN = {"script", "style", "template"}
WORD = re.compile(r"\S+")


class _MainText(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skipped, inside math)
        self.in_main = 0
        self.parts: list[str] = []

    def _skipped(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def _math(self) -> bool:
        return bool(self.stack) and self.stack[-1][2]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "main":
            self.in_main += 1
        if tag in VOID:
            return
        skip = (
            self._skipped()
            or tag in NEVER_SHOWN
            or "data-widget" in a
            or "hidden" in a
            or "visually-hidden" in (a.get("class") or "").split()
        )
        math = self._math() or tag == "math"
        if tag == "math" and not skip:
            self.parts.append(" ")
        self.stack.append((tag, skip, math))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            top, skip, math = self.stack.pop()
            if top == tag:
                break
        if tag == "main":
            self.in_main -= 1
        if not (self.stack and self.stack[-1][2]):
            self.parts.append(" ")  # element boundaries separate words, except inside a formula

    def handle_data(self, data):
        if self.in_main and not self._skipped():
            self.parts.append(data)


def visible_words(html: str) -> int:
    parser = _MainText()
    parser.feed(html)
    parser.close()
    return len(WORD.findall("".join(parser.parts)))


def _groups(build: Path) -> list[tuple[str, list[str]]]:
    """Each list of the navigation: its data-nav name and its pages, in order."""
    html = (build / "index.html").read_text(encoding="utf-8")
    groups = re.findall(r'<ol class="nav-list[^"]*"[^>]*data-nav="(\w+)"[^>]*>(.*?)</ol>', html, re.S)
    return [(name, re.findall(r'href="([^"#]+)\.html"', body)) for name, body in groups]


def reading_order(build: Path) -> tuple[list[str], list[str]]:
    """The main path and the appendix, as the navigation lists them (so this needs no config parsing)."""
    found = dict(_groups(build))
    return found.get("main", []), found.get("appendix", [])


def main(argv: list[str]) -> int:
    build = Path(argv[1] if len(argv) > 1 else "build")
    main_path, appendix = reading_order(build)
    if not main_path:  # a build from before the appendix existed: every page is on the main path
        main_path = [p.stem for p in sorted(build.glob("*.html")) if p.stem != "404"]
    beyond = [slug for name, slugs in _groups(build) if name == "beyond" for slug in slugs]
    for label, slugs in (("main path", main_path), ("beyond", beyond), ("appendix", appendix)):
        total = 0
        for slug in slugs:
            n = visible_words((build / f"{slug}.html").read_text(encoding="utf-8"))
            total += n
            print(f"{label:10} {slug:24} {n:6}")
        print(f"{label:10} {'TOTAL':24} {total:6}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
