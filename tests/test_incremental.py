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
    one-number edit; values no other test writes) reprices them and renders every page without numpy.
    Negative control: the same edit with the cache's kept rounds removed draws them again, with numpy."""
    root = copy_project(tmp_path / "p")
    cache_dir = tmp_path_factory.getbasetemp() / "generator-cache"
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "2/19"')
    (pages, reused), numpy = fresh_build(root, tmp_path / "out", cache_dir, ("pages_rendered", "facts_reused"), ("numpy",))
    assert pages > 1 and reused is False and numpy == []
    folder = tmp_path / "cache"  # negative control: no kept rounds (nor the finished facts, pages and site)
    shutil.copytree(cache_dir, folder, ignore=shutil.ignore_patterns(
        "authored-round", "seeded-rounds", "facts", "numbers", "render-inputs", "pages", "site"))
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "2/19"', '"draft_step": "2/17"')
    assert fresh_build(root, tmp_path / "out", folder, (), ("numpy",))[1] == ["numpy"]


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


LIGHT_PATH_UNNEEDED = ("yaml", "latex2mathml", "importlib.metadata", "multiprocessing", "urllib.request")


def test_a_second_text_edit_parses_no_yaml_converts_no_formula_and_looks_up_no_package(built, tmp_path, tmp_path_factory):
    """What the first edit parsed (site.yaml, front matter), converted (LaTeX) and looked up (library versions,
    corpus lists, corpus digests) is kept by its text or under its files' stat, so the next edit of the same
    page imports none of the modules that did it. Negative controls: a new formula brings latex2mathml in,
    new front matter brings yaml in."""
    root = copy_project(tmp_path / "p")
    page = middle_page(root)
    cache_dir = tmp_path_factory.getbasetemp() / "generator-cache"
    def edit_and_build(text: str, description: str = "") -> tuple[int, list[str]]:
        source = page.read_text(encoding="utf-8")
        if description:
            assert "\ndescription: " in source
            source = source.replace("\ndescription: ", f"\ndescription: {description} ", 1)
        page.write_text(source + text, encoding="utf-8")
        (pages,), modules = fresh_build(root, tmp_path / "out", cache_dir, ("pages_rendered",), LIGHT_PATH_UNNEEDED)
        return pages, modules

    edit_and_build("\nA first sentence only this test writes.\n")
    assert edit_and_build("\nA second sentence only this test writes.\n") == (1, [])
    pages, modules = edit_and_build("\nAnd a formula only this test writes: $x_{417} + 1$.\n")
    assert pages == 1 and "latex2mathml" in modules and "yaml" not in modules
    pages, modules = edit_and_build("\nA third sentence.\n", description="Only this test says so.")
    assert "yaml" in modules and "latex2mathml" not in modules


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


def test_a_number_edit_writes_its_new_numbers_into_formulas_converted_before_without_latex2mathml(built, tmp_path, tmp_path_factory):
    """A data edit changes numbers inside formulas ("c = 1/10" becomes "c = 1/8"); their MathML is the earlier
    formulas' with the new numbers (tests/test_render.py checks that against latex2mathml), so the rebuild never
    imports latex2mathml; nor importlib.metadata (the corpus list and digests come from this build's key).
    Negative control: a formula of a new shape brings latex2mathml in."""
    root = copy_project(tmp_path / "p")
    cache_dir = tmp_path_factory.getbasetemp() / "generator-cache"
    def build():
        (pages,), loaded = fresh_build(root, tmp_path / "out", cache_dir, ("pages_rendered",),
                                       ("latex2mathml", "importlib.metadata"))
        return pages, loaded
    build()  # first unedited, in a fresh process as the edit's build: the memo then knows this sys.path's libraries
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "1/8"')
    pages, loaded = build()
    assert pages > 1 and "latex2mathml" not in loaded
    assert "importlib.metadata" not in loaded, "the playground's key lists the corpus again instead of reusing this build's list"
    page = middle_page(root)
    page.write_text(page.read_text(encoding="utf-8") + "\nA formula of its own: $\\sqrt{y} \\ne 41$.\n", encoding="utf-8")
    pages, loaded = build()
    assert pages == 1 and "latex2mathml" in loaded


def test_what_a_cold_build_parses_before_its_yaml_memo_is_installed_is_kept_too(built, tmp_path, tmp_path_factory):
    """A cold build reads site.yaml before its YAML memo is installed (to start compiling the templates at once);
    that parse is kept all the same, so the next text edit parses no YAML. Negative control: new front matter."""
    folder = tmp_path / "cache"  # no compiled templates (so the build starts as a cold one does) and no memo
    shutil.copytree(shared_cache(tmp_path_factory).directory, folder, ignore=shutil.ignore_patterns("jinja", "memo", "site"))
    root = copy_project(tmp_path / "p")
    def build():
        return fresh_build(root, tmp_path / "out", folder, ("pages_rendered",), ("yaml",))
    build()
    page = middle_page(root)
    page.write_text(page.read_text(encoding="utf-8") + "\nA sentence written after a cold start.\n", encoding="utf-8")
    assert build() == ([1], [])
    page.write_text(page.read_text(encoding="utf-8").replace("\ndescription: ", "\ndescription: New. ", 1), encoding="utf-8")
    assert build()[1] == ["yaml"]


def test_a_template_edit_renders_every_page_again_without_parsing_markdown(built, tmp_path, tmp_path_factory):
    """Each page's Markdown is kept by its text after Jinja (pages.Markdown); a layout edit changes no page's
    text, so every page is rendered again without markdown-it even being imported. Negative control: a page
    text edit brings it in."""
    folder = tmp_path / "cache"  # the shared cache without finished pages, so the first build renders them all
    shutil.copytree(shared_cache(tmp_path_factory).directory, folder, ignore=shutil.ignore_patterns("page", "pages", "site"))
    root = copy_project(tmp_path / "p")

    def build():
        return fresh_build(root, tmp_path / "out", folder, ("pages_rendered",), ("markdown_it",))
    build()  # the memo now holds every page's text as this project's data makes it
    replace_once(root / "site_src" / "templates" / "page.html", '<footer class="site-footer">',
                 '<footer class="site-footer" data-memo-test="yes">')
    (pages,), loaded = build()
    assert pages > 1 and loaded == []
    page = middle_page(root)
    page.write_text(page.read_text(encoding="utf-8") + "\nA sentence only the Markdown memo test writes.\n", encoding="utf-8")
    assert build() == ([1], ["markdown_it"])


def test_a_draft_step_edit_takes_the_stepper_from_the_widget_memo(tmp_path, monkeypatch):
    """The stepper shows rounds the cost model does not price, so its HTML is kept by what it is drawn from
    (pages.KEPT_WIDGETS): after a cold build (its rounds computed in the process), a draft-step edit (its rounds
    loaded from the cache) renders every page but not the stepper. Negative control: a draft probability edit
    changes the rounds, and the stepper is drawn again."""
    import jinja2

    folder = tmp_path / "cache"  # empty: the first build is a cold one
    root = copy_project(tmp_path / "p")
    drawn: list[str] = []
    render = jinja2.Template.render
    monkeypatch.setattr(jinja2.Template, "render", lambda self, *a, **k: drawn.append(self.name) or render(self, *a, **k))

    def build() -> list[str]:
        drawn.clear()
        B.build(root, tmp_path / "out", cache=Cache(folder), workers=1)  # one worker: the pages render here
        return drawn
    assert "widgets/stepper.html" in build()
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "3/29"')
    assert "widgets/stepper.html" not in build() and "page.html" in drawn
    replace_once(root / "data" / "profiles.v1.json", '["2/8", "1/8", "0",   "0",   "4/8", "1/8"]',
                 '["2/8", "1/8", "0",   "1/16", "7/16", "1/8"]')
    assert "widgets/stepper.html" in build()
