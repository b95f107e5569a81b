"""The part beyond one token at a time, as a reader gets it: listed in the navigation under its own heading, its
numbers the engine's, its block stepper's frames the engine's, readable without the script, within its budget."""

import html
import json
import re
from fractions import Fraction as F
from pathlib import Path

import pytest
import yaml
from reading_budget import visible_words

from generator.model import verifiers as v
from generator.model.profiles import load_profiles
from support import ROOT

CONFIG = yaml.safe_load((ROOT / "data" / "site.yaml").read_text(encoding="utf-8"))
PROFILES = load_profiles(ROOT / "data" / CONFIG["profiles"])
PART_BUDGET = 3500  # visible words of <main> over the whole part, widgets' insides not counted (issue 33)
OWN_BUDGET = 2200  # this part's block and trees pages (an "In practice" page shares the part's budget)


@pytest.fixture(scope="module")
def site(site_dir):
    return site_dir


def text_of(site: Path, slug: str) -> str:
    raw = (site / f"{slug}.html").read_text(encoding="utf-8")
    body = raw[raw.index("<main") : raw.index("</main>")]
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    body = body.replace("<wbr>", "")  # a place a line may break, not a space
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def nav_groups(site: Path) -> list[tuple[str, list[str]]]:
    raw = (site / "index.html").read_text(encoding="utf-8")
    groups = re.findall(r'<ol class="nav-list[^"]*"[^>]*data-nav="(\w+)"[^>]*>(.*?)</ol>', raw, re.S)
    return [(name, re.findall(r'href="([^"#]+)\.html"', body)) for name, body in groups]


def test_the_navigation_lists_the_part_between_the_main_path_and_the_appendix(site):
    groups = nav_groups(site)
    assert [name for name, _ in groups] == ["main", "beyond", "appendix"]
    assert dict(groups)["beyond"] == CONFIG["beyond"]
    raw = (site / "index.html").read_text(encoding="utf-8")
    assert "Beyond one token at a time</h2>" in raw
    last_main = (site / f"{CONFIG['pages'][-1]}.html").read_text(encoding="utf-8")
    assert f'rel="next" href="{CONFIG["beyond"][0]}.html"' in last_main


def test_the_block_page_prints_the_engines_expectations(site):
    text = text_of(site, "block")
    for d in PROFILES.drafts:
        token = v.tokenwise_expected_accepted(PROFILES.target, d.distributions)
        block = v.block_expected_accepted(PROFILES.target, d.distributions)
        assert f"{token} ≈" in text and f"{block} ≈" in text, d.id
    assert "1497/512" in text and "3175/1024" in text  # the site's numbers, pinned
    assert "keeps 10/9 proposals" in text and "it keeps 11/9" in text


def test_the_block_page_counts_the_drafts_it_lists_as_those_with_a_chance(site):
    """The listing walks the drafts each draft model gives a positive chance, not every string of K tokens: the
    page said 6^5 where the drafts can make 1,200 and 1,600."""
    counts = []
    for d in PROFILES.drafts:
        possible = 1
        for row in d.distributions:
            possible *= sum(1 for q in row if q > 0)
        counts.append(f"{possible:,}")
    text = text_of(site, "block")
    assert f"at K = {PROFILES.k} ({' and '.join(counts)})" in text, counts
    assert counts != [f"{len(PROFILES.tokens) ** PROFILES.k:,}"] * len(counts)  # negative control: zeros matter here


def stepper_data(site: Path) -> dict:
    raw = (site / "block.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="block-stepper-data">(.*?)</script>', raw, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_block_stepper_plays_the_engines_round_and_reads_without_script(site):
    raw = (site / "block.html").read_text(encoding="utf-8")
    assert 'data-widget="block-stepper"' in raw and 'src="assets/block-stepper.js"' in raw
    assert (site / "assets" / "block-stepper.js").is_file()
    data = stepper_data(site)
    tokens = {t: i for i, t in enumerate(PROFILES.tokens)}
    rows = PROFILES.draft(CONFIG["block_round"]["draft"]).distributions
    xs = [tokens[t] for t in CONFIG["block_round"]["proposals"]]
    weights = v.running_weights(PROFILES.target, rows, xs)
    stops = v.stopping_chances(PROFILES.target, rows, xs)
    assert [F(r["weight"]) for r in data["table"]] == list(weights)
    assert [F(r["stop"]) for r in data["table"]] == list(stops)
    assert len(data["frames"]) == len(xs) + 4
    assert all(f["verdict"][1] for f in data["frames"])
    # without the script: the whole round is a table in the page itself
    table = raw[
        raw.index('<table class="block-round">') : raw.index("</table>", raw.index('<table class="block-round">'))
    ]
    assert table.count("<tr>") == len(xs) + 1
    for w, h in zip(weights, stops):
        assert f"<td>{w}</td><td>{h}</td>" in table
    kept = v.block_kept_distribution(PROFILES.target, rows, xs)
    token = v.tokenwise_kept_distribution(PROFILES.target, rows, xs)
    text = text_of(site, "block")
    assert f"keeps {sum(i * p for i, p in enumerate(token))} proposals on average" in text
    assert f"As a block it keeps {sum(i * p for i, p in enumerate(kept))}" in text


def test_the_trees_page_prints_the_engines_tree_guesses_and_rule_lab(site):
    text = text_of(site, "trees")
    tree = v.best_tree_accepted(PROFILES.target, 16)
    assert f"with {len(tree)} it keeps {tree[-1]}" in text
    for d in PROFILES.drafts:
        for p, q in zip(PROFILES.target, d.distributions):
            for value in (v.rrs_acceptance(p, q, 2), v.without_replacement_acceptance(p, q, 3)):
                assert f" {value} " in text
        typical = v.typical_round_outputs(PROFILES.target, d.distributions)
        assert f" {v.extended_tv(typical, PROFILES.target)} ≈" in text
    for arxiv in ("2403.10444", "2305.09781", "2406.16858", "2310.15141", "2410.18234", "2402.14160", "2401.10774"):
        assert f"arxiv.org/abs/{arxiv}" in (site / "trees.html").read_text(encoding="utf-8") + (
            site / "block.html"
        ).read_text(encoding="utf-8")


def test_the_part_stays_within_its_reading_budget(site):
    counts = {slug: visible_words((site / f"{slug}.html").read_text(encoding="utf-8")) for slug in CONFIG["beyond"]}
    assert sum(counts.values()) <= PART_BUDGET, counts
    assert counts["block"] + counts["trees"] <= OWN_BUDGET, counts


def test_a_profile_too_large_to_list_keeps_its_expectations_and_leaves_the_distances_out():
    """Eight tokens and K = 8 would be millions of drafts to list: the expectations come from their closed forms."""
    import numpy as np

    from generator.model.analysis import random_rational_row
    from generator.model.beyond import beyond_facts
    from generator.model.profiles import parse_profiles

    rng = np.random.default_rng(8)
    rows = [random_rational_row(rng, 8, 16) for _ in range(8)]
    doc = {
        "version": 1,
        "tokens": [f"t{i}" for i in range(8)],
        "cost_model": {"draft_step": "1/10", "verify_step": "1"},
        "target": [[str(x) for x in random_rational_row(rng, 8, 16)] for _ in range(9)],
        "drafts": [
            {
                "id": "d",
                "name": "D",
                "description": "d",
                "distributions": [[str(x) for x in r] for r in rows],
                "proposals": [f"t{max(range(8), key=lambda x: r[x])}" for r in rows],
            }
        ],
    }
    profiles = parse_profiles(doc)
    (d,) = beyond_facts(profiles, 1, "d", ()).drafts
    assert not d.lab_listed and d.rule("typical").tv is None
    assert d.rule("block").expected_accepted == v.block_expected_accepted(
        profiles.target, profiles.drafts[0].distributions
    )


def test_a_rule_lab_fraction_breaks_only_after_its_slash(site):
    """At 390 px "52926593/134217728" broke as "52926593/13" over "4217728", which reads as two other numbers; each
    exact fraction in the rule lab offers a break after its slash (<wbr>), which the browser takes first."""
    raw = (site / "trees.html").read_text(encoding="utf-8")
    lab = raw[raw.index('aria-label="Table: A rule lab') :]
    cells = re.findall(r"<td>(\d+/(?:<wbr>)?\d+)(?: ≈ [0-9.]+)?</td>", lab[: lab.index("</main>")])
    assert cells and all("/<wbr>" in c for c in cells), cells
    assert "52926593/<wbr>134217728" in cells  # the number seen split
