"""One content-addressed cache for the build's slow results: the Monte Carlo, the playground's training and
measurement, and each figure.

What the cache trusts: nothing. An entry is a JSON file that holds its schema version, its kind, its key and
its value; loading one parses JSON (no format that can run code on load) and rebuilds the value only as the
shape the caller asks for (numbers, strings, fractions, tuples, dicts and our own dataclasses). A missing,
truncated, foreign, wrong-shaped or unreadable entry is a miss: the result is computed again. A key is a hash
of the inputs' values, of every source file of the `generator/` package and of the library versions the
result depends on, so an entry that matches is the result this code would compute now.

A cache that cannot be written (read-only, full, no permission) costs time, not the build: one warning line,
and the build goes on. An entry is written as an unnamed file (O_TMPFILE) that gets its name only once whole,
so a kill at any instant leaves no temporary file; where the system has no such files, a named temporary file
is renamed instead, and what a killed build left of those is removed when the next cache opens.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import time
import types
import typing
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from ..digest import digest
from ..paths import CACHE as DEFAULT_DIR

SCHEMA = 1  # what an entry file holds; a change makes every older entry a miss
PACKAGE = Path(__file__).resolve().parents[1]
ENV_DIR = "GENERATOR_CACHE_DIR"
KEEP_UNUSED_SECONDS = 14 * 24 * 3600
TMP_PREFIX = ".tmp-"
OWN = "specdec-generator"  # the folder the entries live in, inside the cache folder named
MARKER = "CACHEDIR.TAG"  # the cache directory tagging standard's name: backup tools skip the folder
MARKER_TEXT = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# The build cache of the speculative decoding explainer (python -m generator build): it wrote every file here.\n"
)
ENTRY = re.compile(r"[0-9a-f]{64}\.json")  # a key (a SHA-256) and .json: the only files prune and clear remove
TEMPORARY = re.compile(re.escape(TMP_PREFIX) + r"[0-9]+-.*")
_FRACTION = re.compile(r"-?[0-9]+/[0-9]+")
T = TypeVar("T")


def package_source_digest() -> str:
    """SHA-256 of every Python file of the generator package, by path and bytes: any code change is a new key."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        h.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def library_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


# --- values as JSON and back -------------------------------------------------------------------


def encode(value: Any) -> Any:
    """A JSON-able form of a plain value: fractions as "n/d", tuples as lists, dataclasses as dicts."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a cached dict needs string keys")
        return {k: encode(v) for k, v in value.items()}
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return encode(value.tolist())
    raise TypeError(f"cannot cache a {type(value).__name__}")


def decode(value: Any, shape: Any, hints: dict | None = None) -> Any:
    """`value` (parsed JSON) rebuilt as `shape`, a type such as tuple[ConvergenceCase, ...]; ValueError or
    TypeError where it does not have that shape. `hints`: each dataclass's field types, found once a call."""
    hints = {} if hints is None else hints
    if shape is Any:
        return value
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin in (typing.Union, types.UnionType):
        for option in args:
            try:
                return decode(value, option, hints)
            except (TypeError, ValueError):
                pass
        raise TypeError(f"{value!r:.40} is none of {shape}")
    if origin is tuple or origin is list:
        if not isinstance(value, list):
            raise TypeError(f"expected a list for {shape}")
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            items = [decode(v, args[0] if args else Any, hints) for v in value]
        elif len(args) == len(value):
            items = [decode(v, a, hints) for v, a in zip(value, args)]
        else:
            raise TypeError(f"expected {len(args)} items, found {len(value)}")
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise TypeError(f"expected an object for {shape}")
        return {k: decode(v, args[1] if args else Any, hints) for k, v in value.items()}
    if shape is type(None) and value is None:
        return None
    if shape is bool and isinstance(value, bool):
        return value
    if shape is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if shape is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if shape is str and isinstance(value, str):
        return value
    if shape is Fraction and isinstance(value, str) and _FRACTION.fullmatch(value):
        return Fraction(value)
    if dataclasses.is_dataclass(shape) and isinstance(value, dict):
        names = [f.name for f in dataclasses.fields(shape) if f.init]
        if sorted(value) != sorted(names):
            raise TypeError(f"{shape.__name__}: fields {sorted(value)}")
        if shape not in hints:
            hints[shape] = typing.get_type_hints(shape)
        types_of = hints[shape]
        return shape(**{name: decode(value[name], types_of[name], hints) for name in names})
    raise TypeError(f"{value!r:.40} is not a {shape}")


# --- the cache ---------------------------------------------------------------------------------


class Cache:
    """Entries under `directory/OWN/KIND/KEY.json`. The folder OWN is the generator's: it holds MARKER, written
    with the first entry, and a folder OWN without it (someone else's) is neither read, written nor emptied."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.entries = self.directory / OWN
        self.code = package_source_digest()
        self.reused: Counter[str] = Counter()  # per kind, this build's hits
        self.computed: Counter[str] = Counter()  # and misses
        self.used: set[Path] = set()
        self.warned = False
        self.fresh = False  # after clear(): only what this build wrote is read back
        self.foreign = not self._ours()
        if self.foreign:
            self._warn(f"{self.entries} holds files the generator did not write (no {MARKER} of its own)")
        else:
            self._remove_temporary_files()

    @classmethod
    def for_root(cls, root: Path) -> Cache:
        return cls(Path(os.environ.get(ENV_DIR) or Path(root) / DEFAULT_DIR))

    def get_or_compute(
        self, kind: str, key_parts: Any, compute: Callable[[], T], shape: Any, check: Callable[[T], bool] | None = None
    ) -> T:
        """compute(), or the value an earlier call with the same kind, key parts and code stored.

        A computed value goes through JSON and back before it is returned, so a build that computes it and
        one that loads it see equal values of equal types. `check`, when given, must hold of a loaded value (else
        it is a miss) and of a computed one (else our own code is wrong: an error)."""
        key, path = self._where(kind, key_parts)
        found = self._load(path, kind, key, shape)
        if found is not None and (check is None or check(found[0])):
            self.reused[kind] += 1
            return found[0]
        self.computed[kind] += 1
        plain = encode(compute())
        value = decode(plain, shape)
        if check is not None and not check(value):
            raise ValueError(f"a freshly computed {kind} fails its own check")
        entry = {"schema": SCHEMA, "kind": kind, "key": key, "value": plain}
        self._store(path, json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        return value

    def has(self, kind: str, key_parts: Any) -> bool:
        """Whether an entry is kept under these arguments: get_or_compute will read it (and compute the value
        after all if the entry turns out unusable). Only a file's presence is checked, so nothing is read twice."""
        _, path = self._where(kind, key_parts)
        return self._readable(path) and path.is_file()

    def _where(self, kind: str, key_parts: Any) -> tuple[str, Path]:
        key = digest(SCHEMA, kind, key_parts, self.code, sys.version_info[:2])
        return key, self.entries / kind / f"{key}.json"

    def _ours(self) -> bool:
        """Whether the folder OWN is missing or empty (the generator makes it), or holds our MARKER."""
        try:
            if not self.entries.is_dir() or not any(self.entries.iterdir()):
                return True
            marker = self.entries / MARKER
            return not marker.is_symlink() and marker.is_file() and marker.read_bytes() == MARKER_TEXT
        except OSError:
            return False

    def _warn(self, problem: str) -> None:
        if not self.warned:
            self.warned = True
            print(f"warning: cache {self.directory}: {problem}; the build goes on without it", file=sys.stderr)

    def _readable(self, path: Path) -> bool:
        """Whether an entry at `path` may be read at all: the folder is ours, and after clear() only what this
        build wrote is read back."""
        return not self.foreign and not (self.fresh and path not in self.used)

    def _load(self, path: Path, kind: str, key: str, shape: Any) -> tuple[Any] | None:
        """(value,) or None for a miss, whatever is wrong with the file."""
        if not self._readable(path):
            return None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # a fifo or device planted there
                    return None
                entry = json.loads(fh.read())
            if (
                not isinstance(entry, dict)
                or sorted(entry) != ["key", "kind", "schema", "value"]
                or entry["schema"] != SCHEMA
                or entry["kind"] != kind
                or entry["key"] != key
            ):
                return None
            value = decode(entry["value"], shape)
        except Exception:  # missing, truncated, not JSON, too deep, the wrong shape: a miss
            return None
        self.used.add(path)
        try:
            os.utime(path)  # used: prune keeps it
        except OSError:
            pass
        return (value,)

    def _store(self, path: Path, data: bytes) -> None:
        if self.foreign:
            return
        try:
            if not (self.entries / MARKER).is_file():
                self.entries.mkdir(parents=True, exist_ok=True)
                _write_whole(self.entries / MARKER, MARKER_TEXT)
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_whole(path, data)
            self.used.add(path)
        except OSError as exc:
            self._warn(f"cannot write ({exc.strerror or exc})")

    def _own_files(self, names: re.Pattern) -> list[Path]:
        """The files in the kinds' folders whose names the generator gives (entries, or temporary files)."""
        if self.foreign:
            return []
        return [p for p in self.entries.glob("*/*") if names.fullmatch(p.name)]

    def _remove_temporary_files(self) -> None:
        """What a killed build left of named temporary files (only where O_TMPFILE is missing)."""
        for path in self._own_files(TEMPORARY):
            pid = path.name[len(TMP_PREFIX) :].split("-")[0]
            if not pid.isdigit() or not process_alive(int(pid)):
                try:
                    path.unlink()
                except OSError:
                    pass

    def clear(self) -> None:
        """Remove every entry (nothing else), and read back only what this build writes from now on."""
        self.fresh = True
        left, reason = 0, ""
        for path in self._own_files(ENTRY):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                left, reason = left + 1, exc.strerror or str(exc)
        if left:
            print(
                f"warning: cache {self.directory}: --clean could not remove {left} entries ({reason}); this build "
                "reuses none of them",
                file=sys.stderr,
            )

    def prune(self) -> None:
        """Drop entries neither used by this build nor touched for two weeks."""
        cutoff = time.time() - KEEP_UNUSED_SECONDS
        for path in self._own_files(ENTRY):
            try:
                if path not in self.used and path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                pass


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (the writer of a leftover temporary file or folder)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_whole(path: Path, data: bytes) -> None:
    """`data` as the file `path`, which appears only once whole (see the module's docstring)."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is not None:
        try:
            fd = os.open(path.parent, flag | os.O_WRONLY, 0o644)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
        else:
            try:
                with os.fdopen(fd, "wb", closefd=False) as fh:
                    fh.write(data)
                folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    try:
                        os.unlink(path.name, dir_fd=folder)  # a broken entry of the same key: this one replaces it
                    except FileNotFoundError:
                        pass
                    # linkat(AT_SYMLINK_FOLLOW) of the descriptor's /proc name: the unnamed file gets its name
                    os.link(f"/proc/self/fd/{fd}", path.name, src_dir_fd=folder, dst_dir_fd=folder)
                except FileExistsError:  # another build stored the same key meanwhile: the same value
                    pass
                finally:
                    os.close(folder)
                return
            except FileNotFoundError:  # no /proc: fall back to a named temporary file
                pass
            finally:
                os.close(fd)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
