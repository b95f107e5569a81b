"""The widgets as the build writes them: every frame present, no script or style inline, every token tabled.

The site is built from a fixture page that uses every widget, so these checks do not depend on the
prose pages, which change while the widgets do not.
"""

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from generator.site.pipeline import build
from support import ROOT, copy_project, site_view

WIDGET_PAGE = """---
title: Every widget
nav_title: Widgets
---
A fixture page for the widget tests.

## A round

{{ widget("round", profile="aligned") }}

{{ widget("round", profile="divergent") }}

## Frame by frame

{{ widget("stepper") }}

## Positions

{{ widget("positions") }}

### A figure

{{ widget("figure", name="profile-aligned") }}

$$ \\min(p, q) + \\max(0, p - q) = p $$
"""

NOTES_PAGE = """---
title: Notes
---
The rejection is [frame four of the divergent round](widgets.html#frame-divergent-authored-4).

## Something else

Text.
"""

PAGES = ("widgets", "notes")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def build_fixture_site(workdir: Path) -> Path:
    """A copy of the project whose only pages are the fixture pages, built into workdir/site."""
    copy_project(workdir)
    pages = workdir / "site_src" / "pages"
    shutil.rmtree(pages)
    pages.mkdir()
    (pages / "widgets.md").write_text(WIDGET_PAGE, encoding="utf-8")
    (pages / "notes.md").write_text(NOTES_PAGE, encoding="utf-8")
    config = workdir / "data" / "site.yaml"
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["pages"] = list(PAGES)
    settings["appendix"] = []
    settings["beyond"] = []
    config.write_text(yaml.safe_dump(settings, sort_keys=False, allow_unicode=True), encoding="utf-8")
    build(workdir, workdir / "site")
    return workdir / "site"


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def find_all(self, tag=None, cls=None, **attrs):
        for n in self.iter():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.attrs.get("class", "").split():
                continue
            if all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                yield n

    def find(self, tag=None, cls=None, **attrs):
        return next(self.find_all(tag, cls, **attrs), None)


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", {})
        self.raw_attrs = []

    def handle_starttag(self, tag, attrs):
        self.raw_attrs.append((tag, attrs))
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.raw_attrs.append((tag, attrs))
        self.current.children.append(Node(tag, attrs, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(path: Path) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    builder.close()
    return builder


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_fixture_site(tmp_path_factory.mktemp("widgets"))


@pytest.fixture(scope="module")
def pages(site):
    return {f"{slug}.html": parse(site / f"{slug}.html") for slug in PAGES}


@pytest.fixture(scope="module")
def ctx():
    return site_view(ROOT)


@pytest.fixture(scope="module")
def widgets(pages):
    return pages["widgets.html"].root


def ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_every_frame_of_every_worked_round_is_in_the_page_once(widgets, ctx):
    """The worked rounds are written out for reading without the script; the script draws the rest."""
    ids = [n.attrs["id"] for n in widgets.find_all("li", cls="frame")]
    expected = [f.id for p in ctx.profiles for f in p.authored.frames]
    assert ids == expected
    assert len(set(ids)) == len(ids)


def test_the_authored_rounds_have_eight_and_five_frames(widgets):
    for profile, count in (("aligned", 8), ("divergent", 5)):
        round_ = widgets.find("section", id=f"rounds-{profile}-authored")
        frames = list(round_.find_all("li", cls="frame"))
        assert [f.attrs["id"] for f in frames] == [f"frame-{profile}-authored-{n}" for n in range(1, count + 1)]
        assert f"Frame {count} of {count}" in ws(frames[-1].text())


def test_the_stepper_json_lists_the_same_frames_as_the_page(widgets, pages):
    script = widgets.find("script", id="stepper-data")
    assert script.attrs["type"] == "application/json"
    data = json.loads(script.text())
    from_json = {f["id"]: f for p in data["profiles"] for r in p["rounds"] for f in r["frames"]}
    static = [n.attrs["id"] for n in widgets.find_all("li", cls="frame")]
    assert static and set(static) < set(from_json)
    for frame_id in static:
        assert from_json[frame_id]["title"] in ws(widgets.find("li", id=frame_id).text())


def test_no_page_carries_inline_script_handlers_or_styles(pages):
    for name, page in pages.items():
        for tag, attrs in page.raw_attrs:
            names = [k for k, _ in attrs]
            assert "style" not in names, f"{name}: <{tag} style=...>"
            assert not [k for k in names if k.startswith("on")], f"{name}: <{tag}> has an event handler attribute"
        for script in page.root.find_all("script"):
            if "src" in script.attrs:
                assert not script.text().strip(), f"{name}: a script with src also has content"
            else:
                assert script.attrs.get("type") == "application/json", f"{name}: inline script with code"


def test_every_resource_and_link_is_relative(pages):
    for name, page in pages.items():
        for tag, attrs in page.raw_attrs:
            a = dict(attrs)
            for key in ("src", "href"):
                value = a.get(key)
                if value is None:
                    continue
                if tag == "a" and value.startswith(("https://", "http://")):
                    continue  # a citation the reader may follow; nothing is fetched
                assert not value.startswith(("/", "http:", "https:", "//")), f"{name}: <{tag} {key}={value!r}>"


def test_chips_say_their_state_in_words_not_only_colour(widgets):
    words = {"proposed", "accepted", "rejected", "replacement", "dropped", "bonus"}
    chips = list(widgets.find_all("li", cls="chip"))
    assert {c.attrs["class"].split()[1].removeprefix("chip-") for c in chips} == words
    for chip in chips:
        state = chip.attrs["class"].split()[1].removeprefix("chip-")
        assert state in chip.find("span", cls="chip-state").text()


def test_each_verify_frame_shows_its_numbers_and_says_when_no_draw_was_needed(widgets, ctx):
    from generator.render.pages import fixed, frac

    for p in ctx.profiles:
        for f in p.authored.frames:  # the frames written out; the script draws the others from the same strings
            text = ws(widgets.find("li", id=f.id).text())
            assert ws(f.title) in text
            if f.kind == "verify":
                for value in (f.p_target, f.p_draft, f.accept_probability):
                    assert frac(value) in text
                assert ("no draw is needed" in text) == f.certain
                if not f.certain:
                    assert fixed(f.u, 4) in text
                if f.verdict == "rejected":
                    assert f"Replacement: {f.replacement}" in text
            if f.kind == "bonus":
                assert f"Bonus: {f.bonus}" in text


def test_the_positions_tables_hold_every_token_at_every_position(widgets, ctx):
    from generator.render.pages import frac

    for p in ctx.profiles:
        panel = widgets.find("section", id=f"positions-{p.id}")
        assert panel is not None and panel.attrs["data-tab-label"] == p.name
        for v in p.positions:
            table = panel.find("table", id=f"positions-{p.id}-{v.position}")
            assert table is not None, (p.id, v.position)
            region = table.parent
            assert region.attrs.get("role") == "region" and region.attrs.get("tabindex") == "0"
            assert region.attrs.get("aria-label")
            rows = list(table.find("tbody").find_all("tr"))
            assert [ws(r.find("th").text()).split()[0] for r in rows] == list(ctx.tokens)
            for row, token in zip(rows, ctx.tokens):
                cells = [ws(c.text()) for c in row.find_all("td")]
                i = ctx.tokens.index(token)
                assert cells[0] == frac(v.target[i])
                if v.is_bonus:
                    assert len(cells) == 1
                else:
                    assert cells[1:4] == [frac(v.draft[i]), frac(v.overlap[i]), frac(v.excess[i])]
                    assert ("proposed" in row.text()) == (token == v.proposal)
                    assert ("proposal" in row.attrs.get("class", "")) == (token == v.proposal)
            if not v.is_bonus:  # the Sum row: the label spans the token, p and q columns, then one sum per column
                total = table.find("tfoot").find("tr")
                assert total.find("th").attrs.get("colspan") == "3"
                assert [ws(c.text()) for c in total.find_all("td")][:2] == [frac(v.accept_rate), frac(v.excess_mass)]


def test_the_round_card_shows_the_end_of_the_authored_round_with_a_legend(widgets, ctx):
    for p in ctx.profiles:
        card = widgets.find("figure", id=f"round-{p.id}")
        tokens = [ws(c.find("span", cls="chip-token").text()) for c in card.find_all("li", cls="chip")]
        assert tokens == [c.token for c in p.authored.frames[-1].chips]
        legend = ws(card.find("ul", cls="chip-legend").text())
        for state in {c.state for c in p.authored.frames[-1].chips}:
            assert state in legend


def test_heading_permalinks_are_named_for_screen_readers(pages):
    anchors = [a for page in pages.values() for a in page.root.find_all("a", cls="header-anchor")]
    assert anchors
    for a in anchors:
        heading = a.parent
        assert a.attrs["href"] == "#" + heading.attrs["id"]
        assert a.attrs["aria-label"].startswith("Link to this section: ")


def test_every_page_has_a_skip_link_a_main_landmark_and_the_section_list(pages):
    for name, page in pages.items():
        root = page.root
        skip = root.find("a", cls="skip-link")
        assert skip is not None and skip.attrs["href"] == "#main", name
        assert root.find("main", id="main") is not None, name
        nav = [a.attrs["href"] for a in root.find("nav", cls="site-nav").find_all("a")]
        assert nav == ["widgets.html", "notes.html"], name
