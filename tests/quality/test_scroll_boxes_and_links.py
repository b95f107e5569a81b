"""The Markdown post-processing in generator/render/markdown.py that the accessibility and security gates rely on."""

from generator.render.markdown import markdown_renderer, render_markdown

PAGE = """\
Intro with [an outside source](https://example.org/paper) and [a page here](cost.html).

## Best case

| a | b |
| - | - |
| 1 | 2 |

$$
x = y
$$

| c |
| - |
| 3 |

<a href="https://example.org/x" rel="external">kept as written</a>
"""


def test_a_markdown_table_becomes_a_focusable_region_named_after_its_section():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert '<div class="table-scroll" role="region" tabindex="0" aria-label="Table: Best case">\n<table>' in html
    assert html.count('<div class="table-scroll"') == 2 and html.count("</table>\n</div>") == 2


def test_a_second_box_in_the_same_section_gets_a_distinct_name():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert 'aria-label="Table: Best case (2)"' in html


def test_a_display_equation_becomes_a_focusable_group():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert '<div class="math block" role="group" tabindex="0" aria-label="Equation: Best case">' in html


def test_a_box_before_any_heading_is_named_by_its_kind_alone():
    html, _ = render_markdown(markdown_renderer(), "| a |\n| - |\n| 1 |\n")
    assert 'aria-label="Table"' in html


def test_a_table_written_as_html_is_left_alone():
    raw = '<table class="mine"><tr><td>1</td></tr></table>\n'
    html, _ = render_markdown(markdown_renderer(), "## X\n\n" + raw)
    assert html.endswith(raw) and "table-scroll" not in html


def test_a_raw_html_link_out_of_the_site_gets_noopener_too():
    html, _ = render_markdown(markdown_renderer(), '<p><a href="https://example.org/y" title="t">out</a></p>\n')
    assert '<a href="https://example.org/y" title="t" rel="noopener noreferrer">out</a>' in html


def test_external_links_get_noopener_and_noreferrer_and_internal_ones_do_not():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert '<a href="https://example.org/paper" rel="noopener noreferrer">' in html
    assert '<a href="cost.html">' in html


def test_a_link_that_already_states_its_rel_is_not_rewritten():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert '<a href="https://example.org/x" rel="external">' in html
