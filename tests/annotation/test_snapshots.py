"""Release snapshots (annotation/snapshots/services.py and annotation/snapshots/selectors.py):
what a filter selects, the manifest and its diff, takedowns, bounded queries per chunk, the
review trail, and readable failures (the round trips through each format: test_snapshots_roundtrip).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation import services
from annotation.imports import services as import_services
from annotation.models import (
    ChangeSource,
    Dataset,
    DatasetKind,
    ImportSourceKind,
    JobStatus,
    NoteKey,
    Sample,
    SampleStatus,
    Snapshot,
    SnapshotContent,
    SnapshotEntry,
)
from annotation.snapshots import selectors
from annotation.snapshots import services as snapshot_services
from annotation.snapshots.exports.records import LABEL_FIELD_NAMES
from tests.annotation.factories import (
    image_asset,
    mmooc_dataset,
    mmooc_sample,
)

pytestmark = pytest.mark.django_db


def verified(dataset: Dataset, **overrides: Any) -> Sample:
    return mmooc_sample(dataset, status=SampleStatus.VERIFIED, **overrides)


def build(dataset: Dataset, name: str, fmt: str = "jsonl", **kwargs: Any) -> Snapshot:
    chunk_size = kwargs.pop("chunk_size", 1000)
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name=name, format=fmt, queue=False, **kwargs
    )
    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk, chunk_size=chunk_size)
    assert built is not None
    assert built.status == JobStatus.SUCCEEDED, built.message
    return built


def download(snapshot: Snapshot, folder: Path) -> Path:
    """The stored release copied out of the media storage."""
    target = folder / snapshot.file.name.rsplit("/", 1)[-1]
    with default_storage.open(snapshot.file.name, "rb") as handle:
        target.write_bytes(handle.read())
    return Path(target)


def entry_ids(snapshot: Snapshot) -> set[str]:
    return set(
        SnapshotEntry.objects.filter(snapshot=snapshot).values_list("external_id", flat=True)
    )


def fingerprint(dataset: Dataset) -> dict[str, Any]:
    """Every sample's labels, media (role, position, sha256) and pair, by external id."""
    samples = Sample.objects.filter(dataset=dataset).select_related("pair")
    return {
        s.external_id: (
            {name: getattr(s, name) for name in services.LABEL_FIELDS},
            sorted(s.media_links.values_list("role", "position", "asset__sha256")),
            s.pair.external_id if s.pair else "",
        )
        for s in samples
    }


def import_with_service(dataset: Dataset, path: Path, fmt: str, file: str = "") -> None:
    """Import a release with the site's own import service, as a lead would."""
    job = import_services.import_job_create(
        dataset=dataset,
        format=fmt,
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(path),
        options={"file": file} if file else {},
        trusted=True,
        queue=False,
    )
    done = import_services.import_job_run(job_id=job.pk)
    assert done is not None
    assert done.status == JobStatus.SUCCEEDED, done.message
    assert done.rejected == 0, list(done.row_errors.values_list("message", flat=True))


def mmooc_mixture(dataset: Dataset) -> None:
    """Verified OOC and shifted-IC samples of every question format, plus ones not exported."""
    verified(dataset, source_dataset="MMOOC", generator_models=["gpt-4o", "o1"])
    verified(
        dataset,
        source_dataset="MMOOC",
        question_format="yesno",
        options=[],
        reference_answer="no",
        answerability_group="shifted_ic",
        category_code="MP",
        scenario="math",
        pipeline="human_designed",
        split="test",
    )
    verified(
        dataset,
        source_dataset="MMOOC",
        question="Which breed is the dog?",
        question_format="vqa",
        options=[],
        reference_answer="A beagle",
        answerability_group="shifted_ic",
        category_code="PA",
        scenario="fine_grained_perception",
        pipeline="mllm_generated",
    )
    mmooc_sample(dataset, status=SampleStatus.PENDING_REVIEW)
    mmooc_sample(dataset, status=SampleStatus.REMOVED)


def test_export_field_lists_match_the_sample_label_fields() -> None:
    """The pure writers know exactly the label fields the model keeps (none lost, none extra)."""
    assert set(services.LABEL_FIELDS) == LABEL_FIELD_NAMES


def test_default_filter_exports_verified_samples_and_never_removed_ones(lead: Any) -> None:
    """Without a filter only verified samples go in; removed ones never, whatever is asked."""
    dataset = mmooc_dataset()
    keep = verified(dataset)
    mmooc_sample(dataset, status=SampleStatus.PENDING_REVIEW)
    mmooc_sample(dataset, status=SampleStatus.REMOVED)
    snapshot = build(dataset, "v1", by=lead)
    assert entry_ids(snapshot) == {keep.external_id}
    assert snapshot.filter == {"statuses": ["verified"]}
    assert snapshot.total == snapshot.done == 1
    with pytest.raises(ValidationError, match="cannot be exported: removed"):
        snapshot_services.snapshot_create(
            dataset=dataset, name="v2", format="jsonl", filter={"statuses": ["removed"]}
        )


def test_filter_selects_by_group_category_format_and_scenario() -> None:
    """Each filter key narrows the verified samples; keys combine with AND."""
    dataset = mmooc_dataset()
    mmooc_mixture(dataset)
    by = {
        "groups": (["shifted_ic"], 2),
        "categories": (["VFP", "PA"], 2),
        "formats": (["yesno"], 1),
        "scenarios": (["math", "coarse_perception"], 2),
    }
    for key, (codes, expected) in by.items():
        snapshot = build(dataset, f"by-{key}", filter={key: codes})
        assert len(entry_ids(snapshot)) == expected, key
    both = build(dataset, "both", filter={"groups": ["shifted_ic"], "formats": ["vqa"]})
    assert len(entry_ids(both)) == 1
    statuses = build(dataset, "all", filter={"statuses": ["verified", "pending_review"]})
    assert len(entry_ids(statuses)) == 4


def test_bad_requests_are_refused_with_readable_messages() -> None:
    """Unknown codes, formats, filter keys, duplicate names and tri-modal TSVs are refused."""
    dataset = mmooc_dataset()
    build(dataset, "v1")
    cases = [
        ({"name": "x", "format": "jsonl", "filter": {"categories": ["NOPE"]}}, "NOPE"),
        ({"name": "x", "format": "csv"}, "Unknown export format"),
        ({"name": "x", "format": "jsonl", "filter": {"colour": ["red"]}}, "colour"),
        ({"name": "v1", "format": "parquet"}, "already has a snapshot"),
        ({"name": " ", "format": "jsonl"}, "needs a name"),
    ]
    for kwargs, text in cases:
        with pytest.raises(ValidationError, match=text):
            snapshot_services.snapshot_create(dataset=dataset, **kwargs)  # type: ignore[arg-type]
    trimodal = services.dataset_create(name="tri", kind=DatasetKind.TRIMODAL, preset="mcbench")
    for fmt in ("tsv", "mmooc"):
        with pytest.raises(ValidationError, match="image questions only"):
            snapshot_services.snapshot_create(dataset=trimodal, name="t", format=fmt)


def test_manifest_counts_hashes_and_filter(tmp_path: Path, lead: Any) -> None:
    """The manifest counts per category, format and scenario, records the filter and app
    version, and its sha256 values match the stored bytes, inside the zip and of the zip."""
    dataset = mmooc_dataset()
    mmooc_mixture(dataset)
    snapshot = build(dataset, "v1", "hf", by=lead)
    manifest = snapshot.manifest
    assert manifest["counts"]["samples"] == 3
    assert manifest["counts"]["category"] == {"MP": 1, "PA": 1, "VFP": 1}
    assert manifest["counts"]["format"] == {"mcq": 1, "vqa": 1, "yesno": 1}
    assert manifest["counts"]["scenario"]["math"] == 1
    assert manifest["filter"] == {"statuses": ["verified"]}
    assert manifest["app_version"]
    assert manifest["snapshot"]["created_by"] == lead.username
    path = download(snapshot, tmp_path)
    assert manifest["artifact"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    with zipfile.ZipFile(path) as archive:
        inner = json.loads(archive.read("manifest.json"))
        for name, info in manifest["files"].items():
            assert hashlib.sha256(archive.read(name)).hexdigest() == info["sha256"], name
    assert inner["files"] == manifest["files"] and inner["counts"] == manifest["counts"]
    stored = snapshot.file.name.rsplit("/", 1)[0] + "/manifest.json"
    with default_storage.open(stored, "rb") as handle:
        assert json.loads(handle.read()) == manifest


def test_diff_against_the_previous_snapshot_and_takedowns(lead: Any) -> None:
    """Added, removed and changed samples are counted; a takedown shows in the next diff and
    in no later snapshot."""
    dataset = mmooc_dataset()
    first, second, third = verified(dataset), verified(dataset), verified(dataset)
    v1 = build(dataset, "v1")
    assert v1.manifest["previous"] is None and v1.manifest["diff"] is None
    services.sample_update(
        sample=second,
        changes={"explanation": "Corrected."},
        by=lead,
        source=ChangeSource.EDIT,
        reason="typo",
    )
    services.sample_set_status(
        sample=third, status=SampleStatus.REMOVED, by=lead, reason="takedown"
    )
    fourth = verified(dataset)
    v2 = build(dataset, "v2", "parquet")
    diff = v2.manifest["diff"]
    assert v2.previous == v1 and v2.manifest["previous"]["name"] == "v1"
    assert (diff["added"], diff["removed"], diff["changed"], diff["unchanged"]) == (1, 1, 1, 1)
    assert diff["taken_down"] == [third.external_id]
    assert diff["examples"]["added"] == [fourth.external_id]
    assert diff["examples"]["changed"] == [second.external_id]
    assert third.external_id not in entry_ids(v2)
    v3 = build(dataset, "v3")
    assert third.external_id not in entry_ids(v3)
    assert v3.manifest["diff"]["taken_down"] == [] and v3.manifest["diff"]["removed"] == 0
    assert entry_ids(v3) == {first.external_id, second.external_id, fourth.external_id}


def test_contents_are_kept_once_per_content_hash(lead: Any) -> None:
    """Each exported content is kept once, whatever the number of snapshots holding it, with
    the label fields, custom fields and media its hash stands for."""
    dataset = mmooc_dataset()
    first, second = verified(dataset), verified(dataset, extra={"difficulty": "hard"})
    build(dataset, "v1")
    build(dataset, "v2")
    assert SnapshotContent.objects.count() == 2
    services.sample_update(
        sample=first, changes={"explanation": "New."}, by=lead, source=ChangeSource.EDIT
    )
    build(dataset, "v3")
    assert SnapshotContent.objects.count() == 3
    first.refresh_from_db()
    second.refresh_from_db()
    fields = SnapshotContent.objects.get(content_hash=second.content_hash).fields
    assert fields["extra.difficulty"] == "hard" and fields["question"] == second.question
    assert fields["media"] == [f"image/0: {second.media_links.get().asset.sha256}"]
    assert SnapshotContent.objects.get(content_hash=first.content_hash).fields["explanation"] == (
        "New."
    )


def test_comparison_with_any_earlier_snapshot_lists_ids_and_changed_fields(lead: Any) -> None:
    """A snapshot compared with one two builds back shows what was added, removed, taken down
    and changed since then, each changed sample with its fields old → new."""
    dataset = mmooc_dataset()
    kept, edited, dropped = verified(dataset), verified(dataset), verified(dataset)
    v1 = build(dataset, "v1")
    services.sample_update(
        sample=edited,
        changes={"explanation": "Corrected.", "split": "dev"},
        by=lead,
        source=ChangeSource.EDIT,
    )
    v2 = build(dataset, "v2")
    services.sample_set_status(sample=dropped, status=SampleStatus.REMOVED, by=lead, reason="x")
    added = verified(dataset)
    v3 = build(dataset, "v3")
    result = selectors.snapshot_compare(snapshot=v3, against=v1)
    diff = result.diff
    assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (1, 1, 1, 1)
    assert diff.added_ids == [added.external_id]
    assert diff.removed_ids == diff.taken_down_ids == [dropped.external_id]
    (changed,) = result.changed
    assert changed.external_id == edited.external_id
    assert changed.fields is not None
    assert [(f.name, f.old, f.new) for f in changed.fields] == [
        ("explanation", "There is no car in the image.", "Corrected."),
        ("split", "", "dev"),
    ]
    assert kept.external_id not in {c.external_id for c in result.changed}
    backwards = selectors.snapshot_compare(snapshot=v1, against=v3)
    assert backwards.diff.removed_ids == [added.external_id]
    assert selectors.snapshot_compare(snapshot=v2, against=v2).diff.empty


def test_changed_samples_are_paged_in_a_fixed_number_of_queries(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Both entry streams and the page's contents: three queries, however many samples."""
    dataset = mmooc_dataset()
    samples = [verified(dataset) for _ in range(7)]
    v1 = build(dataset, "v1")
    for sample in samples:
        services.sample_update(
            sample=sample, changes={"explanation": "Edited."}, by=lead, source=ChangeSource.EDIT
        )
    v2 = build(dataset, "v2")
    with django_assert_num_queries(3):
        first = selectors.snapshot_compare(snapshot=v2, against=v1, page=1, page_size=3)
    with django_assert_num_queries(3):
        last = selectors.snapshot_compare(snapshot=v2, against=v1, page=3, page_size=3)
    assert (first.pages, len(first.changed), len(last.changed)) == (3, 3, 1)
    ordered = sorted(s.external_id for s in samples)
    assert [c.external_id for c in [*first.changed, *last.changed]] == [*ordered[:3], ordered[-1]]


_ids = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
    min_size=1,
    max_size=6,
)
_entry_sets = st.dictionaries(_ids, st.sampled_from(["h1", "h2"]), max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=_entry_sets, new=_entry_sets)
def test_comparison_in_the_database_matches_the_sets_for_any_ids(
    old: dict[str, str], new: dict[str, str]
) -> None:
    """The database streams entries in the order the merge expects whatever the characters
    of the ids (accents, CJK, symbols, upper and lower case): the comparison agrees with
    plain set arithmetic."""
    dataset = mmooc_dataset()
    snapshots = [
        Snapshot.objects.create(
            dataset=dataset, name=name, format="jsonl", status=JobStatus.SUCCEEDED
        )
        for name in ("old", "new")
    ]
    for snapshot, entries in zip(snapshots, (old, new), strict=True):
        SnapshotEntry.objects.bulk_create(
            SnapshotEntry(snapshot=snapshot, external_id=i, content_hash=h)
            for i, h in entries.items()
        )
    result = selectors.snapshot_compare(snapshot=snapshots[1], against=snapshots[0])
    diff = result.diff
    assert diff.added_ids == sorted(new.keys() - old.keys())
    assert diff.removed_ids == sorted(old.keys() - new.keys())
    changed = sorted(i for i in old.keys() & new.keys() if old[i] != new[i])
    assert [c.external_id for c in result.changed] == changed
    assert diff.unchanged == len(old.keys() & new.keys()) - len(changed)


def test_a_snapshot_built_before_contents_were_kept_shows_changes_without_fields(
    lead: Any,
) -> None:
    dataset = mmooc_dataset()
    sample = verified(dataset)
    v1 = build(dataset, "v1")
    SnapshotContent.objects.all().delete()
    services.sample_update(
        sample=sample, changes={"explanation": "Edited."}, by=lead, source=ChangeSource.EDIT
    )
    v2 = build(dataset, "v2")
    (changed,) = selectors.snapshot_compare(snapshot=v2, against=v1).changed
    assert changed.external_id == sample.external_id and changed.fields is None


def test_export_runs_a_fixed_number_of_queries_per_chunk() -> None:
    """Samples, media links, history and notes load in four queries per chunk, plus one for the
    chunk's contents and one for progress (its entries go by COPY, which Django does not count):
    no query per sample, however many there are."""
    dataset = mmooc_dataset()
    for _ in range(4):
        verified(dataset)
    build(dataset, "base")  # so that both measured builds compute a diff

    def queries(name: str) -> int:
        snapshot = snapshot_services.snapshot_create(
            dataset=dataset, name=name, format="parquet", queue=False
        )
        with CaptureQueriesContext(connection) as captured:
            snapshot_services.snapshot_build(snapshot_id=snapshot.pk, chunk_size=2)
        assert SnapshotEntry.objects.filter(snapshot=snapshot).count() == dataset.samples.count()
        return len(captured.captured_queries)

    two_chunks = queries("a")
    for _ in range(4):
        verified(dataset)
    four_chunks = queries("b")
    assert four_chunks - two_chunks == 2 * 6
    # Fixed part: the claim (a savepoint, the locked read, the update, its release), load,
    # clear entries, progress reset, count, total, the empty last chunk, previous snapshot,
    # the diff's two streams of entries, the manifest's sections from other apps (review's
    # excluded reviewers), the final fenced update, the webhook endpoints that want
    # snapshot.built, the reload.
    assert two_chunks == 17 + 2 * 6


def test_building_twice_changes_nothing(tmp_path: Path) -> None:
    """A second delivery of the build task leaves a finished snapshot and its file alone."""
    dataset = mmooc_dataset()
    verified(dataset)
    snapshot = build(dataset, "v1")
    before = download(snapshot, tmp_path).read_bytes()
    again = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert again is not None and again.status == JobStatus.SUCCEEDED
    assert again.finished_at == snapshot.finished_at
    assert download(again, tmp_path).read_bytes() == before
    assert SnapshotEntry.objects.filter(snapshot=snapshot).count() == 1
    assert snapshot_services.snapshot_build(snapshot_id=10**9) is None


def test_a_missing_media_file_fails_the_snapshot_readably() -> None:
    """A broken storage fails the snapshot with a message and leaves no entries behind."""
    dataset = mmooc_dataset()
    sample = verified(dataset)
    default_storage.delete(sample.media_links.get().asset.file.name)
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="jsonl", queue=False
    )
    failed = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert failed is not None and failed.status == JobStatus.FAILED
    assert failed.message.startswith("The export failed:")
    assert not SnapshotEntry.objects.filter(snapshot=snapshot).exists()
    assert snapshot_services.snapshot_build(snapshot_id=snapshot.pk).status == JobStatus.FAILED  # type: ignore[union-attr]


def test_jsonl_carries_the_review_trail(tmp_path: Path, lead: Any, annotator: Any) -> None:
    """Each line names the reviewers, agreement, adjudication and judge votes of its sample."""
    dataset = mmooc_dataset()
    sample = verified(dataset, media=[("image", image_asset(colour=(9, 9, 9)))])
    services.sample_update(
        sample=sample,
        changes={"explanation": "Checked."},
        by=annotator,
        source=ChangeSource.REVIEW,
    )
    services.sample_update(
        sample=sample,
        changes={"reference_answer": "B"},
        by=lead,
        source=ChangeSource.ADJUDICATION,
    )
    services.sample_set_note(
        sample_ids=[sample.pk], key=NoteKey.REVIEW_SUMMARY, values={sample.pk: {"agreement": 0.5}}
    )
    services.sample_set_note(
        sample_ids=[sample.pk], key=NoteKey.JUDGE_VOTES, values={sample.pk: {"gpt-4o": "refuse"}}
    )
    snapshot = build(dataset, "v1")
    line = json.loads(download(snapshot, tmp_path).read_text().splitlines()[0])
    review = line["review"]
    assert review["reviewers"] == sorted([annotator.username, lead.username])
    assert review["agreement"] == 0.5 and review["adjudicated"] is True
    assert review["judge_votes"] == {"gpt-4o": "refuse"}
    assert review["revisions"] == 3
    assert "review_summary" not in line["extra"] and "judge_votes" not in line["extra"]
    assert line["reference_answer"] == "B" and line["explanation"] == "Checked."
    assert line["content_hash"] == Sample.objects.get(pk=sample.pk).content_hash
