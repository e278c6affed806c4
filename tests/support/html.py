"""Rendered pages read as parsed HTML (Django's test parser), so that the templates' layout
(indentation, attributes spread over lines, line breaks around an element's text: whatever
`djlint templates --reformat` may move) never decides a test. Exact fragments are compared
with pytest-django's `assertInHTML`; these helpers find elements by their attributes."""

from __future__ import annotations

from collections.abc import Iterator

from django.test.html import Element, parse_html


def _tree(page: str | Element) -> Element:
    return parse_html(page) if isinstance(page, str) else page


def _walk(node: Element) -> Iterator[Element]:
    yield node
    for child in node.children:
        if isinstance(child, Element):
            yield from _walk(child)


def elements(
    page: str | Element, tag: str | None = None, **attributes: str | bool
) -> list[Element]:
    """The elements of `page` (named `tag`, when given) that carry every attribute given: a
    string is the attribute's value, True that the attribute is present (a boolean one such as
    `required`). In a keyword, `_` stands for `-` and a trailing `_` is dropped (`for_`)."""
    wanted = {name.rstrip("_").replace("_", "-"): value for name, value in attributes.items()}
    found = []
    for node in _walk(_tree(page)):
        if node.name is None or (tag is not None and node.name != tag):
            continue
        have = dict(node.attributes)
        if all(
            name in have and (value is True or have[name] == value)
            for name, value in wanted.items()
        ):
            found.append(node)
    return found


def element(page: str | Element, tag: str | None = None, **attributes: str | bool) -> Element:
    """The one element of `page` that `elements` finds; fails when there is none or several."""
    found = elements(page, tag, **attributes)
    assert len(found) == 1, f"{len(found)} elements <{tag or '*'}> with {attributes}"
    return found[0]


def has(node: Element, attribute: str) -> bool:
    """Whether the element carries the attribute (a boolean one such as `hidden` included)."""
    return any(name == attribute for name, _ in node.attributes)


def attribute(node: Element, name: str) -> str:
    """The value of the element's attribute; fails when it is absent or has none."""
    value = dict(node.attributes).get(name)
    assert value is not None, f"<{node.name}> has no value for {name}"
    return value


def text(node: str | Element) -> str:
    """The text of an element or fragment, its whitespace collapsed as a browser shows it."""
    parts: list[str] = []

    def collect(current: Element) -> None:
        for child in current.children:
            if isinstance(child, str):
                parts.append(child)
            else:
                collect(child)

    collect(_tree(node))
    return " ".join(part for part in parts if part)
