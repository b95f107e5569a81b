import json
import os
from pathlib import Path

import pytest

from support import BUILT_SITE_ENV, PROFILES, built_site, copy_project, session_cache_copy

_PREVIOUS_CACHE_DIR = os.environ.get("GENERATOR_CACHE_DIR")


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin has made the session's base folder
def pytest_configure(config):
    """A cache folder outside the project for the builds made while tests are collected and by module
    fixtures; each test gets a folder of its own (own_cache_folder), so no test reads what another
    wrote. The tests never write into the project's own .cache/."""
    if os.environ.get("PYTEST_XDIST_WORKER") and _PREVIOUS_CACHE_DIR:
        return
    os.environ["GENERATOR_CACHE_DIR"] = str(config._tmp_path_factory.getbasetemp() / "generator-cache")
    if getattr(config.option, "numprocesses", None) and not os.environ.get("PYTEST_XDIST_WORKER"):
        # The xdist controller builds the real site once, with both cores, before it starts the
        # workers; they inherit its folder (support.built_site) rather than each building it at once.
        os.environ[BUILT_SITE_ENV] = str(built_site())


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Under `--dist loadgroup` a test file runs on one worker as a whole, so its module fixtures (a browser,
    a fixture site) are made once; a test that names its own xdist_group (the quality gates group by page)
    goes with that group instead."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def pytest_unconfigure(config):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.pop(BUILT_SITE_ENV, None)
    if _PREVIOUS_CACHE_DIR is None:
        os.environ.pop("GENERATOR_CACHE_DIR", None)
    else:
        os.environ["GENERATOR_CACHE_DIR"] = _PREVIOUS_CACHE_DIR


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory, monkeypatch) -> Path:
    """Every build a test runs, in-process or in a subprocess, uses this test's own cache folder."""
    folder = tmp_path_factory.mktemp("generator-cache")
    monkeypatch.setenv("GENERATOR_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One cache folder for module fixtures and tests that build the project as it is (or with an edit that
    does not matter to the cache), filled first with what the session's build computed."""
    return session_cache_copy(tmp_path_factory.mktemp("shared-cache"))


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The real site, built once per session and shared by every module that reads or serves it. Read only."""
    return built_site()


@pytest.fixture
def raw_profiles():
    """The shipped profiles file as plain JSON, for tests that break one thing in it."""
    return json.loads(PROFILES.read_text(encoding="utf-8"))


@pytest.fixture
def project(tmp_path, own_cache_folder):
    """A copy of the project's inputs in a temporary folder, so a test can edit them freely, and in the test's own
    cache folder a copy of what the session's build of the real site computed (its figures, Monte Carlo and
    playground), so a build of the copy computes only what the test changed. A test of a cold cache empties it."""
    session_cache_copy(own_cache_folder)
    return copy_project(tmp_path)


@pytest.fixture
def small_project(tmp_path):
    """A copy of the project's inputs with a small Monte Carlo and playground (support.SMALL), for a test that
    builds it from an empty cache and is about neither: its cold build takes about half the time."""
    return copy_project(tmp_path / "small", small=True)


@pytest.fixture(scope="session")
def browser():
    """One headless Debian chromium per test process (skips locally, fails in CI, when it is missing): a
    launch costs about a second of CPU, and each test opens its own context or takes its turn in its
    module's tab, so nothing leaks between tests. Playwright's sync API keeps an asyncio loop in this
    thread while it lives, so a test that needs asyncio.run runs it in a thread of its own (serve_load)."""
    from browser_support import chromium

    with chromium() as b:
        yield b
