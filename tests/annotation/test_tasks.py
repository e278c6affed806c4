"""The import tasks run a job in the language of whoever started it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.utils import translation

from annotation.models import ImportRowError
from annotation.tasks import run_import_job
from tests.annotation.imports_support import dataset_for, import_job_of, mmooc_record, write_lines

pytestmark = pytest.mark.django_db
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("language", ["zh-hans", "en"])
def test_an_import_writes_its_reasons_in_the_language_it_was_started_in(
    tmp_path: Path, language: str
) -> None:
    """A lead reading Chinese who starts an import reads its row reasons in Chinese on the job
    page, although the worker runs with the site's default language."""
    dataset = dataset_for("mmooc", "mmooc")
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2, answer="Z")])
    with translation.override(language):
        job = import_job_of(dataset, "mmooc", path)
    assert job.language == language
    with translation.override("en"):
        run_import_job(job.pk)
    (reason,) = ImportRowError.objects.filter(job=job).values_list("message", flat=True)
    assert bool(CJK.search(reason)) == (language == "zh-hans"), reason
    assert translation.get_language() != "zh-hans"  # the worker's own language is back
