"""Paths every test module shares; a plain module, because two conftest.py files cannot both be imported by name."""

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "data" / "profiles.v1.json"
SOURCES = ("data", "site_src")
BUILT_SITE_ENV = "TESTS_BUILT_SITE"  # set by the xdist controller (conftest.py) for the workers it starts


def copy_project(dest: Path) -> Path:
    """A copy of the project's inputs (data/ and site_src/) that a test may edit; the code stays installed."""
    for name in SOURCES:
        shutil.copytree(ROOT / name, Path(dest) / name)
    return Path(dest)


def session_cache_copy(folder: Path) -> Path:
    """`folder` with a copy of what the session's build of the real site computed (its figures, Monte Carlo and
    playground), so a build that uses it computes only what differs from the real site."""
    shutil.copytree(built_site().parent / "cache", folder, dirs_exist_ok=True)
    return Path(folder)


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


FRESH_BUILD = """
import json, sys
from pathlib import Path
from generator.site.pipeline import build
from generator.site.cache import Cache
r = build(Path(sys.argv[1]), Path(sys.argv[2]), cache=Cache(Path(sys.argv[3])))
print(json.dumps([[getattr(r, f) for f in sys.argv[4].split(",") if f], [m for m in sys.argv[5].split(",") if m in sys.modules]]))
"""


def fresh_build(root: Path, out: Path, cache_dir: Path, fields=(), modules=()) -> tuple[list, list[str]]:
    """Build root into out with cache_dir in a new interpreter, so that sys.modules tells what the build imported:
    the report's fields named, and which of the modules named were loaded."""
    done = subprocess.run(
        [sys.executable, "-c", FRESH_BUILD, str(root), str(out), str(cache_dir), ",".join(fields), ",".join(modules)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    values, loaded = json.loads(done.stdout.splitlines()[-1])
    return values, loaded


@functools.cache
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
