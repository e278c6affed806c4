"""The site's URL routing (mmooc_site/urls.py): the API's patterns come first for speed, and no
pattern shadows another."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver, resolve

EXAMPLES = {"int": "7", "str": "x1", "slug": "x-1", "uuid": "0" * 8 + "-0000-0000-0000-" + "0" * 12}


def _patterns(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, route)
        else:
            yield route, pattern


def _example(route: str) -> str | None:
    """A path the route matches: converters filled in; None for regular expressions."""
    if "^" in route or "(?P" in route:
        return None
    return "/" + re.sub(
        r"<(?:(\w+):)?\w+>", lambda m: EXAMPLES.get(str(m[1] or "str"), "x1"), route
    )


def test_every_route_resolves_to_its_own_view() -> None:
    """An example path of every route reaches that route's view, whatever the order of the
    patterns (the API's come before the pages')."""
    checked = 0
    for route, pattern in _patterns(get_resolver().url_patterns):
        path = _example(route)
        if path is None:
            continue
        assert resolve(path).func == pattern.callback, route
        checked += 1
    assert checked > 100


def test_the_review_loop_is_found_among_the_first_patterns() -> None:
    """Claim and submit are matched after a handful of patterns, not after every page's."""
    routes = [route for route, _pattern in _patterns(get_resolver().url_patterns)]
    assert routes.index("api/datasets/<int:dataset_id>/claim/") < 3
    assert routes.index("api/reviews/") < 12
