"""Runs the node tests of playground-core.js against parity vectors written from the real models."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import generator.playground as pg
from generator.playground.ngram import load_corpus

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")


def test_node_replays_the_python_parity_vectors(tmp_path):
    if NODE is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is not installed, and CI must run the JavaScript parity tests")
        pytest.skip("node is not installed, so playground-core.js cannot be checked against Python")
    models = json.loads(json.dumps(pg.export_models(load_corpus(ROOT / "data" / "corpus"))))
    vectors = pg.write_parity_vectors(models, 20240605, tmp_path / "vectors.json")
    run = subprocess.run(
        [NODE, "--test", "tests/js/"], cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PLAYGROUND_VECTORS": str(vectors)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
