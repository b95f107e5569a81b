"""What the quality gates share besides fixtures: the tools' paths, the build, a page visit.

A module of its own, not conftest.py, so the gates import it by a name no other conftest shares.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import support
from browser_support import missing

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
VNU = NODE_MODULES / "vnu-jar" / "build" / "dist" / "vnu.jar"
WEIGHT_ROWS: list[tuple[str, int, int, int]] = []  # filled by the page-weight gate, printed at the end


def need_node_modules(path: Path) -> Path:
    if not path.exists():
        missing(f"{path.relative_to(ROOT)} is missing: run `npm ci` at the repository root")
    return path


def need_java() -> str:
    java = shutil.which("java")
    if java is None:
        missing("java is not installed (apt-get install -y default-jre-headless)")
    return java


def built_site() -> Path:
    """The session's one build of this checkout (support.built_site).

    QUALITY_SITE=DIR runs the gates on a site built elsewhere instead (build/, or a draft page).
    """
    if os.environ.get("QUALITY_SITE"):
        return Path(os.environ["QUALITY_SITE"]).resolve()
    return support.built_site()


def page_names(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def is_playground(site: Path, name: str) -> bool:
    return Path(name).stem == "playground" or 'id="playground"' in (site / name).read_text(encoding="utf-8")


@dataclass
class Visit:
    """One page load and everything it did that a reader would not want: outside requests, failures, console noise."""

    page: object
    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f"blocked request to another origin: {u}" for u in self.blocked] + self.failed + self.console


class Tab:
    """One browser tab that visits page after page, each visit recording its own problems.

    A new tab costs Chromium a renderer process and an empty HTTP cache: about 0.4 s of CPU for a
    blank page and 1 s for the stepper page, against 0.1 s and 0.25 s for navigating a tab already
    open. Nothing a page keeps survives a navigation here (the site stores nothing in the browser),
    so the gates visit every page and view in one tab, setting its width and colour scheme first.
    """

    def __init__(self, browser, origin: str):
        self.origin = origin
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.set_default_timeout(10000)
        self.page = self.context.new_page()
        self.visit = Visit(self.page)
        answered = set()

        def block(r):
            self.visit.blocked.append(r.request.url)
            r.abort()

        def response(r):
            answered.add(r.request)
            if r.status >= 400:
                self.visit.failed.append(f"HTTP {r.status}: {r.url}")

        def failed(r):
            # A fetch whose body the script never reads is reported aborted after its answer came: not a failure.
            if r.url.startswith(origin) and not (r.failure == "net::ERR_ABORTED" and r in answered):
                self.visit.failed.append(f"failed: {r.url} ({r.failure})")

        # Only other origins are intercepted: Chromium aborts a HEAD request that a route merely continues.
        self.context.route(lambda url: not url.startswith(origin + "/"), block)
        self.page.on(
            "console",
            lambda m: m.type in ("error", "warning") and self.visit.console.append(f"console {m.type}: {m.text}"),
        )
        self.page.on("pageerror", lambda e: self.visit.console.append(f"uncaught: {e}"))
        self.page.on("response", response)
        self.page.on("requestfailed", failed)

    def open(
        self,
        name: str,
        *,
        width: int = 1280,
        height: int = 900,
        color_scheme: str = "light",
        reduced_motion: str = "no-preference",
    ) -> Visit:
        """Load a page at this width and in this colour scheme; its problems are recorded from here on."""
        self.page.goto("about:blank")
        self.page.set_viewport_size({"width": width, "height": height})
        self.page.emulate_media(color_scheme=color_scheme, reduced_motion=reduced_motion)
        self.visit = Visit(self.page)
        self.page.goto(f"{self.origin}/{name}", wait_until="load")
        return self.visit

    def close(self) -> None:
        self.context.close()


def wait_until(page, predicate: str, timeout_s: float = 20.0) -> None:
    """Poll a predicate through evaluate: the pages' CSP forbids the eval that wait_for_function needs."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(predicate):
        if time.monotonic() > deadline:
            raise AssertionError(f"never true within {timeout_s:g} s: {predicate}")
        page.wait_for_timeout(50)


def exercise_widgets(page) -> None:
    """Make the widgets draw what they only draw on request, so the gates judge that output too."""
    if page.locator("#what-if [data-what-if-app]").is_visible():
        # The what-if editor with a row that does not sum to 1: its error line, a "not 1" tag and a
        # Move message all show, on the bonus row's table and then on a drafted position's.
        page.click('#what-if [data-position="5"]')
        page.click('#what-if [data-position="1"]')
        page.click('#what-if [data-wi="move"]')
        page.fill('#what-if input.wi-cell[data-which="draft"][data-col="0"]', "1")
    if page.locator("#pg-generate").is_visible():
        page.click("#pg-generate")
        wait_until(page, "document.querySelector('#pg-rounds').children.length > 0")
        page.click("#pg-check")
        wait_until(page, "!!document.querySelector('#pg-check-result table')", timeout_s=30.0)
