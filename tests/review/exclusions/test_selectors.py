"""Quality in consensus, read side: gold counts, the thresholds that flag reviewers, the
Dawid–Skene estimate on the counted reviews, and the excluded reviewers in a release manifest."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from annotation import extensions
from annotation.models import Dataset, JobStatus, Sample, SampleStatus
from annotation.snapshots import services as snapshot_services
from annotation.snapshots.exports.manifest import Tally, build_manifest
from core.leases import OPEN_SINCE
from review.exclusions import selectors as consensus_selectors
from review.exclusions import services as exclusions
from review.models import GoldAnswer, GoldItem, ReviewSettings, Slot
from review.quality.dawid_skene import dawid_skene
from review.selectors import reviewer_gold_counts
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.review.factories import blind_settings, review_dataset, submit

pytestmark = pytest.mark.django_db


def answer_gold(dataset: Dataset, reviewer: Any, results: list[bool]) -> None:
    """Record gold answers of the reviewer, right or wrong as given, one gold item each."""
    for matched in results:
        sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
        item, _ = GoldItem.objects.get_or_create(
            sample=sample, dataset=dataset, defaults={"expected": {"decision": "accept"}}
        )
        slot = Slot.objects.create(
            dataset=dataset,
            sample=sample,
            position=0,
            reviewer=reviewer,
            lease_expires_at=OPEN_SINCE,
            done=True,
            gold=True,
        )
        GoldAnswer.objects.create(
            gold_item=item,
            slot=slot,
            sample=sample,
            dataset=dataset,
            reviewer=reviewer,
            client_uuid=uuid.uuid4(),
            decision="accept",
            matched=matched,
        )


def thresholds(dataset: Dataset, accuracy: float, items: int) -> None:
    blind_settings(dataset, min_gold_accuracy=accuracy, min_gold_items=items)


def test_gold_counts_are_right_and_answered_per_reviewer() -> None:
    """(matched, answered) per reviewer id, for this dataset's gold answers only."""
    dataset, other = mmooc_dataset(), mmooc_dataset()
    x, y = UserFactory.create(), UserFactory.create()
    answer_gold(dataset, x, [True, False, True])
    answer_gold(dataset, y, [False])
    answer_gold(other, x, [False, False])
    assert reviewer_gold_counts(dataset=dataset) == {x.pk: (2, 3), y.pk: (0, 1)}


def test_thresholds_flag_the_right_reviewers() -> None:
    """Flagged: at least 4 gold answers and under 70 % right. 2/4 is flagged; 3/4 is not;
    1/3 is not (too few answers yet)."""
    dataset = mmooc_dataset()
    thresholds(dataset, 0.7, 4)
    low, fine, new = UserFactory.create(), UserFactory.create(), UserFactory.create()
    answer_gold(dataset, low, [True, True, False, False])
    answer_gold(dataset, fine, [True, True, True, False])
    answer_gold(dataset, new, [True, False, False])
    rows = {r.username: r for r in consensus_selectors.reviewer_trust(dataset=dataset)}
    assert {name for name, row in rows.items() if row.flagged} == {low.username}
    assert rows[low.username].accuracy == 0.5
    assert consensus_selectors.flagged_reviewer_ids(dataset=dataset) == {low.pk}


@pytest.mark.parametrize(
    ("accuracy", "items", "message"),
    [(1.5, 20, "between 0 and 1"), (-0.1, 20, "between 0 and 1"), (0.7, 0, "100,000")],
)
def test_invalid_thresholds_are_refused(accuracy: float, items: int, message: str) -> None:
    """Out-of-range thresholds get a message and leave the settings as they were."""
    dataset = mmooc_dataset()
    thresholds(dataset, 0.6, 10)
    with pytest.raises(ValidationError, match=message):
        thresholds(dataset, accuracy, items)
    saved = ReviewSettings.objects.get(dataset=dataset)
    assert (saved.min_gold_accuracy, saved.min_gold_items) == (0.6, 10)


def _reviewed(verdicts: list[tuple[str, str]]) -> tuple[Dataset, dict[str, Any]]:
    """Samples reviewed by pairs: each verdict pair (first, second reviewer) is one sample."""
    dataset = review_dataset(len(verdicts))
    people = {name: UserFactory.create(username=f"{name}-{uuid.uuid4().hex[:4]}") for name in "abc"}
    samples = Sample.objects.filter(dataset=dataset).select_related("dataset").order_by("pk")
    for sample, (first, second) in zip(samples, verdicts, strict=True):
        decision_a, decision_b = first.split(":")[1], second.split(":")[1]
        submit(people[first[0]], sample, decision_a)
        submit(
            people[second[0]],
            Sample.objects.select_related("dataset").get(pk=sample.pk),
            decision_b,
        )
    return dataset, people


def test_the_estimate_is_the_pure_estimator_on_the_counted_reviews() -> None:
    """The page's confusion matrices and uncertain samples are those of ``dawid_skene`` on the
    (sample, reviewer, verdict) triples of the counted reviews."""
    dataset, _people = _reviewed(
        [
            ("a:accept", "b:accept"),
            ("a:accept", "b:reject"),
            ("b:reject", "c:reject"),
            ("a:reject", "c:accept"),
            ("b:accept", "c:accept"),
        ]
    )
    estimate = consensus_selectors.consensus_estimate(dataset=dataset, threshold=0.9)
    assert estimate is not None and estimate.samples == 5
    labels, truncated = consensus_selectors.estimate_labels(dataset=dataset)
    assert not truncated and len(labels) == 10
    pure = dawid_skene(
        [(str(s), name, label) for s, name, label in labels],
        classes=consensus_selectors.CLASSES,
        max_iterations=consensus_selectors.MAX_ITERATIONS,
        tolerance=consensus_selectors.TOLERANCE,
    )
    for name, rows in estimate.reviewers:
        r = pure.reviewers.index(name)
        for j, (true, probabilities) in enumerate(rows):
            assert true == pure.classes[j]
            assert np.allclose(probabilities, pure.confusion[r, j], atol=1e-3)
    assert sorted(str(u.sample_id) for u in estimate.uncertain) == sorted(pure.uncertain(0.9))


def test_excluded_reviewers_leave_the_estimate() -> None:
    """An excluded reviewer's reviews are not counted: their samples drop under two reviews."""
    dataset, people = _reviewed([("a:accept", "b:accept"), ("b:reject", "c:reject")])
    exclusions.reviewer_exclude(dataset=dataset, reviewer=people["a"], by=people["c"])
    estimate = consensus_selectors.consensus_estimate(dataset=dataset)
    assert estimate is not None and estimate.samples == 1
    assert {name for name, _rows in estimate.reviewers} == {
        people["b"].username,
        people["c"].username,
    }


def test_no_estimate_without_two_counted_reviews() -> None:
    dataset = review_dataset(1)
    assert consensus_selectors.consensus_estimate(dataset=dataset) is None


def test_the_manifest_lists_the_excluded_reviewers(lead: Any) -> None:
    """A release built after an exclusion names the reviewer, who excluded them and why."""
    dataset, people = _reviewed([("a:accept", "b:accept")])
    exclusions.reviewer_exclude(dataset=dataset, reviewer=people["a"], by=lead, reason="gold")
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="jsonl", queue=False, by=lead
    )
    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk, chunk_size=1000)
    assert built is not None and built.status == JobStatus.SUCCEEDED, built and built.message
    (entry,) = built.manifest["excluded_reviewers"]
    assert (entry["reviewer"], entry["excluded_by"], entry["reason"]) == (
        people["a"].username,
        lead.username,
        "gold",
    )


def test_a_manifest_section_never_replaces_the_manifests_own_keys() -> None:
    """Sections come from other apps through ``annotation.extensions``; ``dataset`` stays."""
    extensions.manifest_section_register("dataset", lambda *, dataset: "overwritten")
    try:
        dataset = mmooc_dataset()
        assert extensions.manifest_sections(dataset=dataset)["excluded_reviewers"] == []
        manifest = build_manifest(
            snapshot={},
            dataset={"id": 1},
            filter={},
            app_version="x",
            tally=Tally(),
            files={},
            artifact={},
            previous=None,
            diff=None,
            sections=extensions.manifest_sections(dataset=dataset),
        )
        assert manifest["dataset"] == {"id": 1} and manifest["excluded_reviewers"] == []
    finally:
        extensions._manifest_sections.pop("dataset")
