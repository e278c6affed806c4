"""Markdown written by a lead (a dataset's instructions) as HTML safe to put in a page.

Raw HTML in the source is escaped, never passed through, and links keep only safe schemes
(markdown-it-py drops ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` ones); images
are not embedded (the site loads no outside image), their text stays a link.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

_RENDERER = MarkdownIt("js-default").enable(["table", "strikethrough"]).disable("image")


def markdown_html(text: str) -> str:
    """The HTML of ``text``; escaped throughout except for the markup Markdown makes."""
    html: str = _RENDERER.render(text)
    return html
