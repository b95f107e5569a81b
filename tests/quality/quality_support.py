"""What the quality gates share besides fixtures: the tools' paths, the build, a page visit.

A module of its own, not conftest.py, so the gates import it by a name no other conftest shares.
"""
from __future__ import annotations

import os
import shutil
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
        return ([f"blocked request to another origin: {u}" for u in self.blocked] + self.failed + self.console)


def open_page(browser, origin: str, name: str, *, settle: bool = False, **context_options) -> Visit:
    """Load a page with every other origin cut off; the caller closes visit.page.context."""
    context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **context_options})
    context.set_default_timeout(10000)
    page = context.new_page()
    visit = Visit(page)

    def block(r):
        visit.blocked.append(r.request.url)
        r.abort()

    # Only other origins are intercepted: Chromium aborts a HEAD request that a route merely continues.
    context.route(lambda url: not url.startswith(origin + "/"), block)
    page.on("console", lambda m: m.type in ("error", "warning") and visit.console.append(f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: visit.console.append(f"uncaught: {e}"))
    answered = set()

    def response(r):
        answered.add(r.request)
        if r.status >= 400:
            visit.failed.append(f"HTTP {r.status}: {r.url}")

    def failed(r):
        # A fetch whose body the script never reads is reported aborted after its answer came: not a failure.
        if r.url.startswith(origin) and not (r.failure == "net::ERR_ABORTED" and r in answered):
            visit.failed.append(f"failed: {r.url} ({r.failure})")

    page.on("response", response)
    page.on("requestfailed", failed)
    page.goto(f"{origin}/{name}", wait_until="load")
    if settle:
        page.wait_for_load_state("networkidle")
    return visit


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
        page.wait_for_function("document.querySelector('#pg-rounds').children.length > 0")
        page.click("#pg-check")
        page.wait_for_function("document.querySelector('#pg-check-result table')", timeout=30000)
