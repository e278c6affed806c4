"""Re-imports respect review: each incoming row is compared with the row as last imported,
never with the sample's reviewed state; what the source changed is applied, what reviewers
changed is kept, and a field both changed goes to adjudication with both values.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from annotation.imports import selectors as import_selectors
from annotation.imports import services as import_services
from annotation.imports.reimport import plan_changes
from annotation.models import (
    ChangeSource,
    ImportedVersion,
    Sample,
    SampleRevision,
    SampleStatus,
)
from review.models import Outcome, Slot
from tests.annotation.imports_support import (
    build_trimodal,
    dataset_for,
    logicvista_subset,
    mmooc_record,
    needs_logicvista,
    run_import,
    trimodal_record,
    write_lines,
)
from tests.judging.factories import bulk_samples

pytestmark = pytest.mark.django_db


def review(sample: Sample, status: str = SampleStatus.VERIFIED, **changes: Any) -> None:
    """What a settled review does to a sample: its corrections and its status, as history."""
    services.sample_update(
        sample=sample, changes=changes, by=None, source=ChangeSource.REVIEW, status=status
    )


def imported_file(tmp_path: Path, *records: dict[str, Any]) -> tuple[Any, Path]:
    dataset = dataset_for("mmooc", "mmooc")
    path = write_lines(tmp_path / "m.jsonl", list(records))
    job = run_import(dataset, "mmooc", path)
    assert job.imported == len(records), job.message
    return dataset, path


def test_an_unchanged_source_after_review_changes_nothing(tmp_path: Path) -> None:
    """The very file imported before: 0 updated, reviewers' MP / shifted-IC kept, still verified."""
    dataset, path = imported_file(tmp_path, mmooc_record(1), mmooc_record(2), mmooc_record(3))
    for external_id in ("mm-1", "mm-2", "mm-3"):
        review(
            Sample.objects.get(external_id=external_id),
            category_code="MP",
            answerability_group="shifted_ic",
            reference_answer="A",
        )
    before = list(
        Sample.objects.order_by("id").values_list(
            "category_code", "answerability_group", "reference_answer", "status", "revision"
        )
    )
    revisions = SampleRevision.objects.count()
    job = run_import(dataset, "mmooc", path)
    assert (job.imported, job.unchanged, job.updated, job.rejected) == (0, 3, 0, 0)
    assert job.message.startswith("0 imported, 3 unchanged, 0 updated, 0 rejected.")
    after = list(
        Sample.objects.order_by("id").values_list(
            "category_code", "answerability_group", "reference_answer", "status", "revision"
        )
    )
    assert after == before
    assert before[0] == ("MP", "shifted_ic", "A", SampleStatus.VERIFIED, 2)
    assert SampleRevision.objects.count() == revisions


def test_an_unchanged_reimport_costs_what_it_reads_not_what_the_dataset_holds(
    tmp_path: Path,
) -> None:
    """The same file again into a dataset whose queue is open: the same statements, none on
    the review queue, whether the dataset holds 3 samples or 43 (the end of the import
    refreshes what the import changed, nothing here, not every slot of the dataset)."""
    dataset, path = imported_file(tmp_path, mmooc_record(1), mmooc_record(2), mmooc_record(3))
    services.samples_send_to_review(
        dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=None
    )

    def reimported() -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            job = run_import(dataset, "mmooc", path)
        assert (job.imported, job.unchanged, job.updated) == (0, 3, 0), job.message
        return [query["sql"] for query in queries.captured_queries]

    small = reimported()
    bulk_samples(dataset, 40)
    Sample.objects.filter(external_id__startswith="bulk-").update(status=SampleStatus.IMPORTED)
    services.samples_send_to_review(
        dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=None
    )
    assert Slot.objects.filter(dataset=dataset).count() == 2 * 43
    large = reimported()
    assert len(large) == len(small)
    assert not [sql for sql in large if Slot._meta.db_table in sql]


def test_a_reimport_that_sends_a_sample_back_opens_its_slots_alone(tmp_path: Path) -> None:
    """A verified sample the source changed goes back to review with its k slots in a new
    round; the other samples' slots are left as they were."""
    dataset, path = imported_file(tmp_path, mmooc_record(1), mmooc_record(2))
    services.samples_send_to_review(
        dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=None
    )
    first, second = Sample.objects.filter(dataset=dataset).order_by("external_id")
    Slot.objects.filter(sample=first).update(done=True)
    Outcome.objects.create(
        dataset=dataset, sample=first, status=SampleStatus.VERIFIED, agreement=True
    )
    review(first)
    Slot.objects.filter(sample=second).update(priority=9)  # left alone by this import
    write_lines(path, [mmooc_record(1, answer="B"), mmooc_record(2)])
    job = run_import(dataset, "mmooc", path)
    assert (job.updated, job.unchanged) == (1, 1), job.message
    first.refresh_from_db()
    assert first.status == SampleStatus.PENDING_REVIEW
    assert sorted(
        Slot.objects.filter(sample=first, done=False).values_list("round", flat=True)
    ) == [1, 1]
    assert set(Slot.objects.filter(sample=second).values_list("priority", flat=True)) == {9}


def test_an_adjudicated_safety_label_survives_the_same_file(tmp_path: Path) -> None:
    """A safety label set by adjudication is not reverted by importing the same file again."""
    corpus = build_trimodal(tmp_path / "src")
    dataset = dataset_for("trimodal", "mcbench")
    run_import(dataset, "trimodal", corpus.folder)
    sample = Sample.objects.get(external_id="tri-1")
    assert sample.safety_label == "unsafe"
    services.sample_update(
        sample=sample,
        changes={"safety_label": "safe"},
        by=None,
        source=ChangeSource.ADJUDICATION,
        status=SampleStatus.VERIFIED,
    )
    job = run_import(dataset, "trimodal", corpus.folder)
    assert (job.unchanged, job.updated) == (2, 0)
    sample.refresh_from_db()
    assert (sample.safety_label, sample.status) == ("safe", SampleStatus.VERIFIED)


def test_a_source_change_of_one_field_updates_only_that_field(tmp_path: Path) -> None:
    """The source's new explanation is applied; the reviewed category stays; back to review."""
    dataset, path = imported_file(tmp_path, mmooc_record(1), mmooc_record(2))
    sample = Sample.objects.get(external_id="mm-1")
    review(sample, category_code="MA")
    write_lines(path, [mmooc_record(1, reasoning="The sign is blank."), mmooc_record(2)])
    job = run_import(dataset, "mmooc", path)
    assert (job.unchanged, job.updated) == (1, 1)
    sample.refresh_from_db()
    assert (sample.explanation, sample.category_code) == ("The sign is blank.", "MA")
    assert sample.status == SampleStatus.PENDING_REVIEW
    revision = sample.revisions.order_by("-number").first()
    assert revision is not None and revision.source == ChangeSource.IMPORT
    assert set(revision.after) == {"explanation", "status"}
    assert revision.before["explanation"] == "The sign is turned away from the camera."
    assert sample.content_hash == services.sample_content_hash(
        {k: getattr(sample, k) for k in services.LABEL_FIELDS},
        [sample.media_links.get().asset.sha256],
        sample.extra,
    )
    version = ImportedVersion.objects.get(sample=sample)
    assert version.values["explanation"] == "The sign is blank."
    assert version.values["category_code"] == "VFP"  # what the source says, not the review
    assert version.job_id == job.pk
    # The same changed file again is unchanged: it is now the row as last imported.
    again = run_import(dataset, "mmooc", path)
    assert (again.unchanged, again.updated) == (2, 0)


def test_a_field_both_changed_goes_to_adjudication_with_both_values(tmp_path: Path) -> None:
    """Reviewer MP, source now USPC: the sample keeps MP, waits on adjudication, both stored."""
    dataset, path = imported_file(tmp_path, mmooc_record(1))
    sample = Sample.objects.get()
    review(sample, category_code="MA")
    changed = mmooc_record(
        1, ooc_type="uncertain_spatial_physical_context", reasoning="Depth is unclear."
    )
    write_lines(path, [changed])
    job = run_import(dataset, "mmooc", path)
    assert job.updated == 1
    assert "1 sample went to adjudication" in job.message
    sample.refresh_from_db()
    assert sample.status == SampleStatus.NEEDS_ADJUDICATION
    assert sample.category_code == "MA"  # the reviewed value, until adjudication
    assert sample.explanation == "Depth is unclear."  # the field only the source changed
    [conflict] = import_selectors.import_conflicts(sample=sample)
    assert (conflict.field, conflict.reviewed, conflict.imported, conflict.previous) == (
        "category_code",
        "MA",
        "USPC",
        "VFP",
    )
    assert conflict.job_id == job.pk
    revision = sample.revisions.order_by("-number").first()
    assert revision is not None
    assert revision.after == {
        "explanation": "Depth is unclear.",
        "status": SampleStatus.NEEDS_ADJUDICATION,
    }
    assert "category_code (source: “USPC”, reviewed: “MA”)" in revision.reason
    # The same file again changes nothing and keeps the conflict open.
    again = run_import(dataset, "mmooc", path)
    assert (again.unchanged, again.updated) == (1, 0)
    assert len(import_selectors.import_conflicts(sample=sample)) == 1
    # Once adjudication settles the sample, nothing is open any more.
    services.sample_set_status(sample=sample, status=SampleStatus.VERIFIED, by=None)
    assert import_selectors.import_conflicts(sample=sample) == []
    assert import_services.import_conflicts_close(sample=sample) == 1


def test_source_changes_that_break_the_taxonomy_beside_a_review_all_go_to_adjudication(
    tmp_path: Path,
) -> None:
    """Reviewer MA (OOC); source now MP (shifted IC): the group cannot move alone."""
    dataset, path = imported_file(tmp_path, mmooc_record(1))
    sample = Sample.objects.get()
    review(sample, category_code="MA")
    write_lines(path, [mmooc_record(1, ooc_type=None, ic_type="misleading_premise")])
    job = run_import(dataset, "mmooc", path)
    assert (job.updated, job.rejected) == (1, 0), job.message
    sample.refresh_from_db()
    assert (sample.category_code, sample.answerability_group) == ("MA", "ooc")
    assert sample.status == SampleStatus.NEEDS_ADJUDICATION
    fields = {c.field: c for c in import_selectors.import_conflicts(sample=sample)}
    assert set(fields) == {"category_code", "answerability_group"}
    assert (fields["answerability_group"].reviewed, fields["answerability_group"].imported) == (
        "ooc",
        "shifted_ic",
    )


def test_a_sample_without_an_imported_version_keeps_its_review(tmp_path: Path) -> None:
    """Without a record of the last import, a reviewed sample's differing field is a conflict,
    while an unreviewed sample takes the source's value (nobody's work is lost either way)."""
    dataset, path = imported_file(tmp_path, mmooc_record(1), mmooc_record(2))
    reviewed, fresh = Sample.objects.get(external_id="mm-1"), Sample.objects.get(external_id="mm-2")
    review(reviewed, category_code="MA")
    services.sample_update(
        sample=fresh, changes={"category_code": "MKB"}, by=None, source=ChangeSource.EDIT
    )
    ImportedVersion.objects.all().delete()
    job = run_import(dataset, "mmooc", path)
    assert job.updated == 2
    reviewed.refresh_from_db()
    fresh.refresh_from_db()
    assert (reviewed.category_code, reviewed.status) == ("MA", SampleStatus.NEEDS_ADJUDICATION)
    [conflict] = import_selectors.import_conflicts(sample=reviewed)
    assert (conflict.reviewed, conflict.imported, conflict.previous) == ("MA", "VFP", None)
    assert (fresh.category_code, fresh.status) == ("VFP", SampleStatus.IMPORTED)
    assert ImportedVersion.objects.count() == 2


def test_the_migration_backfills_the_version_of_the_latest_import(tmp_path: Path) -> None:
    """Replaying the history: the values right after the latest import revision, not the
    review after it; samples whose history holds no import get no version."""
    dataset, path = imported_file(tmp_path, mmooc_record(1))
    sample = Sample.objects.get()
    # An import revision as the imports before this change wrote them (every field set to
    # the row), then a review.
    services.sample_update(
        sample=sample, changes={"reference_answer": "B"}, by=None, source=ChangeSource.IMPORT
    )
    review(sample, category_code="MA")
    created = services.sample_create(
        dataset=dataset,
        external_id="made-here",
        question="Is it red? (A) yes (B) no",
        question_format="mcq",
        reference_answer="A",
        media=[("image", sample.media_links.get().asset)],
    )
    ImportedVersion.objects.all().delete()
    migration = importlib.import_module("annotation.migrations.0005_imported_versions")
    migration.backfill(apps, None)
    version = ImportedVersion.objects.get()
    assert version.sample_id == sample.pk and created.pk != sample.pk
    assert version.values["reference_answer"] == "B"
    assert version.values["category_code"] == "VFP"
    sha = sample.media_links.get().asset.sha256
    assert version.media == [["image", 0, sha]]
    assert version.content_hash == services.sample_content_hash(version.values, [sha])
    # With the backfilled version, the old file changes only what it changed (the answer).
    job = run_import(dataset, "mmooc", path)
    sample.refresh_from_db()
    assert job.updated == 1
    assert (sample.reference_answer, sample.category_code) == ("C", "MA")


@pytest.mark.parametrize(
    ("previous", "current", "incoming", "reviewed", "applied", "conflicts"),
    [
        # The source did not change the field: whatever reviewers did stays.
        ({"f": "a"}, {"f": "b"}, {"f": "a"}, True, {}, []),
        # The source changed a field nobody touched: applied.
        ({"f": "a"}, {"f": "a"}, {"f": "c"}, True, {"f": "c"}, []),
        # Reviewer and source arrived at the same value: nothing to do.
        ({"f": "a"}, {"f": "c"}, {"f": "c"}, True, {}, []),
        # Both changed it, differently: a conflict holding the three values.
        ({"f": "a"}, {"f": "b"}, {"f": "c"}, True, {}, ["f"]),
        # No record of the last import: applied before review, a conflict after.
        (None, {"f": "b"}, {"f": "c"}, False, {"f": "c"}, []),
        (None, {"f": "b"}, {"f": "c"}, True, {}, ["f"]),
    ],
)
def test_plan_changes_rules(
    previous: dict[str, str] | None,
    current: dict[str, str],
    incoming: dict[str, str],
    reviewed: bool,
    applied: dict[str, str],
    conflicts: list[str],
) -> None:
    """Each of the comparison's cases gives what the rule says."""
    plan = plan_changes(
        previous=previous, current=current, incoming=incoming, reviewed=reviewed, fields=["f"]
    )
    assert plan.applied == applied
    assert [c["field"] for c in plan.conflicts] == conflicts
    if conflicts:
        assert plan.conflicts[0] == {
            "field": "f",
            "reviewed": "b",
            "imported": "c",
            "previous": None if previous is None else "a",
        }


def test_a_changed_image_after_review_is_applied_and_sent_back(tmp_path: Path) -> None:
    """Media are not reviewed: a new image from the source replaces the old one."""
    from tests.annotation.imports_support import b64, image

    dataset, path = imported_file(tmp_path, mmooc_record(1))
    sample = Sample.objects.get()
    review(sample, category_code="MA")
    write_lines(path, [mmooc_record(1, image=b64(image(77)))])
    job = run_import(dataset, "mmooc", path)
    assert job.updated == 1
    sample.refresh_from_db()
    assert (sample.category_code, sample.status) == ("MA", SampleStatus.PENDING_REVIEW)
    new_sha = sample.media_links.get().asset.sha256
    assert ImportedVersion.objects.get(sample=sample).media == [["image", 0, new_sha]]
    revision = sample.revisions.order_by("-number").first()
    assert revision is not None and revision.after["media"] == [new_sha]


def test_trimodal_reimport_of_a_changed_label_with_a_reviewed_predicate(tmp_path: Path) -> None:
    """Tri-modal rows follow the same rule: the reviewer's predicate stays, the source's
    new speech utterance is applied."""
    corpus = build_trimodal(tmp_path / "src")
    dataset = dataset_for("trimodal", "mcbench")
    run_import(dataset, "trimodal", corpus.folder)
    sample = Sample.objects.get(external_id="tri-1")
    review(sample, predicate=["pan on stove", "smoke alarm", "nobody in the kitchen"])
    write_lines(
        corpus.folder / "scenarios.jsonl",
        [trimodal_record(1, S="I'll go for a walk now."), trimodal_record(2)],
    )
    job = run_import(dataset, "trimodal", corpus.folder)
    assert (job.updated, job.unchanged) == (1, 1)
    sample.refresh_from_db()
    assert sample.speech_utterance == "I'll go for a walk now."
    assert sample.predicate == ["pan on stove", "smoke alarm", "nobody in the kitchen"]


# -- issue 25, defect 4: re-imports ignored custom fields and licences ---------------------------


def _logicvista_source(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    folder = logicvista_subset(tmp_path / "lv", ["v1_287", "v1_288"])
    return folder, json.loads((folder / "dataset.json").read_text(encoding="utf-8"))


@needs_logicvista
def test_defect_4_reimport_updates_a_changed_custom_field(tmp_path: Path, lead: Any) -> None:
    """Real LogicVista items: a re-imported row whose only change is in its custom fields (a
    changed value, a nested one added, a key the source dropped) is updated, not counted as
    unchanged; the dropped key goes, the history holds old and new, and a reviewed sample
    stays verified (a custom field is no reviewed label)."""
    folder, items = _logicvista_source(tmp_path)
    dataset = dataset_for("logicvista", name="logicvista")
    assert run_import(dataset, "logicvista", folder).imported == 2
    sample = Sample.objects.get(dataset=dataset, external_id="v1_287")
    assert sample.extra["liscenced"] == "true"
    review(sample)
    hash_before = Sample.objects.get(pk=sample.pk).content_hash

    item = items["v1_287"]
    item["imagesource"] = "assessmentday (2024 edition)"
    item["difficulty"] = {"level": 3, "tags": ["algebra", "prices"], "timed": True}
    del item["liscenced"]
    (folder / "dataset.json").write_text(json.dumps(items), encoding="utf-8")
    job = run_import(dataset, "logicvista", folder)
    assert (job.imported, job.updated, job.unchanged, job.rejected) == (0, 1, 1, 0)

    sample.refresh_from_db()
    assert sample.extra["imagesource"] == "assessmentday (2024 edition)"
    assert sample.extra["difficulty"] == {
        "level": 3,
        "tags": ["algebra", "prices"],
        "timed": True,
    }
    assert "liscenced" not in sample.extra
    assert sample.status == SampleStatus.VERIFIED
    assert sample.content_hash != hash_before
    last = SampleRevision.objects.filter(sample=sample).latest("number")
    assert last.source == ChangeSource.IMPORT
    assert last.before == {
        "extra": {"imagesource": "assessmentday", "liscenced": "true"},
    }
    assert last.after == {
        "extra": {
            "imagesource": "assessmentday (2024 edition)",
            "difficulty": {"level": 3, "tags": ["algebra", "prices"], "timed": True},
        }
    }
    page = Client()
    page.force_login(lead)
    html = page.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert "custom field “liscenced”" in html and "(removed)" in html
    again = run_import(dataset, "logicvista", folder)
    assert (again.updated, again.unchanged) == (0, 2)


@needs_logicvista
def test_defect_4_reimport_updates_an_asset_licence(tmp_path: Path) -> None:
    """Imported first under a wrong licence, the real LogicVista items imported again under
    their own (Apache-2.0) are updated: their images carry the new licence, and the history
    says which licence it was."""
    folder, _items = _logicvista_source(tmp_path)
    dataset = dataset_for("logicvista", name="logicvista")
    assert run_import(dataset, "logicvista", folder, licence="CC0-1.0").imported == 2
    job = run_import(dataset, "logicvista", folder, licence="Apache-2.0")
    assert (job.updated, job.unchanged) == (2, 0)
    for sample in Sample.objects.filter(dataset=dataset):
        assert sample.media_links.get().asset.licence == "Apache-2.0"
        last = SampleRevision.objects.filter(sample=sample).latest("number")
        assert (last.before, last.after) == ({"licence": ["CC0-1.0"]}, {"licence": ["Apache-2.0"]})
    again = run_import(dataset, "logicvista", folder, licence="Apache-2.0")
    assert (again.updated, again.unchanged) == (0, 2)


def test_an_unchanged_reimport_decodes_no_image_and_a_changed_one_checks_its_new_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files stored already are not decoded again (their asset's fields stand); a row whose
    image changed has the new image decoded and a damaged one refused, as on a first import."""
    from annotation import media_checks
    from tests.annotation.imports_support import b64, truncated_png

    records = [mmooc_record(n) for n in range(4)]
    dataset, path = imported_file(tmp_path, *records)
    decoded: list[int] = []
    inspect = media_checks.inspect_image

    def counting(data: bytes, **limits: Any) -> Any:
        decoded.append(len(data))
        return inspect(data, **limits)

    monkeypatch.setattr(media_checks, "inspect_image", counting)
    job = run_import(dataset, "mmooc", path)
    assert (job.unchanged, job.updated, job.rejected, decoded) == (4, 0, 0, [])

    records[1] = mmooc_record(1, image=b64(truncated_png()))
    records[2] = mmooc_record(2, image=mmooc_record(9)["image"])
    job = run_import(dataset, "mmooc", write_lines(tmp_path / "changed.jsonl", records))
    assert (job.unchanged, job.updated, job.rejected) == (2, 1, 1), job.message
    assert len(decoded) == 2
    [error] = job.row_errors.all()
    assert error.external_id == "mm-1" and "truncated or damaged" in error.message


@pytest.mark.django_db(transaction=True)
def test_a_forked_reader_skips_the_decoding_of_stored_files_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a forked reader, the importing process's own lookup (on a connection of its reader
    thread) tells the reader which files are stored: an unchanged re-import's chunks bring no
    decoded file."""
    from annotation.imports import reader
    from annotation.imports.pipeline import CHUNK_ROWS, ImportRun

    monkeypatch.setattr(reader, "PARALLEL_MIN_ROWS", 0)
    records = [mmooc_record(n) for n in range(CHUNK_ROWS + 3)]
    dataset, path = imported_file(tmp_path, *records)
    decoded: list[int] = []
    process = ImportRun.process

    def spying(run: ImportRun, chunk: Any) -> None:
        decoded.append(len(chunk.media))
        process(run, chunk)

    monkeypatch.setattr(ImportRun, "process", spying)
    job = run_import(dataset, "mmooc", path)
    assert (job.unchanged, job.rejected, decoded) == (CHUNK_ROWS + 3, 0, [0, 0])
