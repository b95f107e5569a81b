"""What a hostile or careless page cannot do: link to code, run code at build time, blame our code for its
mistakes, or make the build take time that grows faster than the page (issue 25, items 1, 2, 4 and 5)."""

import subprocess
import sys
from pathlib import Path

import pytest

from generator.render.markdown import markdown_renderer, render_markdown
from generator.render.markup import RawHtmlError, check_html, link_problem, url_scheme
from generator.render.pages import PageError, environment, load_page, render_page
from support import only_page

# --- 1. one rule for addresses, after decoding ----------------------------------------------------------

HOSTILE_LINKS = {
    "a tab entity inside the scheme": "java&#x09;script:alert(1)//../index.html",
    "mixed case": "JaVaScRiPt:alert(1)",
    "a decimal entity for the first letter": "&#106;avascript:alert(1)",
    "a named entity for the colon": "javascript&colon;alert(1)",
    "data:": "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:": "vbscript:msgbox(1)",
    "a literal tab inside the scheme": "java\tscript:alert(1)",
    "a newline inside the scheme": "java\nscript:alert(1)",
    "a newline entity inside the scheme": "jav&#10;ascript:alert(1)",
    "leading spaces and controls": " \x01\x02javascript:alert(1)",
    "file:": "file:///etc/passwd",
}
SAFE_LINKS = [
    "index.html",
    "index.html#top",
    "#section",
    "../x/y.html",
    "https://example.org/a?b=c",
    "HTTP://example.org/",
    "mailto:someone@example.org",
    "//example.org/x",
    "a/javascript:b",
]


@pytest.mark.parametrize("case", sorted(HOSTILE_LINKS))
def test_a_hostile_address_is_refused_however_it_is_spelt(case):
    assert link_problem(HOSTILE_LINKS[case]) is not None


@pytest.mark.parametrize("url", SAFE_LINKS)
def test_relative_http_and_mailto_addresses_pass(url):
    """Negative control for the case above: the rule is not refusing every address."""
    assert link_problem(url) is None


def test_the_scheme_is_read_as_a_browser_reads_it():
    assert (
        url_scheme("java&#x09;script:x")
        == url_scheme("JAVASCRIPT:x")
        == url_scheme("&#106;avascript:x")
        == "javascript"
    )
    assert url_scheme("index.html") == "" and url_scheme("//example.org") == "//"


@pytest.mark.parametrize("case", sorted(HOSTILE_LINKS))
def test_the_raw_html_allowlist_refuses_a_hostile_link(case):
    url = HOSTILE_LINKS[case].replace('"', "&quot;")
    with pytest.raises(RawHtmlError, match="is not allowed"):
        check_html(f'<a href="{url}">c</a>')
    assert "noopener" in check_html('<a href="https://example.org/">c</a>')  # negative control: a plain link passes


def _check_with(site: Path, html: str) -> list[str]:
    from generator.commands.check import check_site

    page = site / "index.html"
    page.write_text(page.read_text(encoding="utf-8").replace("</main>", html + "</main>", 1), encoding="utf-8")
    return [str(p) for p in check_site(site)]


@pytest.mark.parametrize("case", sorted(HOSTILE_LINKS))
def test_check_refuses_a_hostile_link_in_a_built_site(case, site_dir, tmp_path):
    import html
    import shutil

    site = Path(shutil.copytree(site_dir, tmp_path / "site"))
    problems = _check_with(site, f'<a href="{html.escape(HOSTILE_LINKS[case])}">c</a>')
    assert any("is not allowed" in p or "control character" in p for p in problems), problems


def test_check_passes_a_plain_link_the_same_rule_allows(site_dir, tmp_path):
    import shutil

    site = Path(shutil.copytree(site_dir, tmp_path / "site"))
    assert _check_with(site, '<a href="mailto:a@example.org">m</a> <a href="index.html">i</a>') == []


# --- building a page -----------------------------------------------------------------------------------------


def build_in(project: Path, body: str) -> subprocess.CompletedProcess:
    """`project` with one page whose body is `body`, built in a fresh process."""
    only_page(project, body)
    return subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(project / "out")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "generator/" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    return line


def test_a_hostile_link_in_a_page_fails_the_build_with_the_page_and_line(project):
    line = one_error_line(build_in(project, '<a href="java&#x09;script:alert(1)//../index.html">c</a>'))
    assert line.startswith("error: site_src/pages/index.md: line 6: a link to javascript: is not allowed"), line


# --- 2. the sandbox -------------------------------------------------------------------------------------------


def test_a_page_cannot_run_a_shell_command_at_build_time(project, tmp_path):
    marker = tmp_path / "ran"
    attack = f'{{{{ cycler.__init__.__globals__.os.popen("touch {marker}").read() }}}}'
    line = one_error_line(build_in(project, attack))
    assert line.startswith("error: site_src/pages/index.md: line 6: not allowed in a page or template"), line
    assert not marker.exists()


def test_the_sandbox_still_lets_a_page_read_its_numbers(project):
    """Negative control: what pages do (attributes, filters, methods of the values they are given) still works."""
    result = build_in(project, "{{ site.profiles[0].speedup | fixed(2) }} and {{ build_info.address(page.url) }}")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "attack",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ page.__dict__ }}",
        "{% set x = [] %}{{ x.append(1) }}",
        "{{ range(10**9) | list | length }}",
    ],
)
def test_the_sandbox_refuses_private_attributes_changes_and_huge_ranges(tmp_path, attack):
    (tmp_path / "t").mkdir()
    page = tmp_path / "p.md"
    page.write_text(f"---\ntitle: T\n---\n{attack}\n", encoding="utf-8")
    with pytest.raises(PageError, match=r"p\.md: line 4: "):
        render_page(load_page(page), environment(tmp_path / "t"), markdown_renderer(), {})


# --- 4. every page error names the page and its line ---------------------------------------------------------

PAGE_ERRORS = {
    "a widget placeholder written by hand": (
        "text\n\n<!--widget-99-->\n",
        "line 8: a widget placeholder cannot be written",
    ),
    "a widget placeholder inline": ("text <!--widget-0--> more\n", "line 6: a widget placeholder cannot be written"),
    "a formula nested 2,000 deep": ("text\n\n$" + "\\frac{" * 2000 + "$\n", "line 8: the formula"),
    "a formula nested 51 deep": ("text\n\n$" + "{ " * 51 + "x" + " }" * 51 + "$\n", "nested more than 50 levels deep"),
    "a formula latex2mathml cannot read": ("text\n\n$x^1^2$\n", "line 8: the formula $x^1^2$ cannot be converted"),
    "a formula that recurses without braces": ("$" + "\\sqrt" * 3000 + "x$\n", "line 6: the formula"),
    "a Jinja error": ("text\n\n{{ 1 / 0 }}\n", "line 8: ZeroDivisionError"),
    "a display formula nested deeply": (
        "text\n\n$$\n" + "\\left(" * 60 + "x" + "\\right)" * 60 + "\n$$\n",
        "nested more than 50 levels deep",
    ),
}


@pytest.mark.parametrize("case", sorted(PAGE_ERRORS))
def test_a_page_error_is_one_line_naming_the_page_and_line(case, tmp_path):
    body, expected = PAGE_ERRORS[case]
    (tmp_path / "t").mkdir()
    page = tmp_path / "p.md"
    page.write_text(f"---\ntitle: T\n---\nfirst line\n\n{body}", encoding="utf-8")
    with pytest.raises(PageError) as caught:
        render_page(load_page(page), environment(tmp_path / "t"), markdown_renderer(), {})
    message = str(caught.value)
    assert message.startswith(f"{page}: line ") and expected in message and "\n" not in message, message
    assert "generator/" not in message and len(message) < 400


def test_a_formula_at_the_depth_limit_converts():
    """Negative control: 50 levels are fine, so the refusal above is about depth, not braces."""
    html, _ = render_markdown(markdown_renderer(), "$" + "{" * 50 + "x" + "}" * 50 + "$\n")
    assert "<math" in html


@pytest.mark.parametrize(
    "body, expected",
    [
        ("<!--widget-99-->", "line 6: a widget placeholder cannot be written by hand"),
        ("$" + "\\frac{" * 2000 + "$", "line 6: the formula"),
    ],
)
def test_the_build_reports_a_page_error_in_one_line_with_exit_status_2(project, body, expected):
    line = one_error_line(build_in(project, body))
    assert line.startswith("error: site_src/pages/index.md: ") and expected in line, line


def test_a_widget_placeholder_copied_from_a_real_one_cannot_repeat_it(tmp_path):
    (tmp_path / "t" / "widgets").mkdir(parents=True)
    (tmp_path / "t" / "widgets" / "w.html").write_text("<p>widget</p>\n", encoding="utf-8")
    page = tmp_path / "p.md"
    page.write_text('---\ntitle: T\n---\n{{ widget("w") }}\n\n<!--widget-0-->\n', encoding="utf-8")
    with pytest.raises(PageError, match="line 6: a widget placeholder cannot be written by hand"):
        render_page(load_page(page), environment(tmp_path / "t"), markdown_renderer(), {})
    page.write_text('---\ntitle: T\n---\n{{ widget("w") }}\n', encoding="utf-8")  # negative control
    p = load_page(page)
    render_page(p, environment(tmp_path / "t"), markdown_renderer(), {})
    assert p.html == "<p>widget</p>\n\n"


# --- 5. linear time, and a size limit -----------------------------------------------------------------------


def unclosed_links(n: int) -> str:
    return "<p>" + '<a href="x" ' * n + "</p>\n"


def links_in_a_title(n: int) -> str:
    """The same, written where the allowlist lets it through: inside an attribute's value."""
    return '<p title="' + "<a href=x " * n + '">hi</p>\n'


def tables(n: int) -> str:
    return "<table>" * n + "\n"


def _calls(body: str) -> int:
    """Python function calls made to render a page body (markdown-it, the allowlist, the link check): a count
    of work that does not depend on the machine's speed. Counted on the second of two renderings, so that
    one-time work (imports, compiled patterns) does not count for whichever page comes first."""
    import cProfile
    import pstats

    from generator.render.markup import RawHtmlError
    from generator.site.publish import broken_links

    def render() -> None:
        try:
            html, _ = render_markdown(markdown_renderer(), body)
            broken_links({"index.html": html.encode("utf-8")})
        except RawHtmlError:
            pass

    render()
    profile = cProfile.Profile()
    profile.enable()
    try:
        render()
    finally:
        profile.disable()
    return sum(row[1] for row in pstats.Stats(profile).stats.values())  # primitive and recursive calls


@pytest.mark.parametrize("make", [unclosed_links, links_in_a_title, tables], ids=lambda f: f.__name__)
def test_doubling_a_hostile_page_does_not_quadruple_the_work(make):
    """Work counted in function calls (3,000 then 6,000 repeats; at most 3x: linear work doubles, quadratic
    quadruples). The same in seconds is a benchmark, tests/benchmarks/bench_hostile_ratio.py: timings vary with
    the machine's load."""
    assert _calls(make(6000)) < 3 * _calls(make(3000))


def test_the_call_ratio_can_fail():
    """Negative control for the ratio: a page whose every line links to every earlier line's anchor (quadratic
    in the page's length, as its links are) trips it."""

    def quadratic(n: int) -> str:
        return "".join(f"## h{i}\n\n" + "".join(f"[x](#h{j}) " for j in range(i)) + "\n\n" for i in range(n))

    assert _calls(quadratic(60)) > 3 * _calls(quadratic(30))


def test_a_page_over_2_mb_is_refused_in_one_line(tmp_path):
    page = tmp_path / "big.md"
    page.write_text("---\ntitle: T\n---\n" + "word " * 420_000, encoding="utf-8")
    with pytest.raises(PageError, match=r"big\.md: line 1: the page is 2,100,0\d\d bytes; a page may be at most 2 MB"):
        load_page(page)
    page.write_text("---\ntitle: T\n---\n" + "word " * 390_000, encoding="utf-8")  # negative control: just under
    assert load_page(page).title == "T"


def test_a_page_whose_templates_grow_past_2_mb_is_refused(tmp_path):
    (tmp_path / "t").mkdir()
    page = tmp_path / "p.md"
    page.write_text("---\ntitle: T\n---\n{% for i in range(30000) %}" + "x" * 100 + "{% endfor %}\n", encoding="utf-8")
    with pytest.raises(PageError, match=r"p\.md: line 4: the page's text grows past 2 MB"):
        render_page(load_page(page), environment(tmp_path / "t"), markdown_renderer(), {})


# --- 3 (the part readers and templates own): symlinks out of the project ---------------------------------


@pytest.fixture
def outside(tmp_path_factory):
    secret = tmp_path_factory.mktemp("elsewhere") / "secret.txt"  # the project is tmp_path itself
    secret.write_text("---\ntitle: Secret\n---\nSECRET-VALUE\n", encoding="utf-8")
    return secret


@pytest.mark.parametrize(
    "where", ["site_src/pages/index.md", "site_src/templates/partials/colophon.html", "data/site.yaml"]
)
def test_a_symlink_out_of_the_project_is_refused_in_one_line(project, outside, where):
    assert build_in(project, "A page.").returncode == 0
    target = project / where
    target.unlink()
    target.symlink_to(outside)
    result = _build_as_is(project)
    line = one_error_line(result)
    assert "outside the project: refused" in line and where in line, line
    assert not (project / "out").exists() or "SECRET-VALUE" not in (project / "out" / "index.html").read_text()


def _build_as_is(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", "build", "--out", str(project / "out")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_symlink_that_stays_inside_the_project_is_followed(project):
    """Negative control: the same kind of link, to a file inside the project, builds."""
    build_in(project, "A page.")
    real = project / "data" / "index-page.md"
    (project / "site_src" / "pages" / "index.md").rename(real)
    (project / "site_src" / "pages" / "index.md").symlink_to(Path("..", "..", "data", "index-page.md"))
    result = _build_as_is(project)
    assert result.returncode == 0, result.stderr
    assert "A page." in (project / "out" / "index.html").read_text(encoding="utf-8")
