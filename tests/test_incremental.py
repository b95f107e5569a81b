"""Rebuilding after an edit reuses what the edit cannot change, and gives exactly what a --clean build gives.

Each kind of edit a person makes is applied to a copy of the project that has been built once with the
session's shared cache; the rebuild must equal, byte for byte, a build of the edited copy from an empty
cache. A one-page text edit must render that page alone and import neither numpy nor matplotlib.
The edits here are ones no other test makes, so the shared cache never holds their results beforehand.
"""
import os
import shutil
from pathlib import Path

import pytest

from generator.site import pipeline as B
from generator.site.cache import Cache
from support import copy_project, fresh_build


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def shared_cache(tmp_path_factory) -> Cache:
    return Cache(tmp_path_factory.getbasetemp() / "generator-cache")  # the one test_build.py fills too


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r} is not there exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def middle_page(root: Path) -> Path:
    pages = sorted((root / "site_src" / "pages").glob("*.md"))
    return pages[len(pages) // 2]


# Each edit goes into a fresh copy built into a fresh folder, so only the content-hashed path runs here;
# an edit the stat stamp could miss (same size, mtime put back) is tests/test_uptodate.py's.
EDITS = {
    "one page's text": lambda root: middle_page(root).write_text(
        middle_page(root).read_text(encoding="utf-8") + "\nOne more sentence for the reader.\n", encoding="utf-8"),
    "a template": lambda root: replace_once(
        root / "site_src" / "templates" / "page.html", '<footer class="site-footer">', '<footer class="site-footer" data-edited="yes">'),
    "an asset": lambda root: (root / "site_src" / "assets" / "style.css").write_text(
        (root / "site_src" / "assets" / "style.css").read_text(encoding="utf-8") + "\n/* edited */\n", encoding="utf-8"),
    "the draft step": lambda root: replace_once(
        root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "1/13"'),
    "a draft probability": lambda root: replace_once(
        root / "data" / "profiles.v1.json", '["2/8", "1/8", "0",   "0",   "4/8", "1/8"]', '["2/8", "1/8", "1/8", "0",   "3/8", "1/8"]'),
    "a site setting": lambda root: replace_once(root / "data" / "site.yaml", "peak_tflops: 312", "peak_tflops: 400"),
    # the authored and seeded rounds are kept apart from the facts, under their seeds among their inputs
    "the rounds' seeds": lambda root: replace_once(
        root / "data" / "site.yaml", "authored_round: 2020 ", "authored_round: 2021 ") or replace_once(
        root / "data" / "site.yaml", "sampled_rounds: 7 ", "sampled_rounds: 8 "),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A project copy built once with the shared cache: the build every edit starts from."""
    root = copy_project(tmp_path_factory.mktemp("incremental"))
    B.build(root, root / "build", cache=shared_cache(tmp_path_factory))
    return root


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_rebuild_after_each_kind_of_edit_equals_a_clean_build_byte_for_byte(edit, built, tmp_path, tmp_path_factory):
    root = copy_project(tmp_path / "p")
    EDITS[edit](root)
    B.build(root, tmp_path / "rebuilt", cache=shared_cache(tmp_path_factory))
    B.build(root, tmp_path / "clean", cache=Cache(tmp_path / "empty-cache"), clean=True)
    rebuilt, clean = tree(tmp_path / "rebuilt"), tree(tmp_path / "clean")
    assert sorted(rebuilt) == sorted(clean)
    assert [name for name in clean if rebuilt[name] != clean[name]] == []
    assert rebuilt != tree(built / "build")  # negative control: every one of these edits shows in the output


def test_a_one_page_text_edit_renders_that_page_alone_without_numpy_or_matplotlib(built, tmp_path, tmp_path_factory):
    root = copy_project(tmp_path / "p")
    page = middle_page(root)  # a sentence no other test writes, so no cached page has it
    page.write_text(page.read_text(encoding="utf-8") + "\nA sentence only this test writes.\n", encoding="utf-8")
    cache_dir = tmp_path_factory.getbasetemp() / "generator-cache"

    def build():
        return fresh_build(root, tmp_path / "out", cache_dir, ("pages_rendered", "rendered"), ("numpy", "matplotlib"))
    assert build() == ([1, 0], [])
    # negative control: an edit to a draft's probabilities no other test makes brings numpy in (its rounds are
    # drawn again) and renders every page
    replace_once(root / "data" / "profiles.v1.json", '["2/8", "1/8", "0",   "0",   "4/8", "1/8"]',
                 '["2/8", "1/8", "0",   "1/8", "3/8", "1/8"]')
    (pages, _), modules = build()
    assert pages > 1 and "numpy" in modules


def test_a_draft_step_edit_draws_no_round_and_imports_no_numpy(built, tmp_path, tmp_path_factory):
    """The cost model prices rounds but decides none: the authored and seeded rounds, the error slopes and the
    playground's measured rounds are kept under what they depend on, so a draft-step edit (the bench's
    one-number edit; values no other test writes) reprices them and renders every page without numpy's random
    generators (the figures that show the draft step are redrawn, and matplotlib brings numpy itself).
    Negative control: the same edit with the cache's kept rounds removed draws them again, with numpy.random."""
    root = copy_project(tmp_path / "p")
    cache_dir = tmp_path_factory.getbasetemp() / "generator-cache"
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "2/19"')
    (pages, reused), numpy = fresh_build(root, tmp_path / "out", cache_dir, ("pages_rendered", "facts_reused"),
                                       ("numpy.random",))
    assert pages > 1 and reused is False and numpy == []
    folder = tmp_path / "cache"  # negative control: no kept rounds (nor the finished facts, pages and site)
    shutil.copytree(cache_dir, folder, ignore=shutil.ignore_patterns(
        "authored-round", "seeded-rounds", "facts", "numbers", "render-inputs", "pages", "site"))
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "2/19"', '"draft_step": "2/17"')
    assert fresh_build(root, tmp_path / "out", folder, (), ("numpy.random",))[1] == ["numpy.random"]


def test_a_number_edit_renders_the_pages_in_a_helper_that_got_ready_meanwhile(built, tmp_path, tmp_path_factory):
    """A number edit's pages are rendered in a helper process that imports the renderer while the build computes
    the numbers (build.pages_beside); the site is byte for byte what a clean build makes, and the build process
    itself imports neither Jinja, markdown-it nor the views. Negative control: with one worker the build renders them itself."""
    root = copy_project(tmp_path / "p")
    cache_dir = tmp_path_factory.getbasetemp() / "generator-cache"
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "3/29"')
    renderer = ("jinja2", "markdown_it", "generator.render.views")  # the card is kept by its inputs: no views either
    (beside, pages), loaded = fresh_build(root, tmp_path / "out", cache_dir, ("pages_beside", "pages"), renderer)
    assert beside is True and pages > 1 and loaded == []
    B.build(root, tmp_path / "clean", cache=Cache(tmp_path / "empty-cache"), clean=True)
    assert tree(tmp_path / "out") == tree(tmp_path / "clean")
    replace_once(root / "data" / "site.yaml", "workers: 2 ", "workers: 1 ")
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "3/29"', '"draft_step": "3/31"')
    (beside, _), loaded = fresh_build(root, tmp_path / "out", cache_dir, ("pages_beside", "pages"), renderer)
    assert beside is False and loaded == list(renderer)


BROKEN_PAGES = {  # where the helper fails: getting ready (reading the pages), or rendering
    "front matter": lambda text: text.replace("---\n", "---\ncolour: red\n", 1),
    "template": lambda text: text + "\nA number nobody computed: {{ no_such_fact }}.\n",
}


@pytest.mark.parametrize("broken", sorted(BROKEN_PAGES))
def test_a_page_that_fails_in_the_helper_fails_the_build_in_one_line(broken, built, tmp_path, tmp_path_factory):
    import subprocess
    import sys

    from generator.site.cache import ENV_DIR

    root = copy_project(tmp_path / "p")
    page = middle_page(root)
    page.write_text(BROKEN_PAGES[broken](page.read_text(encoding="utf-8")), encoding="utf-8")
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "5/47"')
    env = {**os.environ, ENV_DIR: str(tmp_path_factory.getbasetemp() / "generator-cache")}
    done = subprocess.run([sys.executable, "-m", "generator", "build", "--out", str(tmp_path / "out")],
                          cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: site_src/pages/{page.name}: ")
    assert ("no_such_fact" if broken == "template" else "colour") in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()




def test_pages_rendered_together_are_kept_in_one_entry_and_a_text_edit_keeps_its_page_apart(built, tmp_path, tmp_path_factory):
    """Creating a file costs here about what rendering a short page does, so a build that renders every page
    (a cold build, a data edit) keeps them in one cache entry; a text edit then renders its page alone and
    keeps that one apart. The output equals a clean build either way (the edit tests above)."""
    folder = tmp_path / "cache"  # the shared cache without its finished pages: every page is rendered
    shutil.copytree(shared_cache(tmp_path_factory).directory, folder, ignore=shutil.ignore_patterns("page", "pages", "site"))
    cache, root = Cache(folder), copy_project(tmp_path / "p")
    entries = lambda kind: len(list((folder / kind).glob("*.pickle")))  # noqa: E731
    assert B.build(root, tmp_path / "cold", cache=cache).pages_rendered > 1
    assert (entries("pages"), entries("page")) == (1, 0)
    page = middle_page(root)
    page.write_text(page.read_text(encoding="utf-8") + "\nA sentence only this test writes.\n", encoding="utf-8")
    assert B.build(root, tmp_path / "edited", cache=cache).pages_rendered == 1
    assert (entries("pages"), entries("page")) == (1, 1)


