"""Writing the site: into a fresh folder beside the target, swapped in whole, so that `out` is at every
instant either the previous build or the new one, and what a killed build left is tidied at the next."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from .cache import process_alive
from .publish import source_date_epoch
from .report import BuildError


def recover(out: Path) -> None:
    """Tidy what a killed build left beside `out`; their names carry the pid that made them.

    A staging folder (.NAME-new-PID-*) is dropped: it is either unfinished or, after an exchange, the
    previous build on its way out. A previous build moved aside by the two-rename fallback
    (.NAME-old-PID-*) is put back if `out` is missing, so a kill between those renames costs nothing."""
    pattern = re.compile(rf"^\.{re.escape(out.name)}-(new|old)-(\d+)-")
    for entry in sorted(out.parent.iterdir()):
        m = pattern.match(entry.name)
        if not m or not entry.is_dir() or entry.is_symlink() or process_alive(int(m.group(2))):
            continue
        if m.group(1) == "old" and not os.path.lexists(out):
            os.rename(entry, out)
        else:
            shutil.rmtree(entry, ignore_errors=True)


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


def target_of(out: Path) -> Path:
    """The folder a build replaces: `out`, or what it links to. A link whose target cannot be replaced (its
    folder missing or not writable) is refused in one line, before anything is built."""
    out = Path(os.path.abspath(out))
    if not out.is_symlink():
        return out
    target = Path(os.path.realpath(out))
    if not target.parent.is_dir() or not os.access(target.parent, os.W_OK):
        raise BuildError(f"{out}: a link to {target}, whose folder cannot be written; build elsewhere with --out")
    if target.exists() and not target.is_dir():
        raise BuildError(f"{out}: a link to {target}, which is not a folder")
    return target


def write_atomically(files: dict[str, bytes], out: Path) -> None:
    """Write `files` into a fresh folder beside `out` (or beside the folder `out` links to), then swap it in.

    Where the kernel offers renameat2(RENAME_EXCHANGE) the new folder and the old one swap names in a
    single call; the old tree, now under the staging name, is removed afterwards. Elsewhere the old folder
    is renamed aside and the new one into place (recover() puts the old one back if the process died in
    between). A failure leaves `out` as it was."""
    out = target_of(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out)
    is_a_build = out.is_dir() and (not any(out.iterdir()) or (out / "figures" / "manifest.json").exists())
    if out.exists() and not is_a_build:
        raise BuildError(f"{out}: refusing to replace a folder that is not empty and holds no figures/manifest.json")
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-{os.getpid()}-", dir=out.parent))
    old = None
    try:
        _checkpoint("staging")
        here = staging.resolve()
        for n, (rel, data) in enumerate(sorted(files.items())):
            target = Path(os.path.normpath(here / rel))
            if here not in target.parents:
                raise BuildError(f"{rel}: output path leaves the build folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if n == len(files) // 2:
                _checkpoint("writing")
        os.chmod(staging, 0o755)
        epoch = source_date_epoch()
        if epoch is not None:
            for path in [*here.rglob("*"), here]:
                os.utime(path, (epoch, epoch), follow_symlinks=False)
        _checkpoint("written")
        if out.is_dir() and _exchange(staging, out):
            _checkpoint("exchanged")
            shutil.rmtree(staging, ignore_errors=True)  # now the previous build
            _checkpoint("done")
            return
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
            raise BuildError(
                f"{out}: could not move the new build into place ({exc.strerror or exc}); "
                "another build may have written it at the same time"
            ) from None
        _checkpoint("renamed")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    _checkpoint("done")
