"""The review pages: who may open them, what they show, and fixed query counts."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import NoteKey, Sample, SampleStatus
from review import services
from review.models import Review, ReviewSettings, Slot
from review.queue import services as queue_services
from review.queue.assignments import samples_assign
from tests.annotation.factories import UserFactory
from tests.review.factories import open_queue, review_dataset, submit, trimodal_pair
from tests.support.html import attribute, element, elements, text
from tests.support.http import redirect_url

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _disputed(dataset: Any) -> None:
    for sample in Sample.objects.filter(dataset=dataset).select_related("dataset"):
        submit(UserFactory.create(), sample)
        submit(
            UserFactory.create(),
            Sample.objects.select_related("dataset").get(pk=sample.pk),
            "reject",
        )


def _queries(client: Client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("page", ["review:queue", "review:progress", "review:adjudication_list"])
def test_dataset_pages_run_a_fixed_number_of_queries(lead: Any, page: str) -> None:
    """Queue, progress and adjudication pages cost the same queries for 2 or 8 samples."""
    counts = []
    for size in (2, 8):
        dataset = review_dataset(size)
        _disputed(dataset)
        client = _client(lead)
        counts.append(_queries(client, reverse(page, args=[dataset.pk])))
    assert counts[0] == counts[1], counts


def test_workbench_runs_a_fixed_number_of_queries(lead: Any) -> None:
    """The workbench costs the same queries whatever the number of comments and reviews."""
    counts = []
    for comments in (1, 6):
        dataset = review_dataset(1, blind=False)
        sample = Sample.objects.select_related("dataset").get(dataset=dataset)
        for i in range(comments):
            services.comment_create(sample=sample, author=lead, text=f"c{i}")
        submit(UserFactory.create(), sample)
        counts.append(_queries(_client(lead), reverse("review:workbench", args=[sample.pk])))
    assert counts[0] == counts[1], counts


def test_start_reviewing_opens_the_next_sample(annotator: Any) -> None:
    """ "Start reviewing" leases a sample and opens its workbench; then says nothing is left."""
    dataset = review_dataset(1, members=[annotator])
    client = _client(annotator)
    response = client.post(reverse("review:next", args=[dataset.pk]))
    sample = Sample.objects.get(dataset=dataset)
    assert redirect_url(response) == reverse("review:workbench", args=[sample.pk])
    page = client.get(redirect_url(response))
    assert page.status_code == 200
    assert b"review-config" in page.content and b"Submit and next" in page.content
    submit(annotator, Sample.objects.select_related("dataset").get(pk=sample.pk))
    response = client.post(reverse("review:next", args=[dataset.pk]), follow=True)
    assert b"Nothing is left" in response.content
    assert (
        client.post(reverse("review:next", args=[dataset.pk]), {"sample": "x"}).status_code == 404
    )


def test_trimodal_workbench_shows_pair_audio_and_no_inline_media(lead: Any) -> None:
    """The tri-modal form shows the pair side by side and streams audio by URL, and judge
    votes only when hints are on and review is not blind."""
    unsafe, safe = trimodal_pair()
    annotation_services.sample_set_note(
        sample_ids=[unsafe.pk],
        key=NoteKey.JUDGE_VOTES,
        values={unsafe.pk: [{"judge": "gpt-4o", "label": "unsafe", "category": None}]},
    )
    annotator = UserFactory.create(role="annotator")
    open_queue(unsafe.dataset, hints=False, members=[annotator])
    page = _client(annotator).get(reverse("review:workbench", args=[unsafe.pk])).content.decode()
    assert safe.external_id in page and "differ minimally" in page
    assert 'id="waveform"' in page and "base64" not in page
    assert "gpt-4o" not in page
    queue_services.review_settings_update(
        dataset=unsafe.dataset, overlap=2, blind=True, show_judge_hints=True, lease_seconds=900
    )
    page = _client(annotator).get(reverse("review:workbench", args=[unsafe.pk])).content.decode()
    assert "gpt-4o" not in page  # blind review hides the votes even with hints on
    queue_services.review_settings_update(
        dataset=unsafe.dataset, overlap=2, blind=False, show_judge_hints=True, lease_seconds=900
    )
    page = _client(annotator).get(reverse("review:workbench", args=[unsafe.pk])).content.decode()
    assert "gpt-4o" in page


def test_lead_pages_are_for_leads(annotator: Any, lead: Any) -> None:
    """Annotators get 403 on adjudication and settings; leads adjudicate with a note."""
    dataset = review_dataset(1, members=[annotator])
    _disputed(dataset)
    sample = Sample.objects.get(dataset=dataset)
    assert sample.status == SampleStatus.NEEDS_ADJUDICATION
    client = _client(annotator)
    assert client.get(reverse("review:adjudication_list", args=[dataset.pk])).status_code == 403
    assert client.get(reverse("review:adjudicate", args=[sample.pk])).status_code == 403
    assert client.post(reverse("review:settings", args=[dataset.pk])).status_code == 403
    lead_client = _client(lead)
    page = lead_client.get(reverse("review:adjudicate", args=[sample.pk]))
    assert page.status_code == 200 and b"Reviews side by side" in page.content
    response = lead_client.post(
        reverse("review:adjudicate", args=[sample.pk]),
        {
            "decision": "accept",
            "note": "Answerable after all.",
            "value_answerability_group": "ooc",
            "value_category_code": "VFP",
            "value_scenario": "coarse_perception",
            "value_reference_answer": "C",
            "value_explanation": "No car.",
        },
    )
    assert response.status_code == 302
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.VERIFIED


def test_lead_saves_settings_and_fills_the_queue(lead: Any) -> None:
    """The settings form saves k and lease minutes; bad values come back as messages."""
    dataset = review_dataset(2)
    client = _client(lead)
    form = {"overlap": "3", "blind": "on", "lease_minutes": "5"}
    client.post(reverse("review:settings", args=[dataset.pk]), form)
    saved = ReviewSettings.objects.get(dataset=dataset)
    assert (saved.overlap, saved.lease_seconds, saved.show_judge_hints) == (3, 300, False)
    assert Slot.objects.filter(dataset=dataset).count() == 6
    response = client.post(
        reverse("review:settings", args=[dataset.pk]), {**form, "overlap": "99"}, follow=True
    )
    assert response.status_code == 200
    assert ReviewSettings.objects.get(dataset=dataset).overlap == 3
    assert client.post(reverse("review:fill", args=[dataset.pk])).status_code == 302


def test_the_review_form_posts_without_the_script(annotator: Any) -> None:
    """Without JavaScript the workbench form posts: the review is saved with only what the
    reviewer changed, and the next sample opens; posted again (same submission id) nothing
    is added; bad input goes back to the form with the reason and writes nothing."""
    dataset = review_dataset(2, k=1, members=[annotator])
    client = _client(annotator)
    first = client.post(reverse("review:next", args=[dataset.pk]))
    sample_id = int(redirect_url(first).rstrip("/").rsplit("/", 1)[1])
    page = client.get(reverse("review:workbench", args=[sample_id])).content.decode()
    url = reverse("review:submit", args=[sample_id])
    assert f'action="{url}"' in page
    sample = Sample.objects.get(pk=sample_id)

    bad = client.post(url, {"client_uuid": "not-a-uuid", "decision": "maybe", "clarity": "9"})
    assert redirect_url(bad) == reverse("review:workbench", args=[sample_id])
    shown = client.get(reverse("review:workbench", args=[sample_id])).content.decode()
    assert "Decision" in shown and "Clarity" in shown
    assert not Review.objects.filter(sample_id=sample_id).exists()

    form = {
        "client_uuid": "3f1c1a0e-0000-4000-8000-000000000001",
        "decision": "accept",
        "clarity": "4",
        "image_aligned": "",
        "values.category_code": sample.category_code,
        "values.reference_answer": "Zebra",
        "note": "fine",
    }
    response = client.post(url, form)
    other = Slot.objects.exclude(sample_id=sample_id).get(dataset=dataset)
    assert redirect_url(response) == reverse("review:workbench", args=[other.sample_id])
    again = client.post(url, form)
    assert again.status_code == 302
    review = Review.objects.get(sample_id=sample_id)
    assert (review.decision, review.clarity, review.note) == ("accept", 4, "fine")
    assert review.values == {"reference_answer": "Zebra"}
    assert client.post(reverse("review:submit", args=[999999]), form).status_code == 404


def test_the_settings_form_sets_the_thresholds_that_flag_reviewers(lead: Any) -> None:
    """The form takes the accuracy in percent; out-of-range values are refused with a message."""
    dataset = review_dataset(1)
    client = _client(lead)
    form = {"overlap": "2", "blind": "on", "lease_minutes": "5"}
    url = reverse("review:settings", args=[dataset.pk])
    client.post(url, {**form, "min_gold_accuracy_percent": "65", "min_gold_items": "8"})
    saved = ReviewSettings.objects.get(dataset=dataset)
    assert (saved.min_gold_accuracy, saved.min_gold_items) == (0.65, 8)
    response = client.post(url, {**form, "min_gold_accuracy_percent": "120"}, follow=True)
    assert "less than or equal to 100" in response.content.decode()
    assert ReviewSettings.objects.get(dataset=dataset).min_gold_accuracy == 0.65


def test_the_workbench_shows_the_datasets_instructions_rendered(annotator: Any) -> None:
    """The dataset's Markdown instructions stand above the sample, collapsible, with any HTML
    of theirs as text; a dataset without instructions shows no empty box."""
    dataset = review_dataset(1, members=[annotator])
    sample = Sample.objects.get(dataset=dataset)
    client = _client(annotator)
    url = reverse("review:workbench", args=[sample.pk])
    assert b'id="instructions"' not in client.get(url).content
    annotation_services.dataset_set_instructions(
        dataset=dataset, instructions="Refuse when **unsure**.\n\n<img src=x onerror=alert(1)>"
    )
    page = client.get(url).content.decode()
    box = page[page.index('<details class="instructions card"') : page.index('class="workbench')]
    assert "<summary>Instructions for reviewers</summary>" in box
    assert "<strong>unsure</strong>" in box
    assert "<img" not in box and "&lt;img src=x" in box


def test_an_auditor_is_offered_no_review_work(auditor: Any, annotator: Any) -> None:
    """An auditor who does not annotate sees no "My review work" column, no "My reviews"
    link and no Review link (the review pages refuse them); an annotator sees all three."""
    dataset = review_dataset(2)
    annotation_services.dataset_add_member(
        dataset=dataset, user=auditor, roles=frozenset({"auditor"})
    )
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    for user, shown in ((auditor, False), (annotator, True)):
        client = _client(user)
        listing = client.get(reverse("annotation:dataset_list")).content.decode()
        detail = client.get(reverse("annotation:dataset_detail", args=[dataset.pk]))
        assert ("My review work" in listing) is shown
        assert (reverse("review:mine") in listing) is shown
        assert (reverse("review:queue", args=[dataset.pk]) in listing) is shown
        assert ('id="link-review"' in detail.content.decode()) is shown


def test_review_work_shows_only_on_datasets_one_annotates_in(annotator: Any) -> None:
    """Annotating in one dataset and auditing in another, the column counts the first only."""
    from review.work import dataset_list_work

    reviewed, audited = review_dataset(2), review_dataset(2)
    annotation_services.dataset_add_member(dataset=reviewed, user=annotator)
    annotation_services.dataset_add_member(
        dataset=audited, user=annotator, roles=frozenset({"auditor"})
    )
    work = dataset_list_work(user=annotator, datasets=[reviewed, audited])
    assert set(work) == {reviewed.pk}


def _reviewed_and_judged(annotator: Any, *, blind: bool) -> Sample:
    """A sample the annotator reviewed beside another reviewer, with a model's response
    scored by a judge and the judge's answerability vote."""
    from tests.judging.factories import JudgeFactory, bulk_responses
    from tests.judging.test_selectors import score, vote

    dataset = review_dataset(1, k=2, members=[annotator], blind=blind)
    sample = Sample.objects.select_related("dataset").get(dataset=dataset)
    submit(annotator, sample, note="my own note")
    submit(UserFactory.create(username="co-reviewer"), sample, "reject", note="their note")
    judge = JudgeFactory.create(name="secret-judge")
    vote(judge, sample, "answerable")
    (response,) = bulk_responses([sample], ["some-model"])
    score(judge, response, 1, 0.5)
    return sample


def test_a_blind_annotator_sees_only_their_own_review_and_no_judge(annotator: Any) -> None:
    """On a blind dataset, the sample page shows the annotator their own review and neither
    another reviewer's nor any judge's verdict or model response; adjudication is refused."""
    sample = _reviewed_and_judged(annotator, blind=True)
    client = _client(annotator)
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    reviews = element(html, "section", id="reviews-panel")
    assert [
        attribute(row, "data-reviewer") for row in elements(reviews, "tr", data_reviewer=True)
    ] == [annotator.username]
    assert "my own note" in text(reviews)
    for hidden in ("co-reviewer", "their note", "secret-judge", "some-model", 'id="judging-panel"'):
        assert hidden not in html, hidden
    assert client.get(reverse("review:adjudicate", args=[sample.pk])).status_code == 403


def test_an_annotator_sees_the_others_reviews_without_blind_review_but_no_judge(
    annotator: Any,
) -> None:
    """Without blind review the annotator sees both reviews side by side; judges' votes and
    the models' responses stay for leads."""
    sample = _reviewed_and_judged(annotator, blind=False)
    html = _client(annotator).get(reverse("annotation:sample_detail", args=[sample.pk])).content
    page = html.decode()
    reviews = element(page, "section", id="reviews-panel")
    shown = {attribute(row, "data-reviewer") for row in elements(reviews, "tr", data_reviewer=True)}
    assert shown == {annotator.username, "co-reviewer"} and "their note" in text(reviews)
    assert "secret-judge" not in page and "some-model" not in page


def test_the_sample_page_tells_a_lead_whom_the_sample_is_assigned_to(
    lead: Any, annotator: Any
) -> None:
    """A lead sees each assignee and whether they can still take the sample (the one served
    it no longer can); an annotator sees no such card."""
    other = UserFactory.create(role="annotator")
    dataset = review_dataset(1, members=[annotator, other])
    sample = Sample.objects.get(dataset=dataset)
    samples_assign(
        dataset=dataset,
        sample_ids=[sample.pk],
        assignees=[annotator.username, other.username],
        by=lead,
    )
    queue_services.slot_claim(dataset=dataset, reviewer=annotator)
    url = reverse("annotation:sample_detail", args=[sample.pk])
    panel = element(_client(lead).get(url).content.decode(), id="assignments-panel")
    rows = {
        text(row).split(" ")[0]: text(row)
        for row in elements(panel, "tr", data_testid="assignment")
    }
    assert set(rows) == {annotator.username, other.username}
    assert "Served it" in rows[annotator.username]
    assert "Can still take it" in rows[other.username]
    assert lead.username in rows[other.username]
    page = _client(annotator).get(url).content.decode()
    assert 'id="assignments-panel"' not in page
