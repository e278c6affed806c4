"""Model instances from rows of fixed SQL (core/rows.py): the values the ORM would give."""

from __future__ import annotations

import pytest
from django.db import connection

from annotation.models import Sample
from core.rows import columns, from_row
from review.models import Slot
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [Slot, Sample])
def test_a_row_becomes_the_instance_the_orm_loads(model: type[Slot] | type[Sample]) -> None:
    """Every field (times, booleans, JSON) holds what the ORM's own read holds."""
    review_dataset(1)
    loaded = model.objects.order_by("pk").first()
    assert loaded is not None
    names, sql = columns(model, "t")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {sql} FROM {model._meta.db_table} t WHERE t.id = %s",
            [loaded.pk],
        )
        row = cursor.fetchone()
    built = from_row(model, row)
    assert {name: getattr(built, name) for name in names} == {
        name: getattr(loaded, name) for name in names
    }
    assert not built._state.adding
