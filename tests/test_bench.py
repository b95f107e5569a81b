"""The bench command's parts that are not timing: its edits and its report."""

import json
import subprocess
from fractions import Fraction

from generator.commands import bench
from generator.model.profiles import load_profiles
from support import copy_project


def test_the_one_number_edit_changes_exactly_the_draft_step_and_leaves_a_valid_profiles_file(tmp_path):
    root = copy_project(tmp_path)
    path = root / "data" / "profiles.v1.json"
    before = json.loads(path.read_text())
    bench.edit_number(root, 0)
    after = json.loads(path.read_text())
    assert after["cost_model"]["draft_step"] != before["cost_model"]["draft_step"]
    after["cost_model"]["draft_step"] = before["cost_model"]["draft_step"]
    assert after == before
    assert load_profiles(path).cost_model.draft_step == Fraction(1, 11)


def test_the_one_page_edit_appends_text_to_one_page_only(tmp_path):
    root = copy_project(tmp_path)
    pages = {p.name: p.read_text() for p in (root / "site_src" / "pages").glob("*.md")}
    bench.edit_page(root, 2)
    changed = [p.name for p in (root / "site_src" / "pages").glob("*.md") if p.read_text() != pages[p.name]]
    assert len(changed) == 1
    text = (root / "site_src" / "pages" / changed[0]).read_text()
    assert text.startswith(pages[changed[0]]) and "{" not in text[len(pages[changed[0]]) :]


def test_the_report_gives_the_median_of_paired_ratios_not_the_ratio_of_medians():
    ours = {
        "cold": [4.0, 6.0, 9.0],
        "no-change": [0.1, 0.2, 0.9],
        "one-page edit": [0.5] * 3,
        "one-number edit": [1.0, 1.2, 1.8],
    }
    base = {"cold": [1.0, 1.0, 3.0], "no-change": [1.0] * 3, "one-page edit": [1.0] * 3, "one-number edit": [1.0] * 3}
    with_cpu = [{kind: [(t, t / 2) for t in times] for kind, times in side.items()} for side in (ours, base)]
    lines = bench.report(with_cpu)
    assert "paired ratio  4.00x" in lines[0]  # ratios 4, 6, 3: median 4 (the ratio of the medians would be 6)
    assert "median  6.00s  budget 5.0s OVER" in lines[0] and "median  0.20s  budget 0.6s ok" in lines[1]
    assert lines[-1].startswith("longest module: generator/") and "lines (limit 600)" in lines[-1]


def test_without_a_baseline_the_report_gives_seconds_only():
    lines = bench.report([{kind: [(1.0, 0.5)] for kind in bench.KINDS}])
    assert "ratio" not in lines[0] and "median  1.00s" in lines[0] and "CPU  0.50s" in lines[0]


def test_the_timed_builds_run_with_the_bytecode_cache_a_terminal_has(tmp_path, monkeypatch):
    """With PYTHONDONTWRITEBYTECODE=1 our package would be compiled again at every timed run."""
    seen = {}

    def run(command, **kwargs):
        seen.update(kwargs["env"])
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("SOME_OTHER_SETTING", "kept")
    monkeypatch.setattr(subprocess, "run", run)
    bench.timed_build(tmp_path, tmp_path, tmp_path / "cache", clean=True)
    assert "PYTHONDONTWRITEBYTECODE" not in seen
    assert seen["SOME_OTHER_SETTING"] == "kept"  # negative control: nothing else is dropped
