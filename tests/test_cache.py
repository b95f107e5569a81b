"""The one cache: JSON entries checked on load, a miss for anything wrong with one, never code run, never a
failed build because it cannot be written, and no temporary file left by a kill."""

import errno
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

import generator.site.cache as C
from generator.model.convergence import ConvergenceCase
from generator.site.cache import Cache
from generator.site.pipeline import MONTE_CARLO, build

SHAPE = tuple[Fraction, tuple[int, ...], dict[str, float], str | None]
VALUE = (Fraction(1, 3), (1, 2, 3), {"x": 0.1}, None)


class Counted:
    """A compute function that counts its calls."""

    def __init__(self, value):
        self.value, self.calls = value, 0

    def __call__(self):
        self.calls += 1
        return self.value


def entry_path(cache: Cache, kind: str) -> Path:
    (path,) = (cache.directory / kind).glob("*.json")
    return path


def test_a_value_comes_back_equal_and_of_the_same_types(tmp_path):
    compute = Counted(VALUE)
    first = Cache(tmp_path).get_or_compute("kind", ("inputs", 1), compute, SHAPE)
    again = Cache(tmp_path).get_or_compute("kind", ("inputs", 1), compute, SHAPE)
    assert first == again == VALUE and compute.calls == 1
    assert [type(v) for v in again] == [Fraction, tuple, dict, type(None)]
    Cache(tmp_path).get_or_compute("kind", ("inputs", 2), compute, SHAPE)  # other inputs: another key
    assert compute.calls == 2


def test_the_monte_carlo_results_keep_their_dataclasses(tmp_path):
    from generator.model import convergence

    cases = [("aligned", "a", ((Fraction(1, 2), Fraction(1, 2)),) * 2, ((Fraction(1, 2), Fraction(1, 2)),))]
    computed = convergence.convergence_suite(cases, 1000, 7)
    shape = MONTE_CARLO["convergence-authored"]
    Cache(tmp_path).get_or_compute("convergence-authored", "k", lambda: computed, shape)
    loaded = Cache(tmp_path).get_or_compute("convergence-authored", "k", Counted(None), shape)
    assert loaded == computed and isinstance(loaded[0], ConvergenceCase)


class Planted:
    """Unpickling this runs code: it writes the file named."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "ran"))


@pytest.mark.parametrize(
    "damage", ["pickle", "wrong shape", "truncated", "foreign key", "other schema", "not json", "fifo", "deep"]
)
def test_anything_wrong_with_an_entry_is_a_miss_and_runs_no_code(damage, tmp_path):
    cache = Cache(tmp_path / "cache")
    cache.get_or_compute("kind", "inputs", Counted(VALUE), SHAPE)
    path = entry_path(cache, "kind")
    marker = tmp_path / "marker"
    text = path.read_text()
    if damage == "pickle":
        path.write_bytes(pickle.dumps(Planted(marker)))
    elif damage == "wrong shape":  # valid JSON of the right envelope, a value of another shape
        path.write_text(text.replace('"value":["1/3",[1,2,3]', '"value":[[1,2],[1,2,3]'))
    elif damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "foreign key":
        path.write_text(text.replace('"key":"', '"key":"0'))
    elif damage == "other schema":
        path.write_text(text.replace('"schema":1', '"schema":0'))
    elif damage == "not json":
        path.write_bytes(b"\x80\x04\x95 not json")
    elif damage == "fifo":  # reading it would block forever
        path.unlink()
        os.mkfifo(path)
    elif damage == "deep":
        path.write_text('{"schema":1,"kind":"kind","key":"k","value":' + "[" * 100000 + "]" * 100000 + "}")
    assert path.exists() and path.read_bytes() != text.encode() if damage != "fifo" else True
    compute = Counted(VALUE)
    assert Cache(tmp_path / "cache").get_or_compute("kind", "inputs", compute, SHAPE) == VALUE
    assert compute.calls == 1 and not marker.exists()
    again = Counted(VALUE)  # the miss stored a whole entry again
    assert Cache(tmp_path / "cache").get_or_compute("kind", "inputs", again, SHAPE) == VALUE and again.calls == 0


def test_an_undamaged_entry_is_a_hit_negative_control(tmp_path):
    cache = Cache(tmp_path)
    cache.get_or_compute("kind", "inputs", Counted(VALUE), SHAPE)
    compute = Counted(VALUE)
    Cache(tmp_path).get_or_compute("kind", "inputs", compute, SHAPE)
    assert compute.calls == 0


@dataclass(frozen=True)
class Pair:
    a: int
    b: Fraction


@pytest.mark.parametrize(
    "value, shape",
    [
        ({"a": 1}, Pair),
        ({"a": 1, "b": "1/2", "c": 3}, Pair),
        ({"a": "1", "b": "1/2"}, Pair),
        ([1, 2], tuple[int, int, int]),
        (True, int),
        ("1.5", Fraction),
        ([1, "x"], tuple[int, ...]),
    ],
)
def test_decode_refuses_what_has_another_shape(value, shape):
    with pytest.raises((TypeError, ValueError)):
        C.decode(value, shape)


def test_decode_rebuilds_what_has_the_shape():
    assert C.decode({"a": 1, "b": "1/2"}, Pair) == Pair(1, Fraction(1, 2))


@pytest.mark.parametrize("problem", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_a_cache_that_cannot_be_written_warns_once_and_the_build_succeeds(
    problem, project, tmp_path, monkeypatch, capsys, own_cache_folder
):
    """Read-only, full or forbidden: faked, since these tests may run as root, for whom no folder is read-only.
    Two results are missing from the test's warm cache, so two writes fail and one warning is said."""

    def cannot(path, data):
        raise OSError(problem, os.strerror(problem), str(path))

    for kind in ("identity-random", "convergence-wrong-sampler"):
        shutil.rmtree(own_cache_folder / kind)
    monkeypatch.setattr(C, "_write_whole", cannot)
    report = build(project, tmp_path / "out", cache=Cache(own_cache_folder))
    assert "computed: convergence-wrong-sampler, identity-random;" in report.summary()  # as the build prints
    assert (tmp_path / "out" / "index.html").is_file() and report.pages > 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and os.strerror(problem) in warnings[0]


def test_a_cache_folder_that_cannot_be_made_warns_once_and_the_build_succeeds(project, tmp_path, capsys):
    """Real, not faked: the cache's path is a file, so no folder can be made under it."""
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("not a folder")
    build(project, tmp_path / "out", cache=Cache(blocked))
    assert (tmp_path / "out" / "index.html").is_file()
    assert len([line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]) == 1


def test_the_key_covers_every_source_file_of_the_package(tmp_path, monkeypatch):
    copy = tmp_path / "generator"
    shutil.copytree(C.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(C, "PACKAGE", copy)
    before = C.package_source_digest()
    assert C.package_source_digest() == before  # negative control
    for module in ("render/views.py", "playground/ngram.py", "errors.py"):  # whatever the module, the key moves
        path = copy / module
        original = path.read_bytes()
        path.write_bytes(original + b"\n# edited\n")
        assert C.package_source_digest() != before, module
        path.write_bytes(original)


def test_prune_drops_old_unused_entries_and_keeps_what_this_build_used(tmp_path):
    old = Cache(tmp_path)
    old.get_or_compute("kind", "old", Counted(VALUE), SHAPE)
    stale = entry_path(old, "kind")
    month_ago = time.time() - 30 * 24 * 3600
    os.utime(stale, (month_ago, month_ago))
    cache = Cache(tmp_path)
    cache.get_or_compute("kind", "new", Counted(VALUE), SHAPE)
    cache.prune()
    assert not stale.exists() and len(list((tmp_path / "kind").glob("*.json"))) == 1


def test_a_named_temporary_file_a_killed_build_left_is_removed_when_the_cache_opens(tmp_path):
    """Where O_TMPFILE is missing entries are written under a temporary name first; a dead writer's leftovers go."""
    folder = tmp_path / "kind"
    folder.mkdir()
    dead = folder / f"{C.TMP_PREFIX}{2**22 + 7}-abc"  # above Linux's largest pid: that process cannot exist
    mine = folder / f"{C.TMP_PREFIX}{os.getpid()}-abc"
    dead.write_text("half")
    mine.write_text("being written")
    Cache(tmp_path)
    assert not dead.exists() and mine.exists()


def test_entries_are_whole_without_o_tmpfile_too(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    Cache(tmp_path).get_or_compute("kind", "inputs", Counted(VALUE), SHAPE)
    compute = Counted(VALUE)
    Cache(tmp_path).get_or_compute("kind", "inputs", compute, SHAPE)
    assert compute.calls == 0 and sorted(p.name[-5:] for p in (tmp_path / "kind").iterdir()) == [".json"]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_build_killed_at_any_moment_leaves_no_temporary_file(sig, project, tmp_path):
    """Cold builds killed after a growing delay, so that some die while the cache is being written."""
    env = {**os.environ, C.ENV_DIR: str(tmp_path / "cache")}
    delays = [0.2, 0.4, 0.6, 0.9, 1.2, 1.6]
    for delay in delays:
        proc = subprocess.Popen(
            [sys.executable, "-m", "generator", "build", "--clean"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(sig)
        proc.wait()
        left = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.suffix != ".json"]
        assert left == [], f"killed after {delay:.1f}s: {left}"
        assert not [p.name for p in project.iterdir() if p.name.startswith(".build-")], "a staging folder was left"
