"""The stat stamp (generator/site/uptodate.py): `build` stops early only when no input and no output file moved.

Each test builds a project copy in-process with the session's shared cache (so the build itself is
reused), checks `uptodate.fresh` says so, then changes one thing and checks the stamp no longer
vouches for the output. The edits are the ones a stat check could miss: the same size, the mtime put
back, a new inode with the old times, a deleted or added output file, the environment, the commit.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.site import output as O
from generator.site import pipeline as B
from generator.site import uptodate as U
from generator.site.cache import ENV_DIR, Cache
from support import copy_project


def shared_cache(tmp_path_factory) -> Cache:
    return Cache(tmp_path_factory.getbasetemp() / "generator-cache")


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def fresh(root: Path, cache: Cache) -> bool:
    return U.fresh(str(root), str(root / "build"), str(cache.directory)) is not None


@pytest.fixture
def built(tmp_path, tmp_path_factory):
    root = copy_project(tmp_path / "p").resolve()
    cache = shared_cache(tmp_path_factory)
    B.build(root, root / "build", cache=cache)
    time.sleep(U.RACY_NS / 1e9)  # the copy's files are no longer "racy" for the next build
    B.build(root, root / "build", cache=cache)
    assert fresh(root, cache)
    return root, cache


def same_size_edit(path: Path) -> None:
    """Change one byte, keep the size, and put the modification time back as it was."""
    before = path.stat()
    data = path.read_bytes()
    body = data.find(b"\n---", 3) + 4 if data.startswith(b"---") else 0  # a page's prose, not its front matter
    i = data.index(b" the ", body)
    path.write_bytes(data[:i] + b" thy " + data[i + 5:])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_an_edit_that_keeps_size_and_mtime_is_seen_and_the_rebuild_shows_it(built, tmp_path):
    root, cache = built
    page = sorted((root / "site_src" / "pages").glob("*.md"))[3]
    before = tree(root / "build")
    same_size_edit(page)
    assert not fresh(root, cache)  # the ctime moved: nobody can set it back
    B.build(root, root / "build", cache=cache)
    changed = [name for name, data in tree(root / "build").items() if before.get(name) != data]
    assert f"{page.stem}.html" in changed and b" thy " in (root / "build" / f"{page.stem}.html").read_bytes()
    # that this rebuild equals a --clean build is test_incremental's "same size and mtime" case


@pytest.mark.parametrize("where", ["data/site.yaml", "site_src/templates/page.html", "site_src/assets/style.css"])
def test_a_same_size_same_mtime_edit_anywhere_in_the_inputs_is_seen(where, built):
    root, cache = built
    same_size_edit(root / where)
    assert not fresh(root, cache)


def test_a_file_replaced_by_a_copy_with_the_old_times_is_seen(built):
    """rsync and `cp -p` make a new file (new inode) with the old size and times."""
    root, cache = built
    path = root / "site_src" / "assets" / "style.css"
    copy = path.with_name("style.css.tmp")
    shutil.copy2(path, copy)
    os.replace(copy, path)
    assert not fresh(root, cache)


def test_a_new_input_file_is_seen(built):
    root, cache = built
    (root / "site_src" / "assets" / "extra.txt").write_text("new\n", encoding="utf-8")
    assert not fresh(root, cache)


@pytest.mark.parametrize("change", ["delete", "add", "edit"])
def test_a_changed_output_folder_forces_a_build_that_restores_it(change, built):
    root, cache = built
    out = root / "build"
    before = tree(out)
    target = out / "index.html"
    if change == "delete":
        target.unlink()
    elif change == "add":
        (out / "stray.html").write_text("stray\n", encoding="utf-8")
    else:
        same_size_edit(target)
    assert not fresh(root, cache)
    B.build(root, out, cache=cache)
    assert tree(out) == before
    assert fresh(root, cache)


def test_the_environment_the_pages_read_is_part_of_the_stamp(built, monkeypatch):
    root, cache = built
    monkeypatch.setenv("GENERATOR_SITE_URL", "https://example.org/explainer/")
    assert not fresh(root, cache)
    monkeypatch.delenv("GENERATOR_SITE_URL")
    assert fresh(root, cache)  # negative control: the same environment again


def test_another_output_folder_or_a_cleared_cache_has_no_stamp(built, tmp_path):
    root, cache = built
    assert U.fresh(str(root), str(tmp_path / "other"), str(cache.directory)) is None
    assert U.fresh(str(root), str(root / "build"), str(tmp_path / "no-cache")) is None


def test_a_racy_file_is_stamped_only_when_it_still_holds_the_bytes_the_build_hashed(built, monkeypatch):
    """Every input counts as just edited (a huge margin): the stamp is written only after re-reading them."""
    root, cache = built
    before = U.snapshot(str(root))
    monkeypatch.setattr(U, "_racy", lambda recorded, since: recorded is not None)
    monkeypatch.setattr(U, "RACY_NS", 0)  # old enough now: any later write moves the ctime
    out = str(root / "build")
    used: dict[str, bytes] = {}
    B.input_digests(root, used)
    common = dict(extra=[], used=used, commit="", staged=U.walk(out), summary="s")
    assert U.write(before, out, str(cache.directory), hash_file=B._file_digest, **common)
    assert fresh(root, cache)
    assert not U.write(before, out, str(cache.directory), hash_file=lambda p: b"other bytes", **common)
    assert not fresh(root, cache)
    monkeypatch.setattr(U, "RACY_NS", 10**18)  # edited too recently to tell a later same-tick write
    assert not U.write(before, out, str(cache.directory), hash_file=B._file_digest, **common)


def test_a_stamp_is_not_written_when_another_build_swapped_its_output_in(built):
    root, cache = built
    out = str(root / "build")
    staged = U.walk(out)
    (root / "build" / "numbers.csv").write_bytes(b"another build's\n")
    used: dict[str, bytes] = {}
    B.input_digests(root, used)
    assert not U.write(U.snapshot(str(root)), out, str(cache.directory), extra=[], used=used,
                       hash_file=B._file_digest, commit="", staged=staged, summary="s")
    assert not fresh(root, cache)  # and the old stamp is gone too


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z",
           "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_commit_is_read_from_the_files_as_git_log_reads_it(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    if U.git_dir(str(root)) is None:
        assert U.head_commit(str(root)) == ""  # outside any repository
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "one")
    first = git(root, "rev-parse", "HEAD").strip()
    assert U.head_commit(str(root)) == first
    git(root, "commit", "-q", "--allow-empty", "-m", "two")
    second = git(root, "rev-parse", "HEAD").strip()
    assert U.head_commit(str(root)) == second != first
    git(root, "pack-refs", "--all")  # the ref now lives in packed-refs only
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    assert U.head_commit(str(root)) == second
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"), first)  # a worktree: .git is a file, HEAD detached
    assert U.head_commit(str(tmp_path / "wt")) == first
    sub = root / "sub" / "deeper"
    sub.mkdir(parents=True)
    assert U.head_commit(str(sub)) == second  # found from a folder inside the checkout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_new_commit_makes_the_stamp_stale(built):
    root, cache = built
    git(root, "init", "-q", "-b", "main")
    assert not fresh(root, cache)  # a repository appeared above the inputs: the pages now name a commit
    git(root, "add", "data")
    git(root, "commit", "-q", "-m", "one")
    B.build(root, root / "build", cache=cache)
    time.sleep(U.RACY_NS / 1e9)
    B.build(root, root / "build", cache=cache)
    assert fresh(root, cache)
    git(root, "commit", "-q", "--allow-empty", "-m", "two")
    assert not fresh(root, cache)


def test_the_command_line_stops_early_only_when_nothing_changed(tmp_path, tmp_path_factory):
    """End to end: two `build` commands, then a deleted output file, then a page edit that keeps the size."""
    root = copy_project(tmp_path / "p")
    cache = tmp_path / "cache"
    shared = tmp_path_factory.getbasetemp() / "generator-cache"
    if shared.is_dir():  # run alone, the test starts from an empty cache (a cold build, only slower)
        shutil.copytree(shared, cache, ignore=shutil.ignore_patterns("stamp"))
    env = {**os.environ, ENV_DIR: str(cache)}

    def build() -> str:
        done = subprocess.run([sys.executable, "-m", "generator", "build"], cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    time.sleep(U.RACY_NS / 1e9)
    assert "no input changed" not in build()
    first = tree(root / "build")
    assert "no input changed" in build()
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "generator", "build"], cwd=root, env=env,
                          capture_output=True, text=True)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.returncode == 0 and "no input changed" in done.stdout
    assert "generator.site.uptodate" in imported  # negative control: the listing works
    assert imported.isdisjoint({"generator.site.pipeline", "yaml", "jinja2", "numpy", "hashlib", "pickle"})
    (root / "build" / "index.html").unlink()
    assert "no input changed" not in build()
    assert tree(root / "build") == first
    page = sorted((root / "site_src" / "pages").glob("*.md"))[3]
    same_size_edit(page)
    assert "no input changed" not in build()
    assert tree(root / "build") != first


# --- what the content-hashed build keeps under stats, and the hard-linked output ------------------


def test_the_memo_gives_the_same_key_and_drops_an_entry_whose_file_moved(tmp_path):
    root = copy_project(tmp_path / "p").resolve()
    memo_file = str(tmp_path / "memo.marshal")
    plain = B.input_digests(root)
    memo = U.StatMemo(memo_file)
    assert B.input_digests(root, memo=memo) == plain
    memo.save()
    again = U.StatMemo(memo_file)
    assert any(key[0] == "sha256" for key in again.entries)  # the corpora are kept by their stat
    assert B.input_digests(root, memo=again) == plain
    # a watched file replaced by other bytes with its old size and times (rsync, cp -p): no longer vouched for
    watched = tmp_path / "watched.txt"
    watched.write_bytes(b"abc")
    time.sleep(U.RACY_NS / 1e9 * 2)
    assert again.remember("k", (str(watched),), lambda: "from abc") == "from abc"
    assert again.get("k", (str(watched),)) == "from abc"
    other = tmp_path / "other.txt"
    other.write_bytes(b"abd")
    st = watched.stat()
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, watched)
    assert again.get("k", (str(watched),)) is None


def test_the_memo_keeps_nothing_read_in_the_same_instant_it_changed(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    path.write_text("one\n")
    memo = U.StatMemo(str(tmp_path / "memo.marshal"))
    monkeypatch.setattr(U, "RACY_NS", 10**12)  # "just written", however slow this machine is today
    assert memo.remember("k", (str(path),), lambda: "value one") == "value one"
    assert memo.get("k", (str(path),)) is None  # racy: not kept
    monkeypatch.setattr(U, "RACY_NS", 0)
    time.sleep(0.01)
    assert memo.remember("k", (str(path),), lambda: "value one") == "value one"
    assert memo.get("k", (str(path),)) == "value one"
    path.write_text("two\n")  # the same size
    assert memo.get("k", (str(path),)) is None


def test_unchanged_output_files_are_hard_linked_and_the_previous_build_is_never_touched(tmp_path, monkeypatch):
    out = tmp_path / "build"
    files = {"index.html": b"one", "figures/manifest.json": b"{}", "assets/big.txt": b"x" * 100_000}
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    O.write_atomically(files, out)
    first = {name: os.stat(out / name) for name in files}
    O.write_atomically({**files, "index.html": b"two"}, out)
    assert os.stat(out / "assets" / "big.txt").st_ino == first["assets/big.txt"].st_ino
    assert os.stat(out / "index.html").st_ino != first["index.html"].st_ino
    assert tree(out) == {**files, "index.html": b"two"}
    assert os.stat(out / "assets" / "big.txt").st_mtime_ns == 1700000000 * 10**9
    # another date: the previous build's file would need a new date, so it is written, not linked
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1800000000")
    kept = os.stat(out / "assets" / "big.txt")
    O.write_atomically(files, out)
    assert os.stat(out / "assets" / "big.txt").st_ino != kept.st_ino
    assert os.stat(out / "assets" / "big.txt").st_mtime_ns == 1800000000 * 10**9


def test_a_failed_write_leaves_the_previous_builds_bytes_and_dates(tmp_path):
    out = tmp_path / "build"
    files = {"index.html": b"one", "figures/manifest.json": b"{}", "assets/big.txt": b"x" * 1000}
    O.write_atomically(files, out)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_nlink) for p in out.rglob("*") if p.is_file()}
    with pytest.raises(B.BuildError):
        O.write_atomically({**files, "zz/../../escape.txt": b"no"}, out)  # after the others are linked
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_nlink) for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def test_site_yaml_edited_between_two_builds_in_one_process_is_read_again(tmp_path):
    site = tmp_path / "site.yaml"
    site.write_text("title: One\n", encoding="utf-8")
    assert B.read_config(site).title == "One"
    site.write_text("title: Two\n", encoding="utf-8")
    assert B.read_config(site).title == "Two"


def test_a_new_file_matching_a_corpus_glob_outside_data_is_seen(tmp_path):
    root = copy_project(tmp_path / "p").resolve()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "prose.txt").write_text("Some prose written for the project.\n" * 200, encoding="utf-8")
    site = root / "data" / "site.yaml"
    text = site.read_text(encoding="utf-8")
    start, end = text.index("  prose:\n"), text.index("  code:\n")
    site.write_text(text[:start] + "  prose:\n    files: ../../corpus/*.txt\n" + text[end:], encoding="utf-8")
    out = tmp_path / "out"
    staged = O.write_atomically({"index.html": b"x", "figures/manifest.json": b"{}"}, out)
    time.sleep(U.RACY_NS / 1e9 * 2)
    before = U.snapshot(str(root))
    used: dict[str, bytes] = {}
    B.input_digests(root, used)
    extras = B.stamp_extras(root, out, used)
    assert str(corpus) in extras and str(tmp_path) not in extras
    cache_dir = str(tmp_path / "cache")
    assert U.write(before, str(out), cache_dir, extra=extras, used=used, hash_file=B._file_digest,
                   commit=U.head_commit(str(root)), staged=staged, summary="s")
    assert U.fresh(str(root), str(out), cache_dir) is not None
    (tmp_path / "unrelated.txt").write_text("beside the corpus folder, not in it\n", encoding="utf-8")
    assert U.fresh(str(root), str(out), cache_dir) is not None  # negative control: a file the glob cannot match
    (corpus / "more.txt").write_text("More prose.\n" * 200, encoding="utf-8")
    assert U.fresh(str(root), str(out), cache_dir) is None
