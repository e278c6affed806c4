"""Label Studio in and out against a running Label Studio 1.23 (skipped without one): a
project exported from it imports here into reviews, and this site's Label Studio release
imports back into it with every task and its verified labels.

Set ``LABEL_STUDIO_URL`` (a local instance, see ``bench/labelstudio_roundtrip.py``),
``LABEL_STUDIO_TOKEN`` (a lead's legacy token) and ``LABEL_STUDIO_ANNOTATOR_TOKENS`` (two
annotators' tokens, comma-separated)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotation.formats import labelstudio as ls
from annotation.models import ImportJobStatus, SampleStatus
from bench.labelstudio_roundtrip import export, import_release
from review.models import Review
from tests.annotation.factories import mmooc_dataset
from tests.annotation.test_labelstudio import _release, guessed, run_import

URL = os.environ.get("LABEL_STUDIO_URL", "")
LEAD = os.environ.get("LABEL_STUDIO_TOKEN", "")
ANNOTATORS = [t for t in os.environ.get("LABEL_STUDIO_ANNOTATOR_TOKENS", "").split(",") if t]

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not (URL and LEAD and len(ANNOTATORS) >= 2), reason="no Label Studio to talk to"
    ),
]


def test_a_real_project_goes_in_and_the_release_goes_back(tmp_path: Path) -> None:
    """Export → import here (reviews by both annotators) → release → import into Label
    Studio: it stores every task with one annotation holding the verified labels."""
    path = tmp_path / "export.json"
    export(URL, LEAD, ANNOTATORS[:2], path)
    dataset = mmooc_dataset()
    done = run_import(dataset, path, guessed(path))
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    assert Review.objects.filter(dataset_id=dataset.pk).count() == 8
    verified = dataset.samples.filter(status=SampleStatus.VERIFIED).count()
    tasks, config = _release(dataset, tmp_path)
    (tmp_path / "label_config.xml").write_text(config)
    stored = import_release(URL, LEAD, tmp_path / "labelstudio.json", tmp_path / "label_config.xml")
    assert stored["import"]["task_count"] == verified == len(tasks)
    assert stored["import"]["annotation_count"] == verified
    mine = {
        t["data"]["external_id"]: ls.result_values(t["annotations"][0]["result"]) for t in tasks
    }
    theirs = {
        t["data"]["external_id"]: ls.result_values(t["annotations"][0]["result"])
        for t in stored["tasks"]
    }
    assert theirs == mine
