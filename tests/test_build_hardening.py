"""Every file the build reads is read as it is now (links inside the project followed, links out of it
refused), a linked output folder keeps its link, and the switch to a new build/ is one atomic step that a
kill at any point cannot break."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from generator.site import output as O
from generator.site import pipeline as B
from generator.site.cache import Cache
from support import copy_project


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def cli_build(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", "build", *args], cwd=project, capture_output=True, text=True
    )


# --- every file the build reads is read as it is now, wherever it lies -----------------------------


def test_a_dot_asset_is_published_changed_and_removed(project, own_cache_folder):
    cache, out = Cache(own_cache_folder), project / "build"
    asset = project / "site_src" / "assets" / ".nojekyll"
    asset.write_bytes(b"one")
    B.build(project, out, cache=cache)
    assert (out / "assets" / ".nojekyll").read_bytes() == b"one"
    asset.write_bytes(b"two")
    B.build(project, out, cache=cache)
    assert (out / "assets" / ".nojekyll").read_bytes() == b"two"
    asset.unlink()
    B.build(project, out, cache=cache)
    assert not (out / "assets" / ".nojekyll").exists()


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_a_profiles_file_and_a_corpus_outside_data_are_read_as_they_are_now(how, small_project, tmp_path):
    project = small_project  # it trains the prose model twice on a corpus of its own
    outside = project / "elsewhere"
    outside.mkdir()
    profiles = outside / "profiles.json"
    profiles.write_bytes((project / "data" / "profiles.v1.json").read_bytes())
    corpus = outside / "corpus"
    corpus.mkdir()
    pages = sorted((project / "site_src" / "pages").glob("*.md"))
    prose = "".join(p.read_text(encoding="utf-8") for p in pages)
    (corpus / "prose.txt").write_text(prose, encoding="utf-8")
    site = project / "data" / "site.yaml"
    named = {"relative": os.path.relpath, "absolute": lambda p, _: str(p)}[how]
    edit(site, "profiles: profiles.v1.json", f"profiles: '{named(profiles, site.parent)}'   # the authored data")
    text = site.read_text(encoding="utf-8")
    start, end = text.index("  prose:\n"), text.index("  code:\n")
    site.write_text(
        text[:start] + f"  prose:\n    files: {named(corpus, site.parent)}/*.txt\n" + text[end:], encoding="utf-8"
    )
    out, folder = tmp_path / "out", tmp_path / "cache"
    B.build(project, out, cache=Cache(folder))
    edit(profiles, '"draft_step": "1/10"', '"draft_step": "1/9"')
    B.build(project, out, cache=Cache(folder))
    assert '"draft_step": "1/9"' in (out / "data" / "profiles.json").read_text(encoding="utf-8")
    (corpus / "prose.txt").write_text("Other prose, written later.\n" + prose, encoding="utf-8")
    models = {kind: (out / f"assets/playground-models-{kind}.js").read_bytes() for kind in ("prose", "code")}
    report = B.build(project, out, cache=Cache(folder))
    assert "computed: playground" in report.summary()  # what the build prints
    assert (out / "assets/playground-models-prose.js").read_bytes() != models["prose"]  # trained on the new text
    assert (out / "assets/playground-models-code.js").read_bytes() == models["code"]
    assert "Other prose" in (out / "assets" / "corpus" / "prose.txt").read_text(encoding="utf-8")
    (outside / "unrelated.txt").write_text("not read by the build")
    report = B.build(project, out, cache=Cache(folder))
    assert "(0 drawn" in report.summary() and "nothing else computed" in report.summary()  # a file not read


def test_a_copy_of_the_project_reuses_what_the_original_computed(project, tmp_path, own_cache_folder):
    cache = Cache(own_cache_folder)
    B.build(project, tmp_path / "one", cache=cache)
    other = copy_project(tmp_path / "other")
    report = B.build(other, tmp_path / "two", cache=Cache(own_cache_folder))
    assert "(0 drawn" in report.summary() and "nothing else computed" in report.summary()  # what the build prints
    assert tree(tmp_path / "one") == tree(tmp_path / "two")


def test_assets_through_a_link_inside_the_project_are_followed_and_never_stale(project, own_cache_folder):
    """The issue's case: site_src/assets a link to a folder, a file edited there. The folder lies inside the
    project here (one outside is refused: the next test)."""
    shared = project / "shared-assets"
    (project / "site_src" / "assets").rename(shared)
    (project / "site_src" / "assets").symlink_to(Path("..") / "shared-assets")
    (shared / "extra").mkdir()
    (project / "site_src" / "assets" / "linked").symlink_to("extra")  # a linked folder inside it, too
    (shared / "extra" / "note.txt").write_text("one")
    out, folder = project / "build", own_cache_folder
    B.build(project, out, cache=Cache(folder))
    css = (shared / "style.css").read_text(encoding="utf-8")
    assert (out / "assets" / "style.css").read_text(encoding="utf-8") == css
    (shared / "style.css").write_text(css + "\n/* edited */\n", encoding="utf-8")
    (shared / "extra" / "note.txt").write_text("two")
    assert cli_build(project).returncode == 0
    assert (out / "assets" / "style.css").read_text(encoding="utf-8").endswith("/* edited */\n")
    assert (out / "assets" / "linked" / "note.txt").read_text() == "two"


@pytest.mark.parametrize(
    "where",
    [
        "site_src/assets",
        "site_src/assets/leak.txt",
        "site_src/pages/leak.md",
        "site_src/templates/partials",
        "data/corpus",
    ],
)
def test_a_link_that_leaves_the_project_is_refused_in_one_line(where, project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")  # the project is tmp_path itself
    (outside / "secret.txt").write_text("not for publishing")
    link = project / where
    if link.exists():
        shutil.rmtree(link) if link.is_dir() and not link.is_symlink() else link.unlink()
    link.symlink_to(outside if "." not in link.name else outside / "secret.txt")
    (project / "build").mkdir()
    (project / "build" / "index.html").write_text("previous")
    (project / "build" / "figures").mkdir()
    (project / "build" / "figures" / "manifest.json").write_text("{}")
    done = cli_build(project)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith(f"error: {where}: a symlink to ") and "outside the project" in lines[0]
    )
    assert (project / "build" / "index.html").read_text() == "previous"


def test_a_link_that_stays_inside_the_project_builds_negative_control(project):
    (project / "site_src" / "assets" / "again.css").symlink_to("style.css")
    done = cli_build(project)
    assert done.returncode == 0, done.stderr
    assert (project / "build" / "assets" / "again.css").read_bytes() == (
        project / "site_src" / "assets" / "style.css"
    ).read_bytes()


# --- a linked output folder -------------------------------------------------------------------------


def test_a_linked_output_folder_has_its_target_replaced_and_the_link_kept(project, tmp_path_factory):
    deploy = tmp_path_factory.mktemp("deploy") / "site"
    deploy.mkdir(parents=True)
    (project / "build").symlink_to(deploy)
    for _ in range(2):  # the first build fills the empty target; the second replaces a build
        done = cli_build(project)
        assert done.returncode == 0, done.stderr
        assert (project / "build").is_symlink() and os.readlink(project / "build") == str(deploy)
        assert (deploy / "index.html").is_file()
    assert sorted(p.name for p in project.iterdir()) == ["build", "data", "site_src"]  # no .build-old-* litter
    assert sorted(p.name for p in deploy.parent.iterdir()) == ["site"]


def test_a_linked_output_folder_whose_target_cannot_be_made_is_refused_before_building(
    project, tmp_path_factory, own_cache_folder
):
    (project / "build").symlink_to(tmp_path_factory.mktemp("deploy") / "missing" / "site")
    shutil.rmtree(own_cache_folder)  # start cold, so that an empty cache afterwards shows nothing was computed
    own_cache_folder.mkdir()
    done = cli_build(project)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "a link to" in lines[0] and "cannot be written" in lines[0]
    assert list(own_cache_folder.iterdir()) == []  # nothing was computed


# --- item 4: one atomic switch, and a kill at every step ------------------------------------------

OLD = {"index.html": b"old", "figures/manifest.json": b"{}", **{f"old-{i}.txt": b"old" for i in range(8)}}
NEW = {"index.html": b"new", "figures/manifest.json": b"{}", **{f"new-{i}.txt": b"new" for i in range(8)}}
NEWER = {"index.html": b"newer", "figures/manifest.json": b"{}"}
STEPS = {
    "exchange": ["staging", "writing", "written", "exchanged", "done"],
    "fallback": ["staging", "writing", "written", "moved-aside", "renamed", "done"],
}
KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import generator.site.output as O
    step, mode, out = sys.argv[1:4]
    if mode == "fallback":
        O._exchange = lambda a, b: False
    def checkpoint(name):
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)
    O._checkpoint = checkpoint
    O.write_atomically({NEW!r}, Path(out))
""").replace("{NEW!r}", repr(NEW))


def test_the_kernel_here_swaps_folders_in_one_step(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "from-a").touch()
    if not O._exchange(tmp_path / "a", tmp_path / "b"):
        pytest.skip("no renameat2(RENAME_EXCHANGE) here: only the two-rename fallback is tested")
    assert os.listdir(tmp_path / "b") == ["from-a"] and os.listdir(tmp_path / "a") == []


@pytest.mark.parametrize("mode,step", [(m, s) for m, steps in STEPS.items() for s in steps])
def test_a_build_killed_at_any_step_of_the_write_leaves_a_whole_build(mode, step, tmp_path):
    out = tmp_path / "build"
    O.write_atomically(OLD, out)
    if mode == "exchange" and not O._exchange(out, out):
        pytest.skip("no renameat2(RENAME_EXCHANGE) here")
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, step, mode, str(out)], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    if mode == "exchange":  # one step: build/ is whole at every instant, even before anything recovers it
        assert tree(out) in (OLD, NEW)
    O.recover(out)  # what the next build does first
    assert tree(out) in (OLD, NEW)
    if step in ("staging", "writing", "written", "moved-aside"):
        assert tree(out) == OLD
    O.write_atomically(NEWER, out)  # the next build succeeds and leaves nothing beside build/
    assert tree(out) == NEWER
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def test_a_build_killed_between_the_fallbacks_two_renames_gets_its_old_tree_back(tmp_path):
    """The case from the issue: no build/ at all, and the next build deleted .build-old-* instead."""
    out = tmp_path / "build"
    O.write_atomically(OLD, out)
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, "moved-aside", "fallback", str(out)])
    assert done.returncode == -signal.SIGKILL and not out.exists()
    assert [p.name.startswith(".build-old-") for p in tmp_path.iterdir()].count(True) == 1
    O.recover(out)
    assert tree(out) == OLD


# --- issue 31, item 7: no process outlives a killed build ----------------------------------------------


def session_members(sid: int) -> list[int]:
    """The ids of the live processes in session `sid` (from /proc: field 6 of each process's stat)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # a zombie has ended; only its parent has not reaped it
            members.append(int(stat.parent.name))
    return members


def survivors(sid: int, seconds: float = 15.0) -> list[int]:
    """The members of session `sid` still alive after `seconds` (as soon as none is); the test's clean-up kills them."""
    deadline = time.monotonic() + seconds
    while session_members(sid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = session_members(sid)
    for pid in left:  # clean up what the test found, by id
        os.kill(pid, signal.SIGKILL)
    return left


def survivors_after_killing(proc: subprocess.Popen, seconds: float = 15.0) -> list[int]:
    """SIGKILL the process `proc` alone (not its group); its session's members still alive after `seconds`."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    return survivors(proc.pid, seconds)


def cold_build_in_a_session(project: Path, cache: Path) -> subprocess.Popen:
    """`build` with every figure to draw (the rest reused), started in a session of its own: its session id is its
    pid, so every process it starts is found by it. Its stderr is kept as text."""
    for folder in cache.rglob("figure"):
        shutil.rmtree(folder)
    return subprocess.Popen(
        [sys.executable, "-m", "generator", "build"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def until(build: subprocess.Popen, condition) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and build.poll() is None and not condition():
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
def test_no_process_outlives_a_build_killed_while_drawing_figures(project, own_cache_folder):
    build = cold_build_in_a_session(project, own_cache_folder)
    until(build, lambda: any(own_cache_folder.rglob("figure/*.json")) or len(session_members(build.pid)) > 1)
    assert build.poll() is None, "the build ended before it drew a figure"
    assert survivors_after_killing(build) == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
def test_ctrl_c_while_a_build_draws_stops_it_at_once_and_leaves_no_process(project, own_cache_folder):
    """Ctrl-C reaches the terminal's whole process group: the build and the helpers it draws in."""
    build = cold_build_in_a_session(project, own_cache_folder)
    until(build, lambda: len(session_members(build.pid)) > 1)
    assert build.poll() is None, "the build ended before it started a helper"  # stopped as the helpers start
    os.killpg(build.pid, signal.SIGINT)
    _, err = build.communicate(timeout=30)
    assert build.returncode == 130 and "Traceback" not in err, err[-2000:]  # nor a helper caught as it starts
    assert survivors(build.pid) == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
def test_a_process_left_behind_by_a_killed_parent_is_found_negative_control():
    parent = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(session_members(parent.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(survivors_after_killing(parent, seconds=1.0)) == 1  # the orphaned sleep, found (then killed)
