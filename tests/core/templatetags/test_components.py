"""The shared template components (core/templatetags/components.py): the data table and the
statistic figure, rendered from template source as the pages use them."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.paginator import Paginator
from django.template import Context, Template, TemplateSyntaxError
from django.utils.translation import override
from pytest_django.asserts import assertHTMLEqual, assertInHTML

from review.quality.reviewers import Figure
from tests.support.html import attribute, element, elements, has, text


def render(source: str, **context: Any) -> str:
    return Template("{% load components %}" + source).render(Context(context))


ROWS = "{% for row in rows %}<tr><td>{{ row }}</td></tr>{% endfor %}"


def test_a_table_wraps_its_header_cells_and_rows() -> None:
    """Header cells go in <thead><tr>, the rows in <tbody>; other arguments are the table's
    attributes, `_` standing for `-`."""
    html = render(
        '{% table class="wide" data_testid="t" scroll=False %}<th>A</th>{% body %}'
        + ROWS
        + "{% endtable %}",
        rows=["x", "y"],
    )
    assertHTMLEqual(
        html,
        '<table class="wide" data-testid="t"><thead><tr><th>A</th></tr></thead>'
        "<tbody><tr><td>x</td></tr><tr><td>y</td></tr></tbody></table>",
    )


def test_a_table_without_body_tag_has_no_head() -> None:
    """Without {% body %} all of the content is rows."""
    html = render("{% table scroll=False %}<tr><td>1</td></tr>{% endtable %}")
    assertHTMLEqual(html, "<table><tbody><tr><td>1</td></tr></tbody></table>")


def test_scroll_and_caption() -> None:
    """A table sits in a scroll box, after the (translated) hint that the CSS shows while it
    overflows, unless told scroll=False; caption is its <caption>."""
    html = render('{% table caption="Pairs" %}{% endtable %}')
    assertHTMLEqual(
        html,
        '<div class="scroll-box"><p class="scroll-hint" aria-hidden="true">'
        "Scroll sideways for more →</p>"
        "<table><caption>Pairs</caption><tbody></tbody></table></div>",
    )
    with override("zh-hans"):
        assert "横向滚动查看更多 →" in render("{% table %}{% endtable %}")


def test_empty_items_show_the_empty_message_instead_of_table_and_pager() -> None:
    """With no items the empty message stands alone: no table, no pager."""
    page = Paginator[int]([], 10).page(1)
    html = render(
        '{% table items=page.object_list empty="Nothing yet." pager=page %}'
        + ROWS
        + "{% endtable %}",
        page=page,
        rows=[],
    )
    assertHTMLEqual(html, '<p class="empty">Nothing yet.</p>')


def test_items_show_the_table_and_its_pager() -> None:
    """With items, the table is followed by the pager of the page, its query kept and its
    next link's id set."""
    page = Paginator(list(range(5)), 2).page(2)
    with override("en"):
        html = render(
            '{% table items=page.object_list empty="Nothing" pager=page query=q next_id="next" %}'
            + ROWS
            + "{% endtable %}",
            page=page,
            rows=page.object_list,
            q="status=new",
        )
    assert [text(cell) for cell in elements(html, "td")] == ["2", "3"]
    pager = element(html, "nav", class_="pager")
    assert "Page 2 of 3" in text(pager)
    assertInHTML('<a href="?page=1&amp;status=new">Previous</a>', html)
    assertInHTML('<a href="?page=3&amp;status=new" id="next">Next</a>', html)


def test_values_are_escaped_and_none_or_false_attributes_left_out() -> None:
    """Attribute values, caption and empty message are escaped; None and False drop the
    attribute."""
    evil = '"><script>x</script>'
    html = render(
        "{% table id=evil caption=evil title=none hidden=False %}{% endtable %}",
        evil=evil,
        none=None,
    )
    assert "<script>" not in html
    table = element(html, "table")
    assert dict(table.attributes) == {"id": evil}
    assert render("{% table items=rows empty=evil %}{% endtable %}", rows=[], evil=evil) == (
        '<p class="empty">&quot;&gt;&lt;script&gt;x&lt;/script&gt;</p>'
    )


def test_a_live_table_keeps_its_empty_message_hidden_for_the_script() -> None:
    """live and columns mark the <tbody> job-progress.js refills; the empty message stands
    after the table either way, hidden while there are items."""
    source = (
        '{% table items=rows empty="None yet." live="errors" columns="a b" body_id="e" %}'
        + ROWS
        + "{% endtable %}"
    )
    with_rows, without = render(source, rows=["x"]), render(source, rows=[])
    body = dict(element(with_rows, "tbody").attributes)
    assert body == {"id": "e", "data-job-rows": "errors", "data-job-columns": "a b"}
    assert has(element(with_rows, "p", class_="empty", data_job_rows_empty="errors"), "hidden")
    assert not elements(element(without, "tbody"), "tr")
    assert not has(element(without, "p", class_="empty", data_job_rows_empty="errors"), "hidden")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{% table rows %}{% endtable %}", "name=value arguments only"),
        ('{% table class="a" class="b" %}{% endtable %}', "each name once"),
        ("{% table items=rows %}{% endtable %}", "items and empty go together"),
        ('{% table empty="no" %}{% endtable %}', "items and empty go together"),
        ('{% table query="a=1" %}{% endtable %}', "need a pager"),
        ('{% table live="k" %}{% endtable %}', "live and columns go together"),
        ("{% table %}", "endtable"),
    ],
)
def test_bad_arguments_are_a_syntax_error_that_says_why(source: str, message: str) -> None:
    """A table tag written wrong fails when the template compiles, naming the mistake."""
    with pytest.raises(TemplateSyntaxError, match=message):
        render(source)


def test_a_figure_shows_value_interval_and_n() -> None:
    """A figure reads "value [low, high] n=" to the given decimals (3 by default), from a
    dict or an object with the same names."""
    with override("en"):
        from_dict = render(
            "{% figure fig %}", fig={"value": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 8}
        )
        from_object = render("{% figure fig digits=2 %}", fig=Figure(0.5, 0.25, 0.75, 8))
    assert text(from_dict) == "0.500 [0.250, 0.750] n=8"
    assert text(from_object) == "0.50 [0.25, 0.75] n=8"
    assert attribute(element(from_dict, "span", class_="figure"), "data-value") == "0.5"


def test_a_figure_without_interval_or_value_and_a_too_small_one() -> None:
    """No interval: value and n only; no value: a dash; too small: flagged; no figure: a dash."""
    with override("en"):
        no_interval = render("{% figure fig %}", fig=Figure(0.5, None, None, 3))
        no_value = render("{% figure fig %}", fig=Figure(None, None, None, 0))
        small = render(
            "{% figure fig %}",
            fig={"value": 1, "ci_low": 1, "ci_high": 1, "n": 2, "too_small": True},
        )
        missing = render("{% figure fig %}", fig=None)
    assert text(no_interval) == "0.500 n=3"
    assert text(no_value) == "— n=0"
    assert "too small" in text(small) and elements(small, "span", class_="figure too-small")
    assert text(missing) == "—"
