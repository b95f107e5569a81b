"""Rebuilding after an edit reuses what the edit cannot change, and gives exactly what a --clean build gives.

Each kind of edit a person makes is applied to a copy of the project built once by this module (with a
cache of its own); each test starts from its own copy of that cache. The rebuild must equal, byte for
byte, a build of the edited copy from an empty cache. The copies run a small Monte Carlo and playground
(support.SMALL): what is checked here is what a rebuild reuses, not the simulation.
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from generator.site import pipeline as B
from generator.site.cache import Cache
from support import built_copy, copy_project


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r} is not there exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def middle_page(root: Path) -> Path:
    pages = sorted((root / "site_src" / "pages").glob("*.md"))
    return pages[len(pages) // 2]


EDITS = {
    "one page's text": lambda root: middle_page(root).write_text(
        middle_page(root).read_text(encoding="utf-8") + "\nOne more sentence for the reader.\n", encoding="utf-8"
    ),
    "a template": lambda root: replace_once(
        root / "site_src" / "templates" / "page.html",
        '<footer class="site-footer">',
        '<footer class="site-footer" data-edited="yes">',
    ),
    "an asset": lambda root: (root / "site_src" / "assets" / "style.css").write_text(
        (root / "site_src" / "assets" / "style.css").read_text(encoding="utf-8") + "\n/* edited */\n", encoding="utf-8"
    ),
    "the draft step": lambda root: replace_once(
        root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "1/13"'
    ),
    "a draft probability": lambda root: replace_once(
        root / "data" / "profiles.v1.json",
        '["2/8", "1/8", "0",   "0",   "4/8", "1/8"]',
        '["2/8", "1/8", "1/8", "0",   "3/8", "1/8"]',
    ),
    "a site setting": lambda root: replace_once(root / "data" / "site.yaml", "peak_tflops: 312", "peak_tflops: 400"),
    "the rounds' seeds": lambda root: (
        replace_once(root / "data" / "site.yaml", "authored_round: 2020 ", "authored_round: 2021 ")
        or replace_once(root / "data" / "site.yaml", "sampled_rounds: 7 ", "sampled_rounds: 8 ")
    ),
    "the Monte Carlo seed": lambda root: replace_once(
        root / "data" / "site.yaml", "convergence: 20230217 ", "convergence: 20230218 "
    ),
    "a quoted number": lambda root: replace_once(
        root / "data" / "practice.yaml", "plain_tpot_ms: 7.07", "plain_tpot_ms: 7.08"
    ),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A project copy built once, with a cache of its own: the build every edit starts from."""
    root, cache, _ = built_copy(tmp_path_factory.mktemp("incremental"), small=True)
    return root, cache


@pytest.fixture
def warm(built, tmp_path) -> Path:
    """This test's own copy of the module's cache folder."""
    shutil.copytree(built[1], tmp_path / "warm-cache")
    return tmp_path / "warm-cache"


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_rebuild_after_each_kind_of_edit_equals_a_clean_build_byte_for_byte(edit, built, warm, tmp_path):
    root = copy_project(tmp_path / "p", small=True)
    EDITS[edit](root)
    B.build(root, tmp_path / "rebuilt", cache=Cache(warm))
    B.build(root, tmp_path / "clean", cache=Cache(tmp_path / "empty-cache"), clean=True)
    rebuilt, clean = tree(tmp_path / "rebuilt"), tree(tmp_path / "clean")
    assert sorted(rebuilt) == sorted(clean)
    assert [name for name in clean if rebuilt[name] != clean[name]] == []
    assert rebuilt != tree(built[0] / "build")  # negative control: every one of these edits shows in the output


def figure_files(folder: Path) -> dict[str, bytes]:
    return {name: data for name, data in tree(folder / "figures").items() if name.endswith(".svg")}


def figure_inputs(folder: Path) -> dict[str, str]:
    entries = json.loads((folder / "figures" / "manifest.json").read_text(encoding="utf-8"))["figures"]
    return {name: entry["inputs"]["inputs_sha256"] for name, entry in entries.items()}


def test_a_page_text_edit_leaves_every_figure_file_unchanged(built, warm, tmp_path):
    """Negative control: a draft step edit, built the same way, changes the figures that show it."""
    root = copy_project(tmp_path / "p", small=True)
    EDITS["one page's text"](root)
    B.build(root, tmp_path / "out", cache=Cache(warm))
    assert figure_files(tmp_path / "out") == figure_files(built[0] / "build")
    assert tree(tmp_path / "out") != tree(built[0] / "build")  # the page did change
    EDITS["the draft step"](root)
    B.build(root, tmp_path / "out", cache=Cache(warm))
    assert figure_files(tmp_path / "out") != figure_files(built[0] / "build")


@pytest.mark.parametrize(
    "edit, draws", [("the draft step", "some"), ("one page's text", "none"), ("a draft probability", "some")]
)
def test_an_edit_changes_exactly_the_figures_drawn_from_what_it_changed(edit, draws, built, warm, tmp_path):
    """The draft step shows in the speedup figures, not in the distributions' or the Monte Carlo's: those files
    stay as they were. The figures whose inputs the manifest says changed are exactly the files that differ."""
    root = copy_project(tmp_path / "p", small=True)
    EDITS[edit](root)
    B.build(root, tmp_path / "out", cache=Cache(warm))
    before, after = figure_inputs(built[0] / "build"), figure_inputs(tmp_path / "out")
    changed = sorted(name for name in after if after[name] != before.get(name))
    old, new = figure_files(built[0] / "build"), figure_files(tmp_path / "out")
    differ = sorted({name.removesuffix(".svg").removesuffix(".dark") for name in new if new[name] != old.get(name)})
    assert differ == changed
    assert (len(changed) > 0) == (draws == "some") and len(changed) < len(after)
    if edit == "the draft step":  # the Monte Carlo's figures and numbers stay as they were
        assert all(new[name] == old[name] for name in new if name.startswith(("convergence", "error-vs-samples")))


BROKEN_PAGES = {  # where a page fails: reading it, or rendering it
    "front matter": lambda text: text.replace("---\n", "---\ncolour: red\n", 1),
    "template": lambda text: text + "\nA number nobody computed: {{ no_such_fact }}.\n",
}


@pytest.mark.parametrize("broken", sorted(BROKEN_PAGES))
def test_a_page_that_fails_fails_the_build_in_one_line(broken, built, warm, tmp_path):
    import subprocess
    import sys

    from generator.site.cache import ENV_DIR

    root = copy_project(tmp_path / "p", small=True)
    page = middle_page(root)
    page.write_text(BROKEN_PAGES[broken](page.read_text(encoding="utf-8")), encoding="utf-8")
    replace_once(root / "data" / "profiles.v1.json", '"draft_step": "1/10"', '"draft_step": "5/47"')
    env = {**os.environ, ENV_DIR: str(warm)}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(tmp_path / "out")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: site_src/pages/{page.name}: ")
    assert ("no_such_fact" if broken == "template" else "colour") in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
