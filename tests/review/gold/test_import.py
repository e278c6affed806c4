"""Gold items by import: rows flagged ``gold`` become gold items once verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation import services as annotation_services
from annotation.formats.jsonl import write_jsonl
from annotation.models import Sample, SampleStatus
from review.models import GoldItem
from tests.annotation.factories import UserFactory
from tests.annotation.imports_support import dataset_for, run_import, yes_no_sample
from tests.review.factories import open_queue, submit

pytestmark = pytest.mark.django_db


def _export(path: Path, gold: dict[str, bool]) -> Path:
    samples = [
        yes_no_sample(n, name, extra={"gold": flag} if flag else {})
        for n, (name, flag) in enumerate(gold.items(), start=1)
    ]
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(samples, handle)
    return path


def test_a_flagged_sample_becomes_gold_when_reviewers_verify_it(tmp_path: Path) -> None:
    """Imported samples are not verified: the flag waits until the review settles them."""
    dataset = dataset_for("jsonl", "mmooc")
    run_import(dataset, "jsonl", _export(tmp_path / "e.jsonl", {"g-1": True, "n-1": False}))
    assert not GoldItem.objects.exists()
    annotation_services.samples_send_to_review(
        dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=None
    )
    open_queue(dataset, k=1)
    reviewer = UserFactory.create()
    for sample in Sample.objects.filter(dataset=dataset):
        assert submit(reviewer, sample).settled_status == SampleStatus.VERIFIED
    gold = GoldItem.objects.get()
    assert gold.sample.external_id == "g-1"
    assert gold.expected["category_code"] == "MP" and gold.expected["decision"] == "accept"


def test_a_flagged_verified_sample_becomes_gold_at_the_end_of_the_import(tmp_path: Path) -> None:
    """Flagging verified samples by importing the export again with the key."""
    dataset = dataset_for("jsonl", "mmooc")
    path = _export(tmp_path / "e.jsonl", {"a": False, "b": False})
    run_import(dataset, "jsonl", path)
    for sample in Sample.objects.filter(dataset=dataset):
        annotation_services.sample_set_status(sample=sample, status=SampleStatus.VERIFIED, by=None)
    run_import(dataset, "jsonl", _export(path, {"a": True, "b": False}))
    assert list(GoldItem.objects.values_list("sample__external_id", flat=True)) == ["a"]
