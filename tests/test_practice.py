"""The page "In practice": its data file (every number tied to a source, every mistake one line), the readings
and the batch-size model the engine computes for it, and the built page (navigation, links beside every quoted
number, figures with alt text and captions, the reading budget)."""

from __future__ import annotations

import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from html.parser import HTMLParser

import pytest
import yaml
from reading_budget import reading_order, visible_words

from generator.model.config import load_config
from generator.model.facts import build_facts
from generator.model.logreader import iid_rate_thousandths, parity_vectors, read_counts, read_rates
from generator.model.practice import PracticeError, batch_model, exact_crossover, load_practice, parse_practice
from generator.model.profiles import load_profiles
from generator.playground.sampler import argmax
from support import PROFILES, ROOT

DATA = ROOT / "data" / "practice.yaml"
BUDGET = 1300  # visible words of the page outside its widgets (issue 34)
NODE = shutil.which("node")


@pytest.fixture(scope="module")
def facts():
    config = load_config(ROOT / "data" / "site.yaml")
    return build_facts(load_profiles(PROFILES), config, practice=load_practice(DATA))


# --- the data file ---------------------------------------------------------------------------------


def raw() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def broken(edit) -> str:
    doc = copy.deepcopy(raw())
    edit(doc)
    with pytest.raises(PracticeError) as caught:
        parse_practice(doc, "data/practice.yaml")
    return str(caught.value)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d["k_sweep"]["drafts"][0]["tpot_ms"].__setitem__(2, "fast"),
            "k_sweep.drafts[0].tpot_ms[2]: must be a number",
        ),
        (lambda d: d["log"].__setitem__("source", "nowhere"), "log.source: must name one of sources"),
        (lambda d: d["speedups"][1].pop("speedup"), "speedups[1].speedup: missing"),
        (lambda d: d["log"].__setitem__("per_position", [0.5, 0.7, 0.1]), "log.per_position[1]: 0.7: unconditional"),
        (
            lambda d: d["sources"]["spec-bench"].__setitem__("url", "http://x"),
            "sources.spec-bench.url: must be an https",
        ),
        (lambda d: d.__setitem__("extra", 1), "extra: unknown block"),
        (lambda d: d["k_sweep"]["drafts"][1]["acceptance_length"].pop(), "k_sweep.drafts[1].acceptance_length: has 5"),
        (lambda d: d["log"].__setitem__("accepted", 9999), "log.accepted: must lie between 0"),
        (
            lambda d: d["k_by_batch"]["ranges"][0].__setitem__("k", True),
            "k_by_batch.ranges[0].k: must be a whole number",
        ),
    ],
)
def test_a_mistake_in_the_data_file_is_one_line_naming_the_file_and_the_place(edit, expected):
    message = broken(edit)
    assert message.startswith("data/practice.yaml: ") and expected in message, message
    assert "\n" not in message and "Traceback" not in message


def test_the_shipped_data_file_loads_with_every_number_exact_as_printed():
    practice = load_practice(DATA)
    quotes = practice.quotes()
    assert len(quotes) >= 50
    for source, q in quotes:
        assert source.url.startswith("https://") and Fraction(q.text) == q.value
    sweep = practice.blocks["k_sweep"]
    assert [q.text for q in sweep.drafts[1]["acceptance_length"]][:2] == ["2.10", "2.29"]  # a trailing zero kept


def generator(project, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", *argv],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_a_broken_data_file_stops_the_build_with_one_line_and_status_2(project):
    path = project / "data" / "practice.yaml"
    path.write_text(path.read_text().replace("plain_tpot_ms: 7.07", "plain_tpot_ms: seven"), encoding="utf-8")
    done = generator(project, "build", "--out", str(project / "build"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "practice.yaml: k_sweep.plain_tpot_ms:" in lines[0]


def test_validate_checks_the_data_file_and_refuses_it_with_the_builds_one_line(project):
    """`validate` passes the shipped file (the control), then refuses a broken one exactly as the build does."""
    done = generator(project, "validate")
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert "data/practice.yaml: ok" in done.stdout, done.stdout
    path = project / "data" / "practice.yaml"
    path.write_text(path.read_text().replace("accepted: 167", "accepted: 9999"), encoding="utf-8")
    checked, built = generator(project, "validate"), generator(project, "build", "--out", str(project / "build"))
    assert (checked.returncode, built.returncode) == (2, 2), checked.stderr
    assert checked.stderr == built.stderr, (checked.stderr, built.stderr)
    lines = checked.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: data/practice.yaml: log.accepted: must lie between 0")


def test_validate_leaves_out_the_data_file_when_the_project_has_none(project):
    (project / "data" / "practice.yaml").unlink()
    config = project / "data" / "site.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("  - practice\n", ""), encoding="utf-8")
    done = generator(project, "validate")
    assert done.returncode == 0 and "practice.yaml" not in done.stdout + done.stderr, done.stderr


# --- what the engine computes --------------------------------------------------------------------


def test_the_llama_cpp_log_reads_as_the_issue_says():
    r = read_rates("(0.805, 0.632, 0.483)", "unconditional", Fraction(1, 10))
    assert r.mean_length == Fraction(292, 100)
    assert [round(float(c), 3) for c in r.conditional] == [0.805, 0.785, 0.764]
    counts = read_counts("87", "167", "3", Fraction(1, 10))
    assert counts.mean_length == 1 + Fraction(167, 87) and round(float(counts.mean_length), 2) == 2.92
    assert read_rates("0.483, 0.632, 0.805", "unconditional", Fraction(1, 10)) == "rising"
    assert not isinstance(read_rates("0.483, 0.632, 0.805", "conditional", Fraction(1, 10)), str)


@pytest.mark.parametrize(
    ("length", "k"), [(Fraction(292, 100), 3), (Fraction(3, 2), 1), (Fraction(5), 7), (Fraction(1), 4)]
)
def test_the_single_rate_gives_the_logged_length_to_within_its_rounding(length, k):
    m = iid_rate_thousandths(length, k)

    def total(a):
        return sum(a**i for i in range(k + 1))

    lo, hi = Fraction(2 * m - 1, 2000), Fraction(2 * m + 1, 2000)  # the values that round to m / 1000
    assert (m == 0 or total(lo) <= length) and (m == 1000 or total(hi) > length)


def test_the_batch_model_starts_at_the_sites_speedup_and_crosses_one_where_it_says(facts):
    m = facts.practice.batch
    assert math.isclose(float(m.crossover), facts.roofline.crossover_positions, rel_tol=1e-12)
    assert m.knee == m.crossover / (facts.k + 1)
    for curve, p in zip(m.curves, facts.profiles):
        assert curve.points[0][1] == p.speedup == curve.small_batch  # b = 1 is the cost model of the other pages
        b = curve.break_even
        x, c, k = m.crossover, m.draft_step, m.k
        assert p.expected_tokens * max(x, b) / (k * c * max(x, b) + max(x, b * (k + 1))) == 1
        assert all(s == curve.large_batch for b, s in curve.points if b >= x)
        assert [s for _, s in curve.points] == sorted((s for _, s in curve.points), reverse=True)


@pytest.mark.parametrize("largest", [1, 512, 513, 4096, 1_000_000])
def test_the_batch_curves_reach_the_largest_batch_in_steps_the_log_axis_cannot_see(facts, largest):
    """Every b up to 512 (the shipped figure draws each one); past it, steps of at most 1/512 of b, so a
    million sequences is a few thousand points (the curve at every integer took half a minute and a figure of
    tens of megabytes). The model's values are the same at every b it keeps."""
    roofline = load_config(ROOT / "data" / "site.yaml").roofline
    drafts = [(p.id, p.name, p.expected_tokens) for p in facts.profiles]
    m = batch_model(drafts, facts.k, facts.practice.batch.draft_step, exact_crossover(roofline), largest)
    shipped = {b: s for b, s in facts.practice.batch.curves[0].points}
    for curve in m.curves:
        sizes = [b for b, _ in curve.points]
        assert sizes[0] == 1 and sizes[-1] == largest and sizes == sorted(set(sizes))
        assert sizes[: min(largest, 512)] == list(range(1, min(largest, 512) + 1))
        assert all(b - a <= max(1, a // 512) for a, b in zip(sizes, sizes[1:]))
        assert len(sizes) < 5000
    assert all(shipped[b] == s for b, s in m.curves[0].points if b in shipped)


def test_the_tie_is_read_from_the_profiles_and_greedy_picks_as_the_playground_does(facts):
    tie = facts.practice.tie
    row = facts.profiles[0].position(tie.position).target
    assert tie.tokens == ("the", "a") and tie.probability == Fraction(3, 8) == max(row)
    assert tie.pick == facts.tokens[argmax(list(row))]
    assert tie.flipped == ("a", "a") and tie.ulp == math.ulp(math.log(3 / 8)) == 2.0**tie.ulp_power


# --- the JavaScript against the engine ------------------------------------------------------------


def test_node_reads_every_vector_as_the_python_engine_does(tmp_path):
    if NODE is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is not installed, and CI must run the JavaScript parity tests")
        pytest.skip("node is not installed, so log-reader-core.js cannot be checked against Python")
    vectors = tmp_path / "vectors.json"
    vectors.write_text(json.dumps(parity_vectors(11)), encoding="utf-8")
    run = subprocess.run(
        [NODE, "--test", "tests/js/log-reader.test.mjs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "LOGREADER_VECTORS": str(vectors)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# pass 4" in run.stdout and "# fail 0" in run.stdout, run.stdout


# --- the built page --------------------------------------------------------------------------------


class Blocks(HTMLParser):
    """Each sentence-holding block (paragraph, list item, table row, caption) of <main>: its text and links."""

    BLOCK = {"p", "li", "tr", "figcaption", "dd"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open: list[dict] = []
        self.blocks: list[dict] = []
        self.figures: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in self.BLOCK:
            self.open.append({"tag": tag, "text": "", "links": set()})
        if tag == "a" and self.open:
            self.open[-1]["links"].add(a.get("href"))
        if tag == "figure":
            self.figures.append({"id": a.get("id"), "alt": None, "caption": ""})
        if tag == "img" and self.figures:
            self.figures[-1]["alt"] = a.get("alt")

    def handle_endtag(self, tag):
        if tag in self.BLOCK and self.open:
            done = self.open.pop()
            if done["tag"] == "figcaption" and self.figures:
                self.figures[-1]["caption"] = done["text"]
            self.blocks.append(done)
            if self.open:  # a block inside another is part of its text too
                self.open[-1]["text"] += done["text"]
                self.open[-1]["links"] |= done["links"]

    def handle_data(self, data):
        if self.open:
            self.open[-1]["text"] += data


@pytest.fixture(scope="module")
def page(site_dir):
    parser = Blocks()
    parser.feed((site_dir / "practice.html").read_text(encoding="utf-8"))
    return parser


def test_the_page_is_in_the_navigation(site_dir):
    """In whichever part of the navigation site.yaml lists it (the appendix here; a later part may hold it)."""
    html = (site_dir / "index.html").read_text(encoding="utf-8")
    groups = re.findall(r'<ol class="nav-list[^"]*"[^>]*data-nav="(\w+)"[^>]*>(.*?)</ol>', html, re.S)
    assert [name for name, body in groups if 'href="practice.html"' in body], groups
    main_path, appendix = reading_order(site_dir)
    assert "practice" not in main_path  # the main path's reading budget does not hold this page


def test_every_quoted_number_sits_in_a_sentence_or_row_with_a_link_to_its_source(page):
    practice = load_practice(DATA)
    log, batches = practice.blocks["log"], practice.blocks["k_by_batch"]
    numbers = [*practice.quotes()]
    numbers += [(log.source, str(n)) for n in (log.rounds, log.accepted, log.draft_length)]
    numbers += [(batches.source, str(r["largest_batch"])) for r in batches.ranges]
    missing = [
        (source.key, str(q))
        for source, q in numbers
        if not any(str(q) in b["text"] and source.url in b["links"] for b in page.blocks)
    ]
    assert not missing, f"quoted without a link to their source beside them: {missing}"


def test_the_check_can_fail_a_number_with_no_link_beside_it(page):
    """Negative control: a number the page never quotes beside the Spec-Bench link is caught."""
    url = load_practice(DATA).sources["spec-bench"].url
    assert not any("9.99" in b["text"] and url in b["links"] for b in page.blocks)


def test_both_figures_are_shown_with_alt_text_and_a_caption(site_dir, page):
    shown = {f["id"]: f for f in page.figures}
    manifest = json.loads((site_dir / "figures" / "manifest.json").read_text(encoding="utf-8"))["figures"]
    for name, words in (("k-sweep", "K = 4"), ("batch-speedup", "A model, not a measurement")):
        f = shown[f"figure-{name}"]
        assert f["alt"] and words in f["alt"] and len(f["caption"].split()) > 8, f
        assert (site_dir / "figures" / f"{name}.svg").is_file() and (
            site_dir / "figures" / f"{name}.dark.svg"
        ).is_file()
        assert manifest[name]["alt"] == f["alt"] and manifest[name]["inputs"]["function"] in f["caption"]
        assert "figures_practice.py" in f["caption"]


def test_the_page_stays_within_its_reading_budget(site_dir):
    words = visible_words((site_dir / "practice.html").read_text(encoding="utf-8"))
    assert 300 < words <= BUDGET, words


def test_the_quoted_data_is_published_and_the_page_links_it_and_names_it_in_the_footer(site_dir):
    """The sourced file is published beside the profiles; on this page the data links and the footer say the
    quoted numbers come from it (the other pages keep the toy-data sentence)."""
    assert (site_dir / "data" / "practice.yaml").read_bytes() == DATA.read_bytes()
    html = (site_dir / "practice.html").read_text(encoding="utf-8")
    links = re.search(r'<p class="data-links">(.*?)</p>', html, re.S).group(1)
    footer = re.search(r'<footer class="site-footer">\s*<p>(.*?)</p>', html, re.S).group(1)
    for words in (links, footer):
        assert 'href="data/practice.yaml"' in words, words
    assert "quoted numbers" in footer and "Every number on these pages" not in footer
    other = (site_dir / "speedup.html").read_text(encoding="utf-8")
    assert "data/practice.yaml" not in other and "Every number on these pages" in other
