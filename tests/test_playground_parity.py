"""Runs the node tests of playground-core.js against parity vectors written from the real models.

The bundle holds rounds for the prose pair, the code pair and a small pair trained on a made-up
text with characters outside the Basic Multilingual Plane, plus each corpus with the export Python
trained from it, so node also retrains every pair and must reach the same counts (digest and all).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import generator.playground as pg
from generator.playground.corpus import load_sources
from generator.playground.ngram import KINDS
from generator.site.pipeline import load_inputs

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
SEED = 20240605


def write_bundle(path: Path) -> Path:
    config, _ = load_inputs(ROOT)
    settings = config.playground
    texts, orders = {}, {}
    for kind in KINDS:
        c = getattr(settings, kind)
        texts[kind], _ = load_sources(c.package, c.files, c.books, ROOT / "data", kind)
        orders[kind] = pg.Orders(c.target_order, c.draft_order, c.min_count)
    texts["astral"] = pg.astral_text(SEED)
    orders["astral"] = pg.Orders(4, 2, 2)
    path.write_text(json.dumps(pg.parity_bundle(texts, orders, SEED), separators=(",", ":")), encoding="utf-8")
    return path


def test_node_replays_the_python_parity_vectors(tmp_path):
    if NODE is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is not installed, and CI must run the JavaScript parity tests")
        pytest.skip("node is not installed, so playground-core.js cannot be checked against Python")
    vectors = write_bundle(tmp_path / "vectors.json")
    run = subprocess.run(
        [NODE, "--test", "tests/js/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PLAYGROUND_VECTORS": str(vectors)},
    )
    assert run.returncode == 0, run.stdout + run.stderr


if __name__ == "__main__":  # tests/js/playground.test.mjs runs this when started on its own
    import sys

    write_bundle(Path(sys.argv[1]))
