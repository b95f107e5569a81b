"""Paths every test module shares; a plain module, because two conftest.py files cannot both be imported by name."""

import atexit
import functools
import os
import re
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "data" / "profiles.v1.json"
SOURCES = ("data", "site_src")
BUILT_SITE_ENV = "TESTS_BUILT_SITE"  # set by the xdist controller (conftest.py) for the workers it starts


SMALL = {"monte_carlo": 2000, "playground": 500}  # rounds, for a copy whose test is about neither


def copy_project(dest: Path, small: bool = False) -> Path:
    """A copy of the project's inputs (data/ and site_src/) that a test may edit; the code stays installed.

    small=True sets the copy's `monte_carlo.rounds` and `playground.rounds` in data/site.yaml to SMALL, for a
    test that builds from an empty cache and is about neither: its clean builds then simulate and measure in a
    fraction of the time."""
    for name in SOURCES:
        shutil.copytree(ROOT / name, Path(dest) / name)
    if small:
        config = Path(dest) / "data" / "site.yaml"
        text = config.read_text(encoding="utf-8")
        for section, rounds in SMALL.items():
            found = re.search(rf"^{section}:\n(?:  .*\n|\n)*?  rounds: *(\d+)", text, re.MULTILINE)
            assert found, f"data/site.yaml: {section}.rounds is not where copy_project looks"
            text = text[: found.start(1)] + str(rounds) + text[found.end(1) :]
        config.write_text(text, encoding="utf-8")
    return Path(dest)


def session_cache_copy(folder: Path) -> Path:
    """`folder` with a copy of what the session's build of the real site computed (its figures, Monte Carlo and
    playground), so a build that uses it computes only what differs from the real site."""
    shutil.copytree(built_site().parent / "cache", folder, dirs_exist_ok=True)
    return Path(folder)


def built_copy(folder: Path, cache: Path | None = None, small: bool = False):
    """A copy of the project, built: the one way a module gets a project of its own with its build in place.

    Returns (root, cache folder, the build's report); root / "build" holds the build. Without `cache`, the
    cache starts as a copy of the session build's (session_cache_copy), so only what the copy changes is computed
    (with small, the Monte Carlo and the playground too, at their small sizes)."""
    from generator.site.cache import Cache
    from generator.site.pipeline import build

    root = copy_project(Path(folder) / "project", small)
    if cache is None:
        cache = session_cache_copy(Path(folder) / "cache")
    report = build(root, root / "build", cache=Cache(cache))
    return root, Path(cache), report


def only_page(project: Path, body: str) -> None:
    """Make `project` a site of one page, index.md, whose body is `body` (the other pages, the beyond part and the
    appendix go)."""
    pages = project / "site_src" / "pages"
    (pages / "index.md").write_text(f"---\ntitle: T\n---\nfirst line\n\n{body}\n", encoding="utf-8")
    for extra in pages.glob("*.md"):
        if extra.name != "index.md":
            extra.unlink()
    config = project / "data" / "site.yaml"
    text = config.read_text(encoding="utf-8")
    start = text.index("\npages:")
    text = text[:start] + "\npages:\n  - index" + text[text.index("\n\n", start + 1) :]
    for part in ("\nbeyond:", "\nappendix:"):
        if part in text:
            start = text.index(part)
            text = text[:start] + text[text.index("\n\n", start + 1) :]
    config.write_text(text, encoding="utf-8")


@functools.cache  # once per test process, whether or not xdist's controller made it first
def built_site() -> Path:
    """The site built from this checkout's own sources, once per test session, into a private folder.

    Every module that reads or serves the real site shares it (the `site_dir` fixture): read it, never
    write into it; copy it first (shutil.copytree) to break it. It has a cache folder of its own. Under
    pytest-xdist the controller makes it before it starts the workers, which read it from the
    environment instead of building it again each.
    """
    if os.environ.get(BUILT_SITE_ENV):
        return Path(os.environ[BUILT_SITE_ENV])
    from generator.site.cache import Cache
    from generator.site.pipeline import build

    parent = Path(tempfile.mkdtemp(prefix="built-site-"))
    atexit.register(shutil.rmtree, parent, True)
    out = parent / "site"
    build(ROOT, out, cache=Cache(parent / "cache"))
    return out


def site_view(root: Path = ROOT):
    """The site as templates see it (facts turned into views), computed from the project's data at `root`."""
    from generator.model.facts import build_facts
    from generator.render.views import site_view as view
    from generator.site.pipeline import load_inputs

    config, profiles = load_inputs(root)
    return view(build_facts(profiles, config), config.title)
