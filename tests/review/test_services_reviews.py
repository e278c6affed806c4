"""Review never changes what the reviewer did not change: edits, untouched accepts, values
outside the taxonomy, amendments of one's own review, and the tri-modal rules."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Sample, SampleRevision, SampleStatus
from annotation.services import LABEL_FIELDS
from review import services
from review.models import Review
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.review.factories import logicvista_dataset, open_queue, submit, trimodal_pair

pytestmark = [pytest.mark.django_db]


def _fresh(sample: Sample) -> Sample:
    return Sample.objects.select_related("dataset").get(pk=sample.pk)


def _labels(sample: Sample) -> dict[str, Any]:
    return {name: getattr(sample, name) for name in LABEL_FIELDS}


def _changed_keys(sample: Sample) -> set[str]:
    """Every key any revision after the creation changed."""
    keys: set[str] = set()
    for revision in SampleRevision.objects.filter(sample=sample, number__gt=1):
        keys |= set(revision.after)
    return keys


# What the workbench's form holds for a LogicVista sample when the reviewer touches nothing.
def _untouched_form(sample: Sample) -> dict[str, Any]:
    return {
        "answerability_group": sample.answerability_group,
        "category_code": sample.category_code,
        "scenario": sample.scenario,
        "reference_answer": sample.reference_answer,
        "explanation": sample.explanation,
    }


def test_accepting_on_a_dataset_without_terms_changes_only_the_status() -> None:
    """Two untouched accepts (one sending nothing, one sending the form as it stands) verify
    the sample and change its status only: the category and scenario stay as imported."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    before = _labels(sample)
    first = submit(UserFactory.create(), sample)
    assert first.review.values == {}
    second = submit(UserFactory.create(), _fresh(sample), values=_untouched_form(sample))
    assert second.review.values == {}
    assert second.settled_status == "verified"
    after = _fresh(sample)
    assert after.status == SampleStatus.VERIFIED
    assert _labels(after) == before
    assert after.category_code == "deductive"
    assert _changed_keys(after) == {"status"}


def test_an_untouched_accept_and_a_correction_go_to_adjudication_which_writes_only_edits(
    lead: Any,
) -> None:
    """Reviewer A accepts untouched, B corrects the category: they disagree. The lead's form
    sent back whole writes only the field the lead changed."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    before = _labels(sample)
    submit(UserFactory.create(), sample)
    result = submit(UserFactory.create(), _fresh(sample), values={"category_code": "inductive"})
    assert result.settled_status == "needs_adjudication"
    assert _labels(_fresh(sample)) == before
    services.sample_adjudicate(
        sample=_fresh(sample),
        by=lead,
        decision="accept",
        values={**_untouched_form(sample), "category_code": "inductive"},
        note="B is right: the item asks for a rule from examples.",
    )
    after = _fresh(sample)
    assert after.status == SampleStatus.VERIFIED
    assert _labels(after) == {**before, "category_code": "inductive"}
    assert _changed_keys(after) == {"status", "category_code"}


def test_agreeing_free_text_corrections_verify_with_the_correction() -> None:
    """Without terms any text is a category: two reviewers setting the same one verify it."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    for _ in range(2):
        submit(UserFactory.create(), _fresh(sample), values={"category_code": " spatial "})
    after = _fresh(sample)
    assert (after.status, after.category_code, after.scenario) == ("verified", "spatial", "")


def test_a_value_outside_the_taxonomy_is_kept_when_nobody_edits_it() -> None:
    """A category that is not (or no longer) a term survives untouched accepts."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    Sample.objects.filter(pk=sample.pk).update(category_code="RETIRED")
    open_queue(dataset, k=2)
    for _ in range(2):
        submit(UserFactory.create(), _fresh(sample), values=_untouched_form(_fresh(sample)))
    after = _fresh(sample)
    assert (after.status, after.category_code) == ("verified", "RETIRED")


def test_reviews_stored_with_every_field_are_read_as_their_edits() -> None:
    """A review stored before edits were kept alone (every field) counts only its
    differences, so it agrees with an untouched accept."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    old = submit(UserFactory.create(), sample)
    Review.objects.filter(pk=old.review.pk).update(values=_untouched_form(sample))
    assert submit(UserFactory.create(), _fresh(sample)).settled_status == "verified"
    assert _labels(_fresh(sample)) == _labels(sample)


def test_a_reviewer_amends_their_review_until_the_sample_is_settled() -> None:
    """The reviewer's own review can be changed while the sample waits for the other
    reviews; the amended edits count; once settled, amending is refused."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    a, b = UserFactory.create(), UserFactory.create()
    first = submit(a, sample).review
    with pytest.raises(services.ReviewConflict):
        services.review_amend(reviewer=b, review=first, decision="accept")
    amended = services.review_amend(
        reviewer=a,
        review=first,
        decision="accept",
        values={**_untouched_form(sample), "category_code": "inductive"},
        clarity=4,
        note="on second look it is inductive",
        seconds_spent=5,
    )
    assert amended.values == {"category_code": "inductive"}
    stored = Review.objects.get(pk=first.pk)
    assert (stored.values, stored.clarity, stored.note) == (
        {"category_code": "inductive"},
        4,
        "on second look it is inductive",
    )
    assert Review.objects.filter(sample=sample).count() == 1
    result = submit(b, _fresh(sample), values={"category_code": "inductive"})
    assert result.settled_status == "verified"
    assert _fresh(sample).category_code == "inductive"
    with pytest.raises(services.ReviewConflict, match="settled"):
        services.review_amend(reviewer=a, review=stored, decision="reject", reject_reason="invalid")
    assert Review.objects.get(pk=first.pk).decision == "accept"


def test_an_amendment_is_checked_like_a_submission() -> None:
    """A rejection without a reason is refused and leaves the review as it was."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    reviewer = UserFactory.create()
    review = submit(reviewer, sample).review
    with pytest.raises(ValidationError):
        services.review_amend(reviewer=reviewer, review=review, decision="reject")
    assert Review.objects.get(pk=review.pk).decision == "accept"


def test_trimodal_review_covers_safety_category_and_subcategory() -> None:
    """Safety category and subcategory are reviewable and checked against the taxonomy."""
    unsafe, _safe = trimodal_pair()
    open_queue(unsafe.dataset, k=2)
    reviewers = [UserFactory.create(), UserFactory.create()]
    with pytest.raises(ValidationError, match="does not belong"):
        submit(reviewers[0], _fresh(unsafe), values={"safety_subcategory": "vandalism"})
    fix = {"safety_category": "property_damage", "safety_subcategory": "vandalism"}
    for reviewer in reviewers:
        submit(reviewer, _fresh(unsafe), values=fix)
    after = _fresh(unsafe)
    assert (after.status, after.safety_category, after.safety_subcategory) == (
        "verified",
        "property_damage",
        "vandalism",
    )
    assert after.predicate == unsafe.predicate


def test_relabelling_a_scenario_without_a_predicate_needs_no_predicate() -> None:
    """A safe scenario with no conditions may be labelled unsafe by its reviewers."""
    _unsafe, safe = trimodal_pair()
    Sample.objects.filter(pk=safe.pk).update(predicate=[])
    open_queue(safe.dataset, k=1)
    result = services.review_submit(
        reviewer=UserFactory.create(),
        sample=_fresh(safe),
        client_uuid=uuid.uuid4(),
        decision="accept",
        values={"safety_label": "unsafe", "predicate": []},
    )
    assert result.review.values == {"safety_label": "unsafe"}
    after = _fresh(safe)
    assert (after.status, after.safety_label, after.predicate) == ("verified", "unsafe", [])
