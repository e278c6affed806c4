"""What a form page shows once its work is done (review/views.py, judging/audit/views.py):
coming back to a submitted review, adjudication or audit rating shows that it was submitted,
never a live form; a form posted again changes nothing; required fields say so."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Sample, SampleRevision, SampleStatus
from judging.audit import services as audit_services
from judging.models import AuditItem
from review.models import Outcome
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.review.factories import logicvista_dataset, submit
from tests.support.html import attribute, element, text

pytestmark = pytest.mark.django_db


def _client(user: Any, language: str = "en") -> Client:
    client = Client(headers={"accept-language": language})
    client.force_login(user)
    return client


def _disputed() -> Sample:
    """A sample one reviewer accepted and another rejected: it waits for adjudication."""
    dataset = logicvista_dataset(1)
    sample = Sample.objects.get(dataset=dataset)
    submit(UserFactory.create(), sample)
    submit(UserFactory.create(), Sample.objects.get(pk=sample.pk), "reject")
    sample = Sample.objects.select_related("dataset").get(pk=sample.pk)
    assert sample.status == SampleStatus.NEEDS_ADJUDICATION
    return sample


def _form(page: str, sample: Sample) -> dict[str, str]:
    """The adjudication form as the page shows it, with a decision and a note."""
    revision = attribute(element(page, "input", name="revision"), "value")
    return {
        "decision": "accept",
        "note": "Checked against the source.",
        "revision": revision,
        "value_answerability_group": sample.answerability_group,
        "value_category_code": sample.category_code,
        "value_scenario": sample.scenario,
        "value_reference_answer": sample.reference_answer,
        "value_explanation": sample.explanation,
    }


@pytest.mark.parametrize(("language", "marker"), [("en", "(required)"), ("zh-hans", "（必填）")])
def test_the_adjudication_note_is_labelled_required(lead: Any, language: str, marker: str) -> None:
    """The note's label says it is required, in the reader's language, and the textarea
    carries the required attribute; optional fields say nothing."""
    sample = _disputed()
    page = _client(lead, language).get(reverse("review:adjudicate", args=[sample.pk]))
    html = page.content.decode()
    assert marker in text(element(html, "label", for_="id_note"))
    assert element(html, "textarea", name="note", required=True)
    assert marker not in text(element(html, "label", for_="id_reject_reason"))


def test_an_adjudicated_sample_shows_its_decision_and_a_second_post_changes_nothing(
    lead: Any,
) -> None:
    """After adjudicating, the form page (as Back would load it: never cached) shows the
    decision and a link onward; the same form posted again is refused with a clear message
    and writes no second revision or outcome; ?again=1 opens the form to change it."""
    sample = _disputed()
    client = _client(lead)
    url = reverse("review:adjudicate", args=[sample.pk])
    shown = client.get(url)
    assert "no-store" in shown["Cache-Control"]
    form = _form(shown.content.decode(), sample)
    assert client.post(url, form).status_code == 302
    revisions = SampleRevision.objects.filter(sample=sample).count()
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.VERIFIED

    again = client.post(url, form)
    assert again.status_code == 409
    html = again.content.decode()
    assert "already adjudicated; your form was not saved again" in html
    assert 'data-testid="already-adjudicated"' in html and 'name="note"' not in html
    assert SampleRevision.objects.filter(sample=sample).count() == revisions
    assert Outcome.objects.filter(sample=sample).count() == 1

    back = client.get(url)
    assert back.status_code == 200 and "no-store" in back["Cache-Control"]
    page = back.content.decode()
    assert 'data-testid="already-adjudicated"' in page and 'name="note"' not in page
    assert reverse("review:adjudication_list", args=[sample.dataset_id]) in page
    assert 'name="note"' in client.get(url + "?again=1").content.decode()


def test_the_workbench_of_a_submitted_review_is_never_cached_and_links_onward(
    annotator: Any,
) -> None:
    """Once reviewed (also once the sample is settled), the workbench shows the submitted
    review and a button to the next sample, with no form; the page is never cached."""
    dataset = logicvista_dataset(1, k=1, members=[annotator])
    sample = Sample.objects.get(dataset=dataset)
    client = _client(annotator)
    url = reverse("review:workbench", args=[sample.pk])
    assert "no-store" in client.get(url)["Cache-Control"]
    submit(annotator, sample)
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.VERIFIED  # k = 1: settled
    page = client.get(url)
    html = page.content.decode()
    assert "no-store" in page["Cache-Control"]
    assert 'data-testid="already-submitted"' in html and 'id="review-form"' not in html
    assert reverse("review:next", args=[dataset.pk]) in html
    assert "?amend=1" not in html  # settled: nothing to amend
    assert 'id="review-form"' not in client.get(url + "?amend=1").content.decode()


def test_a_rated_audit_item_shows_that_it_was_rated_without_a_form(auditor: Any) -> None:
    """The rating page of an item the auditor rated says so and offers the next item; its
    fields are marked required while it is still to rate."""
    dataset, _ = af.scoring_dataset(n_samples=3)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=2)
    lease = audit_services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    client = _client(auditor)
    url = reverse("judging:audit_rate", args=[lease.item_id])
    before = client.get(url)
    assert "no-store" in before["Cache-Control"]
    assert 'id="audit-form"' in before.content.decode()
    assert element(
        before.content.decode(),
        "input",
        type="radio",
        name="answer_score",
        value="1",
        required=True,
    )
    item = AuditItem.objects.select_related("audit_set").get(pk=lease.item_id)
    audit_services.audit_rating_submit(
        auditor=auditor, item=item, submission_uuid=uuid.uuid4(), **af.rubric_for("scoring")
    )
    html = client.get(url).content.decode()
    assert 'data-testid="already-rated"' in html and 'id="audit-form"' not in html
    assert reverse("judging:audit_next", args=[audit_set.pk]) in html


def test_a_form_for_a_sample_changed_meanwhile_is_shown_again_not_applied(lead: Any) -> None:
    """When the sample changed after the form was shown (not by an adjudication), posting it
    writes nothing and shows the form again, as the sample is now, with the reason."""
    sample = _disputed()
    client = _client(lead)
    url = reverse("review:adjudicate", args=[sample.pk])
    form = _form(client.get(url).content.decode(), sample)
    Sample.objects.filter(pk=sample.pk).update(revision=sample.revision + 1)
    response = client.post(url, form)
    html = response.content.decode()
    assert response.status_code == 200
    assert "The sample changed since this form was opened; check it again." in html
    assert element(html, "input", name="revision", value=str(sample.revision + 1))
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.NEEDS_ADJUDICATION
    assert not Outcome.objects.filter(sample=sample, adjudicated=True).exists()
