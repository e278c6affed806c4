"""The format reference (judging/formats/reference.py, docs/formats.md, /formats/): made
from the readers' and writers' field lists, it fails here when a reader reads other fields
than its list says or when the committed file is stale, and every example file imports."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.formats import jsonl, labelstudio, logicvista, mmooc, trimodal, vlmevalkit
from annotation.formats import specs as sample_specs
from annotation.models import ImportJobStatus, Sample
from judging.formats import harness, responses
from judging.formats import reference as formats_reference
from judging.formats import verdicts as verdict_formats
from judging.models import ModelResponse, Verdict
from judging.services.harness import harness_import
from judging.services.responses import response_import
from judging.services.verdicts import verdict_import
from tests.annotation.imports_support import dataset_for, run_import
from tests.annotation.test_labelstudio import run_import as run_labelstudio_import

EXAMPLES = formats_reference.EXAMPLES


def test_the_committed_reference_is_what_the_code_says() -> None:
    """docs/formats.md is regenerated from the field lists; run manage.py format_reference
    when this fails."""
    assert formats_reference.REFERENCE.read_text(encoding="utf-8") == (
        formats_reference.render_markdown()
    )


def test_each_sample_reader_reads_the_fields_its_list_names() -> None:
    """The lists are held to the readers' own constants: a field a reader starts or stops
    reading fails here until the reference says so too."""
    assert sample_specs.MMOOC_SAMPLES.all_names() == mmooc._CONSUMED
    assert {n for group in mmooc.SIGNATURE for n in group} >= set(
        sample_specs.MMOOC_SAMPLES.required()
    )
    letters = set(string.ascii_uppercase)
    named = sample_specs.VLMEVALKIT_SAMPLES.all_names() - {"A, B, C, …", "<letter>"}
    assert named == vlmevalkit._CONSUMED - letters
    assert sample_specs.VLMEVALKIT_SAMPLES.required() == vlmevalkit.REQUIRED_COLUMNS
    assert {f.name: f.names for f in sample_specs.TRIMODAL_SAMPLES.fields} == trimodal.ALIASES
    assert sample_specs.LOGICVISTA_SAMPLES.all_names() - {"<key>"} == logicvista._CONSUMED
    site = sample_specs.SITE_JSONL_SAMPLES.all_names() - {"gold"}
    assert site == set(jsonl._SAMPLE_FIELDS) - {"row"}


def test_the_response_verdict_and_harness_readers_use_their_lists() -> None:
    """The response and verdict readers take their names from the lists; the harness readers'
    consumed fields are those listed."""
    spec = responses.RESPONSES_JSONL
    assert (
        spec.names("id"),
        spec.names("model"),
        spec.names("response"),
    ) == (responses.ID_FIELDS, responses.MODEL_FIELDS, responses.RESPONSE_FIELDS)
    verdict = verdict_formats.VERDICTS_JSONL
    assert verdict.names("sample_id") == ("sample_id", "id", "question_id")
    lmms = {f.name for f in harness.LMMS_EVAL_SAMPLES.fields} - {"<metric>"}
    assert lmms <= harness._LMMS_KNOWN
    evaluated = {f.name for f in harness.VLMEVALKIT_PREDICTIONS.other_fields}
    assert evaluated == {"hit", "res", "log"}
    assert set(harness.VLMEVALKIT_PREDICTIONS.required()) == {"index", "prediction"}
    description = labelstudio.LABEL_STUDIO_IMPORT.field("data.<key>").description
    assert all(name.replace("_", " ") in description for name in labelstudio.REQUIRED_DATA_FIELDS)


@pytest.mark.django_db
def test_every_example_file_imports(tmp_path: Path) -> None:
    """Each format's example imports without a rejected row: the sample examples into their
    datasets, the response, harness and verdict examples into the MMOOC example's dataset,
    Label Studio's into new ones."""
    names = formats_reference.example_paths()
    assert all(path.exists() for path in names.values()), names
    kinds = {
        "samples/mmooc.jsonl": ("mmooc", "mmooc", 4),
        "samples/vlmevalkit.tsv": ("vlmevalkit", "mmt_bench", 3),
        "samples/trimodal": ("trimodal", "mcbench", 2),
        "samples/logicvista": ("logicvista", "", 3),
        "samples/site.jsonl": ("jsonl", "mmooc", 2),
    }
    datasets = {}
    for name, (fmt, preset, rows) in kinds.items():
        dataset = dataset_for(fmt, preset)
        job = run_import(dataset, fmt, names[name])
        assert job.status == ImportJobStatus.SUCCEEDED, (name, job.message)
        assert job.imported == rows, name
        datasets[name] = dataset
    target = datasets["samples/mmooc.jsonl"]
    summary = response_import(
        dataset=target, source=names["responses/responses.jsonl"], format="jsonl"
    )
    assert (summary.imported, summary.rejected) == (4, [])
    summary = response_import(
        dataset=target, source=names["responses/GPT4-answers.json"], format="logicvista"
    )
    assert (summary.imported, summary.rejected) == (4, [])
    for name, fmt, doc_order in (
        ("lmms_eval/Qwen__Qwen2.5-VL-7B-Instruct", "lmms_eval", "position"),
        ("vlmevalkit/outputs", "vlmevalkit", ""),
    ):
        root = names[name]
        files = [
            (p.relative_to(root.parent).as_posix(), str(p))
            for p in sorted(root.rglob("*"))
            if p.is_file()
        ]
        summary = harness_import(dataset=target, files=files, format=fmt, doc_order=doc_order)
        assert summary.rejected == [], (name, summary.rejected)
        assert summary.imported >= 4, name
    assert set(
        ModelResponse.objects.filter(dataset=target).values_list("model_name", flat=True)
    ) == {
        "GPT-4o",
        "GPT4",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "InternVL3-8B",
    }
    summary = verdict_import(dataset=target, source=names["verdicts/verdicts.jsonl"])
    assert (summary.imported, summary.rejected) == (4, [])
    assert Verdict.objects.filter(judge__name="VLMEvalKit MMOOC gpt4o-mini").count() == 4
    export = dataset_for("mmooc", "mmooc", name="from-label-studio")
    mapping = labelstudio.mapping_guess(labelstudio.read_tasks(names["labelstudio/export.json"]))
    job = run_labelstudio_import(export, names["labelstudio/export.json"], mapping.guess)
    assert job.status == ImportJobStatus.SUCCEEDED, job.message
    release = dataset_for("mmooc", "mmooc", name="from-release")
    job = run_labelstudio_import(
        release, names["labelstudio/release.json"], labelstudio.release_mapping()
    )
    assert job.status == ImportJobStatus.SUCCEEDED, job.message
    assert Sample.objects.filter(dataset=release).count() == 4


@pytest.mark.django_db
def test_the_page_lists_every_format_and_is_linked_from_the_import_pages(lead: Any) -> None:
    """/formats/ shows every format with its fields and example; the sample import page,
    the judging page's upload and the Label Studio page link to it."""
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("formats"))
    assert page.status_code == 200
    body = page.content.decode()
    for spec in formats_reference.all_formats():
        assert spec.title.replace("'", "&#x27;").replace("<", "&lt;").replace(">", "&gt;") in body
    example = client.get(reverse("format_example", args=["vlmevalkit/outputs"]))
    assert example.status_code == 200 and example["Content-Type"] == "application/zip"
    assert client.get(reverse("format_example", args=["../settings.py"])).status_code == 404
    from tests.annotation.factories import mmooc_dataset

    dataset = mmooc_dataset()
    for name in (
        "annotation:dataset_import",
        "judging:dataset_judging",
        "annotation:labelstudio_import",
    ):
        html = client.get(reverse(name, args=[dataset.pk])).content.decode()
        assert reverse("formats") + "#" in html, name
