"""Issue 31, item 1: what a page's templates receive is data, and what they run is budgeted.

A page reads values (text, numbers, lists, mappings, the facts and views) and calls the functions written for
pages; it cannot reach a path, a file, the settings object or a module, and a Jinja bomb (nested loops, a huge
power, a huge list, string doubling) ends within seconds in one line naming the page."""

import time
from pathlib import Path

import pytest
from test_page_safety import build_in, one_error_line

from generator.render.markdown import markdown_renderer
from generator.render.pages import PageError, environment, load_page, render_page

# --- data, not objects with powers (through the real build: the variables every page is given) ---------------

POWERS = {
    "the page's file, read": '{{ page.source.resolve().joinpath("/etc/hostname").read_text() }}',
    "the page's file, written": '{{ page.source.write_text("x") }}',
    "the settings' profiles file": "{{ config.profiles_path().read_text() }}",
    "the settings' profiles path": "{{ config.profiles_path() }}",
    "a class's family": "{{ Verdict.mro() }}",
    "a verdict's class": "{{ Verdict.ACCEPTED.__class__ }}",
    "a neighbour's file": "{{ pages[0].source }}",
}


@pytest.mark.parametrize("case", sorted(POWERS))
def test_a_page_cannot_reach_a_path_the_settings_or_a_class(project, case):
    line = one_error_line(build_in(project, POWERS[case]))
    assert line.startswith("error: site_src/pages/index.md: line 6: "), line
    assert Path("/etc/hostname").read_text().strip() not in line.split("line 6: ", 1)[1], line
    assert not (project / "out").exists()


def test_a_page_reads_the_same_values_as_plain_data(project):
    """Negative control: the values pages use are all still there (settings, page, neighbours, verdicts)."""
    body = (
        "{{ config.title }} {{ config.playground.check_draws }} {{ page.url }} {{ page.document_title('S') }} "
        "{{ pages | length }} {{ Verdict.REJECTED }} {{ build_info.version }} "
        "{{ site.profile(site.profiles[0].id).name }}"
    )
    result = build_in(project, body)
    assert result.returncode == 0, result.stderr
    text = (project / "out" / "index.html").read_text(encoding="utf-8")
    assert "index.html T · S 1 rejected" in text


# --- budgets (in the sandbox itself: a page rendered alone) -------------------------------------------------

BOMBS = {
    "nested range loops": "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
    "nested loops over a list": (
        "{% set x = range(99999) | list %}{% for i in x %}{% for j in x %}{% endfor %}{% endfor %}"
    ),
    "a huge power": "{{ 7 ** (10 ** 8) }}",
    "a loop over a huge list": "{% for i in [0] * 10**8 %}{% endfor %}",
    "string doubling with ~": (
        '{% set ns = namespace(s="ab") %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}'
    ),
    "string doubling with +": (
        '{% set ns = namespace(s="ab") %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}'
    ),
    "a huge repeated string": "{{ 'a' * 10**10 }}",
    "a huge padding filter": "{{ 'a' | center(10**10) }}",
    "a huge padding method": "{{ 'a'.ljust(10**10) }}",
    "a huge format width": "{{ '%10000000000d' % 1 }}",
    "a huge format width by str.format": "{{ '{:>10000000000}'.format(1) }}",
    "squaring a number": (
        "{% set ns = namespace(n=3) %}{% for i in range(64) %}{% set ns.n = ns.n * ns.n %}{% endfor %}{{ ns.n }}"
    ),
    "a macro calling itself twice": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}"
    ),
    "joining a huge list of strings": "{{ (['x' * 1000000] * 100000) | join }}",
    "placeholder text by the gigabyte": "{{ lipsum(n=10**7) }}",
    "a huge cycle of words": "{{ ('a ' * 1000000).split() | batch(10**9) | list | length }}",
}


def _render(tmp_path, body: str):
    (tmp_path / "t").mkdir(exist_ok=True)
    page = tmp_path / "p.md"
    page.write_text(f"---\ntitle: T\n---\n{body}\n", encoding="utf-8")
    render_page(load_page(page), environment(tmp_path / "t"), markdown_renderer(), {})
    return page


@pytest.mark.parametrize("case", sorted(BOMBS))
def test_a_jinja_bomb_is_refused_in_one_line_naming_the_page(tmp_path, case):
    started = time.monotonic()
    with pytest.raises(PageError) as caught:
        _render(tmp_path, BOMBS[case])
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'p.md'}: line 4: "), message
    assert "\n" not in message and "generator/" not in message, message
    assert time.monotonic() - started < 30, case


HARMLESS = {
    "loops of ten thousand turns": "{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}",
    "a modest power": "{{ 7 ** 100 }}",
    "a modest list": "{{ ([0] * 1000) | length }}",
    "doubling to a kilobyte": (
        '{% set ns = namespace(s="ab") %}{% for i in range(9) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}'
        "{{ ns.s | length }}"
    ),
    "padding and formats": "{{ 'a' | center(9) }}{{ 'a'.ljust(5) }}{{ '%5d' % 1 }}{{ '{:>5}'.format(1) }}",
    "a large number shown": "{{ 123456789012 | thousands }}",
    "a recursive macro of modest depth": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(20) }}"
    ),
}


@pytest.mark.parametrize("case", sorted(HARMLESS))
def test_a_harmless_equivalent_renders(tmp_path, case):
    """Negative control: the budgets leave room for what a page does."""
    _render(tmp_path, HARMLESS[case])


def test_a_build_refuses_a_bomb_with_exit_status_2(project):
    started = time.monotonic()
    line = one_error_line(build_in(project, BOMBS["nested range loops"]))
    assert line.startswith("error: site_src/pages/index.md: line 6: the page's loops turn more than"), line
    assert time.monotonic() - started < 60
