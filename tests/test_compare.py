"""`compare` on two builds that differ in known ways: one figure redrawn, one removed, one added, one page's text."""

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.commands.check import check_site
from generator.commands.compare import visible_text, write_review
from generator.site.cache import Cache
from generator.site.pipeline import build
from support import copy_project

ADDED_TEXT = "Fish & chips <3, added by the test"


@pytest.fixture(scope="module")
def builds(tmp_path_factory, shared_cache):
    root = copy_project(tmp_path_factory.mktemp("project"))
    build(root, root / "build", cache=Cache(shared_cache))
    base = root / "build"
    head = Path(shutil.copytree(base, root / "head"))
    manifest_path = head / "figures" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    figures = manifest["figures"]

    svg = head / "figures" / "roofline.svg"
    text = svg.read_text()
    colour = re.search(r"#[0-9a-f]{6}", text).group(0)
    svg.write_text(text.replace(colour, "#ff00ff"))
    figures["roofline"]["inputs"]["inputs_sha256"] = "0" * 64

    (head / "figures" / "acceptance.svg").unlink()
    del figures["acceptance"]
    shutil.copyfile(head / "figures" / "round-lengths.svg", head / "figures" / "brand-new.svg")
    figures["brand-new"] = {**figures["round-lengths"], "file": "brand-new.svg"}
    manifest_path.write_text(json.dumps(manifest))

    page = head / "index.html"
    html = page.read_text()
    page.write_text(html.replace("</main>", "<p>Fish &amp; chips &lt;3, added by the test</p></main>", 1))

    out = root / "review"
    figs, pages = write_review(base, head, out)
    return base, head, out, figs, pages


def shown_images(page: str) -> dict[str, list[bytes]]:
    """section id -> the inline images in it, decoded."""
    out = {}
    for m in re.finditer(r'<section id="figure-([^"]+)">(.*?)</section>', page, re.S):
        out[m.group(1)] = [
            base64.b64decode(b) for b in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', m.group(2))
        ]
    return out


def test_every_added_removed_or_changed_figure_is_shown_before_and_after(builds):
    base, head, out, figs, _ = builds
    status = {f.name: f.status for f in figs if f.status != "unchanged"}
    assert status == {"roofline": "changed", "acceptance": "removed", "brand-new": "added"}
    images = shown_images((out / "index.html").read_text())
    before, after = (base / "figures" / "roofline.svg").read_bytes(), (head / "figures" / "roofline.svg").read_bytes()
    # before, after, then the two again stacked for the difference image
    assert images["roofline"] == [before, after, before, after]
    assert images["acceptance"] == [(base / "figures" / "acceptance.svg").read_bytes()]
    assert images["brand-new"] == [(head / "figures" / "brand-new.svg").read_bytes()]
    page = (out / "index.html").read_text()
    assert "the numbers it is drawn from changed" in page
    assert page.count('class="difference"') == 1 and "pixel difference of roofline" in page


def test_unchanged_figures_are_listed_but_not_shown(builds):
    _, _, out, figs, _ = builds
    unchanged = [f.name for f in figs if f.status == "unchanged"]
    assert "profile-aligned" in unchanged
    page = (out / "index.html").read_text()
    assert set(shown_images(page)) == {"roofline", "acceptance", "brand-new"}
    assert all(f"<code>{name}</code>" in page for name in unchanged)


def test_the_review_is_one_file(builds):
    out = builds[2]
    assert sorted(p.name for p in out.rglob("*")) == ["index.html", "review.json", "summary.md"]
    data = json.loads((out / "review.json").read_text())
    assert {f["name"]: f["status"] for f in data["figures"] if f["status"] != "unchanged"} == {
        "roofline": "changed",
        "acceptance": "removed",
        "brand-new": "added",
    }
    assert data["pages"] == [{"path": "index.html", "status": "changed", "added": 1, "removed": 0}]


def test_a_page_whose_text_changed_gets_a_readable_escaped_diff(builds):
    _, _, out, _, pages = builds
    assert [(p.path, p.status, p.added, p.removed) for p in pages] == [("index.html", "changed", 1, 0)]
    page = (out / "index.html").read_text()
    assert "+Fish &amp; chips &lt;3, added by the test" in page
    assert ADDED_TEXT not in page


def test_the_review_page_is_self_contained_and_well_formed(builds):
    out = builds[2]
    assert [str(p) for p in check_site(out)] == []
    assert not re.search(r'(?:src|href)="(?:https?:)?//', (out / "index.html").read_text())


def test_the_summary_is_markdown_for_the_job_summary(builds):
    summary = (builds[2] / "summary.md").read_text()
    assert summary.startswith("## Figure review\n")
    assert "1 figures changed, 1 added, 1 removed" in summary
    assert "| `roofline` | changed | the numbers it is drawn from changed |" in summary
    assert "| `acceptance` | removed |" in summary and "| `brand-new` | added |" in summary
    assert "`index.html` (changed): +1 −0 lines" in summary
    assert "Unchanged figures: " in summary and "`profile-aligned`" in summary


def test_visible_text_skips_scripts_and_styles_and_reads_images_by_their_alt():
    lines = visible_text(
        "<html><head><title>T</title><style>p{}</style></head><body><script>var x</script>"
        "<p>One <b>two</b></p><img src=a.svg alt='A chart'><li>three</li></body></html>"
    )
    assert lines == ["[title: T]", "One two", "[image: A chart]", "three"]


def test_the_build_stamp_is_not_a_change_to_review():
    """Two commits' builds always differ in the footer's date and commit; that alone is no page change."""
    page = (
        '<main><p>Same text</p></main><footer><p class="colophon" data-build-stamp>'
        "Version 1, built {} from <code>{}</code>.</p><p>After</p></footer>"
    )
    assert (
        visible_text(page.format("2026-01-01", "aaaa"))
        == visible_text(page.format("2026-02-02", "bbbb"))
        == ["Same text", "After"]
    )


def test_comparing_a_build_with_itself_reports_no_change(builds, tmp_path):
    base = builds[0]
    done = subprocess.run(
        [sys.executable, "-m", "generator", "compare", str(base), str(base), "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "0 figures changed, 0 added, 0 removed" in done.stdout and "no page text changed" in done.stdout
    assert "No figure changed." in (tmp_path / "r" / "index.html").read_text()


def test_compare_refuses_to_overwrite_a_folder_that_is_not_a_review(builds, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    done = subprocess.run(
        [sys.executable, "-m", "generator", "compare", str(builds[0]), str(builds[1]), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "refusing" in done.stderr and (tmp_path / "keep.txt").exists()
