"""Label Studio in and out (annotation.formats.labelstudio, annotation.imports.labelstudio and
the release writer): a real Label Studio 1.23.2 export (made by bench/labelstudio_roundtrip.py
against a running instance, kept in docs/formats/examples/labelstudio/) with two annotators'
annotations and a model's predictions becomes samples, reviews and verdicts; this site's
release in the labelstudio format re-imports into a new dataset with the same labels."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.formats import labelstudio as ls
from annotation.formats.records import FormatError, ParsedSample
from annotation.imports import services as import_services
from annotation.imports.jobs import import_stored_job_create, import_upload_store
from annotation.models import Dataset, ImportJob, ImportJobStatus, ImportKind, Sample, SampleStatus
from annotation.snapshots import services as snapshot_services
from annotation.snapshots.exports.records import LABEL_FIELD_NAMES
from judging.models import Verdict
from review.models import Review
from tests.annotation.factories import mmooc_dataset

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "formats" / "examples" / "labelstudio"
EXPORT = EXAMPLES / "export.json"
IDS_ONLY = EXAMPLES / "export-ids-only.json"


def run_import(dataset: Dataset, path: Path, mapping: ls.LsMapping) -> ImportJob:
    with open(path, "rb") as handle:
        source, name = import_upload_store(SimpleUploadedFile(path.name, handle.read()))
    job = import_stored_job_create(
        dataset=dataset,
        kind=ImportKind.SAMPLES,
        format="labelstudio",
        source=source,
        source_name=name,
        options=mapping.as_options(),
    )
    done = import_services.import_job_run(job_id=job.pk)
    assert done is not None
    return done


def guessed(path: Path) -> ls.LsMapping:
    return ls.mapping_guess(ls.read_tasks(path)).guess


def test_the_export_is_read_as_label_studio_wrote_it() -> None:
    """Tasks with data, two annotators' results (e-mails expanded) and full predictions; the
    guessed mapping names the sample fields' data keys and the label controls."""
    tasks = ls.read_tasks(EXPORT)
    assert len(tasks) == 4
    guess = ls.mapping_guess(tasks)
    assert guess.annotators == ["ann1@example.org", "ann2@example.org"]
    assert (guess.annotations, guess.cancelled, guess.predictions) == (8, 0, 4)
    assert guess.model_versions == ["gpt-4o-prelabel"]
    assert guess.guess.data == {
        "external_id": "question_id",
        "image": "image",
        "question": "question",
        "reference_answer": "reference_answer",
        "explanation": "reasoning",
    }
    assert guess.guess.controls == {
        "answerability_group": "answerability_group",
        "category_code": "category_code",
    }
    first = tasks[0].annotations[0]
    assert ls.labels(first.result, guess.guess)["answerability_group"] == "ooc"


def test_annotations_by_two_people_import_as_reviews(lead: Any) -> None:
    """Each completed annotation is its annotator's review (users created inactive by
    e-mail); agreeing pairs verify the sample with their labels, the disagreeing one waits
    for adjudication; predictions are the answerability verdicts of 'Label Studio <model>';
    importing the export again makes no second review."""
    dataset = mmooc_dataset()
    done = run_import(dataset, EXPORT, guessed(EXPORT))
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    assert done.imported == 4
    assert "8 reviews made from Label Studio annotations" in done.message
    assert "4 verdicts made from Label Studio predictions" in done.message
    users = get_user_model().objects.filter(email__in=["ann1@example.org", "ann2@example.org"])
    assert sorted((u.username, u.is_active, u.has_usable_password()) for u in users) == [
        ("ann1", False, False),
        ("ann2", False, False),
    ]
    assert Review.objects.filter(dataset_id=dataset.pk).count() == 8
    statuses = dict(Sample.objects.filter(dataset=dataset).values_list("external_id", "status"))
    assert statuses == {
        "ls-0": SampleStatus.VERIFIED,
        "ls-1": SampleStatus.VERIFIED,
        "ls-2": SampleStatus.VERIFIED,
        "ls-3": SampleStatus.NEEDS_ADJUDICATION,
    }
    verified = Sample.objects.get(dataset=dataset, external_id="ls-1")
    assert (verified.answerability_group, verified.category_code) == ("shifted_ic", "MP")
    assert verified.reference_answer == "Red" and verified.explanation == "The car is red."
    assert verified.media.count() == 1
    votes = dict(
        Verdict.objects.filter(judge__name="Label Studio gpt-4o-prelabel").values_list(
            "sample__external_id", "label"
        )
    )
    assert votes == {
        "ls-0": "unanswerable",
        "ls-1": "answerable",
        "ls-2": "unanswerable",
        "ls-3": "answerable",
    }
    again = run_import(dataset, EXPORT, guessed(EXPORT))
    assert again.status == ImportJobStatus.SUCCEEDED, again.message
    assert "0 reviews made from Label Studio annotations (8 already imported)" in again.message
    assert Review.objects.filter(dataset_id=dataset.pk).count() == 8


def test_an_export_with_ids_only_names_its_annotators_by_id() -> None:
    """Label Studio's plain export gives annotators as ids and predictions as ids: users
    labelstudio-<id> are made, and the job says the predictions could not be imported."""
    dataset = mmooc_dataset()
    done = run_import(dataset, IDS_ONLY, guessed(IDS_ONLY))
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    assert "4 predictions were exported as ids only" in done.message
    names = set(
        Review.objects.filter(dataset_id=dataset.pk).values_list("reviewer__username", flat=True)
    )
    assert names == {"labelstudio-2", "labelstudio-3"}


def test_a_mapping_that_leaves_a_required_field_empty_imports_nothing(lead: Any) -> None:
    """The page refuses the mapping, naming the field; a job given one all the same fails
    with the reason and stores no sample."""
    dataset = mmooc_dataset()
    client = Client()
    client.force_login(lead)
    url = reverse("annotation:labelstudio_import", args=[dataset.pk])
    page = client.post(url, {"file": SimpleUploadedFile("export.json", EXPORT.read_bytes())})
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="labelstudio-mapping"' in body and "ann2@example.org" in body
    token = page.context["mapping_form"].initial["token"]
    mapping = {f"data_{k}": v for k, v in guessed(EXPORT).data.items()}
    mapping["data_reference_answer"] = ""
    refused = client.post(
        reverse("annotation:labelstudio_import_confirm", args=[dataset.pk]),
        {"token": token, **mapping},
    )
    assert refused.status_code == 400
    assert "every sample needs one" in refused.content.decode()
    assert not dataset.import_jobs.exists()
    broken = ls.LsMapping({"question": "question"}, {})
    done = run_import(dataset, EXPORT, broken)
    assert done.status == ImportJobStatus.FAILED
    assert "reference_answer" in done.message
    assert not Sample.objects.filter(dataset=dataset).exists()
    mapping["data_reference_answer"] = "reference_answer"
    started = client.post(
        reverse("annotation:labelstudio_import_confirm", args=[dataset.pk]),
        {"token": token, **mapping},
    )
    assert started.status_code == 302 and started["Location"].startswith("/imports/")


def test_a_task_missing_a_mapped_value_is_rejected_with_its_reason() -> None:
    """A task whose mapped question is empty is one rejected row; the others go in."""
    tasks = json.loads(EXPORT.read_text())
    tasks[1]["data"]["question"] = ""
    mapping = guessed(EXPORT)
    rows = list(ls.iter_labelstudio_tasks(tasks, mapping))
    assert [type(r).__name__ for r in rows] == [
        "ParsedSample",
        "RowError",
        "ParsedSample",
        "ParsedSample",
    ]
    assert "leaves question empty" in rows[1].message  # type: ignore[union-attr]
    with pytest.raises(FormatError, match="leaves question, reference_answer empty"):
        list(ls.iter_labelstudio(EXPORT, ls.LsMapping({}, {})))


def test_other_json_is_not_a_label_studio_export(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"a": 1}')
    with pytest.raises(FormatError, match="a JSON list of tasks"):
        ls.read_tasks(path)


def _release(dataset: Dataset, tmp_path: Path) -> tuple[list[dict[str, Any]], str]:
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="labelstudio", queue=False
    )
    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert built is not None and built.status == "succeeded", built and built.message
    zipped = tmp_path / "release.zip"
    with default_storage.open(built.file.name, "rb") as handle:
        zipped.write_bytes(handle.read())
    with zipfile.ZipFile(zipped) as archive:
        names = archive.namelist()
        assert {"labelstudio.json", "label_config.xml", "manifest.json"} <= set(names)
        tasks = json.loads(archive.read("labelstudio.json"))
        config = archive.read("label_config.xml").decode()
    (tmp_path / "labelstudio.json").write_text(json.dumps(tasks))
    return tasks, config


def _labels(dataset: Dataset) -> dict[str, dict[str, Any]]:
    fields = sorted(LABEL_FIELD_NAMES - {"source_dataset"})
    return {
        s.external_id: {name: getattr(s, name) for name in fields}
        for s in Sample.objects.filter(dataset=dataset, status=SampleStatus.VERIFIED)
    }


def test_the_release_re_imports_with_the_same_verified_labels(tmp_path: Path) -> None:
    """Label Studio release of the verified samples (labels as each task's annotation), read
    back into a new dataset by the release's own mapping: the same verified labels."""
    source = mmooc_dataset()
    run_import(source, EXPORT, guessed(EXPORT))
    tasks, config = _release(source, tmp_path)
    assert len(tasks) == 3
    assert '<Choices name="answerability_group"' in config and 'value="shifted_ic"' in config
    first = tasks[0]
    assert first["data"]["image"].startswith("data:image/png;base64,")
    result = {r["from_name"]: r["value"] for r in first["annotations"][0]["result"]}
    assert result["review"] == {"choices": ["accept"]}
    target = mmooc_dataset()
    done = run_import(target, tmp_path / "labelstudio.json", ls.release_mapping())
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    assert done.imported == 3
    # The release's annotation (one, by the importing lead) is one review; the labels are
    # the samples' own values, so nothing differs.
    imported = {
        s.external_id: {
            name: getattr(s, name) for name in sorted(LABEL_FIELD_NAMES - {"source_dataset"})
        }
        for s in Sample.objects.filter(dataset=target)
    }
    assert imported == _labels(source)


def _as_stored(dataset: Dataset) -> dict[str, Any]:
    return {
        s.external_id: (
            {name: getattr(s, name) for name in sorted(LABEL_FIELD_NAMES)},
            s.extra,
            s.options,
            list(s.media_links.values_list("role", "position", "asset__sha256", "asset__licence")),
        )
        for s in Sample.objects.filter(dataset=dataset)
    }


def test_the_release_imports_by_its_own_mapping_when_none_is_given(tmp_path: Path) -> None:
    """An import of this site's Label Studio release given no mapping (as the import command
    or the API starts one) reads it by the release's own mapping: the same samples, labels,
    custom fields and media as with that mapping given. Before, it failed with "the mapping
    leaves question, reference_answer empty"."""
    source = mmooc_dataset()
    run_import(source, EXPORT, guessed(EXPORT))
    _release(source, tmp_path)
    release = tmp_path / "labelstudio.json"
    unmapped = mmooc_dataset()
    done = run_import(unmapped, release, ls.LsMapping({}, {}))
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    assert (done.imported, done.rejected) == (3, 0)
    mapped = mmooc_dataset()
    run_import(mapped, release, ls.release_mapping())
    assert len(_as_stored(unmapped)) == 3
    assert _as_stored(unmapped) == _as_stored(mapped)
    fields = sorted(LABEL_FIELD_NAMES - {"source_dataset"})
    imported = {
        s.external_id: {name: getattr(s, name) for name in fields}
        for s in Sample.objects.filter(dataset=unmapped)
    }
    assert imported == _labels(source)


def test_only_the_site_s_release_falls_back_to_its_own_mapping(tmp_path: Path) -> None:
    """The fallback needs the release's data keys in every task and no mapping given: a
    Label Studio export of another project is still refused without one, and a mapping
    given is the one used."""
    source = mmooc_dataset()
    run_import(source, EXPORT, guessed(EXPORT))
    tasks = ls.tasks_from_document(_release(source, tmp_path)[0])
    assert ls.is_release(tasks)
    assert ls.mapping_for(tasks, ls.LsMapping({}, {})) == ls.release_mapping()
    given = ls.LsMapping({"question": "question", "reference_answer": "explanation"}, {})
    assert ls.mapping_for(tasks, given) == given
    foreign = ls.read_tasks(EXPORT)
    assert not ls.is_release(foreign)
    assert ls.mapping_for(foreign, ls.LsMapping({}, {})) == ls.LsMapping({}, {})
    del tasks[1].data["options_text"]
    assert not ls.is_release(tasks)
    assert not ls.is_release([])


def test_the_release_task_carries_every_field_image_licence_and_custom_field() -> None:
    """A release task read back by the release's mapping gives the sample whole: every label
    field (pipeline, source, generator models), further images in order, each image's
    licence, the source URL and nested custom fields, and no Label Studio task id or
    display text as custom data (it has no task id of Label Studio's)."""
    first, second = b"\x89PNG first", b"\x89PNG second"
    custom = {"meta": {"tags": ["a", 1], "note": None}, "count": 3, "number_as_text": "3"}
    task = ls.export_task(
        external_id="s1",
        fields={
            "question": "Which one?",
            "options": [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}],
            "reference_answer": "B",
            "question_format": "mcq",
            "pipeline": "human_designed",
            "source_dataset": "MMOOC",
            "generator_models": ["gpt-4o"],
        },
        image=("image/png", first),
        more_images=[("image/png", second)],
        media=[
            {"role": "image", "position": 0, "licence": "CC-BY-4.0"},
            {"role": "image", "position": 1, "licence": "CC0-1.0"},
        ],
        source_url="https://example.org/s1",
        extra=custom,
        meta={"status": "verified", "revision": 1, "content_hash": "abc"},
    )
    (parsed,) = ls.iter_labelstudio_tasks(json.loads(json.dumps([task])), ls.release_mapping())
    assert isinstance(parsed, ParsedSample)
    assert (parsed.pipeline, parsed.source_dataset, parsed.generator_models) == (
        "human_designed",
        "MMOOC",
        ["gpt-4o"],
    )
    assert [(m.position, m.data, m.licence) for m in parsed.media] == [
        (0, first, "CC-BY-4.0"),
        (1, second, "CC0-1.0"),
    ]
    assert parsed.source_url == "https://example.org/s1"
    assert parsed.extra == custom
    # A task exported by Label Studio has its id: kept as where the sample came from.
    (again,) = ls.iter_labelstudio_tasks([{**task, "id": 7}], ls.release_mapping())
    assert isinstance(again, ParsedSample) and again.extra == {**custom, "labelstudio_task": "7"}


def test_a_server_path_import_keeps_the_label_studio_mapping() -> None:
    """The mapping given to a server-path (command or API) import reaches the reader; before,
    the job dropped it and every Label Studio import so failed with "leaves question empty"."""
    job = import_services.import_job_create(
        dataset=mmooc_dataset(),
        format="labelstudio",
        source_kind="server_path",
        source=str(EXPORT),
        options={**guessed(EXPORT).as_options(), "file": ""},
        trusted=True,
        queue=False,
    )
    assert job.options == guessed(EXPORT).as_options()
    done = import_services.import_job_run(job_id=job.pk)
    assert done is not None and done.status == ImportJobStatus.SUCCEEDED, done and done.message
