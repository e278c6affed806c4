"""A view's filter and sort as a query string (annotation/saved_views/query.py)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.http import QueryDict

from annotation.models.saved_views import QUERY_MAX
from annotation.saved_views.query import filter_parameters, filter_query, query_clean


def test_the_list_urls_own_parameters_are_no_part_of_the_filter() -> None:
    """Paging, the open view, columns and page size are left out, and so are empty values
    and names the filter does not know; the order given is kept."""
    params = QueryDict(
        "page=3&view=7&columns=id&page_size=25&search=car&status=imported&status=verified"
        "&category=&ordering=-priority&utm=x"
    )
    assert filter_query(params) == ("search=car&status=imported&status=verified&ordering=-priority")


def test_the_filter_parameters_are_the_sample_lists() -> None:
    names = filter_parameters()
    assert {"search", "status", "category", "gold", "ordering"} <= names
    assert not names & {"page", "view", "columns", "page_size", "problems", "statuses"}


def test_a_good_query_is_kept_tidied() -> None:
    assert query_clean("?search=needle&category=&status=imported") == (
        "search=needle&status=imported"
    )
    assert query_clean("") == ""


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("search=a&page=2", "Unknown filter “page”"),
        ("password=x", "Unknown filter “password”"),
        ("status=nonsense", "Filter “status”: Unknown status “nonsense”"),
        ("gold=perhaps", "Filter “gold”: Use true or false."),
        ("ordering=secret", "Filter “ordering”: Sort by one of"),
        ("search=" + "x" * QUERY_MAX, f"Keep the filter under {QUERY_MAX} characters."),
    ],
)
def test_a_bad_query_is_refused_with_what_is_wrong(raw: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        query_clean(raw)
    assert message in caught.value.message_dict["query"][0]
