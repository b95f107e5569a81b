"""The one cache: JSON entries checked on load, a miss for anything wrong with one, never code run, never a
failed build because it cannot be written, and no temporary file left by a kill."""

import errno
import json
import os
import pickle
import re
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
    (path,) = (cache.entries / kind).glob("*.json")
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
        shutil.rmtree(own_cache_folder / C.OWN / kind)
    monkeypatch.setattr(C, "_write_whole", cannot)
    report = build(project, tmp_path / "out", cache=Cache(own_cache_folder))
    assert "computed: convergence-wrong-sampler, identity-random;" in report.summary()  # as the build prints
    assert (tmp_path / "out" / "index.html").is_file() and report.pages > 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and os.strerror(problem) in warnings[0]


def test_a_cache_folder_that_cannot_be_made_warns_once_and_the_build_succeeds(small_project, tmp_path, capsys):
    """Real, not faked: the cache's path is a file, so no folder can be made under it."""
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("not a folder")
    build(small_project, tmp_path / "out", cache=Cache(blocked))
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
    assert not stale.exists() and len(list((tmp_path / C.OWN / "kind").glob("*.json"))) == 1


def test_a_named_temporary_file_a_killed_build_left_is_removed_when_the_cache_opens(tmp_path):
    """Where O_TMPFILE is missing entries are written under a temporary name first; a dead writer's leftovers go."""
    Cache(tmp_path).get_or_compute("kind", "inputs", Counted(VALUE), SHAPE)  # the generator's folder, marked
    folder = tmp_path / C.OWN / "kind"
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
    assert compute.calls == 0 and sorted(p.name[-5:] for p in (tmp_path / C.OWN / "kind").iterdir()) == [".json"]


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
        left = [
            p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.suffix != ".json" and p.name != C.MARKER
        ]
        assert left == [], f"killed after {delay:.1f}s: {left}"
        assert not [p.name for p in project.iterdir() if p.name.startswith(".build-")], "a staging folder was left"


# --- issue 31, item 9: the cache folder is the generator's own, and it trusts no figure it reads -------------

FOREIGN = {  # another program's files in a folder named as the cache (GENERATOR_CACHE_DIR=~/.cache)
    "other-program/settings.json": '{"theme": "dark"}',
    "figure/" + "ab" * 32 + ".json": '{"named like an entry": true}',
    "notes.txt": "keep me",
}


def plant(folder: Path, files: dict[str, str]) -> None:
    month_ago = time.time() - 30 * 24 * 3600
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
        os.utime(folder / name, (month_ago, month_ago))  # older than prune keeps anything unused


def test_clean_and_prune_remove_only_the_entries_the_generator_wrote(tmp_path):
    folder = tmp_path / "dot-cache"
    plant(folder, FOREIGN)
    cache = Cache(folder)
    cache.get_or_compute("kind", "inputs", Counted(VALUE), SHAPE)
    own = entry_path(cache, "kind")
    Cache(folder).prune()
    assert own.exists()  # negative control: used just now, so kept
    Cache(folder).clear()  # what --clean does
    assert not own.exists()  # its own entry went
    assert {name: (folder / name).read_text() for name in FOREIGN} == FOREIGN  # and nothing else


def test_a_folder_under_the_generators_name_that_it_did_not_make_is_neither_read_written_nor_emptied(tmp_path, capsys):
    folder = tmp_path / "dot-cache"
    planted = {f"{C.OWN}/notes.txt": "someone else's", f"{C.OWN}/kind/" + "cd" * 32 + ".json": "{}"}
    plant(folder, planted)
    compute = Counted(VALUE)
    cache = Cache(folder)
    assert cache.get_or_compute("kind", "inputs", compute, SHAPE) == VALUE and compute.calls == 1
    cache.prune()
    cache.clear()
    assert {name: (folder / name).read_text() for name in planted} == planted
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == sorted(planted)
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "did not write" in warnings[0]


HOSTILE_SVG = {  # each put into a cached figure's SVG, which otherwise stays what matplotlib drew
    "a script": "<script>alert(document.domain)</script>",
    "an event handler": '<g onload="alert(1)"/>',
    "a foreign reference": '<use xlink:href="https://example.org/x.svg#a"/>',
    "a style sheet of its own": "<style>text{fill:transparent}</style>",
    "an outside image in a style": '<rect style="fill:url(https://example.org/t.png)"/>',
    "foreign HTML": '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>',
    "an entity": None,
}


@pytest.mark.parametrize("attack", sorted(HOSTILE_SVG))
def test_a_hostile_svg_in_a_cached_figure_is_drawn_again_not_published(attack, project, tmp_path, own_cache_folder):
    entry = sorted(own_cache_folder.rglob("figure/*.json"))[0]
    stored = json.loads(entry.read_text(encoding="utf-8"))
    name, light = stored["value"][0], stored["value"][1]
    if HOSTILE_SVG[attack] is None:
        at = light.index("<svg")
        light = light[: at - 1] + ' [<!ENTITY e "entity text">]>\n' + light[at:].replace("</svg>", "&e;</svg>")
        light = light.replace('svg11.dtd"> [', 'svg11.dtd" [')
    else:
        light = light.replace("</svg>", HOSTILE_SVG[attack] + "</svg>")
    stored["value"][1] = light  # the right shape, the right key: only the content is hostile
    entry.write_text(json.dumps(stored), encoding="utf-8")
    cache = Cache(own_cache_folder)
    build(project, tmp_path / "out", cache=cache)
    published = (tmp_path / "out" / "figures" / f"{name}.svg").read_text(encoding="utf-8")
    assert published != light and "example.org" not in published and "alert" not in published
    assert "entity text" not in published and "transparent" not in published
    assert cache.computed["figure"] == 1  # drawn again


def test_an_untouched_cached_figure_is_published_as_stored_negative_control(project, tmp_path, own_cache_folder):
    entry = sorted(own_cache_folder.rglob("figure/*.json"))[0]
    name, light = json.loads(entry.read_text(encoding="utf-8"))["value"][:2]
    cache = Cache(own_cache_folder)
    build(project, tmp_path / "out", cache=cache)
    assert (tmp_path / "out" / "figures" / f"{name}.svg").read_text(encoding="utf-8") == light
    assert cache.computed["figure"] == 0


def build_in_a_read_only_cache(project: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    """`build ARGS` with the cache folder mounted read-only for this process alone (a mount namespace of its
    own), so that even root cannot change a file in it."""
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(cache), sys.executable, "-m", "generator", "build", *args],
        cwd=project,
        env={**os.environ, C.ENV_DIR: str(cache)},
        capture_output=True,
        text=True,
    )


def can_mount_read_only() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", 'd=$(mktemp -d) && mount --bind "$d" "$d" && mount -o remount,ro,bind "$d" "$d"'],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not can_mount_read_only(), reason="needs a mount namespace (unshare -m) to make a folder read-only")
@pytest.mark.parametrize("clean", [True, False])
def test_clean_with_a_read_only_cache_says_so_and_reuses_nothing(clean, project, tmp_path, own_cache_folder):
    done = build_in_a_read_only_cache(project, own_cache_folder, "--out", str(tmp_path / "out"), *["--clean"][:clean])
    assert done.returncode == 0, done.stderr
    figures = re.search(r"\((\d+) drawn, (\d+) reused\)", done.stdout)
    if clean:
        assert figures.group(2) == "0" and "nothing else computed" not in done.stdout
        warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
        assert any("--clean could not remove" in line and "reuses none" in line for line in warnings), done.stderr
    else:  # negative control: the same read-only cache without --clean is reused whole
        assert figures.group(1) == "0" and "nothing else computed" in done.stdout
