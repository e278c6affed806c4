"""The review forms of every kind of dataset, the annotator's pages (My reviews, work left,
"n of N") and the adjudication form's rule: what the lead leaves untouched is not written."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import DatasetKind, Sample, SampleRevision, SampleStatus
from annotation.services import bulk as annotation_bulk
from review.editing import TRIMODAL_FIELDS
from review.forms import AdjudicationForm, field_labels
from review.queue import services as queue_services
from review.selectors import workbench_get
from tests.annotation.factories import UserFactory, image_asset, mmooc_dataset, mmooc_sample
from tests.annotation.imports_support import (
    b64,
    dataset_for,
    mmooc_record,
    run_import,
    trimodal_record,
    write_lines,
)
from tests.conftest import SHARED_DATA, client_for
from tests.review.factories import logicvista_dataset, open_queue, submit, trimodal_pair
from tests.support.html import attribute, element, elements, has, text

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _page(user: Any, name: str, *args: Any) -> str:
    response = _client(user).get(reverse(name, args=args))
    assert response.status_code == 200
    return response.content.decode()


def _fresh(sample: Sample) -> Sample:
    return Sample.objects.select_related("dataset").get(pk=sample.pk)


def test_a_dataset_without_terms_gets_free_text_inputs_with_the_values_in_use(
    annotator: Any,
) -> None:
    """No empty drop-down: category, scenario and group are text inputs suggesting the
    values already used in the dataset."""
    dataset = logicvista_dataset(2, members=[annotator])
    sample = Sample.objects.get(dataset=dataset, external_id="v1_0")
    page = _page(annotator, "review:workbench", sample.pk)
    assert not elements(page, "select", id="f-category")
    assert not elements(page, "select", id="f-scenario")
    # the sample's own value, shown as it is
    assert element(page, "input", id="f-category", list="f-category-used", value="deductive")
    suggestions = element(page, "datalist", id="f-category-used")
    assert element(suggestions, "option", value="deductive")
    assert element(suggestions, "option", value="inductive")


def test_a_value_outside_the_taxonomy_is_shown_as_it_is_and_selected(annotator: Any) -> None:
    """A stored category that is not a term is offered as itself, selected, never blanked."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    Sample.objects.filter(pk=sample.pk).update(category_code="RETIRED")
    open_queue(dataset, members=[annotator])
    page = _page(annotator, "review:workbench", sample.pk)
    select = element(page, "select", id="f-category")
    retired = element(select, "option", value="RETIRED", selected=True)
    assert text(retired) == "RETIRED (not in the taxonomy)"
    assert not has(element(select, "option", value=""), "selected")


def test_the_adjudication_form_writes_only_what_the_lead_changed(lead: Any) -> None:
    """Posting the form as it was shown (a term-less dataset, so free-text fields) verifies
    the sample and writes nothing else; the form offers the values in use as suggestions."""
    dataset = logicvista_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    submit(UserFactory.create(), sample)
    submit(UserFactory.create(), _fresh(sample), "reject")
    page = _page(lead, "review:adjudicate", sample.pk)
    assert element(page, "input", list="terms-category_code")
    assert element(page, "datalist", id="terms-category_code")
    form = {
        "decision": "accept",
        "note": "Fine as it is.",
        "value_answerability_group": "",
        "value_category_code": "deductive",
        "value_scenario": "",
        "value_reference_answer": "A",
        "value_explanation": sample.explanation,
    }
    response = _client(lead).post(reverse("review:adjudicate", args=[sample.pk]), form)
    assert response.status_code == 302
    after = _fresh(sample)
    assert (after.status, after.category_code) == (SampleStatus.VERIFIED, "deductive")
    last = SampleRevision.objects.filter(sample=sample).order_by("number").last()
    assert last is not None and set(last.after) == {"status"}


def test_the_adjudication_form_keeps_a_value_outside_the_taxonomy() -> None:
    """The form's choice list holds the stored off-taxonomy value; untouched, no values."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    Sample.objects.filter(pk=sample.pk).update(category_code="RETIRED")
    lead = UserFactory.create(role="lead")
    bench = workbench_get(user=lead, sample_id=sample.pk)
    assert bench is not None
    initial = {f"value_{name}": getattr(bench.sample, name) for name in bench.fields}
    form = AdjudicationForm(
        {**initial, "decision": "accept", "note": "ok"},
        initial={**initial, "decision": "accept"},
        fields=bench.fields,
        term_fields=bench.term_fields,
        labels=field_labels(preset="mmooc"),
    )
    assert form.is_valid(), form.errors
    assert ("RETIRED", "RETIRED (not in the taxonomy)") in form.fields[
        "value_category_code"
    ].choices  # type: ignore[attr-defined]
    assert form.values() == {}


def test_mmt_bench_title_shows_index_category_and_meta_task(annotator: Any) -> None:
    """A VLMEvalKit sample is titled by the dataset's own index with its category and
    meta-task, and its category is shown among the fields."""
    dataset = annotation_services.dataset_create(
        name="mmt", kind=DatasetKind.IMAGE_QUESTION, preset="mmt_bench"
    )
    sample = annotation_services.sample_create(
        dataset=dataset,
        external_id="1017",
        question="How many circles?",
        question_format="mcq",
        options=[{"label": "A", "text": "1"}, {"label": "B", "text": "2"}],
        reference_answer="A",
        category_code="counting_by_category",
        scenario="visual_recognition",
        status=SampleStatus.PENDING_REVIEW,
        media=[("image", image_asset(width=300, height=100))],
    )
    open_queue(dataset, members=[annotator])
    page = _page(annotator, "review:workbench", sample.pk)
    title = text(element(page, "h1"))
    for part in ("1017", "counting_by_category", "visual_recognition"):
        assert part in title
    assert text(element(page, "dd", data_testid="category")) == "counting_by_category"
    assert "Meta-task" in page
    # The display image (a copy at least as large as the viewer, or the original), in a viewer
    # of its aspect ratio; "Full resolution" loads the original.
    asset_id = sample.media_links.get().asset_id
    viewer = element(page, class_="zoom-image")
    assert attribute(viewer, "src") == reverse("annotation:media_display", args=[asset_id])
    assert attribute(viewer, "data-full") == reverse("annotation:media_file", args=[asset_id])
    assert 'data-width="300"' in page and 'data-height="100"' in page


def test_trimodal_form_shows_safety_category_and_a_fitting_predicate_heading(
    annotator: Any,
) -> None:
    """Safety category and subcategory are shown and offered; a safe scenario's
    conditions are not titled "THEN unsafe"."""
    unsafe, safe = trimodal_pair()
    open_queue(unsafe.dataset, members=[annotator])
    page = _page(annotator, "review:workbench", unsafe.pk)
    assert element(page, "select", id="f-category", name="values.safety_category")
    assert element(page, "select", id="f-subcategory", name="values.safety_subcategory")
    assert text(element(page, "dd", data_testid="safety-category")) == "physical_harm"
    title = text(element(page, "title"))
    assert unsafe.external_id in title and "physical_harm" in title
    assert "THEN unsafe" in page
    page = _page(annotator, "review:workbench", safe.pk)
    heading = text(element(page, "dt", data_testid="predicate-heading"))
    assert "THEN unsafe" not in heading and "safe scenario" in heading


def test_adjudication_warns_when_a_pair_would_share_its_label(lead: Any) -> None:
    """A reviewer proposing the pair's label shows a warning; saving it warns again."""
    unsafe, safe = trimodal_pair()
    open_queue(unsafe.dataset, k=2)
    submit(UserFactory.create(), _fresh(unsafe), values={"safety_label": "safe"})
    submit(UserFactory.create(), _fresh(unsafe))
    assert _fresh(unsafe).status == SampleStatus.NEEDS_ADJUDICATION
    page = _page(lead, "review:adjudicate", unsafe.pk)
    assert 'data-testid="pair-warning"' in page and safe.external_id in page
    form = {
        "decision": "accept",
        "note": "The stove is off after all.",
        "value_safety_label": "safe",
        "value_safety_category": "physical_harm",
        "value_safety_subcategory": "health_hazard",
        "value_predicate": "\n".join(unsafe.predicate),
    }
    response = _client(lead).post(reverse("review:adjudicate", args=[unsafe.pk]), form, follow=True)
    assert "now both labelled" in response.content.decode()
    assert _fresh(unsafe).safety_label == "safe"


def test_adjudication_relabels_a_scenario_without_a_predicate_without_asking_for_one(
    lead: Any,
) -> None:
    """The lead turns a predicate-less safe scenario unsafe with the form as shown (predicate
    left empty): it is saved, only the label is written, and the pair warning follows."""
    unsafe, safe = trimodal_pair()
    Sample.objects.filter(pk=safe.pk).update(predicate=[])
    open_queue(safe.dataset, k=2)
    submit(UserFactory.create(), _fresh(safe), values={"safety_label": "unsafe"})
    submit(UserFactory.create(), _fresh(safe))
    page = _page(lead, "review:adjudicate", safe.pk)
    assert 'data-testid="pair-warning"' in page and unsafe.external_id in page
    form = {
        "decision": "accept",
        "note": "The speaker is asleep by the stove.",
        "value_safety_label": "unsafe",
        "value_safety_category": "physical_harm",
        "value_safety_subcategory": "health_hazard",
        "value_predicate": "",
    }
    response = _client(lead).post(reverse("review:adjudicate", args=[safe.pk]), form, follow=True)
    assert "now both labelled" in response.content.decode()
    after = _fresh(safe)
    assert (after.status, after.safety_label, after.predicate) == ("verified", "unsafe", [])
    last = SampleRevision.objects.filter(sample=safe).latest("number")
    assert set(last.after) == {"status", "safety_label"}


def test_my_reviews_lists_what_i_submitted_and_what_i_may_amend(annotator: Any) -> None:
    """Each review shows its edits; a sample still waiting can be reopened, a settled one
    cannot; the workbench then shows my review to amend."""
    dataset = logicvista_dataset(2, k=2, members=[annotator])
    waiting, settled = Sample.objects.filter(dataset=dataset).order_by("external_id")
    submit(annotator, _fresh(waiting), values={"category_code": "spatial"})
    submit(annotator, _fresh(settled))
    submit(UserFactory.create(), _fresh(settled))
    page = _page(annotator, "review:mine")
    assert page.count("Reopen and amend") == 1
    assert reverse("review:workbench", args=[waiting.pk]) in page
    assert "spatial" in page and "Settled" in page
    submitted = _page(annotator, "review:workbench", waiting.pk)
    assert 'data-testid="already-submitted"' in submitted and 'id="review-form"' not in submitted
    assert "?amend=1" in submitted
    url = reverse("review:workbench", args=[waiting.pk]) + "?amend=1"
    bench = _client(annotator).get(url).content.decode()
    assert 'data-testid="amending"' in bench and "Save my amended review" in bench
    assert 'value="spatial"' in bench  # my edit, over the sample's value


def _count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_my_reviews_runs_a_fixed_number_of_queries(
    django_assert_max_num_queries: Any,
) -> None:
    """The page costs the same queries for 2 reviews as for 6."""
    counts = []
    for n in (2, 6):
        reviewer = UserFactory.create(role="annotator")
        dataset = logicvista_dataset(n, members=[reviewer])
        for sample in Sample.objects.filter(dataset=dataset):
            submit(reviewer, _fresh(sample))
        counts.append(_count_queries(_client(reviewer), reverse("review:mine")))
    assert counts[0] == counts[1], counts
    client = _client(reviewer)
    with django_assert_max_num_queries(5):  # session, user, count, page (roles cached)
        client.get(reverse("review:mine"))


def test_dataset_list_shows_my_work_left_in_fixed_queries() -> None:
    """Each dataset shows my reviews done of those open to me, with a progress bar, in the
    same number of queries for 1 dataset as for 4."""
    reviewer = UserFactory.create(role="annotator")
    counts = []
    for datasets in (1, 3):
        for _ in range(datasets):
            dataset = logicvista_dataset(3, members=[reviewer])
        counts.append(_count_queries(_client(reviewer), reverse("annotation:dataset_list")))
    assert counts[0] == counts[1], counts
    submit(reviewer, _fresh(Sample.objects.filter(dataset=dataset).first()))  # type: ignore[arg-type]
    page = _page(reviewer, "annotation:dataset_list")
    assert element(page, "progress", value="1", max="3")
    assert "1 of 3 done, 2 left" in page


def test_the_workbench_shows_n_of_n(annotator: Any) -> None:
    """The workbench counts the sample in my work on the dataset: "2 of 3" after one review."""
    dataset = logicvista_dataset(3, members=[annotator])
    first, second, _third = Sample.objects.filter(dataset=dataset).order_by("id")
    submit(annotator, _fresh(first))
    queue_services.slot_claim(dataset=dataset, reviewer=annotator, sample_id=second.pk)
    page = _page(annotator, "review:workbench", second.pk)
    assert "2 of 3" in text(element(page, "span", data_testid="position"))


def _imported_for_adjudication(tmp_path: Path) -> tuple[Sample, Sample, Sample]:
    """From an empty site: a tri-modal pair (real audio clips) and an MMOOC question without a
    category (a real LogicVista image), imported, reviewed by two reviewers who disagree."""
    images = sorted((SHARED_DATA / "logicvista" / "images").glob("*.png"))
    clips = sorted((SHARED_DATA / "audio").glob("*.ogg"))
    media = tmp_path / "tri" / "media"
    media.mkdir(parents=True)
    for n in (1, 2):
        shutil.copy(images[n], media / f"scene-{n}.png")
        shutil.copy(clips[n], media / f"sound-{n}.ogg")
    tri = [trimodal_record(n, audio=f"media/sound-{n}.ogg") for n in (1, 2)]
    trimodal = dataset_for("trimodal", "mcbench")
    run_import(trimodal, "trimodal", write_lines(tmp_path / "tri" / "scenarios.jsonl", tri))
    question = mmooc_record(1, image=b64(images[0].read_bytes()))
    del question["ooc_type"]
    question["answerability_group"] = "ooc"
    mmooc = dataset_for("mmooc", "mmooc")
    run_import(mmooc, "mmooc", write_lines(tmp_path / "mm.jsonl", [question]))
    unsafe = Sample.objects.get(dataset=trimodal, safety_label="unsafe")
    safe = Sample.objects.get(dataset=trimodal, safety_label="safe")
    uncategorised = Sample.objects.get(dataset=mmooc)
    for dataset in (trimodal, mmooc):
        open_queue(dataset, k=2)
        annotation_bulk.samples_send_to_review(
            dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=None
        )
    first, second = UserFactory.create(), UserFactory.create()
    for sample in (unsafe, safe, uncategorised):
        submit(first, _fresh(sample), decision="reject")
        submit(second, _fresh(sample))
        assert _fresh(sample).status == SampleStatus.NEEDS_ADJUDICATION
    return unsafe, safe, uncategorised


def test_defect_8_adjudication_keeps_unposted_fields_and_answers_400_to_malformed_posts(
    lead: Any, tmp_path: Path
) -> None:
    """Adjudication, on the page and through the API: a field not posted keeps its value (a
    tri-modal form without ``value_safety_label`` is no 500 and blanks nothing); a verified
    sample must keep its group and category (safety label and category when tri-modal); and
    every malformed post is a 400, never a 500."""
    unsafe, safe, uncategorised = _imported_for_adjudication(tmp_path)
    page = _client(lead)
    url = reverse("review:adjudicate", args=[unsafe.pk])
    before = {name: getattr(_fresh(unsafe), name) for name in TRIMODAL_FIELDS}
    partial = {"decision": "accept", "note": "Checked by ear.", "revision": _fresh(unsafe).revision}
    response = page.post(url, partial)
    assert response.status_code == 302, response.content.decode()[:2000]
    after = _fresh(unsafe)
    assert after.status == SampleStatus.VERIFIED
    assert {name: getattr(after, name) for name in TRIMODAL_FIELDS} == before

    url = reverse("review:adjudicate", args=[safe.pk])
    for malformed in (
        {"decision": "accept", "note": "x", "value_safety_label": ""},
        {"decision": "accept", "note": "x", "value_safety_label": "harmless"},
        {"decision": "maybe", "note": "x"},
        {"decision": "reject", "note": "x", "reject_reason": "bored"},
        {"decision": "accept", "note": ""},
    ):
        assert page.post(url, malformed).status_code == 400, malformed
    assert _fresh(safe).status == SampleStatus.NEEDS_ADJUDICATION
    assert _fresh(safe).safety_label == "safe"

    url = reverse("review:adjudicate", args=[uncategorised.pk])
    group_only = {"decision": "accept", "note": "x", "value_answerability_group": "ooc"}
    response = page.post(url, group_only)
    assert response.status_code == 400 and "category" in response.content.decode().lower()
    blanked = {**group_only, "value_category_code": "VFP", "value_answerability_group": ""}
    assert page.post(url, blanked).status_code == 400
    assert _fresh(uncategorised).answerability_group == "ooc"

    api = client_for(lead)
    endpoint = f"/api/samples/{uncategorised.pk}/adjudication/"
    bodies: list[Any] = [
        {"decision": "accept", "note": "x"},
        {"decision": "accept", "note": "x", "values": {"category_code": ""}},
        {"decision": "accept", "note": "x", "values": {"answerability_group": ""}},
        {"decision": "accept", "note": "x", "values": {"category_code": ["VFP"]}},
        {"decision": "accept", "note": "x", "values": {"nonsense": "VFP"}},
        {"decision": "accept", "note": "x", "values": "VFP"},
        {"decision": "accept", "note": "x", "values": {"category_code": {"a": 1}}},
        {"decision": "accept", "note": "x", "values": {"explanation": None}},
        {"decision": "accept"},
        [],
    ]
    for body in bodies:
        answer = api.post(endpoint, body, format="json")
        assert answer.status_code == 400, (body, answer.status_code)
    assert _fresh(uncategorised).status == SampleStatus.NEEDS_ADJUDICATION
    kept = _fresh(uncategorised)
    answer = api.post(
        endpoint,
        {"decision": "accept", "note": "x", "values": {"category_code": "VFP"}},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    done = _fresh(uncategorised)
    assert (done.status, done.category_code) == (SampleStatus.VERIFIED, "VFP")
    assert (done.reference_answer, done.explanation, done.answerability_group) == (
        kept.reference_answer,
        kept.explanation,
        "ooc",
    )


def test_my_reviews_says_a_disputed_sample_waits_for_the_lead_not_settled(
    annotator: Any,
) -> None:
    """A review whose sample went to adjudication cannot be amended, and is not called
    "Settled": the lead has still to decide."""
    dataset = logicvista_dataset(1, k=2, members=[annotator])
    sample = Sample.objects.get(dataset=dataset)
    submit(annotator, _fresh(sample))
    submit(UserFactory.create(), _fresh(sample), "reject")
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.NEEDS_ADJUDICATION
    page = _page(annotator, "review:mine")
    assert (
        "Waiting for the lead&#x27;s decision" in page or "Waiting for the lead's decision" in page
    )
    assert "Settled" not in page and "Reopen and amend" not in page
