"""Writing the site: into a fresh folder beside the target, swapped in whole, so that `out` is at every
instant either the previous build or the new one, and what a killed build left is tidied at the next."""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from .report import BuildError
from .uptodate import walk


def _looks_like_a_build(path: Path) -> bool:
    return not path.exists() or (path.is_dir() and (not any(path.iterdir()) or (path / "figures" / "manifest.json").exists()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path) -> None:
    """Tidy what a killed build left beside `out`; their names carry the pid that made them.

    A staging folder (.NAME-new-PID-*) is dropped: it is either unfinished or, after an exchange, the
    previous build on its way out. A previous build moved aside by the two-rename fallback
    (.NAME-old-PID-*) is put back if `out` is missing, so a kill between those renames costs nothing."""
    pattern = re.compile(rf"^\.{re.escape(out.name)}-(new|old)-(\d+)-")
    leftovers = []
    for entry in sorted(out.parent.iterdir()):
        m = pattern.match(entry.name)
        if m and entry.is_dir() and not entry.is_symlink() and not _alive(int(m.group(2))):
            leftovers.append((m.group(1), entry))
    for kind, entry in leftovers:
        if kind == "old" and not os.path.lexists(out):
            os.rename(entry, out)
        else:
            shutil.rmtree(entry, ignore_errors=True)


_remove_stale = recover  # the name tests and older callers know


RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step with renameat2(RENAME_EXCHANGE); False where the kernel, C library or
    file system has no such call (the caller then falls back to two renames)."""
    import ctypes
    import errno

    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2  # glibc 2.28 and later
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _checkpoint(step: str) -> None:
    """Named steps of the swap; a test replaces this to kill the process at each one."""


def _source_date_epoch() -> int | None:
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(value) if value.isdigit() else None


def _link_if_same(previous: Path, target: Path, data: bytes, epoch: int | None) -> bool:
    """Make `target` a hard link to the previous build's file when that holds exactly `data` (and, with
    SOURCE_DATE_EPOCH, already carries its date), so an edit to one page does not write the megabytes of
    corpus and models again. The previous build is only read: its bytes and dates stay as they were."""
    import stat

    try:
        st = os.lstat(previous)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        if epoch is not None and st.st_mtime_ns != epoch * 1_000_000_000:
            return False
        with open(previous, "rb") as fh:
            if fh.read() != data:
                return False
        os.link(previous, target)
    except OSError:  # gone, unreadable, or a file system without hard links: write it instead
        return False
    return True


class Staging:
    """The new build, written file by file into a fresh folder beside `out` (write, as often as there is
    something ready: a file already written is not written again), then swapped into place by commit().

    Where the kernel offers renameat2(RENAME_EXCHANGE) the new folder and the old one swap names in a
    single call, so `out` is at every instant either the whole previous build or the whole new one;
    the old tree, now under the staging name, is removed afterwards. Elsewhere the old folder is
    renamed aside and the new one into place, and recover() puts the old one back at the next start
    if the process died in between. A file the previous build holds byte for byte is hard-linked rather
    than written. discard() drops the folder: a build that fails leaves `out` as it was. Nothing is made
    on disk (and `out` is not looked at) before the first write."""

    def __init__(self, out: Path):
        self.out = Path(os.path.abspath(out))
        self.folder: Path | None = None
        self.written: set[str] = set()

    def replaceable(self) -> bool:
        """Whether `out` may be replaced (commit refuses a folder that holds something other than a build)."""
        return _looks_like_a_build(self.out)

    def _open(self) -> None:
        out = self.out
        out.parent.mkdir(parents=True, exist_ok=True)
        recover(out)
        if not _looks_like_a_build(out):
            raise BuildError(f"{out}: refusing to replace a folder that is not empty and holds no figures/manifest.json")
        self.folder = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-{os.getpid()}-", dir=out.parent))
        _checkpoint("staging")
        self.epoch = _source_date_epoch()
        self.previous = out if out.is_dir() and not out.is_symlink() else None
        self.here = self.folder.resolve()
        self.linked: set[Path] = set()

    def write(self, files: dict[str, bytes]) -> None:
        if self.folder is None:
            self._open()
        todo = sorted((rel, data) for rel, data in files.items() if rel not in self.written)
        here = self.here
        for n, (rel, data) in enumerate(todo):
            # staging is new and holds only the folders and files made here, no link, so the normalised
            # path is where the file lands (resolve() per file cost a system call per path component)
            target = Path(os.path.normpath(here / rel))
            if here not in target.parents:
                raise BuildError(f"{rel}: output path leaves the build folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            if self.previous is not None and _link_if_same(self.previous / target.relative_to(here), target, data, self.epoch):
                self.linked.add(target)
            else:
                target.write_bytes(data)
            self.written.add(rel)
            if n == len(todo) // 2:
                _checkpoint("writing")

    def commit(self, files: dict[str, bytes]) -> tuple:
        """Write what is left of `files`, then make the folder `out`. Returns what the new folder holds, as
        uptodate.walk sees it."""
        old = None
        try:
            self.write(files)
            out, staging, here = self.out, self.folder, self.here
            os.chmod(staging, 0o755)
            if self.epoch is not None:
                for path in [*here.rglob("*"), here]:
                    if path not in self.linked:  # a linked file already has the date; leave the old build alone
                        os.utime(path, (self.epoch, self.epoch), follow_symlinks=False)
            staged = walk(str(staging))  # what the stat stamp will expect `out` to hold
            _checkpoint("written")
            if out.is_dir() and not out.is_symlink() and _exchange(staging, out):
                _checkpoint("exchanged")
                shutil.rmtree(staging, ignore_errors=True)  # now the previous build
                _checkpoint("done")
                return staged
            if os.path.lexists(out):
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-{os.getpid()}-", dir=out.parent))
                os.rmdir(old)
                out.rename(old)
                _checkpoint("moved-aside")
            try:
                staging.rename(out)
            except OSError as exc:
                if old is not None and not os.path.lexists(out):
                    old.rename(out)
                    old = None
                raise BuildError(f"{out}: could not move the new build into place ({exc.strerror or exc}); "
                                 "another build may have written it at the same time") from None
            _checkpoint("renamed")
        except BaseException:
            self.discard()
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        _checkpoint("done")
        return staged

    def discard(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def write_atomically(files: dict[str, bytes], out: Path) -> tuple:
    """Write `files` into a sibling temporary folder, then make it `out` in one atomic step (Staging)."""
    staging = Staging(out)
    try:
        staging.write(files)
    except BaseException:
        staging.discard()
        raise
    return staging.commit(files)
