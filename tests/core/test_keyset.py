"""Keyset pages (core/keyset.py): walking the next links from the first page, or the previous
ones from the last, visits every row once in the order, whatever the ties; a cursor that is
garbage, altered, cut or of another order is refused, never misread."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.core import signing
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Sample, SampleStatus
from annotation.sample_filters import ORDERINGS, order_by
from core.keyset import BadCursor, Cursor, keyset_page
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import bulk_samples

pytestmark = pytest.mark.django_db

_STATUSES = (SampleStatus.IMPORTED, SampleStatus.PENDING_REVIEW, SampleStatus.VERIFIED)
_rows = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(_STATUSES), st.integers(0, 3)),
    min_size=0,
    max_size=9,
)


def _samples(rows: list[tuple[int, str, int]]) -> Any:
    """A dataset of these (priority, status, minutes ago) samples, many of them tied."""
    dataset = mmooc_dataset()
    made = bulk_samples(dataset, len(rows))
    now = timezone.now()
    for sample, (priority, status, minutes) in zip(made, rows, strict=True):
        Sample.objects.filter(pk=sample.pk).update(
            priority=priority,
            status=status,
            category_code=("VFP", "MP")[priority % 2],
            external_id=f"x{(sample.pk * 7) % 101:03d}-{sample.pk}",
        )
        # updated_at is auto_now: set through the queryset, which leaves it as given.
        Sample.objects.filter(pk=sample.pk).update(
            updated_at=now - datetime.timedelta(minutes=minutes)
        )
    return Sample.objects.filter(dataset=dataset)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    rows=_rows,
    per_page=st.integers(1, 4),
    key=st.sampled_from(sorted(ORDERINGS)),
    descending=st.booleans(),
)
def test_next_and_previous_links_visit_every_row_once_in_order(
    rows: list[tuple[int, str, int]], per_page: int, key: str, descending: bool
) -> None:
    samples = _samples(rows)
    order = order_by(("-" if descending else "") + key)
    expected = list(samples.order_by(*order).values_list("pk", flat=True))
    forwards: list[int] = []
    page = keyset_page(samples, order=order, cursor=None, per_page=per_page)
    assert page.is_first and not page.has_previous()
    while True:
        assert len(page.object_list) == per_page or not page.has_next()
        forwards += [s.pk for s in page.object_list]
        if not page.has_next():
            break
        token = page.next_token
        page = keyset_page(
            samples,
            order=order,
            cursor=Cursor.decode(token, order=order, model=Sample),
            per_page=per_page,
        )
        assert page.has_previous()
    assert forwards == expected
    backwards: list[int] = []
    page = keyset_page(samples, order=order, cursor=Cursor(order, None, True), per_page=per_page)
    assert page.is_last and not page.has_next()
    while True:
        backwards = [s.pk for s in page.object_list] + backwards
        if not page.has_previous():
            break
        page = keyset_page(
            samples,
            order=order,
            cursor=Cursor.decode(page.previous_token, order=order, model=Sample),
            per_page=per_page,
        )
    assert backwards == expected


def test_walking_back_from_the_last_page_ends_on_a_short_page_with_nothing_before() -> None:
    """The last page is the order reversed: walking back, the earliest page holds what is
    left (here one row), with no previous link, and a next link to the rest."""
    samples = _samples([(0, SampleStatus.IMPORTED, 0)] * 7)
    order = order_by("id")
    ids = list(samples.order_by("id").values_list("pk", flat=True))
    last = keyset_page(samples, order=order, cursor=Cursor(order, None, True), per_page=3)
    assert [s.pk for s in last.object_list] == ids[4:]
    middle = keyset_page(samples, order=order, cursor=last.previous_cursor, per_page=3)
    earliest = keyset_page(samples, order=order, cursor=middle.previous_cursor, per_page=3)
    assert [s.pk for s in earliest.object_list] == ids[:1]
    assert not earliest.has_previous() and earliest.has_next()


def _altered(token: str) -> str:
    """The token with one character of its value changed, the signature kept."""
    value, _colon, signature = token.rpartition(":")
    return f"{value[:-2]}{'A' if value[-2] != 'A' else 'B'}{value[-1]}:{signature}"


def _good(order: tuple[str, ...]) -> str:
    return Cursor(order, (3, 42), before=False).encode()


@pytest.mark.parametrize(
    "token",
    [
        "",
        "garbage",
        "a:b:c",
        "é✓\x00",
        "x" * 5000,
        # ours, altered: another value, the signature cut, a character changed
        _altered(_good(("priority", "id"))),
        _good(("priority", "id"))[:-3],
        _good(("priority", "id")).replace(":", ""),
        # of another order (same columns, other direction; other columns)
        _good(("-priority", "-id")),
        _good(("status", "id")),
        # signed with our key, but not a cursor's shape
        signing.Signer(salt="core.keyset.cursor").sign_object({"a": 1}),
        signing.Signer(salt="core.keyset.cursor").sign_object([["priority", "id"], [1], False]),
        signing.Signer(salt="core.keyset.cursor").sign_object([["priority", "id"], None, False]),
        signing.Signer(salt="core.keyset.cursor").sign_object(
            [["priority", "id"], ["many", 1], False]
        ),
        signing.Signer(salt="core.keyset.cursor").sign_object([["priority", "id"], [1, 2], "x"]),
        # a good cursor of another salt (another signed value of the site)
        signing.Signer(salt="elsewhere").sign_object([["priority", "id"], [3, 42], False]),
    ],
)
def test_a_cursor_that_cannot_be_used_is_refused(token: str) -> None:
    with pytest.raises(BadCursor):
        Cursor.decode(token, order=("priority", "id"), model=Sample)


def test_a_cursor_of_another_order_is_refused_by_the_page_too() -> None:
    samples = _samples([(1, SampleStatus.IMPORTED, 0)])
    with pytest.raises(BadCursor):
        keyset_page(samples, order=("id",), cursor=Cursor(("-id",), (1,), before=False), per_page=2)


def test_a_good_cursor_reads_back_as_it_was() -> None:
    when = timezone.now()
    order = ("-updated_at", "-id")
    cursor = Cursor(order, (when.isoformat(), 7), before=True)
    back = Cursor.decode(cursor.encode(), order=order, model=Sample)
    assert back.values == (when, 7) and back.before and back.order == order


def test_an_order_that_cannot_be_a_keyset_is_a_programming_error() -> None:
    samples = Sample.objects.none()
    for order in (("priority",), ("priority", "-id"), ("nonsense", "id")):
        with pytest.raises(ValueError):
            keyset_page(samples, order=order, cursor=None, per_page=2)
