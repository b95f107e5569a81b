"""Shared ground for the quality gates: one build of the real site, one local server, the tools.

The gates judge the site a reader gets, so they build it from the project's own sources once per
session and parametrize over every page found in the build: a page added later (the playground)
is covered without touching the gates. A gate whose tool is missing skips locally and fails in CI
(CI=true), so a green CI always means the gate ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_support import serve
from quality_support import WEIGHT_ROWS, built_site, page_names


def pytest_generate_tests(metafunc):
    if "page_name" in metafunc.fixturenames:
        names = page_names(built_site())
        if getattr(metafunc.module, "SPREAD_BY_PAGE", False):  # one xdist group per page, not per file
            names = [pytest.param(n, marks=pytest.mark.xdist_group(f"page:{n}")) for n in names]
        metafunc.parametrize("page_name", names)


@pytest.fixture(scope="session")
def site() -> Path:
    return built_site()


@pytest.fixture(scope="session")
def origin(site):
    with serve(site) as url:
        yield url


def pytest_terminal_summary(terminalreporter):
    if not WEIGHT_ROWS:
        return
    tr = terminalreporter
    tr.section("page weight (HTML + CSS + JS + figures, uncompressed)")
    width = max(len(r[0]) for r in WEIGHT_ROWS)
    tr.write_line(f"{'page':<{width}}  {'files':>5}  {'KB':>8}  {'budget KB':>9}")
    for name, files, size, budget in sorted(WEIGHT_ROWS):
        flag = "  OVER" if size > budget else ""
        tr.write_line(f"{name:<{width}}  {files:>5}  {size / 1000:>8.1f}  {budget / 1000:>9.0f}{flag}")
