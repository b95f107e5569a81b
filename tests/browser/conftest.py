"""The browser modules' fixtures, defined once: the site a module opens, its address, the module's one tab and
a test's turn in it. A module overrides one of them only where it needs something else (a fixture site of its
own, a longer timeout, fewer console levels)."""

import pytest

from browser_support import serve, shared_tab, turn


@pytest.fixture(scope="module")
def site(site_dir):
    """The folder the module's pages come from: the real site, built once per session."""
    return site_dir


@pytest.fixture(scope="module")
def origin(site):
    """The site, served on 127.0.0.1 for the module's tests."""
    with serve(site) as url:
        yield url


@pytest.fixture(scope="module")
def tab(browser):
    """The module's one tab (browser_support.shared_tab): console noise, every URL and every response."""
    with shared_tab(browser) as pg:
        yield pg


@pytest.fixture
def page(tab, origin):
    """The tab, blank and with nothing recorded yet; after the test, no script problem and no request elsewhere."""
    turn(tab)
    yield tab
    assert not tab.problems, tab.problems
    outside = [u for u in tab.requested if not (u.startswith(origin + "/") or u.startswith("data:"))]
    assert not outside, outside
