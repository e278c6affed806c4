"""The audit pages: permissions for every role, the planner, the blind rating form, the
statistics page (figures equal to judging.stats'), its CSV and printable report."""

from __future__ import annotations

import csv
import io
import time
import uuid
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from django.contrib.staticfiles import finders
from django.template.defaultfilters import floatformat
from django.test import Client
from django.urls import reverse
from pytest_django.asserts import assertInHTML

from core import roles
from core.stats.bootstrap import figures_from_weights, item_statistics, stratum_weights
from core.stats.ratings import from_matrix
from judging.audit import computations
from judging.audit.selectors import audit_frame, frame_strata_sizes
from judging.models import AuditItem, AuditRating, AuditSet, Judge, Verdict
from judging.stats.human_judge import human_judge_report
from judging.stats.sampling import bootstrap_strata, compare_allocations
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.support.html import attribute, element, elements, text
from tests.support.http import browser

pytestmark = pytest.mark.django_db


def _pages(audit_set: AuditSet) -> list[str]:
    item = AuditItem.objects.filter(audit_set=audit_set).first()
    assert item is not None
    return [
        reverse("judging:audit_list", args=[audit_set.dataset_id]),
        reverse("judging:audit_detail", args=[audit_set.pk]),
        reverse("judging:audit_statistics", args=[audit_set.pk]),
        reverse("judging:audit_statistics_csv", args=[audit_set.pk]),
        reverse("judging:audit_report", args=[audit_set.pk]),
        reverse("judging:audit_rate", args=[item.pk]),
    ]


def test_every_page_by_role(audit_set: AuditSet, lead: Any, auditor: Any, annotator: Any) -> None:
    """Leads and member auditors see every audit page; annotators get 403 even as members;
    auditors of other datasets 404; anonymous visitors go to the login page."""
    af.add_member(audit_set.dataset, annotator)
    outsider = UserFactory.create(role=roles.AUDITOR)
    for url in _pages(audit_set):
        assert browser(lead).get(url).status_code == 200, url
        assert browser(auditor).get(url).status_code == 200, url
        assert browser(annotator).get(url).status_code == 403, url
        assert browser(outsider).get(url).status_code == 404, url
        assert Client().get(url).status_code == 302, url


def test_only_leads_plan_and_draw(audit_set: AuditSet, auditor: Any) -> None:
    """The new-set page is for leads: an auditor gets 403 for the page and the draw."""
    url = reverse("judging:audit_new", args=[audit_set.dataset_id])
    assert browser(auditor).get(url).status_code == 403
    assert browser(auditor).post(url, {"task": "scoring", "size": 5}).status_code == 403


def test_planner_shows_every_allocations_margin_before_drawing(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The preview table lists compare_allocations' overall margins for the frame; the draw
    queues a worker task, redirects to the set, which shows its state until it is drawn."""
    dataset, _ = af.scoring_dataset(n_samples=30)
    url = reverse("judging:audit_new", args=[dataset.pk])
    page = browser(lead).get(url, af.PLANNER_DESIGN)
    assert page.status_code == 200
    html = page.content.decode()
    sizes = frame_strata_sizes(audit_frame(dataset=dataset, task="scoring"))
    for choice in compare_allocations(sizes, 20, floor=3):
        assert f'data-method="{choice.method}">{choice.overall_margin:.3f}<' in html
    with django_capture_on_commit_callbacks(execute=False) as queued:
        drawn = browser(lead).post(url, af.PLANNER_DESIGN)
    audit_set = AuditSet.objects.get(dataset=dataset)
    assert drawn.status_code == 302
    assert drawn["Location"] == reverse("judging:audit_detail", args=[audit_set.pk])
    assert (audit_set.status, audit_set.items.count()) == ("queued", 0)
    waiting = browser(lead).get(drawn["Location"]).content.decode()
    assert reverse("api_audit_set", args=[audit_set.pk]) in waiting  # followed by its page
    for callback in queued:  # the worker's task, run here (eager mode)
        callback()
    audit_set.refresh_from_db()
    assert audit_set.status == "succeeded"
    assert audit_set.method == "sqrt" and audit_set.items.count() == 20
    assert "data-job-progress-url" not in browser(lead).get(drawn["Location"]).content.decode()


def test_bad_design_is_a_readable_400(lead: Any) -> None:
    """A draw with bad values re-renders the form with the errors, status 400."""
    dataset, _ = af.scoring_dataset(n_samples=5)
    url = reverse("judging:audit_new", args=[dataset.pk])
    page = browser(lead).post(
        url,
        {
            "task": "scoring",
            "size": 0,
            "method": "sqrt",
            "floor": 0,
            "oversample_rare": 1,
            "oversample_disagree": 1,
            "seed": 0,
            "double_rating_fraction": 0.1,
        },
    )
    assert page.status_code == 400
    assert 'class="error"' in page.content.decode()
    assert not AuditSet.objects.exists()


def test_rating_form_is_blind_to_the_judges(audit_set: AuditSet, auditor: Any) -> None:
    """The form shows the question, reference, reasoning, image and response with the keys,
    and never a judge's name, rationale or score."""
    client = browser(auditor)
    claimed = client.post(reverse("judging:audit_next", args=[audit_set.pk]))
    assert claimed.status_code == 302
    page = client.get(claimed["Location"])
    html = page.content.decode()
    item = AuditItem.objects.select_related("sample", "response").get(
        pk=int(claimed["Location"].rstrip("/").split("/")[-2])
    )
    assert item.sample.question in html
    assert item.response is not None and item.response.response in html
    assert item.sample.explanation in html
    for key in ("<kbd>0</kbd>", "<kbd>1</kbd>", "<kbd>q</kbd>", "<kbd>t</kbd>", "<kbd>Enter</kbd>"):
        assertInHTML(key, html)
    for judge in ("gpt-judge", "qwen-judge", "claude-judge", "judge rationale text"):
        assert judge not in html
    assert "verdict" not in html.lower()


def test_rating_form_shows_the_image_through_the_media_view(auditor: Any) -> None:
    """An item whose sample has an image shows it from annotation's permission-checked URL."""
    from tests.annotation.factories import mmooc_sample

    dataset, _ = af.scoring_dataset(n_samples=0)
    sample = mmooc_sample(dataset)
    response = af.ModelResponse.objects.create(
        dataset=dataset, sample=sample, model_name="gpt-4o", response="It is red."
    )
    judge = af.judges(("gpt-judge",))[0]
    Verdict.objects.create(
        judge=judge,
        task="mmooc_scoring",
        prompt_version="v1",
        sample=sample,
        response=response,
        answer_score=1,
        reasoning_score=1.0,
    )
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=1)
    item = audit_set.items.get()
    html = browser(auditor).get(reverse("judging:audit_rate", args=[item.pk])).content.decode()
    asset_id = sample.media_links.get().asset_id
    assert reverse("annotation:media_display", args=[asset_id]) in html


def test_audit_list_queries_do_not_grow_with_sets(
    audit_set: AuditSet, auditor: Any, django_assert_max_num_queries: Any
) -> None:
    """The list page costs the same number of queries for one set or five."""
    client = browser(auditor)
    url = reverse("judging:audit_list", args=[audit_set.dataset_id])
    client.get(url)
    with django_assert_max_num_queries(8) as one:
        client.get(url)
    for _ in range(4):
        af.draw(audit_set.dataset, size=3)
    with django_assert_max_num_queries(len(one.captured_queries)):
        assert client.get(url).status_code == 200


def _independent_report(audit_set: AuditSet) -> Any:
    """Recompute the reasoning-score figures from the tables, without the page's code."""
    items = list(AuditItem.objects.filter(audit_set=audit_set).order_by("position"))
    first: dict[int, str] = {}
    second: dict[int, str] = {}
    for rating in AuditRating.objects.filter(audit_set=audit_set).order_by(
        "item", "created_at", "id"
    ):
        (second if rating.item_id in first else first)[rating.item_id] = (
            f"{rating.reasoning_score:g}"
        )
    rated = [item for item in items if item.pk in first]
    votes: dict[str, dict[int, tuple[int, str]]] = {}
    for verdict in Verdict.objects.filter(
        response__in=[i.response_id for i in rated]
    ).select_related("judge"):
        per = votes.setdefault(verdict.judge.name, {})
        held = per.get(verdict.response_id)  # type: ignore[arg-type]
        if held is None or verdict.repeat < held[0]:
            per[verdict.response_id] = (verdict.repeat, f"{verdict.reasoning_score:g}")  # type: ignore[index]
    design = [item.design_stratum for item in rated]
    shares = audit_set.frame["population_shares"]
    return human_judge_report(
        [first[i.pk] for i in rated],
        {judge: [per[i.response_id][1] for i in rated] for judge, per in sorted(votes.items())},  # type: ignore[index]
        ["0", "0.25", "0.5", "0.75", "1"],
        scale="ordinal",
        second_human=[second.get(i.pk) for i in rated],
        strata=bootstrap_strata(design),
        item_weights=stratum_weights(design, {k: shares[k] for k in set(design)}),
        groups={
            "category": [i.sample.category_code for i in rated],
            "format": [i.sample.question_format for i in rated],
            "scenario": [i.sample.scenario for i in rated],
            "model": [i.response.model_name for i in rated],  # type: ignore[union-attr]
        },
        seed=audit_set.seed,
    )


def test_statistics_page_shows_judging_stats_figures(auditor: Any) -> None:
    """For a seeded audit, every overall reasoning-score figure on the page (value, interval,
    n) is judging.stats' own, recomputed here from the tables."""
    dataset, _ = af.scoring_dataset(n_samples=30, seed=2, repeats=2)
    af.add_member(dataset, auditor)
    audit_set = af.draw(
        dataset, size=45, floor=2, oversample_rare=2, seed=8, double_rating_fraction=0.2
    )
    af.rate_all(audit_set, [auditor, UserFactory.create()], seed=4)
    html = (
        browser(auditor)
        .get(reverse("judging:audit_statistics", args=[audit_set.pk]))
        .content.decode()
    )
    report = _independent_report(audit_set)
    # The human-vs-judge section: a heading per target, then its table.
    section = element(html, "section", id="human-judge")
    blocks = [node for node in section.children if not isinstance(node, str)]
    heading = next(i for i, node in enumerate(blocks) if text(node) == "reasoning_score")
    reasoning = next(node for node in blocks[heading:] if elements(node, "table"))
    comparisons = [*report.overall.values()]
    assert report.human_human is not None
    for comparison in comparisons:
        row = text(element(reasoning, "tr", data_rater=comparison.rater))
        for figure in (
            comparison.percent_agreement,
            comparison.cohen_kappa,
            comparison.gwet_ac1,
            comparison.mean_signed_difference,
        ):
            assert figure is not None
            low, high = floatformat(figure.ci_low, 3), floatformat(figure.ci_high, 3)
            assert f"{floatformat(figure.value, 3)} [{low}, {high}] n={figure.n}" in row
    kappa = report.human_human.cohen_kappa
    human_human = text(element(reasoning, "tr", data_rater="human-human"))
    assert f"{floatformat(kappa.value, 3)} [" in human_human
    assert "<svg" in html and 'id="corrected"' in html and 'id="inter-judge"' in html


def test_statistics_csv_neutralises_formula_cells(auditor: Any) -> None:
    """Imported names (a judge called "=HYPERLINK(…)") reach the CSV as text with a leading
    apostrophe; numbers, negative ones too, stay numbers."""
    dataset, judges = af.scoring_dataset(n_samples=20)
    Judge.objects.filter(pk=judges[0].pk).update(name='=HYPERLINK("http://x")')
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=12, double_rating_fraction=0.25)
    af.rate_all(audit_set, [auditor, UserFactory.create()])
    response = browser(auditor).get(reverse("judging:audit_statistics_csv", args=[audit_set.pk]))
    rows = list(csv.reader(io.StringIO(response.content.decode(), newline="")))
    cells = [cell for row in rows[1:] for cell in row]
    assert '\'=HYPERLINK("http://x")' in cells
    assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in cells)
    assert all(float(c) < 0 for c in cells if c.startswith("-"))


def test_statistics_csv_and_report(audit_set: AuditSet, auditor: Any) -> None:
    """The CSV has one row per figure with its interval and n; the report is a print page."""
    af.rate_all(audit_set, [auditor, UserFactory.create()])
    client = browser(auditor)
    response = client.get(reverse("judging:audit_statistics_csv", args=[audit_set.pk]))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert ",".join(rows[0]) == (
        "section,target,level,rater,attribute,group,figure,value,ci_low,ci_high,n,too_small"
    )
    sections = {row[0] for row in rows[1:]}
    assert {
        "inter_judge",
        "human_judge",
        "human_human",
        "calibration",
        "corrected_score",
    } <= sections
    assert all(len(row) == 12 for row in rows)
    report = client.get(reverse("judging:audit_report", args=[audit_set.pk])).content.decode()
    assert "css/audit.css" in report and 'class="topbar"' not in report
    stylesheet = finders.find("css/audit.css")
    assert isinstance(stylesheet, str) and "@media print" in Path(stylesheet).read_text()


def test_the_leaderboard_shows_the_audit_corrected_scores_beside_the_judges(lead: Any) -> None:
    """Once an audit is rated, each model's PPI-corrected score and interval sit beside the
    judges' score on the leaderboard, equal to the statistics page's."""
    dataset, _ = af.scoring_dataset(n_samples=25)
    client = Client()
    client.force_login(lead)
    url = reverse("judging:leaderboard", args=[dataset.pk])
    assert "Corrected by the audit" not in client.get(url).content.decode()
    audit_set = af.draw(dataset, size=30)
    af.rate_all(audit_set, [UserFactory.create(), UserFactory.create()])
    page = client.get(url).content.decode()
    assert "Corrected by the audit (PPI)" in page
    stats = client.get(reverse("judging:audit_statistics_csv", args=[audit_set.pk]))
    assert stats.status_code == 200
    stored = computations.audit_statistics_read(audit_set=audit_set).result
    assert stored is not None
    for score in stored["corrected"]:
        if score["corrected"]:
            assert f"{score['corrected']['estimate']:.3f}" in page


def test_an_empty_model_answer_is_shown_as_such(audit_set: AuditSet, auditor: Any) -> None:
    """A response with no text reads "(empty answer)", not a blank box."""
    item = AuditItem.objects.filter(audit_set=audit_set, response__isnull=False).first()
    assert item is not None and item.response is not None
    type(item.response).objects.filter(pk=item.response.pk).update(response="  ")
    html = browser(auditor).get(reverse("judging:audit_rate", args=[item.pk])).content.decode()
    assert text(element(html, "blockquote", id="item-response")) == "(empty answer)"


def test_defect_9_agreement_figures_say_they_are_design_weighted_beside_the_unweighted(
    auditor: Any,
) -> None:
    """An oversampled audit's inter-judge figures are weighted back to the frame: each says
    "design-weighted, N items" under it, and the unweighted figure beside it is the one the
    ``krippendorff`` library gives on the same ratings (the judges' lowest-repeat votes)."""
    dataset, panel = af.scoring_dataset(n_samples=30, seed=2)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=45, floor=2, oversample_rare=3, seed=8)
    assert (
        len(set(AuditItem.objects.filter(audit_set=audit_set).values_list("weight", flat=True))) > 1
    )
    html = (
        browser(auditor)
        .get(reverse("judging:audit_statistics", args=[audit_set.pk]))
        .content.decode()
    )
    section = element(html, "section", id="inter-judge")
    items = list(AuditItem.objects.filter(audit_set=audit_set).order_by("position"))
    votes = {
        (v.judge_id, v.response_id): v.answer_score
        for v in Verdict.objects.filter(repeat=0, response_id__in=[i.response_id for i in items])
    }
    reliability = [
        [votes.get((judge.pk, item.response_id), np.nan) for item in items] for judge in panel
    ]
    expected = krippendorff.alpha(
        reliability_data=np.asarray(reliability, dtype=float), level_of_measurement="nominal"
    )
    # The first block is the answer score's, nominal.
    row = elements(section, "tr", data_figure="Krippendorff's alpha")[0]
    assert text(element(row, "td", data_testid="unweighted")) == floatformat(expected, 3)
    # The weighted figure is the same coincidences summed with the items' design weights
    # (core.stats, itself pinned to the libraries); it differs from the unweighted one, though
    # the two may round alike at three decimals (as one run of this test drew).
    stats = item_statistics(from_matrix(np.asarray(reliability, dtype=float).T), "nominal")
    weights = np.asarray([item.weight for item in items], dtype=float)
    weighted = float(figures_from_weights(stats, weights).krippendorff_alpha[0])
    assert abs(weighted - expected) > 1e-9
    assert text(elements(row, "td")[0]).split(" ")[0] == floatformat(weighted, 3)
    line = text(element(row, "div", data_testid="weighting"))
    assert line == f"design-weighted, {len(items)} items"
    for name in ("Percent agreement", "Fleiss' kappa", "Gwet's AC1"):
        assert "design-weighted" in text(elements(section, "tr", data_figure=name)[0])


def test_the_rating_page_numbers_options_once_and_lists_keys_per_question(
    audit_set: AuditSet, auditor: Any
) -> None:
    """An item's options read with their own letters only (no list numbers beside them: the
    list is unnumbered by its class, and no ". " follows a letter), and the key help gives
    each question its line, then Enter."""
    item = next(i for i in audit_set.items.order_by("position") if i.sample.options)
    html = browser(auditor).get(reverse("judging:audit_rate", args=[item.pk])).content.decode()
    options = element(html, "ol", class_="audit-options data")  # classes sorted by the parser
    first = item.sample.options[0]
    assert text(elements(options, "li")[0]) == f"{first['label']} {first['text']}"
    help_ = element(html, "dl", class_="key-help")
    questions = [text(dt) for dt in elements(help_, "dt")]
    legends = [
        text(legend) for legend in elements(element(html, "form", id="audit-form"), "legend")
    ]
    assert len(questions) == len(legends) + 1 and questions[-1] == "Save"
    assert all(q in legend for q, legend in zip(questions, legends, strict=False))


def _posted(item: AuditItem, **values: Any) -> dict[str, Any]:
    return {"submission_uuid": str(uuid.uuid4()), "shown_at": int(time.time()) - 7, **values}


def test_the_form_without_script_saves_and_opens_the_next_item(
    audit_set: AuditSet, auditor: Any
) -> None:
    """The rating form posts (its submission id and the time it was shown among its fields);
    the rating is stored and the next item opens; the same post again makes no second rating."""
    client = browser(auditor)
    opened = client.post(reverse("judging:audit_next", args=[audit_set.pk]))["Location"]
    item = AuditItem.objects.get(pk=int(opened.rstrip("/").split("/")[-2]))
    form = element(client.get(opened).content.decode(), "form", id="audit-form")
    assert attribute(form, "method") == "post"
    assert attribute(form, "action") == reverse("judging:audit_submit", args=[item.pk])
    data = _posted(item, answer_score="1", reasoning_score="0.75", note=" fine ")
    saved = client.post(reverse("judging:audit_submit", args=[item.pk]), data)
    assert saved.status_code == 302 and saved["Location"] != opened
    assert saved["Location"].endswith("/rate/")
    rating = AuditRating.objects.get(item=item, auditor=auditor)
    assert (rating.answer_score, rating.reasoning_score, rating.note) == (1, 0.75, "fine")
    assert rating.seconds_spent >= 7
    again = client.post(reverse("judging:audit_submit", args=[item.pk]), data)
    assert again.status_code == 302 and AuditRating.objects.filter(item=item).count() == 1


def test_an_incomplete_posted_rating_goes_back_with_the_reason(
    audit_set: AuditSet, auditor: Any
) -> None:
    """A missing score or a value outside the rubric stores nothing and reopens the form with
    the rubric's message."""
    client = browser(auditor)
    opened = client.post(reverse("judging:audit_next", args=[audit_set.pk]))["Location"]
    item = AuditItem.objects.get(pk=int(opened.rstrip("/").split("/")[-2]))
    url = reverse("judging:audit_submit", args=[item.pk])
    for values in ({"answer_score": "1"}, {"answer_score": "2", "reasoning_score": "x"}):
        back = client.post(url, _posted(item, **values), follow=True)
        assert back.redirect_chain == [(opened, 302)]
        assert "Rate the reasoning 0, 0.25, 0.5, 0.75 or 1." in back.content.decode()
    bad_id = client.post(url, {"submission_uuid": "nope", "answer_score": "1"}, follow=True)
    assert "valid UUID" in bad_id.content.decode()
    assert not AuditRating.objects.exists()


def test_the_last_posted_rating_leads_to_the_audit_set(auditor: Any, annotator: Any) -> None:
    """After the last item the audit set's page opens and says nothing is left; annotators
    cannot post ratings."""
    dataset, _ = af.scoring_dataset(n_samples=2, models=("gpt-4o",))
    af.add_member(dataset, auditor)
    af.add_member(dataset, annotator)
    audit_set = af.draw(dataset, size=1, double_rating_fraction=0)
    item = audit_set.items.get()
    url = reverse("judging:audit_submit", args=[item.pk])
    values = {"answer_score": "0", "reasoning_score": "0"}
    assert browser(annotator).post(url, _posted(item, **values)).status_code == 403
    done = browser(auditor).post(url, _posted(item, **values), follow=True)
    assert done.redirect_chain[-1][0] == reverse("judging:audit_detail", args=[audit_set.pk])
    assert "Nothing is left for you to rate" in done.content.decode()
    assert AuditRating.objects.get().item_id == item.pk
