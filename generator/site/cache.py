"""A content-addressed store for the build's slow results: the context's Monte Carlo and the figures.

An entry's key is a hash of everything that could change it: the inputs (as canonical JSON) and
the source of the code that computes it. A key that matches therefore means the result would be
byte-for-byte the same, so a no-change rebuild reuses it without importing the drawing code or running
a single simulated round. Entries are written to a temporary file and renamed, so two builds
sharing the cache (serve and a manual build) never read half an entry.

A large text or byte string inside an entry (a corpus, a model file, a page) is kept once, as a blob
named by its SHA-256, and the entry holds only that name: a build that changes one number writes the
few files it changed, not again the megabytes every entry shares. An entry whose blob has gone is a miss.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..paths import CACHE as DEFAULT_DIR

PACKAGE = Path(__file__).resolve().parents[1]
ENV_DIR = "GENERATOR_CACHE_DIR"
KEEP_UNUSED_SECONDS = 14 * 24 * 3600
BLOB_MIN = 256 * 1024  # a str or bytes at least this long (the corpora, the models) is kept as a blob
BLOBS = "blobs"  # the folder that holds them, beside the kinds
UNUSED_BLOBS_KEPT = 300  # blobs this build did not use beyond the newest few: an entry still naming one misses


_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+([^#\n]+)", re.M)


def _module_file(name: str) -> Path | None:
    base = PACKAGE.joinpath(*name.split(".")) if name else PACKAGE
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return base / "__init__.py" if (base / "__init__.py").is_file() else None


def module_closure(*names: str) -> tuple[str, ...]:
    """The named generator modules and every module of ours they import, read off their relative imports,
    so that a cache key over "the code that computes it" stays right when someone adds an import."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None:
            continue
        seen.add(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for dots, module, imported in _IMPORT.findall(path.read_text(encoding="utf-8")):
            parent = package
            for _ in range(len(dots) - 1):
                parent = parent.rpartition(".")[0]
            target = ".".join(p for p in (parent, module) if p)
            todo.append(target)
            for item in imported.strip().strip("()").split(","):
                item = item.strip().split(" as ")[0].strip()
                if item.isidentifier():
                    todo.append(".".join(p for p in (target, item) if p))
    return tuple(sorted(seen))


def source_digest(*modules: str) -> str:
    """Hash of generator modules' source files, read from disk so nothing has to be imported."""
    h = hashlib.sha256()
    for name in sorted(modules):
        path = _module_file(name)
        h.update(name.encode() + b"\0" + (path.read_bytes() if path else b"missing") + b"\0")
    return h.hexdigest()


_VERSIONS: dict[str, str] = {}


def known_versions(versions: dict[str, str]) -> None:
    """Versions a build has just looked up (build.library_versions), so package_version need not again."""
    _VERSIONS.update(versions)


def package_version(name: str) -> str:
    if name in _VERSIONS:
        return _VERSIONS[name]
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def _plain(value: Any) -> Any:
    """A JSON-able form that keeps types apart: Fraction(1, 2), 0.5 and "1/2" must not share a key."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, Fraction):
        return {"fraction": f"{value.numerator}/{value.denominator}"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {"dict": sorted(([_plain(k), _plain(v)] for k, v in value.items()), key=json.dumps)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {type(value).__name__: _plain({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})}
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _plain(value.tolist())
    raise TypeError(f"cannot key a cache entry on {type(value).__name__}")


def canonical(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest(*parts: Any) -> str:
    return hashlib.sha256(canonical(list(parts)).encode("ascii")).hexdigest()


class Cache:
    """Pickled values under `directory/KIND/KEY`; disabled, it stores nothing and finds nothing."""

    def __init__(self, directory: Path | None, enabled: bool = True):
        self.directory = Path(directory) if directory is not None else None
        self.enabled = enabled and directory is not None
        self.used: set[Path] = set()
        # id -> (the str or bytes, its blob's name and size): what this build loaded or stored is not hashed again
        self._blob_names: dict[int, tuple[str | bytes, str, int]] = {}

    @classmethod
    def for_root(cls, root: Path, enabled: bool = True) -> Cache:
        override = os.environ.get(ENV_DIR)
        return cls(Path(override) if override else Path(root) / DEFAULT_DIR, enabled)

    def _path(self, kind: str, key: str) -> Path:
        return self.directory / kind / f"{key}.pickle"

    def has(self, kind: str, key: str) -> bool:
        return self.enabled and self._path(kind, key).exists()

    def load(self, kind: str, key: str) -> Any | None:
        if not self.enabled:
            return None
        path = self._path(kind, key)
        try:
            with open(path, "rb") as fh:
                value = _Unpickler(fh, self).load()
        except Exception:  # missing, truncated or stale, or a blob gone: a miss, never a failed build
            return None
        self.used.add(path)
        try:
            os.utime(path)
        except OSError:
            pass
        return value

    def store(self, kind: str, key: str, value: Any) -> None:
        if not self.enabled:
            return
        path = self._path(kind, key)
        try:
            _write(path, lambda fh: _Pickler(fh, self).dump(value))
            self.used.add(path)
        except OSError as exc:  # a read-only or full disk costs speed, not the build
            print(f"warning: cache: cannot write {path}: {exc}", file=sys.stderr)

    def _blob_path(self, name: str) -> Path:
        return self.directory / BLOBS / f"{name}.blob"

    def _blob_name(self, value: str | bytes) -> tuple[str, int]:
        """Keep `value` as a blob (once: an existing blob is only marked used); its name and size in bytes."""
        known = self._blob_names.get(id(value))
        if known is not None and known[0] is value:
            _, name, size = known
        else:
            data = value.encode("utf-8") if isinstance(value, str) else value
            name, size = hashlib.sha256(data).hexdigest(), len(data)
            self._blob_names[id(value)] = (value, name, size)
        path = self._blob_path(name)
        if path not in self.used:
            try:
                os.utime(path)  # there already: the same bytes, by their name
            except FileNotFoundError:
                _write(path, lambda fh: fh.write(value.encode("utf-8") if isinstance(value, str) else value))
            self.used.add(path)
        return name, size

    def _blob(self, kind: str, name: str, size: int) -> str | bytes:
        path = self._blob_path(name)
        with open(path, "rb") as fh:
            data = fh.read()
        if len(data) != size:
            raise ValueError(f"{path}: {len(data)} bytes, not {size}")
        value = data.decode("utf-8") if kind == "str" else data
        if path not in self.used:
            os.utime(path)
            self.used.add(path)
        self._blob_names[id(value)] = (value, name, size)
        return value

    def clear(self) -> None:
        if self.directory is not None and self.directory.exists():
            shutil.rmtree(self.directory, ignore_errors=True)

    def prune(self, now: float | None = None, keep_newest: dict[str, int] | None = None) -> None:
        """Drop entries neither used by this build nor touched for two weeks, and all but the newest few of
        the kinds that are large and change with every edit, so the folder stays small."""
        if not self.enabled or not self.directory.exists():
            return
        cutoff = (now or time.time()) - KEEP_UNUSED_SECONDS
        keep_newest = {**(keep_newest or {}), BLOBS: UNUSED_BLOBS_KEPT}
        for kind in sorted(p.name for p in self.directory.iterdir() if p.is_dir()):
            entries = []
            for path in self.directory.glob(f"{kind}/*.blob" if kind == BLOBS else f"{kind}/*.pickle"):
                try:
                    entries.append((path.stat().st_mtime, path))
                except OSError:
                    pass
            entries.sort(reverse=True)
            limit = keep_newest.get(kind)
            if kind == BLOBS:  # what this build used, and of the rest the newest few
                entries = [entry for entry in entries if entry[1] not in self.used]
            for rank, (mtime, path) in enumerate(entries):
                if path in self.used and (limit is None or rank < limit):
                    continue
                if mtime < cutoff or (limit is not None and rank >= limit):
                    try:
                        path.unlink()
                    except OSError:
                        pass


def _write(path: Path, write: Callable) -> None:
    """`write(file)` into a temporary file beside `path`, renamed to it once whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _Pickler(pickle.Pickler):
    """Pickles as usual, but a long str or bytes goes to its blob and the entry names it."""

    def __init__(self, fh, cache: Cache):
        super().__init__(fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.cache = cache

    def persistent_id(self, obj):
        kind = type(obj)
        if (kind is str or kind is bytes) and len(obj) >= BLOB_MIN:
            return (kind.__name__, *self.cache._blob_name(obj))
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, fh, cache: Cache):
        super().__init__(fh)
        self.cache = cache

    def persistent_load(self, pid):
        kind, name, size = pid
        return self.cache._blob(kind, name, size)


class ValueMemo:
    """A pure function's results across builds, in one cache entry ("memo" kind) keyed by what computes
    them (its code and library versions): parsed YAML by its text, MathML by its LaTeX. The entry keeps
    what the last build used and, up to LIMIT entries, what earlier ones did (two projects, or a test
    session's many copies, can share a cache)."""

    LIMIT = 500

    def __init__(self, cache: Cache, name: str, code: str):
        self.cache, self.key = cache, digest("memo", name, code)
        loaded = cache.load("memo", self.key)
        self.old: dict = loaded if isinstance(loaded, dict) else {}
        self.new: dict = {}

    def get(self, key):
        value = self.new.get(key)
        if value is None:
            value = self.old.get(key)
            if value is not None:
                self.new[key] = value
        return value

    def put(self, key, value) -> None:
        self.new[key] = value

    def items(self):
        """Every (key, value) known: this build's, then earlier ones'."""
        return ({**self.old, **self.new}).items()

    def save(self) -> None:
        merged = dict(self.new)
        for key, value in self.old.items():
            if len(merged) >= self.LIMIT:
                break
            merged.setdefault(key, value)
        if merged.keys() != self.old.keys():
            self.cache.store("memo", self.key, merged)
