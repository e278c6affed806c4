"""A lead's Markdown as HTML: its markup rendered, nothing of its own HTML or unsafe links kept."""

from __future__ import annotations

from core.markdown import markdown_html


def test_markdown_markup_is_rendered() -> None:
    """Headings, lists, emphasis, links and tables become their HTML."""
    html = markdown_html(
        "## Check\n\n- the *label*\n- the **answer**\n\n[guide](https://example.org/g)\n\n"
        "| code | meaning |\n|---|---|\n| MA | ambiguity |\n"
    )
    assert "<h2>Check</h2>" in html
    assert "<li>the <em>label</em></li>" in html and "<strong>answer</strong>" in html
    assert '<a href="https://example.org/g">guide</a>' in html
    assert "<td>MA</td>" in html


def test_html_in_the_source_is_shown_as_text() -> None:
    """A script, an event handler or an iframe in the source is escaped, never markup."""
    html = markdown_html(
        '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n<iframe src="//x"></iframe>'
    )
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_unsafe_links_are_not_links_and_images_are_not_embedded() -> None:
    """``javascript:`` and ``data:`` links stay text; an image is not loaded from outside."""
    html = markdown_html(
        "[a](javascript:alert(1)) [b](JAVASCRIPT:alert(1)) [c](data:text/html;base64,PHNjcmlwdD4=)"
        "\n\n![logo](https://tracker.example/p.png)"
    )
    assert 'href="javascript' not in html.lower() and 'href="data' not in html.lower()
    assert "<img" not in html
