"""The cache's blobs: a long text or byte string is kept once, however many entries hold it, and an entry
whose blob is gone or damaged is a miss, never a wrong value or a failed build."""
import os
import time

from generator.site.cache import BLOB_MIN, BLOBS, Cache

BIG = b"x" * BLOB_MIN
TEXT = "\u03b1" * BLOB_MIN  # two bytes a character in UTF-8


def blobs(directory):
    folder = directory / BLOBS
    return sorted(folder.glob("*.blob")) if folder.is_dir() else []


def test_an_entry_round_trips_its_long_and_short_strings(tmp_path):
    cache = Cache(tmp_path)
    value = {"big": BIG, "text": TEXT, "small": b"y" * (BLOB_MIN - 1), "nested": [BIG, ("a", 1)]}
    cache.store("kind", "key", value)
    assert Cache(tmp_path).load("kind", "key") == value
    assert len(blobs(tmp_path)) == 2  # BIG once though it appears twice; the short bytes stay in the entry
    entry = (tmp_path / "kind" / "key.pickle").stat().st_size
    assert entry < 2 * BLOB_MIN  # negative control: holding BIG and TEXT itself, it would be over 4 * BLOB_MIN


def test_entries_that_share_a_string_share_its_blob(tmp_path):
    cache = Cache(tmp_path)
    cache.store("a", "1", {"file": BIG})
    loaded = Cache(tmp_path).load("a", "1")
    later = Cache(tmp_path)
    later.store("b", "2", {"copy": bytes(BIG), "other": BIG + b"!"})
    assert len(blobs(tmp_path)) == 2
    assert later.load("b", "2")["copy"] == loaded["file"]


def test_a_missing_or_damaged_blob_makes_the_entry_a_miss(tmp_path):
    Cache(tmp_path).store("kind", "key", {"big": BIG})
    (blob,) = blobs(tmp_path)
    blob.write_bytes(BIG[:-1])  # a byte short
    assert Cache(tmp_path).load("kind", "key") is None
    blob.unlink()
    assert Cache(tmp_path).load("kind", "key") is None
    Cache(tmp_path).store("kind", "key", {"big": BIG})  # stored again, it is whole again
    assert Cache(tmp_path).load("kind", "key") == {"big": BIG}


def test_prune_keeps_the_blobs_this_build_used_and_drops_old_unused_ones(tmp_path, monkeypatch):
    import generator.site.cache as C

    monkeypatch.setattr(C, "UNUSED_BLOBS_KEPT", 1)
    old = Cache(tmp_path)
    for n in range(3):
        old.store("old", str(n), bytes([n]) * BLOB_MIN)
    for n, blob in enumerate(blobs(tmp_path)):  # used a few seconds ago, one after another
        os.utime(blob, (time.time() - 10 + n, time.time() - 10 + n))
    build = Cache(tmp_path)
    build.store("new", "key", {"big": BIG})
    build.prune()
    kept = {p.read_bytes()[:1] for p in blobs(tmp_path)}
    assert b"x" in kept  # used by this build
    assert len(kept) == 2  # and the newest unused one; the two older ones went
    newest = max(blobs(tmp_path), key=lambda p: p.stat().st_mtime_ns)
    assert newest.read_bytes()[:1] == b"x"
