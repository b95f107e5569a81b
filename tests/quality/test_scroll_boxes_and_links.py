"""The Markdown post-processing in generator/render/pages.py that the accessibility and security gates rely on."""
from generator.render.pages import Heading, markdown_renderer, render_markdown, wrap_scroll_boxes

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
    html = wrap_scroll_boxes("<table>\n<tr><td>1</td></tr>\n</table>", [])
    assert 'aria-label="Table"' in html


def test_a_table_written_as_html_with_attributes_is_left_alone():
    raw = '<table class="mine"><tr><td>1</td></tr></table>'
    assert wrap_scroll_boxes(raw, [Heading(2, "x", "X")]) == raw


def test_external_links_get_noopener_and_noreferrer_and_internal_ones_do_not():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert '<a href="https://example.org/paper" rel="noopener noreferrer">' in html
    assert '<a href="cost.html">' in html


def test_a_link_that_already_states_its_rel_is_not_rewritten():
    html, _ = render_markdown(markdown_renderer(), PAGE)
    assert '<a href="https://example.org/x" rel="external">' in html
