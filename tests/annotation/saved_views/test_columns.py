"""The sample list's column set and page sizes (annotation/saved_views/columns.py)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from annotation.saved_views.columns import (
    COLUMNS,
    DEFAULT_COLUMNS,
    PAGE_SIZES,
    choices,
    columns_clean,
    columns_shown,
    page_size_clean,
)


def test_chosen_columns_keep_their_order_and_the_external_id() -> None:
    """The columns come in the order chosen, a repeated one where it came first, and always
    hold the external id (the link to the sample): where placed, or else where it comes in
    the list's own order."""
    assert columns_clean(["status", " id ", "status", ""]) == ("external_id", "status", "id")
    assert columns_clean(["id", "status"]) == ("id", "external_id", "status")
    assert columns_clean(["status", "external_id", "id"]) == ("status", "external_id", "id")
    assert columns_clean([]) == ("external_id",)
    assert columns_shown(["gold", "status", "id"], lead=False) == ("external_id", "status", "id")


KEYS = st.lists(st.sampled_from([c.key for c in COLUMNS]), max_size=20)


@given(keys=KEYS)
def test_the_order_chosen_is_kept_and_cleaning_again_changes_nothing(keys: list[str]) -> None:
    """Every key chosen comes once, in the order of its first choice; the external id comes
    once; a cleaned choice cleans to itself (so a kept layout shows as kept)."""
    cleaned = columns_clean(keys)
    assert [k for k in cleaned if k != "external_id"] == [
        k for k in dict.fromkeys(keys) if k != "external_id"
    ]
    assert cleaned.count("external_id") == 1
    assert columns_clean(cleaned) == cleaned
    assert columns_shown(cleaned, lead=True) == cleaned


def test_the_chooser_lists_the_shown_columns_first_in_their_order() -> None:
    listed = [c.key for c in choices(lead=True, shown=("status", "external_id", "id"))]
    assert listed[:3] == ["status", "external_id", "id"]
    assert sorted(listed) == sorted(c.key for c in COLUMNS)


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
