"""Markdown + Jinja rendering, and how a broken page or template is reported."""

import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import pytest

from generator.render.markdown import markdown_renderer, render_markdown
from generator.render.pages import FILTERS, PageError, load_page, load_pages


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_filters_format_exact_values_without_computing_them():
    assert FILTERS["frac"](F(6, 8)) == "3/4"
    assert FILTERS["frac"](F(2)) == "2"
    assert FILTERS["fixed"](F(2009, 512), 2) == "3.92"
    assert FILTERS["times"](F(2009, 768)) == "2.62×"
    assert FILTERS["pct"](F(3, 4)) == "75%"
    assert FILTERS["thousands"](100000) == "100,000"
    assert FILTERS["mathfrac"](F(3, 8)) == "\\frac{3}{8}"


def test_math_becomes_mathml_at_build_time():
    html, _ = render_markdown(markdown_renderer(), "Inline $p \\le q$ and\n\n$$\\min(p, q)$$\n")
    assert "<math" in html and 'display="block"' in html
    assert "$" not in html


def test_headings_get_anchors_and_feed_the_table_of_contents():
    html, headings = render_markdown(markdown_renderer(), "## First part\n\ntext\n\n### A detail\n\n## Second\n")
    assert [(h.level, h.id, h.text) for h in headings] == [
        (2, "first-part", "First part"),
        (3, "a-detail", "A detail"),
        (2, "second", "Second"),
    ]
    assert 'id="first-part"' in html and 'href="#first-part"' in html


def test_a_page_without_front_matter_is_refused_with_its_path(tmp_path):
    path = write(tmp_path / "p.md", "# no front matter\n")
    with pytest.raises(PageError, match=r"p\.md: line 1: a page must start with front matter"):
        load_page(path)


def test_unknown_front_matter_keys_are_refused(tmp_path):
    path = write(tmp_path / "p.md", "---\ntitle: T\ncolour: red\n---\nbody\n")
    with pytest.raises(PageError, match="unknown key 'colour'"):
        load_page(path)


def test_a_listed_page_must_exist_and_every_page_must_be_listed(tmp_path):
    write(tmp_path / "a.md", "---\ntitle: A\n---\n")
    write(tmp_path / "b.md", "---\ntitle: B\n---\n")
    with pytest.raises(PageError, match="'c' is listed but"):
        load_pages(tmp_path, ("a", "b", "c"), "data/site.yaml")
    with pytest.raises(PageError, match=r"b\.md: not listed under 'pages'"):
        load_pages(tmp_path, ("a",), "data/site.yaml")
    pages = load_pages(tmp_path, ("b", "a"), "data/site.yaml")
    assert [p.slug for p in pages] == ["b", "a"] and pages[0].next is pages[1] and pages[1].prev is pages[0]


BROKEN = {
    "an undefined attribute": (
        "{{ site.profiles[0].no_such_number }}",
        "index.md: line 6: ",
        "no attribute 'no_such_number'",
    ),
    "a syntax error": ("{{ site.profiles[0].name ", "index.md: line 6: ", "unexpected end of template"),
    "an unknown widget": ('{{ widget("nope") }}', "index.md: line 6: ", "unknown widget 'nope'"),
    "a filter misused": ("{{ site.profiles[0].speedup | frac(3) }}", "index.md: line 6: ", "TypeError"),
}


def build_in(project: Path):
    return subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(project / "out")],
        cwd=project,
        capture_output=True,
        text=True,
    )


def only_page(project: Path, body: str) -> None:
    write(project / "site_src" / "pages" / "index.md", f"---\ntitle: T\n---\nfirst line\n\n{body}\n")
    for extra in (project / "site_src" / "pages").glob("*.md"):
        if extra.name != "index.md":
            extra.unlink()
    config = project / "data" / "site.yaml"
    text = config.read_text(encoding="utf-8")
    start = text.index("\npages:")
    end = text.index("\n\n", start + 1)
    text = text[:start] + "\npages:\n  - index" + text[end:]
    for part in ("\nbeyond:", "\nappendix:"):
        if part in text:
            start = text.index(part)
            end = text.index("\n\n", start + 1)
            text = text[:start] + text[end:]
    config.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_page_fails_the_build_with_one_line_naming_file_and_line(case, project):
    body, place, problem = BROKEN[case]
    only_page(project, body)
    result = build_in(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert place in line and problem in line


def test_a_broken_template_names_the_template_and_its_line(project):
    only_page(project, "fine")
    write(project / "site_src" / "templates" / "widgets" / "broken.html", "<p>\n{{ site.no_such_thing }}</p>\n")
    only_page(project, '{{ widget("broken") }}')
    result = build_in(project)
    assert result.returncode == 2
    assert "widgets/broken.html: line 2: " in result.stderr and "no_such_thing" in result.stderr


def test_a_page_that_fails_fails_again_on_the_next_build_even_after_its_text_rendered_once(project, tmp_path):
    """A page that rendered, then gains raw HTML the allowlist refuses, fails with the page's file and line on
    that build and on the next (no earlier HTML is served from the cache); fixed again, it builds."""
    from generator.site import pipeline as B
    from generator.site.cache import Cache

    cache = Cache(tmp_path / "cache")
    only_page(project, "fine")
    B.build(project, tmp_path / "out", cache=cache)
    only_page(project, "fine <script>alert(1)</script>")
    messages = []
    for _ in range(2):
        with pytest.raises(PageError) as caught:
            B.build(project, tmp_path / "out", cache=cache)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "\n" not in messages[0]
    assert "index.md: line 6: raw HTML <script> is not allowed" in messages[0]
    only_page(project, "fine")  # negative control: the same page without it builds from the same cache
    assert B.build(project, tmp_path / "out", cache=cache).pages == 1
