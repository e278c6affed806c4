"""The sample list's column set and page sizes (annotation/saved_views/columns.py)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation.saved_views.columns import (
    COLUMNS,
    DEFAULT_COLUMNS,
    PAGE_SIZES,
    choices,
    columns_clean,
    columns_shown,
    page_size_clean,
)


def test_chosen_columns_come_in_the_lists_order_with_the_external_id() -> None:
    """Whatever order they are ticked in, repeated or padded, the columns come in the list's
    order and always hold the external id (the link to the sample)."""
    assert columns_clean(["status", " id ", "status", ""]) == ("id", "external_id", "status")
    assert columns_clean([]) == ("external_id",)


def test_an_unknown_column_is_refused_by_name() -> None:
    with pytest.raises(ValidationError) as caught:
        columns_clean(["status", "password"])
    assert "Unknown column “password”" in caught.value.message_dict["columns"][0]


def test_reviewers_never_get_the_gold_column() -> None:
    """A choice holding gold shows it to leads only; a retired key is dropped."""
    assert "gold" in columns_shown(DEFAULT_COLUMNS, lead=True)
    assert "gold" not in columns_shown(DEFAULT_COLUMNS, lead=False)
    assert columns_shown(["retired", "status"], lead=True) == ("external_id", "status")
    assert [c.key for c in choices(lead=False)] == [c.key for c in COLUMNS if c.key != "gold"]


@pytest.mark.parametrize("raw", ["7", "", "abc", "1000", None])
def test_only_the_offered_page_sizes_are_taken(raw: object) -> None:
    with pytest.raises(ValidationError) as caught:
        page_size_clean(raw)
    assert "25, 50, 100, 200" in caught.value.message_dict["page_size"][0]


def test_the_offered_page_sizes_are_taken() -> None:
    assert [page_size_clean(str(size)) for size in PAGE_SIZES] == list(PAGE_SIZES)
    assert page_size_clean(" 100 ") == 100
