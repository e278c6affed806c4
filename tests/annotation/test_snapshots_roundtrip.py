"""The site's own TSV export reads back through its VLMEvalKit import, open-ended items
included (annotation/snapshots/exports/tsv.py against annotation/formats/vlmevalkit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import SampleStatus
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.annotation.test_snapshots import build, download, fingerprint, import_with_service

pytestmark = pytest.mark.django_db


def test_a_tsv_export_of_open_ended_items_imports_back_unchanged(tmp_path: Path) -> None:
    """Yes/no and free-answer items (no options) and a multiple-choice item, with custom
    fields, exported as TSV and imported into a new dataset give back the same samples."""
    source = mmooc_dataset(name="open-ended")
    common = {"status": SampleStatus.VERIFIED, "options": [], "source_dataset": "MMOOC"}
    mmooc_sample(
        source,
        question="Is the dog asleep?",
        question_format="yesno",
        reference_answer="no",
        answerability_group="shifted_ic",
        category_code="MP",
        scenario="math",
        extra={"hint": "Look at its eyes."},
        **common,
    )
    mmooc_sample(
        source,
        question="Which breed is the dog?",
        question_format="vqa",
        reference_answer="A beagle, probably.\nOr a basset.",
        explanation="",
        answerability_group="shifted_ic",
        category_code="PA",
        scenario="fine_grained_perception",
        split="test",
        **common,
    )
    mmooc_sample(source, status=SampleStatus.VERIFIED, extra={"difficulty": 3})
    path = download(build(source, "open", "tsv"), tmp_path)
    target = mmooc_dataset(name="open-ended-back")
    import_with_service(target, path, "vlmevalkit")
    assert fingerprint(target) == fingerprint(source)
    extras = list(target.samples.values_list("extra", flat=True))
    assert len(extras) == 3 and {} in extras
    assert {"hint": "Look at its eyes."} in extras and {"difficulty": "3"} in extras
