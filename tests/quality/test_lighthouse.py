"""Lighthouse on every built page, with Debian's chromium and Lighthouse's mobile profile (an emulated
phone, simulated slow 4G, a 4x slower CPU): accessibility, best practices and SEO at 100, no layout
shift (CLS 0), every image sized, and no page too large for a phone to lay out (the `dom-size` audit).

The performance score itself is too noisy on a busy machine for a test: tests/benchmarks/bench_lighthouse.py
prints it, with LCP and TBT, for each page. Lighthouse (pinned in package.json) runs from node through
tests/quality/lighthouse.mjs, once per module: three runs side by side, each in its own chromium (half the
pages each, and the negative control's two pages). Where node, Lighthouse or
chromium is missing the test skips and says why; in CI (CI=true) it fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from browser_support import CHROMIUM, missing, serve

ROOT = Path(__file__).resolve().parent.parent.parent
RUNNER = ROOT / "tests" / "quality" / "lighthouse.mjs"
PASS = 0.9  # Lighthouse's own threshold between a passed and a failed audit

pytestmark = pytest.mark.browser


def run_lighthouse(jobs: list[tuple[str, list[str]]]) -> dict[str, dict]:
    """Each job (an origin and the pages to load from it) in its own node process, all at once: Lighthouse
    spends most of a page waiting for the page to settle, so three runs side by side take little longer
    than one."""
    node = shutil.which("node")
    if node is None:
        missing("node is not installed, so Lighthouse cannot run")
    if not (ROOT / "node_modules" / "lighthouse" / "package.json").exists():
        missing("Lighthouse is not installed (npm ci --ignore-scripts)")
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
    runs = [
        subprocess.Popen(
            [node, str(RUNNER), *(f"{origin}/{n}" for n in names)],
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "CHROME_PATH": str(CHROMIUM)},
        )
        for origin, names in jobs
    ]
    found = {}
    for run in runs:
        out, err = run.communicate(timeout=1200)
        assert run.returncode == 0, err[-3000:]
        found.update({url.rsplit("/", 1)[1]: result for url, result in json.loads(out).items()})
    return found


def write_controls(folder: Path) -> None:
    """A page with an unsized image and a link called "more", and a page of 1,500 elements (Lighthouse passes
    dom-size up to about 818): test_the_checks_above_can_fail reads what Lighthouse says of them."""
    (folder / "bad.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bad</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>'
        '<p><a href="other.html">more</a></p><img src="x.svg" alt="x"><p>Text under the image.</p></body></html>',
        encoding="utf-8",
    )
    (folder / "big.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Big</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head><body><ul>'
        + "<li>item</li>" * 1500
        + "</ul></body></html>",
        encoding="utf-8",
    )
    (folder / "x.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"/>', encoding="utf-8"
    )


@pytest.fixture(scope="module")
def reports(site, origin, tmp_path_factory) -> dict[str, dict]:
    """Every built page, in two halves, and the two control pages: three Lighthouse runs at once."""
    names = sorted(p.name for p in site.glob("*.html"))
    controls = tmp_path_factory.mktemp("lighthouse-controls")
    write_controls(controls)
    with serve(controls) as control_origin:
        return run_lighthouse([(origin, names[::2]), (origin, names[1::2]), (control_origin, ["bad.html", "big.html"])])


def report(reports: dict, page_name: str) -> dict:
    found = reports[page_name]
    assert found["runtimeError"] is None, found["runtimeError"]
    return found


def test_accessibility_best_practices_and_seo_score_100(reports, page_name):
    found = report(reports, page_name)
    wanted = ["accessibility", "best-practices", "seo"]
    failed = found["failed"]
    if page_name == "404.html":
        # "Page not found" is kept out of search engines on purpose (noindex), which SEO counts against it.
        wanted.remove("seo")
        failed = [f for f in failed if not f.startswith("seo:")]
    assert {c: found["scores"][c] for c in wanted} == dict.fromkeys(wanted, 100), failed
    assert failed == []


def test_no_layout_shift_and_every_image_sized(reports, page_name):
    audits = report(reports, page_name)["audits"]
    assert audits["cumulative-layout-shift"]["value"] == 0, audits["cumulative-layout-shift"]["display"]
    assert audits["unsized-images"]["score"] in (None, 1), "an <img> without width and height"


def test_the_page_is_small_enough_for_a_phone_to_lay_out(reports, page_name):
    dom = report(reports, page_name)["audits"]["dom-size"]
    assert dom["score"] is None or dom["score"] >= PASS, f"dom-size: {dom['display']}"


def test_the_checks_above_can_fail(reports):
    """A negative control: the gates above fail on the control pages (see write_controls)."""
    found = reports["bad.html"]
    assert "seo: link-text" in found["failed"] and found["scores"]["seo"] < 100
    assert found["audits"]["unsized-images"]["score"] < 1
    assert reports["big.html"]["audits"]["dom-size"]["score"] < PASS
