import json

import pytest

from support import PROFILES, copy_project


@pytest.fixture(scope="session", autouse=True)
def shared_build_cache(tmp_path_factory):
    """Every build the tests run, in-process or in a subprocess, shares one cache outside the project.

    Builds of copied projects then reuse the Monte Carlo and the figures instead of recomputing
    them cold each time, and the tests never write into the project's own .cache/.
    """
    import os

    cache = tmp_path_factory.getbasetemp() / "generator-cache"
    previous = os.environ.get("GENERATOR_CACHE_DIR")
    os.environ["GENERATOR_CACHE_DIR"] = str(cache)
    yield cache
    if previous is None:
        os.environ.pop("GENERATOR_CACHE_DIR", None)
    else:
        os.environ["GENERATOR_CACHE_DIR"] = previous


@pytest.fixture
def raw_profiles():
    """The shipped profiles file as plain JSON, for tests that break one thing in it."""
    return json.loads(PROFILES.read_text(encoding="utf-8"))


@pytest.fixture
def project(tmp_path):
    """A copy of the project's inputs in a temporary folder, so a test can edit them freely."""
    return copy_project(tmp_path)


@pytest.fixture(scope="module")
def browser():
    """One headless Debian chromium per test module (skips locally, fails in CI, when it is missing)."""
    from browser_support import chromium

    with chromium() as b:
        yield b
