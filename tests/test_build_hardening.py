"""Issue 12, items 2-4: the cache key follows every file the build reads, killed builds leave no workers,
and the switch to a new build/ is one atomic step that a kill at any point cannot break."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from generator.site import output as O
from generator.site import pipeline as B
from generator.site.cache import ENV_DIR, Cache
from support import copy_project


def shared_cache(tmp_path_factory) -> Cache:
    return Cache(tmp_path_factory.getbasetemp() / "generator-cache")


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- item 2 (a) and (c): the key covers every file the build reads, wherever it is ---------------

def test_a_dot_asset_is_published_changed_and_removed_with_the_key(project, tmp_path_factory):
    cache, out = shared_cache(tmp_path_factory), project / "build"
    asset = project / "site_src" / "assets" / ".nojekyll"
    asset.write_bytes(b"one")
    B.build(project, out, cache=cache)
    assert (out / "assets" / ".nojekyll").read_bytes() == b"one"
    asset.write_bytes(b"two")
    report = B.build(project, out, cache=cache)
    assert not report.site_reused and (out / "assets" / ".nojekyll").read_bytes() == b"two"
    asset.unlink()  # back to the shipped inputs, which another build may already have cached: fine, if it is right
    B.build(project, out, cache=cache)
    assert not (out / "assets" / ".nojekyll").exists()
    assert B.build(project, out, cache=cache).site_reused  # and nothing else changed: the next one is reused


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_the_key_follows_a_profiles_file_and_a_corpus_outside_data(how, project, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    profiles = outside / "profiles.json"
    profiles.write_bytes((project / "data" / "profiles.v1.json").read_bytes())
    corpus = outside / "corpus"
    corpus.mkdir()
    (corpus / "prose.txt").write_text("Some prose written for the project.\n" * 100, encoding="utf-8")
    site = project / "data" / "site.yaml"
    named = {"relative": os.path.relpath, "absolute": lambda p, _: str(p)}[how]
    # written so that a line-matching regex would miss it: quoted, with a comment after it
    edit(site, "profiles: profiles.v1.json", f"profiles: '{named(profiles, site.parent)}'   # the authored data")
    text = site.read_text(encoding="utf-8")
    start, end = text.index("  prose:\n"), text.index("  code:\n")
    site.write_text(text[:start] + f"  prose:\n    files: {named(corpus, site.parent)}/*.txt\n" + text[end:],
                    encoding="utf-8")
    before = B.site_key(project)

    profiles.write_text(profiles.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    after_profiles = B.site_key(project)
    (corpus / "prose.txt").write_text((corpus / "prose.txt").read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    after_corpus = B.site_key(project)
    (outside / "unrelated.txt").write_text("not read by the build")
    assert len({before, after_profiles, after_corpus}) == 3
    assert B.site_key(project) == after_corpus  # negative control: a file the build does not read
    inputs = B.site_inputs(project)
    assert profiles in inputs and corpus / "prose.txt" in inputs
    assert any(p.name == "__init__.py" and p.parent.name == "attr" for p in inputs)  # the code corpus, in a package


def test_copies_of_one_project_still_share_the_key(project, tmp_path):
    other = copy_project(tmp_path / "other")
    assert B.site_key(project.resolve()) == B.site_key(other.resolve())


# --- item 3: kill -9 of a build leaves no helper process behind -----------------------------------

def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers through /proc (Linux)")
def test_killing_a_build_with_sigkill_leaves_no_helper_process_running(project, tmp_path):
    """A cold build (an empty cache) trains the playground in two helper processes; the build is killed
    with -9 once they exist, and both must be gone soon after."""
    env = {**os.environ, ENV_DIR: str(tmp_path / "empty-cache")}
    proc = subprocess.Popen([sys.executable, "-m", "generator", "build"], cwd=project, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            workers = [c for c in _children(proc.pid) if _running(c)]
        assert len(workers) >= 2, "the build never started its helper processes"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10  # each helper looks for its parent five times a second
    while any(_running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [w for w in workers if _running(w)]
    for w in survivors:  # do not leave them to the next test either
        os.kill(w, signal.SIGKILL)
    assert survivors == [], f"workers {survivors} outlived their build"


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
