"""Possible duplicates found at import and rebuilt for stored data (issue 25, defect 11), on
real images from shared/data."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from PIL import Image

from annotation import duplicates
from annotation.models import DuplicatePair, ImportJob, MediaAsset, Sample
from annotation.services import sample_update
from annotation.services.duplicates import duplicates_refresh
from tests.annotation.imports_support import (
    LOGICVISTA,
    b64,
    dataset_for,
    mmooc_record,
    needs_logicvista,
    run_import,
    write_lines,
)

pytestmark = [pytest.mark.django_db, needs_logicvista]

QUESTION = "Which figure comes next in the sequence? (A) 1 (B) 2 (C) 3 (D) 4"


def real_image(n: int) -> bytes:
    return sorted((LOGICVISTA / "images").glob("*.png"))[n].read_bytes()


def reencoded(data: bytes, quality: int = 60) -> bytes:
    out = io.BytesIO()
    with Image.open(io.BytesIO(data)) as image:
        image.convert("RGB").save(out, format="JPEG", quality=quality)
    return out.getvalue()


def record(external_id: str, data: bytes, question: str = QUESTION) -> dict[str, Any]:
    return mmooc_record(0, question_id=external_id, image=b64(data), question=question)


def pairs_of(job: ImportJob) -> set[tuple[str, str]]:
    return {
        (p.original.external_id, p.sample.external_id)
        for p in DuplicatePair.objects.filter(job=job).select_related("original", "sample")
    }


def import_records(folder: Path, records: list[dict[str, Any]], name: str = "dup") -> ImportJob:
    write_lines(folder / "mmooc.jsonl", records)
    dataset = dataset_for("mmooc", "mmooc", name=name)
    return run_import(dataset, "mmooc", folder)


def test_defect_11_near_duplicates_in_one_file_are_reported_from_an_empty_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same image and question under a new id, a case-changed copy and a re-encoded JPEG
    are each reported beside the row they copy, across chunks too; the same image with another
    question, and the same question with another image, are not."""
    monkeypatch.setattr("annotation.imports.services.CHUNK_ROWS", 2)
    first, other = real_image(0), real_image(1)
    job = import_records(
        tmp_path,
        [
            record("orig", first),
            record("new-id", first),
            record("case", first, "  WHICH figure comes NEXT in the  sequence " + QUESTION[-24:]),
            record("jpeg", reencoded(first)),
            record("other-image", other),
            record("other-question", first, "How many squares are there? (A) 1 (B) 2 (C) 3"),
        ],
    )
    assert job.imported == 6
    assert pairs_of(job) == {("orig", "new-id"), ("orig", "case"), ("orig", "jpeg")}
    distances = dict(
        DuplicatePair.objects.filter(job=job).values_list("sample__external_id", "image_distance")
    )
    assert distances["new-id"] == 0 and distances["case"] == 0
    assert distances["jpeg"] is not None and distances["jpeg"] <= duplicates.MAX_IMAGE_DISTANCE


def test_defect_11_a_later_import_is_checked_against_the_dataset(tmp_path: Path) -> None:
    """A second file's copies of a stored sample are paired with it, under the second job."""
    first = real_image(2)
    earlier = import_records(tmp_path / "a", [record("orig", first)])
    write_lines(
        tmp_path / "b" / "mmooc.jsonl",
        [record("copy", reencoded(first, 40), QUESTION.upper()), record("fresh", real_image(3))],
    )
    later = run_import(earlier.dataset, "mmooc", tmp_path / "b")
    assert later.imported == 2
    assert pairs_of(earlier) == set()
    assert pairs_of(later) == {("orig", "copy")}


def test_another_dataset_is_not_compared(tmp_path: Path) -> None:
    data = real_image(4)
    import_records(tmp_path / "a", [record("orig", data)], name="one")
    job = import_records(tmp_path / "b", [record("copy", data)], name="two")
    assert pairs_of(job) == set()


def test_the_hash_and_key_are_stored_at_import(tmp_path: Path) -> None:
    data = real_image(5)
    job = import_records(tmp_path, [record("orig", data)])
    sample = Sample.objects.get(dataset=job.dataset, external_id="orig")
    asset = MediaAsset.objects.get(samples=sample)
    assert asset.phash is not None and asset.phash == duplicates.image_hash(data)
    assert sample.question_key == duplicates.text_key(QUESTION.lower())


def test_an_import_with_detection_off_hashes_keys_and_pairs_nothing_until_the_refresh(
    tmp_path: Path, settings: Any
) -> None:
    """With IMPORT_FIND_DUPLICATES off (what the import bench compares against), an import
    stores its samples and images but no hash, key or pair; the command finds them later."""
    settings.IMPORT_FIND_DUPLICATES = False
    data = real_image(11)
    job = import_records(tmp_path, [record("orig", data), record("copy", reencoded(data))])
    assert job.imported == 2
    assert not MediaAsset.objects.filter(phash__isnull=False).exists()
    assert not Sample.objects.filter(question_key__isnull=False).exists()
    assert pairs_of(job) == set()
    call_command("duplicate_keys_refresh", "--dataset", job.dataset.name, stdout=io.StringIO())
    assert MediaAsset.objects.filter(phash__isnull=True).count() == 0
    assert {
        (p.original.external_id, p.sample.external_id) for p in DuplicatePair.objects.all()
    } == {("orig", "copy")}


def test_a_reimport_of_the_same_file_adds_no_pair(tmp_path: Path) -> None:
    data = real_image(6)
    job = import_records(tmp_path, [record("orig", data), record("copy", data)])
    again = run_import(job.dataset, "mmooc", tmp_path)
    assert again.unchanged == 2
    assert pairs_of(job) == {("orig", "copy")}
    assert pairs_of(again) == set()


def test_an_edited_question_gets_its_key(tmp_path: Path) -> None:
    job = import_records(tmp_path, [record("orig", real_image(7))])
    sample = Sample.objects.get(dataset=job.dataset)
    sample_update(sample=sample, changes={"question": "Another one?"}, by=None, source="edit")
    sample.refresh_from_db()
    assert sample.question_key == duplicates.text_key("another one")


def test_refresh_fills_in_data_stored_before_hashes_were_kept(tmp_path: Path) -> None:
    """Hashes, keys and pairs of data imported before they were kept are computed by the
    command; stale pairs go, pairs an import found stay with their job."""
    data = real_image(8)
    job = import_records(
        tmp_path,
        [record("orig", data), record("copy", reencoded(data)), record("third", real_image(9))],
    )
    kept = DuplicatePair.objects.get(job=job)
    dataset = job.dataset
    MediaAsset.objects.update(phash=None)
    Sample.objects.filter(dataset=dataset, external_id="third").update(question_key=None)
    # Its question edited behind the key's back (as data stored before keys were kept).
    Sample.objects.filter(dataset=dataset, external_id="third").update(question="x")
    third = Sample.objects.get(dataset=dataset, external_id="third")
    stale = DuplicatePair.objects.create(
        dataset=dataset,
        original=Sample.objects.get(dataset=dataset, external_id="orig"),
        sample=third,
    )
    out = io.StringIO()
    call_command("duplicate_keys_refresh", "--dataset", dataset.name, stdout=out)
    assert MediaAsset.objects.filter(phash__isnull=True).count() == 0
    third.refresh_from_db()
    assert third.question_key == duplicates.text_key("x")
    assert not DuplicatePair.objects.filter(pk=stale.pk).exists()
    assert list(DuplicatePair.objects.filter(dataset=dataset)) == [kept]
    assert DuplicatePair.objects.get().job == job
    assert out.getvalue().startswith("3 images hashed, 1 question keys set, 0 possible")


def test_refresh_pairs_what_imports_did_not(tmp_path: Path) -> None:
    data = real_image(10)
    job = import_records(tmp_path, [record("orig", data), record("copy", data)])
    DuplicatePair.objects.all().delete()
    result = duplicates_refresh(dataset_ids=[job.dataset_id])
    assert result.pairs_added == 1 and result.pairs_removed == 0
    pair = DuplicatePair.objects.get()
    assert (pair.original.external_id, pair.sample.external_id, pair.job) == ("orig", "copy", None)
