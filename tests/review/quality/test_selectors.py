"""The Reviewers page's figures on a small dataset, against values worked out by hand."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from annotation.models import Dataset, Sample, SampleStatus
from core import roles
from review import selectors, services
from review.gold import services as gold
from review.models import GoldItem
from review.quality import reviewers as quality
from review.quality.selectors import quality_fields, reviewer_report
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.review.factories import blind_settings, logicvista_dataset, review_dataset, submit
from tests.review.gold.test_services import AlwaysGold

pytestmark = pytest.mark.django_db


def _fresh(sample: Sample) -> Sample:
    return Sample.objects.select_related("dataset").get(pk=sample.pk)


def gold_settings(dataset: Dataset, k: int) -> None:
    """k reviews per sample, and gold items served at 50 %."""
    blind_settings(dataset, k=k, gold_rate=0.5)


def answer_gold(reviewer: Any, dataset: Dataset, decision: str = "accept", **kw: Any) -> None:
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert lease is not None and lease.gold
    if decision == "reject":
        kw["reject_reason"] = "invalid"
    services.review_submit(
        reviewer=reviewer,
        sample=_fresh(Sample(pk=lease.sample_id)),
        client_uuid=uuid.uuid4(),
        decision=decision,
        **kw,
    )


def build(extra_reviewers: int = 0, tag: str = "") -> dict[str, Any]:
    """Five samples, k = 2, reviewers a, b, c (and ``extra_reviewers`` more on a sixth sample):

    s1: a, b accept as is             -> verified by consensus
    s2: a accepts, b corrects to MA   -> adjudicated by the lead: accepted with MA
    s3: a rejects, c accepts          -> adjudicated by the lead: rejected
    s4: b, c accept as is             -> verified by consensus
    s5: c skips it
    gold g1, g2 (VFP): a answers g1 right and g2 with MA; b rejects g1.
    """
    dataset = review_dataset(5 + (1 if extra_reviewers else 0), k=2)
    gold_settings(dataset, 2)
    for _ in range(2):
        sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED, category_code="VFP")
        gold.gold_mark(sample=_fresh(sample), by=None)
    a, b, c = (
        UserFactory.create(username=name + tag, member_of=dataset) for name in ("ann", "bob", "cyd")
    )
    lead = UserFactory.create(role=roles.LEAD)
    answer_gold(a, dataset)
    answer_gold(a, dataset, values={"category_code": "MA"})
    answer_gold(b, dataset, "reject")
    s1, s2, s3, s4, s5 = Sample.objects.filter(dataset=dataset, status="pending_review").order_by(
        "id"
    )[:5]
    submit(a, s1, seconds_spent=10)
    submit(b, s1, seconds_spent=30)
    submit(a, s2, seconds_spent=20)
    submit(b, s2, values={"category_code": "MA"}, seconds_spent=40)
    submit(a, s3, "reject", seconds_spent=60)
    submit(c, s3, seconds_spent=5)
    submit(b, s4, seconds_spent=50)
    submit(c, s4, seconds_spent=15)
    queue_services.slot_claim(dataset=dataset, reviewer=c, sample_id=s5.pk)
    queue_services.slot_skip(sample=_fresh(s5), reviewer=c, reason="blurry")
    services.sample_adjudicate(
        sample=_fresh(s2), by=lead, decision="accept", note="MA", values={"category_code": "MA"}
    )
    services.sample_adjudicate(
        sample=_fresh(s3), by=lead, decision="reject", note="bad", reject_reason="invalid"
    )
    if extra_reviewers:
        s6 = Sample.objects.filter(dataset=dataset, status="pending_review").last()
        assert s6 is not None
        gold_settings(dataset, extra_reviewers)
        queue_services.queue_sync(dataset=dataset)
        for i in range(extra_reviewers):
            submit(UserFactory.create(username=f"x{i}", member_of=dataset), _fresh(s6))
    return {"dataset": dataset, "a": a, "b": b, "c": c, "lead": lead}


def _rows(report: Any) -> dict[str, Any]:
    return {row.username: row for row in report.rows}


def _field(row: Any, name: str) -> Any:
    return next(f for f in row.fields if f.field == name)


def test_gold_counts_are_matched_and_total_per_reviewer() -> None:
    built = build()
    counts = selectors.reviewer_gold_counts(dataset=built["dataset"])
    assert counts == {built["a"].pk: (1, 2), built["b"].pk: (0, 1)}
    assert GoldItem.objects.filter(dataset=built["dataset"]).count() == 2


def test_each_reviewers_figures_equal_the_hand_computed_values() -> None:
    """The values worked out in ``build``'s docstring, each with its n."""
    built = build()
    rows = _rows(reviewer_report(dataset=built["dataset"], user=built["lead"], n_replicates=200))
    assert set(rows) == {"ann", "bob", "cyd"}
    ann, bob, cyd = rows["ann"], rows["bob"], rows["cyd"]
    assert (ann.reviews, bob.reviews, cyd.reviews) == (3, 3, 2)
    assert (ann.gold_accuracy.value, ann.gold_accuracy.n) == (0.5, 2)
    assert (bob.gold_accuracy.value, bob.gold_accuracy.n) == (0.0, 1)
    assert cyd.gold_accuracy.n == 0 and cyd.gold_accuracy.value is None
    assert (ann.median_seconds.value, ann.median_seconds.n) == (20.0, 3)
    assert ann.reject_rate.value == pytest.approx(1 / 3) and bob.reject_rate.value == 0.0
    assert cyd.skip_rate.value == pytest.approx(1 / 3) and cyd.skip_rate.n == 3
    assert (
        _field(ann, "category_code").gold_accuracy.value,
        _field(ann, "decision").gold_accuracy.value,
    ) == (0.5, 1.0)
    # Agreement with the settled outcome: a kept VFP on s2, which the lead settled as MA.
    assert (
        _field(ann, "decision").outcome_agreement.value,
        _field(ann, "decision").outcome_agreement.n,
    ) == (1.0, 3)
    category = _field(ann, "category_code").outcome_agreement
    assert (category.value, category.n) == (0.5, 2)
    assert _field(bob, "category_code").outcome_agreement.value == 1.0
    assert (
        _field(cyd, "decision").outcome_agreement.value,
        _field(cyd, "decision").outcome_agreement.n,
    ) == (0.5, 2)
    # Cohen's kappa of ann and bob on category: ann always VFP, bob VFP then MA.
    kappas = {k.co_reviewer: k.figure for k in _field(ann, "category_code").kappas}
    assert (kappas["bob"].value, kappas["bob"].n) == (0.0, 2)
    decision_kappas = {k.co_reviewer: k.figure for k in _field(ann, "decision").kappas}
    assert decision_kappas["bob"].value is None and decision_kappas["bob"].n == 2
    # Without ann no sample keeps two decisions that differ: alpha is undefined without her.
    alpha = _field(ann, "decision").alpha_contribution
    assert (alpha.value, alpha.n) == (None, 3)


def test_a_skipped_gold_item_counts_in_the_skip_rate() -> None:
    """bob skips the gold item g2 he is served: one skip over his three reviews, his answer to
    g1 and g2; ann's two gold answers count as samples she did not skip."""
    built = build()
    lease = queue_services.slot_claim(
        dataset=built["dataset"], reviewer=built["b"], rng=AlwaysGold()
    )
    assert lease is not None and lease.gold
    queue_services.slot_skip(
        sample=_fresh(Sample(pk=lease.sample_id)), reviewer=built["b"], reason="?"
    )
    rows = _rows(reviewer_report(dataset=built["dataset"], user=built["lead"], n_replicates=50))
    assert (rows["bob"].skip_rate.value, rows["bob"].skip_rate.n) == (pytest.approx(1 / 5), 5)
    assert (rows["ann"].skip_rate.value, rows["ann"].skip_rate.n) == (0.0, 5)


def test_intervals_are_the_interval_codes_results() -> None:
    built = build()
    row = _rows(reviewer_report(dataset=built["dataset"], user=built["lead"], n_replicates=300))[
        "ann"
    ]
    assert row.reject_rate == quality.proportion([False, False, True], n_replicates=300, seed=0)
    assert row.median_seconds == quality.median([10.0, 20.0, 60.0], n_replicates=300, seed=0)


def test_a_reviewer_sees_only_their_own_row_with_co_reviewers_unnamed() -> None:
    built = build()
    report = reviewer_report(dataset=built["dataset"], user=built["a"], n_replicates=50)
    assert [row.username for row in report.rows] == ["ann"] and not report.everyone
    names = {k.co_reviewer for f in report.rows[0].fields for k in f.kappas}
    assert names and not names & {"bob", "cyd"}


def test_the_fields_follow_the_dataset_kind() -> None:
    assert quality_fields("image_question") == (
        "decision",
        "answerability_group",
        "category_code",
        "scenario",
    )
    assert quality_fields("trimodal") == (
        "decision",
        "safety_label",
        "safety_category",
        "safety_subcategory",
    )


def test_fields_no_review_gives_a_value_are_left_out(lead: Any) -> None:
    """LogicVista samples have no answerability group and no scenario."""
    dataset = logicvista_dataset(2, k=1)
    reviewer = UserFactory.create(member_of=dataset)
    for sample in Sample.objects.filter(dataset=dataset):
        submit(reviewer, sample)
    report = reviewer_report(dataset=dataset, user=lead, n_replicates=20)
    assert report.fields == ("decision", "category_code")
    assert [f.field for f in report.rows[0].fields] == ["decision", "category_code"]


def test_the_report_costs_seven_queries_whatever_the_reviewers(
    django_assert_num_queries: Any,
) -> None:
    """Seven queries (one asks for the user's roles) for three reviewers, and for seven."""
    for extra in (0, 4):
        built = build(extra, tag=str(extra))
        with django_assert_num_queries(7):
            report = reviewer_report(dataset=built["dataset"], user=built["lead"], n_replicates=20)
        assert len(report.rows) == 3 + extra
