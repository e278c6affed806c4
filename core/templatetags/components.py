"""The pages' shared template components: a data table with its pager and empty message, and a
statistic shown as "value [low, high] n=" (``{% load components %}``).

The library lives outside the apps (``core`` is no app), so the settings name it in
``TEMPLATES["OPTIONS"]["libraries"]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.template.base import FilterExpression, NodeList, Parser, Token, token_kwargs
from django.template.context import Context
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from core.markdown import markdown_html

register = template.Library()

# The arguments {% table %} reads itself; every other one is an attribute of the <table>.
_OPTIONS = (
    *("items", "empty", "caption", "scroll", "pager", "query", "next_id"),
    *("live", "columns", "body_id"),
)


def _attributes(pairs: Iterable[tuple[str, Any]]) -> SafeString:
    """` name="value"` for each pair, escaped; a value of None or False leaves it out."""
    shown = [(name, value) for name, value in pairs if value is not None and value is not False]
    return format_html_join("", ' {}="{}"', shown)


class TableNode(template.Node):
    """``{% table %}``: see ``table``."""

    def __init__(
        self, *, head: NodeList | None, body: NodeList, arguments: dict[str, FilterExpression]
    ) -> None:
        self.head = head
        self.body = body
        self.options = {name: arguments[name] for name in _OPTIONS if name in arguments}
        self.attributes = {
            name.replace("_", "-"): value
            for name, value in arguments.items()
            if name not in _OPTIONS
        }

    def render(self, context: Context) -> SafeString:
        options = {name: value.resolve(context) for name, value in self.options.items()}
        live = options.get("live")
        if "items" in options and not options["items"] and not live:
            return format_html('<p class="empty">{}</p>', options["empty"])
        resolved = ((name, value.resolve(context)) for name, value in self.attributes.items())
        parts = [format_html("<table{}>", _attributes(resolved))]
        if options.get("caption"):
            parts.append(format_html("<caption>{}</caption>", options["caption"]))
        if self.head is not None:
            parts.append(format_html("<thead><tr>{}</tr></thead>", self.head.render(context)))
        body = {"id": options.get("body_id"), "data-job-rows": live}
        body["data-job-columns"] = options.get("columns")
        rows = self.body.render(context)
        parts.append(format_html("<tbody{}>{}</tbody></table>", _attributes(body.items()), rows))
        table = format_html_join("\n", "{}", ((part,) for part in parts))
        if options.get("scroll", True):
            # The hint shows only while the table overflows to the right (static/css/site.css).
            hint = _("Scroll sideways for more →")
            table = format_html(
                '<div class="scroll-box"><p class="scroll-hint" aria-hidden="true">{}</p>{}</div>',
                hint,
                table,
            )
        if live and "empty" in options:
            # Both stand on the page: static/js/job-progress.js shows the one that applies.
            note = {"data-job-rows-empty": live, "hidden": "" if options["items"] else None}
            table = format_html(
                '{}\n<p class="empty"{}>{}</p>', table, _attributes(note.items()), options["empty"]
            )
        if options.get("pager") is None:
            return table
        pager = context.template.engine.get_template("_pager.html")  # type: ignore[union-attr]
        page = {"page": options["pager"], **{k: options.get(k) for k in ("query", "next_id")}}
        return format_html("{}\n{}", table, pager.render(context.new(page)))


@register.tag("table")
def table(parser: Parser, token: Token) -> TableNode:
    """A data table: ``{% table name=value … %}`` header cells ``{% body %}`` rows
    ``{% endtable %}`` renders ``<table …><thead><tr>`` the header cells ``</tr></thead><tbody>``
    the rows ``</tbody></table>``; without ``{% body %}`` all of it is rows and there is no
    ``<thead>``.

    Arguments (all ``name=value``):

    - ``items`` with ``empty``: when ``items`` is empty, ``<p class="empty">`` with the
      ``empty`` text stands instead of the table (and its pager);
    - ``caption``: the table's ``<caption>``;
    - ``scroll``: True (the default) puts the table in a ``<div class="scroll-box">``, so a
      table wider than the screen scrolls in its own box, with a hint shown while it
      overflows; ``scroll=False`` leaves it bare;
    - ``pager`` (a Paginator page), with ``query`` and ``next_id`` optional: ``_pager.html``
      follows the table;
    - ``live`` (a list's key in the job's progress) and ``columns``: the ``<tbody>`` that
      static/js/job-progress.js refills (``data-job-rows``, ``data-job-columns``); the
      ``empty`` message then follows the table always, hidden while there are items;
    - ``body_id``: the ``<tbody>``'s id;
    - any other name: an attribute of the ``<table>`` (``_`` in the name stands for ``-``, so
      ``data_testid`` is ``data-testid``); a value of None or False leaves it out.

    Every value is escaped.
    """
    bits = token.split_contents()
    arguments = token_kwargs(bits[1:], parser, support_legacy=False)
    if len(arguments) != len(bits) - 1:
        raise template.TemplateSyntaxError(
            f"{bits[0]} takes name=value arguments only (each name once): {token.contents!r}"
        )
    if ("items" in arguments) != ("empty" in arguments):
        raise template.TemplateSyntaxError(f"{bits[0]}: items and empty go together")
    if ("query" in arguments or "next_id" in arguments) and "pager" not in arguments:
        raise template.TemplateSyntaxError(f"{bits[0]}: query and next_id need a pager")
    if ("live" in arguments) != ("columns" in arguments):
        raise template.TemplateSyntaxError(f"{bits[0]}: live and columns go together")
    first = parser.parse(("body", "endtable"))
    if parser.next_token().contents == "endtable":
        return TableNode(head=None, body=first, arguments=arguments)
    body = parser.parse(("endtable",))
    parser.delete_first_token()
    return TableNode(head=first, body=body, arguments=arguments)


@register.inclusion_tag("_figure.html")
def figure(fig: Any, digits: int = 3) -> dict[str, Any]:
    """A statistic as "value [ci_low, ci_high] n=": ``fig`` has ``value``, ``ci_low``,
    ``ci_high``, ``n`` and optionally ``too_small`` (a dict or an object); ``digits`` the
    decimals shown. No ``fig`` shows "—"."""
    return {"fig": fig, "digits": digits}


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """``{{ dataset.instructions|markdown }}``: Markdown as HTML in which nothing of the
    source's own HTML survives unescaped (``core.markdown``)."""
    return SafeString(markdown_html(text or ""))
