"""`check` against the real build, and against copies of it broken one way at a time."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.commands.check import check_site
from generator.site.pipeline import build


@pytest.fixture(scope="module")
def built(site_dir):
    return site_dir


@pytest.fixture
def copy(built, tmp_path):
    return Path(shutil.copytree(built, tmp_path / "site"))


def insert(site: Path, html: str, before: str = "</main>", page: str = "index.html") -> None:
    path = site / page
    text = path.read_text(encoding="utf-8")
    assert before in text
    path.write_text(text.replace(before, html + before, 1), encoding="utf-8")


def test_check_passes_on_the_real_build(built):
    assert [str(p) for p in check_site(built)] == []


BROKEN = {
    "a broken link": ('<a href="nowhere.html">x</a>', "no such file nowhere.html"),
    "a missing anchor": ('<a href="index.html#no-such-heading">x</a>', "has no element with id 'no-such-heading'"),
    "a missing anchor on the same page": ('<a href="#nope">x</a>', "index.html has no element with id 'nope'"),
    "an external script": ('<script src="https://cdn.example.com/x.js"></script>', "loads from another origin"),
    "an external stylesheet": ('<link rel="stylesheet" href="//cdn.example.com/x.css">', "loads from another origin"),
    "an external image": ('<img src="https://example.com/x.png" alt="x">', "loads from another origin"),
    "an image without alt text": ('<img src="figures/roofline.svg">', "has no alt text"),
    "an absolute path": ('<a href="/index.html">x</a>', "absolute path"),
    "a link out of the site": ('<a href="../elsewhere.html">x</a>', "points outside the site"),
    "a new tab without noopener": ('<a href="https://example.org/" target="_blank">x</a>', 'without rel="noopener"'),
    "a duplicate id": ('<p id="twice">a</p><p id="twice">b</p>', "duplicate id 'twice'"),
    "misnested tags": ("<p><em><strong>x</em></strong></p>", "misnested"),
    "an unclosed element": ("<div><span>x</div>", "</div> does not match the element open here"),
    "a block inside a paragraph": ("<p>a <div>b</div></p>", "</p> without an open <p> (a block such as <div>"),
    "a stray end tag": ("</section>", "</section> does not match the element open here"),
    "an attribute given twice": ('<a href="index.html" href="x.html">x</a>', "the same attribute twice"),
    # issue 12, item 6: what the CSP blocks silently, or what contacts another host without fetching a file
    "a preconnect to another host": ('<link rel="preconnect" href="http://example.com">', "loads from another origin"),
    "a dns-prefetch of another host": ('<link rel="dns-prefetch" href="//example.com">', "loads from another origin"),
    "an inline script": ("<script>document.title = 'x'</script>", "inline <script> is blocked by the CSP"),
    "an inline event handler": ('<button type="button" onclick="go()">x</button>', "inline event handlers"),
    "an inline stylesheet": ("<style>body { color: red }</style>", "inline <style> is blocked by the CSP"),
    "a style attribute": ('<p style="color: red">x</p>', "inline styles are blocked by the CSP"),
    "a meta refresh": ('<meta http-equiv="refresh" content="0; url=https://example.com/">', "meta http-equiv"),
    "a base element": ('<base href="https://example.com/">', "<base> changes where every relative link points"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_check_lists_the_problem_in_a_copy_with(case, copy):
    html, expected = BROKEN[case]
    insert(copy, html)
    problems = [str(p) for p in check_site(copy)]
    assert any(expected in p and p.startswith("index.html:") for p in problems), problems


def test_check_finds_a_figure_that_a_page_shows_but_the_build_lacks(copy):
    name = next(
        p.name
        for p in (copy / "figures").glob("*.svg")
        if f"figures/{p.name}" in "".join(h.read_text() for h in copy.glob("*.html"))
    )
    (copy / "figures" / name).unlink()
    problems = [str(p) for p in check_site(copy)]
    assert any(f"no such file figures/{name}" in p for p in problems)
    assert any(p.startswith("figures/manifest.json") and name in p for p in problems)


def test_check_finds_a_figure_a_page_shows_that_the_manifest_does_not_list(copy):
    svg = next((copy / "figures").glob("*.svg"))
    (copy / "figures" / "planted.svg").write_bytes(svg.read_bytes())  # the file exists: only the manifest lacks it
    insert(copy, '<img src="figures/planted.svg" alt="a planted figure">')
    problems = [str(p) for p in check_site(copy)]
    assert any(p.startswith("index.html:") and "figures/planted.svg" in p and "does not list" in p for p in problems)


def test_check_finds_a_figure_drawn_that_no_page_shows(project, tmp_path):
    """A page that stops showing a figure the registry still draws: the build passes, check does not."""
    page = project / "site_src" / "pages" / "wasted-pass.md"
    text = page.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if 'widget("figure"' in ln and '"roofline"' in ln)
    page.write_text(text.replace(line, ""), encoding="utf-8")
    build(project, tmp_path / "site")
    problems = [str(p) for p in check_site(tmp_path / "site")]
    assert problems == ["figures/manifest.json: figure 'roofline' is drawn but no page shows it"]


def test_check_allows_plain_links_to_other_sites_and_inline_images(copy, built):
    insert(
        copy,
        '<a href="https://example.org/">a</a> <a href="https://example.org/" target="_blank" rel="noopener">b</a>'
        ' <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="dot"> <a href="mailto:a@example.org">c</a>',
    )
    assert {p.message for p in check_site(copy)} == {p.message for p in check_site(built)}


def test_check_finds_a_stylesheet_that_loads_from_another_origin(copy):
    css = next((copy / "assets").glob("*.css"))
    css.write_text(css.read_text() + '\n@import "https://fonts.example.com/x.css";\n')
    assert any("loads from another origin" in str(p) for p in check_site(copy))


def test_the_check_command_prints_every_problem_and_exits_1(copy):
    insert(copy, '<a href="gone.html">x</a><script src="https://cdn.example.com/x.js"></script>')
    done = subprocess.run([sys.executable, "-m", "generator", "check", str(copy)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "gone.html" in done.stdout and "cdn.example.com" in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("check: ")


def test_the_check_command_on_a_missing_folder_says_so_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "generator", "check", str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such folder" in done.stderr


def test_check_allows_an_inline_script_only_while_the_csp_lists_its_hash(copy):
    """The 404 page's one inline script is allowed by its sha256 in the CSP; one changed byte and it is not."""
    assert not [p for p in check_site(copy) if p.file == "404.html"]
    page = copy / "404.html"
    text = page.read_text(encoding="utf-8")
    start = text.index("<script>") + len("<script>")
    page.write_text(text[:start] + " " + text[start:], encoding="utf-8")
    assert any("inline <script> is blocked by the CSP" in p.message for p in check_site(copy) if p.file == "404.html")
