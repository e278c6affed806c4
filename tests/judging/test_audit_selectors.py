"""The audit's reads: the sampling frame's flags, and query counts that do not grow."""

from __future__ import annotations

from typing import Any

import pytest

from judging.audit import selectors, statistics
from judging.models import AuditTask, Verdict
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af

pytestmark = pytest.mark.django_db


def test_frame_flags_disagreement_and_rare_classes() -> None:
    """Scoring: one row per judged response, disagree when the judges' first votes differ,
    rare when the response refuses; repeats do not add rows."""
    dataset, _ = af.scoring_dataset(n_samples=10, repeats=3)
    rows = selectors.audit_frame(dataset=dataset, task=AuditTask.SCORING)
    assert len(rows) == 20
    responses = {r.pk: r for r in af.ModelResponse.objects.filter(dataset=dataset)}
    for row in rows:
        assert row.response_id is not None
        assert row.item.rare == ("I cannot tell" in responses[row.response_id].response)
        votes = list(
            Verdict.objects.filter(response_id=row.response_id, repeat=0).values_list(
                "answer_score", "reasoning_score"
            )
        )
        answers = {a for a, _ in votes}
        reasons = [r for _, r in votes if r is not None]
        assert row.item.disagree == (len(answers) > 1 or max(reasons) - min(reasons) >= 0.5)


def test_answerability_frame_marks_the_unanswerable_majority_rare() -> None:
    """Answerability: rare exactly where most judges said unanswerable."""
    dataset, _ = af.answerability_dataset(n_samples=15)
    for row in selectors.audit_frame(dataset=dataset, task=AuditTask.ANSWERABILITY):
        labels = list(
            Verdict.objects.filter(sample_id=row.sample_id).values_list("label", flat=True)
        )
        assert row.item.rare == (2 * labels.count("unanswerable") >= len(labels))


@pytest.mark.parametrize("size", [10, 40])
def test_statistics_take_a_bounded_number_of_queries(
    size: int, django_assert_max_num_queries: Any
) -> None:
    """The figures cost at most six queries whatever the audit's size."""
    dataset, _ = af.scoring_dataset(n_samples=25, repeats=2)
    audit_set = af.draw(dataset, size=size, double_rating_fraction=0.2)
    af.rate_all(audit_set, [UserFactory.create(), UserFactory.create()])
    with django_assert_max_num_queries(6):
        stats = statistics.audit_statistics(audit_set=audit_set, n_replicates=50)
    assert stats["n_rated"] == size


def test_statistics_for_answerability_and_safety() -> None:
    """Label tasks give sensitivity and specificity on the refuse / unsafe class, and the
    safety task corrected scores per model."""
    for task, (dataset, _) in (
        (AuditTask.ANSWERABILITY, af.answerability_dataset(n_samples=20)),
        (AuditTask.SAFETY, af.safety_dataset(n_samples=20)),
    ):
        audit_set = af.draw(dataset, task=task, size=15)
        af.rate_all(audit_set, [UserFactory.create(), UserFactory.create()])
        stats = statistics.audit_statistics(audit_set=audit_set, n_replicates=50)
        block = stats["human_judge"][0]
        assert block["positive"] in {"unanswerable", "unsafe"}
        ensemble = block["overall"][-1]
        assert ensemble["rater"] == "ensemble"
        assert ensemble["sensitivity"] is not None and ensemble["specificity"] is not None
        assert bool(stats["corrected"]) == (task == AuditTask.SAFETY)


def test_statistics_before_any_rating_say_so() -> None:
    """Without ratings the inter-judge figures exist and a note explains the rest."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    audit_set = af.draw(dataset, size=10)
    stats = statistics.audit_statistics(audit_set=audit_set, n_replicates=50)
    assert stats["human_judge"] == [] and stats["n_rated"] == 0
    assert stats["inter_judge"] and stats["notes"]


def test_progress_counts_slots_and_auditors(django_assert_max_num_queries: Any) -> None:
    """Progress counts done slots and each auditor's ratings in two queries."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    audit_set = af.draw(dataset, size=10, double_rating_fraction=0.2)
    af.rate_all(audit_set, [UserFactory.create(username="ann"), UserFactory.create(username="bob")])
    with django_assert_max_num_queries(2):
        progress = selectors.audit_progress(audit_set=audit_set)
    assert (progress.items, progress.slots, progress.done) == (10, 12, 12)
    assert sum(a.ratings for a in progress.auditors) == 12
    assert progress.percent == 100.0


def test_calibration_is_given_per_category_as_well() -> None:
    """Each judge's calibration comes per category too, each with its n, summing to the whole."""
    dataset, _ = af.scoring_dataset(n_samples=25, repeats=3)
    audit_set = af.draw(dataset, size=30)
    af.rate_all(audit_set, [UserFactory.create(), UserFactory.create()])
    stats = statistics.audit_statistics(audit_set=audit_set, n_replicates=50)
    for judge in stats["calibration"]["judges"]:
        parts = judge["by_category"]
        assert len(parts) >= 2
        assert sum(part["ece"]["n"] for part in parts) == judge["ece"]["n"]
