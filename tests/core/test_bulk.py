"""Bulk inserts (core.bulk): COPY on PostgreSQL with the model's defaults, inside the caller's
transaction."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotation.models import Dataset, DatasetKind, MediaAsset, Sample, SampleRevision
from core.bulk import (
    JsonText,
    rows_copy_values,
    rows_insert,
    rows_insert_new,
    rows_insert_values,
)

pytestmark = pytest.mark.django_db


def asset_row(sha: str, **fields: object) -> dict[str, object]:
    return {
        "sha256": sha,
        "kind": "image",
        "file": f"media/{sha}.png",
        "mime_type": "image/png",
        "size_bytes": 10,
        **fields,
    }


def test_rows_get_their_ids_in_order_and_the_model_defaults() -> None:
    """Missing fields take the model's defaults (JSON lists, auto_now times), given JSON is
    stored as JSON, and the ids come back in the order of the rows."""
    dataset = Dataset.objects.create(name="bulk", kind=DatasetKind.IMAGE_QUESTION)
    rows = [
        {"dataset_id": dataset.pk, "external_id": f"s{n}", "options": [{"label": "A", "text": "é"}]}
        for n in range(3)
    ]
    with CaptureQueriesContext(connection) as captured:
        ids = rows_insert(Sample, rows)
    assert len(captured.captured_queries) <= 2  # the ids, then one COPY
    samples = list(Sample.objects.filter(pk__in=ids).order_by("pk"))
    assert [s.external_id for s in samples] == ["s0", "s1", "s2"] and ids == sorted(ids)
    first = samples[0]
    assert first.options == [{"label": "A", "text": "é"}] and first.generator_models == []
    assert first.extra == {} and first.revision == 1 and first.status == "imported"
    assert first.created_at is not None and first.updated_at is not None
    assert rows_insert(Sample, []) == []


def test_a_failed_transaction_leaves_no_row() -> None:
    dataset = Dataset.objects.create(name="bulk", kind=DatasetKind.IMAGE_QUESTION)
    with pytest.raises(RuntimeError), transaction.atomic():
        ids = rows_insert(Sample, [{"dataset_id": dataset.pk, "external_id": "x"}])
        rows_insert(SampleRevision, [{"sample_id": ids[0], "number": 1, "source": "import"}])
        raise RuntimeError
    assert not Sample.objects.exists() and not SampleRevision.objects.exists()


def test_rows_insert_new_skips_rows_whose_unique_value_is_taken() -> None:
    """A row whose hash another writer stored first is left out; the others go in."""
    MediaAsset.objects.create(**asset_row("a" * 64, width=1))
    with transaction.atomic():
        rows_insert_new(
            MediaAsset, [asset_row("a" * 64, width=2), asset_row("b" * 64)], unique="sha256"
        )
        rows_insert_new(MediaAsset, [asset_row("c" * 64)], unique="sha256")  # twice in one
    assert dict(MediaAsset.objects.values_list("sha256", "width")) == {
        "a" * 64: 1,
        "b" * 64: None,
        "c" * 64: None,
    }


def test_json_text_is_stored_as_the_json_it_holds() -> None:
    """A JSON field given as JsonText is stored by COPY as the value it encodes, not as a
    string."""
    dataset = Dataset.objects.create(name="bulk", kind=DatasetKind.IMAGE_QUESTION)
    ids = rows_insert(
        Sample,
        [{"dataset_id": dataset.pk, "external_id": "j", "extra": JsonText('{"k": ["é", 1]}')}],
    )
    rows_insert_new(
        MediaAsset, [asset_row("d" * 64, peaks=JsonText("[0.5, 1.0]"))], unique="sha256"
    )
    assert Sample.objects.get(pk=ids[0]).extra == {"k": ["é", 1]}
    assert MediaAsset.objects.get(sha256="d" * 64).peaks == [0.5, 1.0]


def test_rows_given_as_values_are_stored_as_the_same_rows_given_as_dicts() -> None:
    """Values in the order of the names given: the fields not named take their defaults,
    JSON is given as values, as JsonText or as None; one query for the ids and one COPY."""
    dataset = Dataset.objects.create(name="bulk", kind=DatasetKind.IMAGE_QUESTION)
    names = ("external_id", "dataset_id", "options", "extra")
    rows = [
        ("v0", dataset.pk, [{"label": "A", "text": "é"}], JsonText('{"k": 1}')),
        ("v1", dataset.pk, JsonText("[]"), {"k": [2]}),
    ]
    with CaptureQueriesContext(connection) as captured:
        ids = rows_insert_values(Sample, names, rows)
    assert len(captured.captured_queries) <= 2
    samples = list(Sample.objects.filter(pk__in=ids).order_by("pk"))
    assert [(s.external_id, s.options, s.extra) for s in samples] == [
        ("v0", [{"label": "A", "text": "é"}], {"k": 1}),
        ("v1", [], {"k": [2]}),
    ]
    first = samples[0]
    assert first.generator_models == [] and first.revision == 1 and first.status == "imported"
    assert first.created_at is not None and first.updated_at is not None
    assert rows_insert_values(Sample, names, []) == []


def test_rows_copied_without_keys_are_numbered_by_the_table() -> None:
    """``rows_copy_values`` stores the rows as ``rows_insert_values`` would, their primary keys
    from the table's own sequence, with COPY alone: no statement Django sees."""
    dataset = Dataset.objects.create(name="bulk", kind=DatasetKind.IMAGE_QUESTION)
    earlier = rows_insert_values(Sample, ["dataset_id", "external_id"], [(dataset.pk, "a")])
    with CaptureQueriesContext(connection) as captured:
        rows_copy_values(
            Sample, ["dataset_id", "external_id", "extra"], [(dataset.pk, "b", {"k": 1})]
        )
        rows_copy_values(Sample, ["dataset_id", "external_id"], [])
    assert not captured.captured_queries
    copied = Sample.objects.get(dataset=dataset, external_id="b")
    assert copied.pk > earlier[0] and copied.extra == {"k": 1} and copied.status == "imported"
    later = rows_insert_values(Sample, ["dataset_id", "external_id"], [(dataset.pk, "c")])
    assert later[0] > copied.pk
