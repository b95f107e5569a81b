"""Where the playground's two corpora come from, read and checked before any training.

A corpus is either files written for the project (a glob relative to the folder of site.yaml) or
files of an installed package, pinned to an exact version in pyproject.toml, so that a build
reads the very same bytes on every machine. Text that others wrote is never copied into the
repository. Anything a model cannot be trained on stops the build with one line naming the file.
"""

from __future__ import annotations

import glob
import importlib.metadata
import re
from fnmatch import fnmatch
from pathlib import Path

from ..errors import UserError
from .ngram import split_held_out

MIN_CHARS = 1000  # below this there is nothing to learn
MIN_HELD_OUT_CHARS = 50  # and below this, nothing to measure on
BAD_CHARACTER = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff]")  # control characters but tab and newline; surrogates
CONTROL_BYTES = bytes(c for c in range(0x20) if c not in b"\t\n")  # each such character is one such byte in UTF-8
VERSE_OFFSET = re.compile(r"^\s+(\d+): (\d+),$", re.M)


class CorpusError(UserError):
    pass


def locate(package: str, files: str, base: Path, place: str) -> list[Path]:
    """The files a corpus setting names, sorted by their path inside the package or folder."""
    if not package:
        # glob.glob, not Path.glob: the setting may be an absolute path, which Path.glob refuses
        found = sorted(Path(p) for p in glob.glob(str(base / files)) if Path(p).is_file()) if files else []
        if not found:
            raise CorpusError(f"{base / files}: {place}: no such corpus file")
        return found
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise CorpusError(f"{place}: the package {package!r} is not installed (pip install -e . installs it)") from None
    matched = sorted((f for f in dist.files or () if fnmatch(str(f), files)), key=str)
    paths = [Path(f.locate()) for f in matched]
    if not paths:
        raise CorpusError(f"{place}: package {package} has no file matching {files!r}")
    return paths


def read_text(path: Path, place: str) -> str:
    """The file as text, refusing what no character model should be trained on."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"{path}: {place}: cannot read the corpus file: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise CorpusError(f"{path}: {place}: binary data (a NUL byte) in a corpus file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: {place}: not UTF-8 (byte {exc.start})") from None
    if b"\r" in data:
        text = text.replace("\r\n", "\n")
    if not text or text.isspace():  # not text.strip(), without copying the text
        raise CorpusError(f"{path}: {place}: the corpus file is empty")
    if text.count(text[0]) == len(text):
        raise CorpusError(f"{path}: {place}: the corpus file holds a single distinct character")
    # a strict UTF-8 decode never yields a surrogate, so with no control byte in the file there is nothing to find
    # (deleting bytes is far quicker than the search below, which names the character)
    bad = set(BAD_CHARACTER.findall(text)) if len(data.translate(None, CONTROL_BYTES)) < len(data) else ()
    if bad:
        raise CorpusError(f"{path}: {place}: control character U+{ord(min(bad)):04X} in a corpus file")
    return text


def bible_books(path: Path, place: str, books: tuple[int, ...]) -> str:
    """Chosen books of a pythonbible text module, one chapter per line.

    The module holds the whole text as one string literal followed by a dict of each verse's
    start offset keyed book * 10^6 + chapter * 10^3 + verse. The text uses ` for an apostrophe
    (written here as ') and square brackets around words the translators supplied (dropped here,
    keeping the words), and a verse opening with a bracket follows its predecessor with no space.
    """
    source = read_text(path, place)
    try:
        start = source.index('"""') + 3
        end = source.index('"""', start)
        table_end = source.index("}", end)
    except ValueError:
        raise CorpusError(f"{path}: {place}: not a pythonbible text module") from None
    text = source[start:end]
    offsets = {int(key): int(offset) for key, offset in VERSE_OFFSET.findall(source, end, table_end)}
    starts: list[tuple[int, int]] = []  # (chapter id, offset of its first verse), in text order
    for key in sorted(offsets):
        if not starts or starts[-1][0] != key // 1000:
            starts.append((key // 1000, offsets[key]))
    chapters = []
    for book in books:
        found = [i for i, (chapter, _) in enumerate(starts) if chapter // 1000 == book]
        if not found:
            raise CorpusError(f"{path}: {place}: no book {book} in this text")
        for i in found:
            last = starts[i + 1][1] if i + 1 < len(starts) else len(text)
            chapter = text[starts[i][1] : last].replace("`", "'").replace("[", " ").replace("]", "")
            chapters.append(" ".join(chapter.split()))
    return "\n".join(chapters) + "\n"


def load_sources(package: str, files: str, books: tuple[int, ...], base: Path, place: str) -> tuple[str, list[Path]]:
    """The corpus text (files joined in path order, each ending in a newline) and the files it came from."""
    paths = locate(package, files, base, place)
    texts = [bible_books(path, place, books) if books else read_text(path, place) for path in paths]
    text = "".join(t if t.endswith("\n") else t + "\n" for t in texts)
    held_out = split_held_out(text)[1]
    if len(text) < MIN_CHARS or len(held_out) < MIN_HELD_OUT_CHARS:
        raise CorpusError(
            f"{paths[0]}: {place}: too short to train and measure on: {len(text)} characters, {len(held_out)} of them "
            f"in the last tenth held out (cut at a line start); needs at least {MIN_CHARS} and {MIN_HELD_OUT_CHARS}"
        )
    return text, paths


def licence_text(package: str) -> str | None:
    """The licence file a package ships, published beside its corpus; None for files of the project. Called after
    load_sources, so the package is installed."""
    if not package:
        return None
    for f in sorted(importlib.metadata.distribution(package).files or (), key=str):
        if "LICEN" in f.name.upper():
            return Path(f.locate()).read_text(encoding="utf-8")
    return None
