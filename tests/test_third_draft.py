"""Pages loop over the drafts in the data (issue 13 item 3): a third draft added to a copy of the data shows up,
by name, on every page that shows per-draft content, and every figure drawn for it is shown on some page."""

import json
import re

import pytest

from generator.site.pipeline import build

THIRD = {
    "id": "third",
    "name": "A third, hand-made draft",
    "description": "Added by a test: spreads its guesses more evenly than the target does.",
    "distributions": [
        ["2/8", "1/8", "1/8", "2/8", "1/8", "1/8"],
        ["1/8", "3/8", "2/8", "0", "1/8", "1/8"],
        ["1/8", "1/8", "4/8", "1/8", "1/8", "0"],
        ["1/8", "1/8", "1/8", "3/8", "1/8", "1/8"],
        ["2/8", "1/8", "1/8", "1/8", "2/8", "1/8"],
    ],
    "proposals": ["the", "cat", "sat", "on", "a"],
}
PER_DRAFT_PAGES = (
    "index",
    "positions",
    "positions-reference",
    "draft-and-verify",
    "speedup",
    "tokens-per-round",
    "cost",
    "guarantees",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from generator.site.cache import Cache
    from support import copy_project

    root = copy_project(tmp_path_factory.mktemp("third"), small=True)  # what is at stake is where the draft shows
    path = root / "data" / "profiles.v1.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["drafts"].append(THIRD)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    out = root / "build"
    build(root, out, cache=Cache(tmp_path_factory.mktemp("third-cache")))
    return out


def visible(html: str) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def test_the_third_draft_is_named_on_every_page_with_per_draft_content(site):
    for slug in PER_DRAFT_PAGES:
        text = visible((site / f"{slug}.html").read_text(encoding="utf-8"))
        assert THIRD["name"] in text or THIRD["name"].lower() in text, slug


def test_every_figure_drawn_for_the_third_draft_is_shown(site):
    manifest = json.loads((site / "figures" / "manifest.json").read_text(encoding="utf-8"))["figures"]
    mine = [name for name in manifest if name.endswith(f"-{THIRD['id']}")]
    assert len(mine) >= 3, mine  # profile bars, convergence, error against samples at least
    pages = " ".join(p.read_text(encoding="utf-8") for p in site.glob("*.html"))
    for name in mine:
        assert f'src="figures/{name}.svg"' in pages, name


def test_tables_grow_a_column_and_the_stepper_a_draft(site):
    details = (site / "tokens-per-round.html").read_text(encoding="utf-8")
    header = details[details.index("<thead>") : details.index("</thead>")]
    assert len(re.findall(r"<th[ >]", header)) == 1 + 3
    landing = (site / "index.html").read_text(encoding="utf-8")
    table = next(t for t in re.findall(r"<table>.*?</table>", landing, flags=re.S) if "Speedup" in t)
    assert table.split("<tbody>")[1].count("<tr>") == 3  # one row per draft
    stepper = (site / "draft-and-verify.html").read_text(encoding="utf-8")
    assert f'data-profile="{THIRD["id"]}"' in stepper and f'id="rounds-{THIRD["id"]}-authored"' in stepper


def test_no_page_or_template_names_a_draft_by_its_id():
    from support import PROFILES, ROOT

    ids = [d["id"] for d in json.loads(PROFILES.read_text(encoding="utf-8"))["drafts"]]
    sources = [*(ROOT / "site_src" / "pages").glob("*.md"), *(ROOT / "site_src" / "templates").rglob("*.html")]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for draft_id in ids:
            assert not re.search(rf"\b{re.escape(draft_id)}\b", text), (path.name, draft_id)
