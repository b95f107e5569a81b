"""Strict readers for the files a person writes: UTF-8 text, YAML and JSON, each failure one line with a place.

YAML here has no aliases (no schema of ours needs them, and nested aliases expand a few kilobytes
into gigabytes), no duplicate keys (the second would silently win) and no nesting deeper than any
of our files needs. JSON likewise refuses duplicate keys, NaN and Infinity, and deep nesting, before
Python's recursive decoder could overflow. A value quoted in a message is cut short, so a message
never grows with the input. A file that is a symlink leading out of the project is not read.
"""

from __future__ import annotations

import json
import os
import stat
from json.decoder import JSONObject
from json.scanner import py_make_scanner
from pathlib import Path
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, ScalarNode

from ..errors import UserError

MAX_DEPTH = 64  # deepest nesting any of our files needs is about 5
SHOWN = 60  # characters of a value quoted in a message


class InputError(UserError):
    pass


def shown(value: Any, limit: int = SHOWN) -> str:
    """repr(value), cut to `limit` characters without ever formatting more than that of a large value."""
    if isinstance(value, (list, tuple, dict, set)) and len(value) > limit:
        return f"a {type(value).__name__} of {len(value)} items"
    text = repr(value) if not isinstance(value, (list, tuple, dict, set)) else _shallow(value, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shallow(value, limit: int) -> str:
    """A container's repr that stops descending as soon as it is long enough (nested aliases share objects)."""
    out: list[str] = []
    size = 0

    def add(piece: str) -> None:
        nonlocal size
        out.append(piece)
        size += len(piece)

    def walk(v, depth: int) -> None:
        if size > limit:
            return
        if isinstance(v, (list, tuple, set)) and depth < 8:
            add("[")
            for i, item in enumerate(v):
                if size > limit:
                    break
                if i:
                    add(", ")
                walk(item, depth + 1)
            add("]")
        elif isinstance(v, dict) and depth < 8:
            add("{")
            for i, (k, item) in enumerate(v.items()):
                if size > limit:
                    break
                add((", " if i else "") + repr(k)[:limit] + ": ")
                walk(item, depth + 1)
            add("}")
        else:
            add(repr(v)[: limit + 1] if isinstance(v, (str, int, float, bool, type(None))) else "...")

    walk(value, 0)
    return "".join(out)


def _as(error: type[UserError], exc: InputError) -> UserError:
    """The caller's own kind of error (a DataError for profiles, a ConfigError for site.yaml), same line."""
    return exc if isinstance(exc, error) else error(str(exc))


def project_root(path: Path) -> Path | None:
    """The nearest folder above `path` holding both data/ and site_src/: the project `path` belongs to."""
    path = Path(os.path.abspath(path))
    return next((d for d in path.parents if (d / "data").is_dir() and (d / "site_src").is_dir()), None)


def inside(path: Path, folder: Path) -> bool:
    """Whether `path`, every link followed, is `folder` or lies under it (as `folder` really is)."""
    real, real_folder = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return real == real_folder or real_folder in real.parents


def outside_project(path: Path) -> str | None:
    """Why `path` must not be read, when it is (or passes through) a symlink that leads out of the project,
    or None. The project is the nearest folder above `path` holding both data/ and site_src/; a file with no
    such folder above it is not checked. Symlinks that stay inside the project are followed."""
    path = Path(os.path.abspath(path))
    root = project_root(path)
    if root is None:
        return None
    try:
        real, real_root = path.resolve(), root.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return f"{path}: a symlink that cannot be followed (a loop?)"
    if real != real_root and real_root not in real.parents:
        return f"{path}: a symlink to {real}, outside the project: refused (copy the file into the project instead)"
    return None


def not_a_file(mode: int) -> str | None:
    """Why a path of this st_mode is no input (a device, a FIFO, a socket could block or never end), or None."""
    if stat.S_ISREG(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None
    return f"is {kind or 'a special file'}, not a regular file: refused"


def read_text(path: Path, what: str = "file", error: type[UserError] = InputError) -> str:
    """The file as UTF-8 text; a byte that is not UTF-8 is reported with its line and column. A device or a FIFO
    is refused before a byte of it is read (opened without blocking, then checked)."""
    problem = outside_project(path)
    if problem:
        raise error(problem)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except IsADirectoryError:
        raise error(f"{path}: is a folder, not a {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"{path}: is a folder, not a {what}")
        problem = not_a_file(mode)
        if problem:
            raise error(f"{path}: {problem}")
        try:
            data = fh.read()
        except OSError as exc:
            raise error(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = _position(data, exc.start)
        raise error(f"{path}: {where}: not UTF-8 text (byte 0x{data[exc.start]:02x}: {exc.reason})") from None


# --- YAML ---------------------------------------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without aliases, duplicate keys or deep nesting; errors carry the key path they sit at."""

    def __init__(self, stream, source: str, first_line: int):
        super().__init__(stream)
        self.source, self.first_line = source, first_line
        self.path: list[str] = []

    def fail(self, mark, problem: str) -> InputError:
        where = f"line {mark.line + self.first_line}, column {mark.column + 1}"
        place = ""  # the key path, e.g. playground.prose.books[2]
        for part in filter(None, self.path):
            place += part if part.startswith("[") or not place else f".{part}"
        return InputError(f"{self.source}: {where}{f' ({place})' if place else ''}: {problem}")

    def compose_node(self, parent, index):
        if isinstance(index, ScalarNode):
            self.path.append(str(index.value)[:SHOWN])
        elif isinstance(index, int):
            self.path.append(f"[{index}]")
        else:
            self.path.append("")
        try:
            if self.check_event(AliasEvent):
                event = self.peek_event()
                raise self.fail(
                    event.start_mark,
                    f"a YAML alias (*{str(event.anchor)[:SHOWN]}) is not allowed here; write the value out in full",
                )
            if len([p for p in self.path if p]) > MAX_DEPTH:
                raise self.fail(self.peek_event().start_mark, f"nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self.path.pop()

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, ScalarNode):
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        first = seen.get(key)
                    except TypeError:
                        continue
                    if first is not None:  # composing is over, so the message names no key path
                        raise self.fail(key_node.start_mark, f"duplicate key {shown(key)} (first on line {first})")
                    seen[key] = key_node.start_mark.line + self.first_line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, source: str, first_line: int = 1, error: type[UserError] = InputError) -> Any:
    """One YAML document; `first_line` is the file line the text starts on (front matter starts on line 2)."""
    loader = None
    try:
        loader = _StrictLoader(text, source, first_line)  # reads the text: a control character stops it here
        return loader.get_single_data()
    except InputError as exc:  # an alias, a duplicate key, deep nesting
        raise _as(error, exc) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f"line {mark.line + first_line}, column {mark.column + 1}: "
        elif isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow, at exc.position
            line = text.count("\n", 0, exc.position) + first_line
            column = exc.position - text.rfind("\n", 0, exc.position)
            where = f"line {line}, column {column}: "
        else:
            where = ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{source}: {where}invalid YAML: {problem}") from None
    except RecursionError:
        raise error(f"{source}: nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise error(f"{source}: invalid YAML: {str(exc).splitlines()[0][:120]}") from None
    finally:
        if loader is not None:
            loader.dispose()


# --- JSON ---------------------------------------------------------------------------------------


def _position(text: str | bytes, index: int) -> str:
    """ "line L, column C" of `index` in a text, or in the bytes of a file (columns then count bytes)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    line = text.count(newline, 0, index) + 1
    return f"line {line}, column {index - (text.rfind(newline, 0, index) + 1) + 1}"


def _check_depth(text: str, source: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before the decoder recurses into it."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(f"{source}: {_position(text, i)}: nested more than {MAX_DEPTH} levels deep")
        elif ch in "]}":
            depth -= 1


class _StrictDecoder(json.JSONDecoder):
    def __init__(self, source: str, text: str):
        super().__init__(parse_constant=self._constant)
        self.source, self.text = source, text
        self.parse_object = self._object
        self.scan_once = py_make_scanner(self)  # the pure-Python scanner calls parse_object with positions

    def _constant(self, name: str):
        raise InputError(f"{self.source}: invalid JSON: {name} is not a JSON number")

    def _object(self, s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
        start = s_and_end[1] - 1
        pairs, end = JSONObject(s_and_end, strict, scan_once, None, list, memo)
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise InputError(
                    f"{self.source}: {_position(self.text, start)}: the object here has the key {shown(key)} twice"
                )
            seen.add(key)
        return dict(pairs), end


def load_json(text: str, source: str, error: type[UserError] = InputError) -> Any:
    try:
        _check_depth(text, source)
        return _StrictDecoder(source, text).decode(text)
    except InputError as exc:  # deep nesting, a duplicate key, NaN or Infinity
        raise _as(error, exc) from None
    except json.JSONDecodeError as exc:
        raise error(f"{source}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise error(f"{source}: nested too deeply to read") from None
    except ValueError as exc:  # e.g. a number longer than Python converts
        raise error(f"{source}: invalid JSON: {str(exc).splitlines()[0][:120]}") from None
