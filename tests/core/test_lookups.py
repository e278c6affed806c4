"""AnyOf (core.lookups): a filter on a list of values as one array parameter."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from annotation.models import Dataset, DatasetKind
from core.lookups import AnyOf

pytestmark = pytest.mark.django_db


def test_rows_whose_field_is_one_of_the_values_match() -> None:
    """The rows whose field holds one of the values match, the list sent as one parameter.
    Quotes, backslashes, commas and braces in a text are matched as they are."""
    odd = 'a "b" \\c, {d} é NULL'
    for name in ("a", "b", "c", odd):
        Dataset.objects.create(name=name, kind=DatasetKind.IMAGE_QUESTION)
    with CaptureQueriesContext(connection) as captured:
        names = set(
            Dataset.objects.filter(AnyOf(F("name"), ["a", "c", "z", odd])).values_list(
                "name", flat=True
            )
        )
    assert names == {"a", "c", odd}
    sql = captured.captured_queries[0]["sql"]
    assert "= ANY(" in sql


def test_an_empty_list_matches_nothing_without_a_query() -> None:
    Dataset.objects.create(name="a", kind=DatasetKind.IMAGE_QUESTION)
    with CaptureQueriesContext(connection) as captured:
        assert list(Dataset.objects.filter(AnyOf(F("pk"), []))) == []
    assert captured.captured_queries == []


def test_texts_and_numbers_become_one_array_literal() -> None:
    """Texts are quoted (quotes and backslashes escaped only where a text has them),
    integers listed; a mixed list is left to psycopg."""
    from core.lookups import _array_literal

    assert _array_literal(["ab", "c,d"]) == ("text[]", '{"ab","c,d"}')
    assert _array_literal(['a"b', "c\\d", "e"]) == ("text[]", '{"a\\"b","c\\\\d","e"}')
    assert _array_literal([3, 1]) == ("bigint[]", "{3,1}")
    assert _array_literal([1, "a"]) is None and _array_literal([True]) is None
