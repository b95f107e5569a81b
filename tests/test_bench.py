"""The bench command's parts that are not timing: its edits, its mkdocs project and its ratios."""
import json
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
    assert text.startswith(pages[changed[0]]) and "{" not in text[len(pages[changed[0]]):]


def test_the_mkdocs_project_holds_the_same_pages_in_the_reading_order(tmp_path):
    root = copy_project(tmp_path / "p")
    project = bench.mkdocs_project(root, tmp_path / "m")
    order = bench.page_order(root)
    nav = (project / "mkdocs.yml").read_text()
    assert [line.strip("- ").strip() for line in nav.splitlines() if line.startswith("  - ")] == \
        ["index.md"] + [f"{name}.md" for name in order[1:]]
    assert (project / "docs" / "index.md").read_text() == (root / "site_src" / "pages" / f"{order[0]}.md").read_text()


def test_the_report_gives_the_median_of_paired_ratios_not_the_ratio_of_medians():
    results = {
        "cold": [(4.0, 1.0), (6.0, 1.0), (9.0, 3.0)],  # ratios 4, 6, 3: median 4 (ratio of medians would be 6)
        "no-change": [(0.1, 1.0), (0.2, 1.0), (0.3, 3.0)],
        "one-page edit": [(0.5, 1.0)] * 3,
        "one-number edit": [(1.0, 1.0), (1.2, 1.0), (1.8, 3.0)],
    }
    lines = bench.report(results)
    assert " 4.00x mkdocs" in lines[0]
    assert " 0.20x cold" in lines[3]  # 1/4, 1.2/6, 1.8/9: all 0.2
    assert lines[-1].startswith("targets: cold <= 4x mkdocs")


def test_without_a_peer_the_report_gives_seconds_and_ratios_to_cold_only():
    results = {kind: [(1.0, None)] for kind in bench.KINDS}
    lines = bench.report(results)
    assert "mkdocs" not in lines[0] and "1.00x cold" in lines[1]


def test_both_sides_run_with_the_bytecode_cache_a_terminal_has(tmp_path, monkeypatch):
    """mkdocs reads the bytecode its installation compiled; with PYTHONDONTWRITEBYTECODE=1 only our
    package would be compiled again at every timed run, so the timed commands run without it."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "PYTHONDONTWRITEBYTECODE" not in bench._env(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in bench._terminal_env()
    monkeypatch.setenv("SOME_OTHER_SETTING", "kept")
    assert bench._env(tmp_path)["SOME_OTHER_SETTING"] == "kept"  # negative control: nothing else is dropped
