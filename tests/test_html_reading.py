"""Issue 31, items 2-6: one reading of HTML, the browser's (html5lib), for raw HTML in pages, for `check` and for
the build's link check; data in script blocks that cannot change how a page parses; heading anchors in linear
time; a broken link blamed on the line that writes it."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import html5lib
import pytest
from test_page_safety import build_in, one_error_line

from generator.commands.check import check_site
from generator.render.markup import RawHtmlError, check_html
from generator.site.publish import broken_links, json_for_script

REFRESH = '<meta http-equiv="refresh" content="0;url=https://example.org/">'

# --- raw HTML in a page, read where it stands -------------------------------------------------------------

HIDDEN_IN_RAW_HTML = {
    "an empty comment <!-->": f"<!-->{REFRESH}-->",
    "an empty comment <!--->": f"<!--->{REFRESH}-->",
    "a comment ended by --!>": f"<!-- note --!>{REFRESH}<!-- -->",
    "a refresh left open at the block's end": '<meta http-equiv="refresh" content="0;url=https://example.org/',
    "an iframe left open at the block's end": '<iframe srcdoc="<script>alert(1)</script>"',
    "a span whose attribute stays open": '<span title="x',
    "a comment left open": "<!-- the rest of the page",
}


@pytest.mark.parametrize("case", sorted(HIDDEN_IN_RAW_HTML))
def test_raw_html_is_read_as_a_browser_reads_it(case):
    with pytest.raises(RawHtmlError, match="not allowed in a page"):
        check_html(HIDDEN_IN_RAW_HTML[case])


@pytest.mark.parametrize(
    "html",
    ["<!-- a note -->", "<!---->", '<span title="a>b">x</span>', "<div>\n<p>text</p>", '<a href="cost.html">c</a>'],
)
def test_harmless_raw_html_still_passes(html):
    """Negative control: comments, quoted ">" and blocks that close later are what they seem."""
    assert check_html(html).startswith(html[:4])


def test_a_hidden_refresh_fails_the_build_in_one_line(project):
    line = one_error_line(build_in(project, f"<!-->{REFRESH}-->"))
    assert line.startswith("error: site_src/pages/index.md: line 6: raw HTML <meta> is not allowed"), line


def test_a_block_ending_inside_a_tag_fails_the_build_in_one_line(project):
    body = '<iframe srcdoc="<script>alert(1)</script>"\n\nA paragraph after it.'
    line = one_error_line(build_in(project, body))
    assert line.startswith("error: site_src/pages/index.md: line 6: "), line


@pytest.mark.parametrize("n", [12_000])
def test_thousands_of_unclosed_start_tags_are_refused_fast(project, n):
    """Python 3.11.7's html.parser takes ~25 s on 12,000 unclosed start tags; the browser's reading refuses
    them at once (a tag with thousands of attributes), within the build's own time."""
    line = one_error_line(build_in(project, "<p>" + '<a href="x" ' * n + "</p>"))
    assert line.startswith("error: site_src/pages/index.md: line 6: raw HTML where a tag has more than"), line


def test_deep_nesting_spread_over_blocks_fails_the_build_in_one_line(project):
    line = one_error_line(build_in(project, "<div>\n\n" * 12_000))
    assert line.startswith("error: site_src/pages/index.md: "), line
    assert "nest more than 512 deep" in line, line


# --- `check` reads built pages and SVG files as a browser does ---------------------------------------------


@pytest.fixture
def copy(site_dir, tmp_path):
    return Path(shutil.copytree(site_dir, tmp_path / "site"))


def _plant(site: Path, html: str, page: str = "index.html") -> list[str]:
    path = site / page
    path.write_text(path.read_text(encoding="utf-8").replace("</main>", html + "</main>", 1), encoding="utf-8")
    return [str(p) for p in check_site(site)]


SEEN_BY_A_BROWSER = {
    "a refresh after <!-->": (f"<!-->{REFRESH}-->", "meta http-equiv"),
    "a refresh after <!--->": (f"<!--->{REFRESH}-->", "meta http-equiv"),
    "a refresh after --!>": (f"<!-- x --!>{REFRESH}<!-- -->", "meta http-equiv"),
    "an iframe with srcdoc": ('<iframe srcdoc="<p>x</p>"></iframe>', "<iframe> shows another document"),
    "a script inside inline SVG": ("<svg><script>alert(1)</script></svg>", "a <script> inside SVG"),
    "a javascript: link inside inline SVG": (
        '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
        "a link to javascript: is not allowed",
    ),
    "an event handler inside inline SVG": ('<svg><rect onclick="go()"/></svg>', "inline event handlers"),
    "a broken link after <!-->": ('<!--><a href="nowhere.html">x</a>-->', "no such file nowhere.html"),
}


@pytest.mark.parametrize("case", sorted(SEEN_BY_A_BROWSER))
def test_check_sees_what_a_browser_sees(copy, case):
    html, expected = SEEN_BY_A_BROWSER[case]
    problems = _plant(copy, html)
    assert any(expected in p and p.startswith("index.html:") for p in problems), problems


def test_check_passes_comments_and_svg_without_code(copy):
    """Negative control: a real comment and a drawing are not problems."""
    assert _plant(copy, '<!-- a note --><svg aria-hidden="true"><rect width="1" height="1"/></svg>') == []


SVG_WITH_CODE = {
    "a script": '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    "an event handler": '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    "a javascript: link": (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>'
    ),
}


@pytest.mark.parametrize("case", sorted(SVG_WITH_CODE))
def test_check_finds_code_in_an_svg_asset(copy, case):
    (copy / "assets" / "icon.svg").write_text(SVG_WITH_CODE[case], encoding="utf-8")
    problems = [str(p) for p in check_site(copy)]
    assert any(p.startswith("assets/icon.svg") for p in problems), problems


def test_check_passes_an_svg_asset_that_only_draws(copy):
    (copy / "assets" / "icon.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>', encoding="utf-8"
    )
    assert [str(p) for p in check_site(copy)] == []


# --- one link check: the build's is `check`'s --------------------------------------------------------------


def test_the_build_and_check_find_the_same_broken_references(copy):
    planted = (
        '<!--><a href="nowhere.html">a</a>--><img src="https://example.org/x.png" alt="x">'
        '<a href="/index.html">b</a><a href="cost.html#nope">c</a>'
    )
    problems = _plant(copy, planted)
    files = {p.relative_to(copy).as_posix(): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    by_build = {(page, url) for page, url, _ in broken_links(files)}
    assert by_build == {
        ("index.html", "nowhere.html"),
        ("index.html", "https://example.org/x.png"),
        ("index.html", "/index.html"),
        ("index.html", "cost.html#nope"),
    }
    for _, url in by_build:
        assert any(f"={url!r}>" in p for p in problems), (url, problems)


def test_the_build_refuses_an_image_from_another_origin(project):
    line = one_error_line(build_in(project, "![a picture](https://example.org/x.png)"))
    assert line.startswith("error: site_src/pages/index.md: line 6: broken link 'https://example.org/x.png':")
    assert "another origin" in line


# --- data in script blocks is inert -----------------------------------------------------------------------


def test_json_for_a_script_block_escapes_what_could_end_it():
    data = {"name": "</script><!--<script> & \u2028\u2029 >"}
    text = str(json_for_script(data))
    assert not set(text) & set("<>&\u2028\u2029"), text
    assert json.loads(text) == data


def test_a_draft_name_cannot_change_how_a_page_parses(project):
    profiles = project / "data" / "profiles.v1.json"
    data = json.loads(profiles.read_text(encoding="utf-8"))
    data["drafts"][0]["name"] = "Aligned <!--<script>"
    profiles.write_text(json.dumps(data, indent=2), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(project / "out")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    # every page that embeds the name in its JSON data still ends as written: its footer and every script it
    # loads are elements, not text swallowed by a script block the name left open
    embedding = []
    for path in sorted((project / "out").glob("*.html")):
        text = path.read_text(encoding="utf-8")
        if "application/json" not in text or "Aligned" not in text:
            continue
        embedding.append(path.name)
        document = html5lib.parse(text, namespaceHTMLElements=False)
        assert document.find(".//footer") is not None, path.name
        loaded = [s.get("src") for s in document.iter("script") if s.get("src")]
        assert loaded == re.findall(r'<script\b[^>]*\bsrc="([^"]+)"', text), path.name
    for page, script in (("draft-and-verify.html", "assets/stepper.js"), ("what-if.html", "assets/what-if.js")):
        assert page in embedding
        assert script in re.findall(
            r'<script\b[^>]*\bsrc="([^"]+)"', (project / "out" / page).read_text(encoding="utf-8")
        )
    assert [str(p) for p in check_site(project / "out")] == []


# --- a broken link is blamed on the line that writes it ----------------------------------------------------


def test_a_broken_link_is_blamed_on_the_line_of_the_link_not_of_a_mention(project):
    body = "Mention `#a` in passing.\n\n## ab\n\nA [good link](#ab).\n\nA [broken one](#a)."
    line = one_error_line(build_in(project, body))
    assert line.startswith("error: site_src/pages/index.md: line 12: broken link '#a':"), line
