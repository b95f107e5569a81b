"""A stat-first answer to "would a build change anything?", cheap enough to run before any import.

After a successful build, `write` records a stamp in the cache folder (`stamp/`, one file per project
and output folder): for every input the build's content key covers (data/ and site_src/ whole, this
package's files, the playground's corpus files, the installed libraries' metadata, the folders on
sys.path, the environment variables and the git commit the pages print), its size, modification and
status-change times (nanoseconds) and inode; and the same for every file of the output folder. The
next `python -m generator build` compares them (`fresh`) before importing YAML, Jinja, numpy or
hashing a byte; when every one matches, the output folder already is what the build would write,
and the build stops there. Anything that differs, or any doubt, falls through to the content-hashed
build (build.py), which writes a new stamp: a stat check can only skip work, never choose a result.

What it relies on, and where that ends:
- A write to a file moves its status-change time (ctime) to the clock's current tick and nobody can
  set it back (touch, git and rsync restore mtimes, not ctimes); replacing a file gives a new inode.
  So an edit that keeps the size and restores the mtime is still seen.
- "Racy" files (git's word): an input changed within RACY_NS of the moment the build first looked
  at it could be changed again in the same tick without its ctime moving. Such files are re-hashed
  when the stamp is written and must still hold the bytes the build used, else no stamp is written;
  a file system with whole-second times gets a two-second margin.
- The commit is read from .git (HEAD, the ref it names, packed-refs) and compared with the commit
  the build printed; a layout it cannot read (reftable, GIT_DIR set) always falls through.
- Not covered, as for the content key: system fonts (use --clean after changing them), and a clock
  set back between two builds.
"""
from __future__ import annotations

import marshal
import os
import sys
import time
import zlib

FORMAT = 1
RACY_NS = 50_000_000  # several clock ticks: a file system's times advance by a scheduler tick (1-10 ms)
COARSE_RACY_NS = 2_000_000_000  # whole-second (or FAT's two-second) time stamps
ENV_KEYS = ("GENERATOR_SITE_URL", "SOURCE_DATE_EPOCH", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR",
            "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY")
PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
TREES = ("data", "site_src")


def stat_of(path: str) -> tuple[int, int, int, int, int] | None:
    """(size, mtime_ns, ctime_ns, inode, device), following symbolic links; None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def walk(folder: str, skip: tuple[str, ...] = ()) -> tuple[tuple[str, tuple | None], ...]:
    """Every file under `folder` (dotfiles too, not following linked folders, as Path.rglob) with its stat,
    by relative name; folders named in `skip` are left out (the package's __pycache__)."""
    found = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in skip]
        rel = os.path.relpath(here, folder)
        for name in files:
            path = os.path.join(here, name)
            found.append((name if rel == "." else os.path.join(rel, name), stat_of(path)))
    found.sort()
    return tuple(found)


def stamp_path(cache_dir: str, root: str, out: str) -> str:
    key = zlib.crc32(os.fsencode(root) + b"\0" + os.fsencode(out))
    return os.path.join(cache_dir, "stamp", f"{key:08x}.marshal")


def cache_dir_for(root: str) -> str:
    override = os.environ.get("GENERATOR_CACHE_DIR")
    return os.path.abspath(override) if override else os.path.join(root, ".cache", "generator")


def python_identity() -> tuple:
    return (sys.version, sys.executable, tuple(sys.path), PACKAGE)


def environment() -> tuple:
    return tuple(os.environ.get(k) for k in ENV_KEYS)


# --- the commit, read from .git -----------------------------------------------------------------

_HEX = frozenset("0123456789abcdef")


def _is_hash(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def git_dir(root: str) -> str | None:
    """The .git folder `git -C root` would use, found as git finds it: the first `.git` folder, or `.git`
    file saying `gitdir: PATH`, in root or a folder above it. Looked up again at every check, so a
    repository that appears above the project is seen."""
    here = root
    while True:
        candidate = os.path.join(here, ".git")
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate):
            text = _read(candidate) or ""
            if not text.startswith("gitdir: "):
                return None
            return os.path.normpath(os.path.join(here, text[len("gitdir: "):].strip()))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def head_commit(root: str) -> str | None:
    """The commit HEAD names, read from the files; "" outside any repository; None when unsure."""
    if any(os.environ.get(k) for k in ENV_KEYS[2:]):
        return None
    gitdir = git_dir(root)
    if gitdir is None:
        return ""
    common = gitdir
    pointer = _read(os.path.join(gitdir, "commondir"))
    if pointer is not None:
        common = os.path.normpath(os.path.join(gitdir, pointer.strip()))
    if os.path.exists(os.path.join(common, "reftable")):
        return None
    head = _read(os.path.join(gitdir, "HEAD"))
    for _ in range(5):  # symbolic refs, followed a few levels
        if head is None:
            return None
        head = head.strip()
        if _is_hash(head):
            return head
        if not head.startswith("ref: "):
            return None
        ref = head[len("ref: "):].strip()
        if ".." in ref.split("/"):
            return None
        head = _read(os.path.join(common, ref))
        if head is None:
            for line in (_read(os.path.join(common, "packed-refs")) or "").splitlines():
                value, _, name = line.partition(" ")
                if name == ref and _is_hash(value):
                    return value
            return None
    return None


# --- the check ----------------------------------------------------------------------------------


def load(path: str):
    try:
        with open(path, "rb") as fh:
            return marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None


def fresh(root: str, out: str, cache_dir: str | None = None):
    """The stamp if `out` holds exactly what building `root` would write there (by the stat check), else None."""
    root, out = os.path.abspath(root), os.path.abspath(out)
    stamp = load(stamp_path(cache_dir or cache_dir_for(root), root, out))
    if not isinstance(stamp, dict) or stamp.get("format") != FORMAT:
        return None
    if (stamp.get("root"), stamp.get("out")) != (root, out):
        return None
    if stamp.get("python") != python_identity() or stamp.get("env") != environment():
        return None
    for path, recorded in stamp["files"]:
        if stat_of(path) != recorded:
            return None
    for folder, skip, recorded in stamp["trees"]:
        if walk(folder, skip) != recorded:
            return None
    if walk(out) != stamp["output"]:
        return None
    commit = head_commit(root)
    if commit is None or commit != stamp["commit"]:
        return None
    return stamp


def up_to_date(out: str) -> str | None:
    """The summary line of `build --out OUT` run in the working directory when the stamp shows nothing
    changed; None when a build is needed (any surprise here is a reason to build, never an error)."""
    start = time.perf_counter()
    try:
        stamp = fresh(os.getcwd(), out)
    except Exception:
        return None
    if stamp is None:
        return None
    return (f"{stamp['summary']}, all reused: no input changed (size, times and inode of every input and "
            f"output file as the last build left them); {time.perf_counter() - start:.2f}s in all")


# --- writing the stamp --------------------------------------------------------------------------


def snapshot(root: str) -> dict:
    """Taken before the build reads anything: the trees, the Python and the environment as they were."""
    root = os.path.abspath(root)
    trees = tuple((os.path.join(root, name), (), walk(os.path.join(root, name))) for name in TREES)
    trees += ((PACKAGE, ("__pycache__",), walk(PACKAGE, ("__pycache__",))),)
    return {"time": time.time_ns(), "root": root, "python": python_identity(), "env": environment(),
            "trees": trees}


def _racy(recorded: tuple | None, since: int) -> bool:
    if recorded is None:
        return False
    ctime = recorded[2]
    margin = COARSE_RACY_NS if ctime % 1_000_000_000 == 0 else RACY_NS
    return ctime >= since - margin


def write(before: dict, out: str, cache_dir: str, *, extra: list[str], used: dict[str, bytes],
          hash_file, commit: str, staged: tuple, summary: str) -> bool:
    """Record the stamp for a build that just wrote `out` from the inputs `before` saw.

    extra: files outside the trees the key depends on by their stat (corpora, libraries' metadata);
    used: the digest the build used for each file it hashed, by absolute path; staged: the output's
    walk() as the staging folder held it before the swap. Writes nothing, and returns False, when the
    inputs moved during the build, a racy file cannot be vouched for, or another build swapped its
    output in after this one."""
    root, out = before["root"], os.path.abspath(out)
    path = stamp_path(cache_dir, root, out)
    try:
        os.unlink(path)  # a stale stamp must never outlive the build that replaces its output
    except OSError:
        pass
    since = before["time"]
    files = [(p, stat_of(p)) for p in sorted(set(extra))]
    now = time.time_ns()
    for folder, _, recorded in before["trees"]:
        for rel, st in recorded:
            if _racy(st, since) and not _vouched(os.path.join(folder, rel), st, used, hash_file, now):
                return False
    for p, st in files:
        if _racy(st, since) and not _vouched(p, st, used, hash_file, now):
            return False
    written = walk(out)
    if _identity(written) != _identity(staged):  # another build swapped its folder in since
        return False
    if head_commit(root) != commit:
        return False
    stamp = {"format": FORMAT, "root": root, "out": out, "python": before["python"], "env": before["env"],
             "trees": before["trees"], "files": tuple(files), "output": written, "commit": commit,
             "summary": summary}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps(stamp))
        os.replace(tmp, path)
    except OSError:
        return False
    return True


def _identity(listing: tuple) -> tuple:
    """Names, sizes, mtimes and inodes: not ctimes, which move when the previous build's hard links go."""
    return tuple((rel, st and (st[0], st[1], st[3], st[4])) for rel, st in listing)


def _vouched(path: str, recorded: tuple, used: dict[str, bytes], hash_file, now: int) -> bool:
    """A racy file is safe to stamp when its ctime is now well in the past, its stat is what the build
    saw, and it still holds the bytes the build hashed: any later write moves its ctime."""
    if now - recorded[2] <= (COARSE_RACY_NS if recorded[2] % 1_000_000_000 == 0 else RACY_NS):
        return False
    if path not in used or stat_of(path) != recorded:
        return False
    return hash_file(path) == used[path]


# --- values kept under the stat of the files they come from --------------------------------------


class StatMemo:
    """Small values computed from files that rarely change (the installed libraries' versions, the corpus
    files a package lists, the digests of those files), kept under the files' stat so that a build need
    not import importlib.metadata or hash megabytes of unchanged corpus to know them.

    An entry counts only while every file it watches has the stat it had *before* the value was computed,
    and it is stored only if none of them was racy then (the same rule as the stamp), so a file changed
    during or just before the computation is never vouched for. Files inside the project are never
    memoised: the content key always reads them."""

    def __init__(self, path: str | None):
        self.path = path
        loaded = load(path) if path else None
        self.entries: dict = loaded if isinstance(loaded, dict) else {}
        self.kept: dict = {}
        self.changed = False

    def get(self, key, watch: tuple[str, ...]):
        entry = self.kept.get(key) or self.entries.get(key)
        if entry is None or tuple(p for p, _ in entry[0]) != tuple(watch):
            return None
        if any(stat_of(p) != st for p, st in entry[0]):
            return None
        self.kept[key] = entry
        return entry[1]

    def before(self, watch: tuple[str, ...]) -> tuple[int, tuple]:
        """The time and stats to pass to put(), taken before reading the files."""
        return time.time_ns(), tuple((p, stat_of(p)) for p in watch)

    def put(self, key, before: tuple[int, tuple], value) -> None:
        since, stats = before
        if any(_racy(st, since) for _, st in stats) or any(stat_of(p) != st for p, st in stats):
            return
        self.kept[key] = (stats, value)
        self.changed = True

    def remember(self, key, watch: tuple[str, ...], compute):
        hit = self.get(key, watch)
        if hit is not None:
            return hit
        taken = self.before(watch)
        value = compute()
        if value is not None:
            self.put(key, taken, value)
        return value

    def save(self) -> None:
        """Keep what this build used or computed (so the file stays small); silently skipped when it cannot."""
        if not self.path or (not self.changed and self.kept.keys() == self.entries.keys()):
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(marshal.dumps(self.kept))
            os.replace(tmp, self.path)
        except (OSError, ValueError):
            pass


def memo_path(cache_dir: str) -> str:
    return os.path.join(cache_dir, "stamp", "memo.marshal")


def search_path(root: str) -> tuple[str, ...]:
    """The folders on sys.path, whose stat moves when a package is installed in or removed from them,
    but not the project's own folder, which every build changes (the output's staging folder)."""
    root = os.path.abspath(root)
    return tuple(dict.fromkeys(os.path.abspath(p) for p in sys.path if p and os.path.abspath(p) != root))
