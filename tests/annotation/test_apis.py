"""The annotation API's sample list filters and bulk actions (annotation/apis.py): the same
filter as the page, 400 with a reason for a bad parameter, 403 with a reason for non-leads,
and a fixed number of queries."""

from __future__ import annotations

from typing import Any

import pytest

from annotation import services
from annotation.models import Dataset, DuplicatePair, Sample, SampleRevision, SampleStatus
from review.models import Assignment, Slot
from review.queue.services import queue_sync
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.conftest import client_for
from tests.judging.factories import bulk_samples
from tests.review.factories import open_queue

pytestmark = pytest.mark.django_db


def judges_agreed(dataset: Dataset) -> None:
    """Every sample of the dataset judged, the judges agreeing (the "judges agree" filter
    matches no sample that no judge voted on)."""
    Sample.objects.filter(dataset=dataset).update(judges_disagree=False)


def dataset_with(n_imported: int, n_pending: int = 0) -> Dataset:
    dataset = mmooc_dataset()
    for _ in range(n_imported):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    for _ in range(n_pending):
        mmooc_sample(dataset)
    return dataset


def test_sample_list_filters_searches_and_sorts(lead: Any) -> None:
    """?search=, ?status=, ?category=, ?external_id= and ?ordering= select and order samples."""
    dataset = mmooc_dataset()
    red = mmooc_sample(dataset, external_id="x-red", question="A red bus?", priority=2)
    blue = mmooc_sample(dataset, external_id="x-blue", status=SampleStatus.IMPORTED, priority=5)
    url = f"/api/datasets/{dataset.pk}/samples/"
    client = client_for(lead)

    def ids(query: str) -> list[str]:
        response = client.get(f"{url}?{query}")
        assert response.status_code == 200, response.json()
        return [row["external_id"] for row in response.json()["results"]]

    assert ids("search=RED") == [red.external_id]
    assert ids("status=imported") == [blue.external_id]
    assert ids("status=imported,pending_review&ordering=-priority") == ["x-blue", "x-red"]
    assert ids("category=VFP&ordering=external_id") == ["x-blue", "x-red"]
    assert ids("external_id=x-red") == ["x-red"]
    assert ids("category=MP") == []


def test_the_possible_duplicates_filter_selects_both_sides_of_a_pair(lead: Any) -> None:
    """?duplicates=true lists the samples in a pair, false the others; anything else is a 400."""
    dataset = mmooc_dataset()
    first, later, alone = (mmooc_sample(dataset, external_id=name) for name in "abc")
    DuplicatePair.objects.create(dataset=dataset, original=first, sample=later, image_distance=1)
    client = client_for(lead)
    url = f"/api/datasets/{dataset.pk}/samples/"

    def ids(query: str) -> list[str]:
        response = client.get(f"{url}?{query}")
        assert response.status_code == 200, response.json()
        return [row["external_id"] for row in response.json()["results"]]

    assert ids("duplicates=true") == ["a", "b"]
    assert ids("duplicates=false") == ["c"]
    bad = client.get(f"{url}?duplicates=maybe")
    assert bad.status_code == 400 and "duplicates" in bad.json()
    assert alone.pk not in {first.pk, later.pk}


def test_a_bad_filter_parameter_gets_400_naming_it(lead: Any) -> None:
    """An unknown status or sort key is refused with the parameter's name and the choices."""
    dataset = mmooc_dataset()
    response = client_for(lead).get(
        f"/api/datasets/{dataset.pk}/samples/?status=done&ordering=colour"
    )
    assert response.status_code == 400
    body = response.json()
    assert "done" in body["status"] and "external_id" in body["ordering"]


def test_the_filtered_list_costs_a_fixed_number_of_queries(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Every filter at once, on 3 or 13 samples, costs the same few queries."""
    dataset = dataset_with(3)

    def client() -> Any:  # a user loaded afresh, as on every real request
        return client_for(type(lead).objects.get(pk=lead.pk))

    url = (
        f"/api/datasets/{dataset.pk}/samples/?search=car&status=imported&category=VFP"
        "&judges_disagree=false&reviewer=someone&changed=true&duplicates=false&ordering=-updated"
    )
    judges_agreed(dataset)
    # the reader's roles (may they see judge votes?), dataset visibility, the planner's
    # estimate, the last snapshot (for `changed`), the count within its budget (savepoint,
    # timeout, count, rollback, release), page, media
    fresh = client()
    with django_assert_num_queries(11):
        assert fresh.get(url.replace("reviewer=someone&", "")).status_code == 200
    for _ in range(10):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    judges_agreed(dataset)
    fresh = client()
    with django_assert_num_queries(11):
        response = fresh.get(url.replace("reviewer=someone&", ""))
    assert response.json()["count"] == 13
    fresh = client()
    with django_assert_num_queries(9):  # nobody reviewed anything: counted, no page
        assert fresh.get(url).json()["count"] == 0


def test_send_to_review_by_api(lead: Any) -> None:
    """POST send-to-review moves the imported samples the filter selects, writes their history
    and opens their slots; it answers with the counts."""
    dataset = dataset_with(3)
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    first = Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED).first()
    assert first is not None
    url = f"/api/datasets/{dataset.pk}/send-to-review/"
    response = client_for(lead).post(f"{url}?external_id={first.external_id}", {}, format="json")
    assert response.status_code == 200
    assert response.json() == {"changed": 1, "skipped": 0, "slots_opened": 2}
    rest = client_for(lead).post(url, {"reason": "ready"}, format="json").json()
    assert rest == {"changed": 2, "skipped": 2, "slots_opened": 4}
    assert not Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED).exists()
    assert SampleRevision.objects.filter(sample__dataset=dataset, reason="ready").count() == 2
    refused = client_for(lead).post(f"{url}?status=in_review", {}, format="json")
    assert refused.status_code == 400 and "sent to review" in str(refused.json())


def test_bulk_actions_by_api_on_chosen_ids(lead: Any) -> None:
    """The bulk endpoint takes down, restores and re-prioritises only the chosen samples."""
    dataset = dataset_with(0, n_pending=3)
    a, b, c = Sample.objects.filter(dataset=dataset).order_by("id")
    url = f"/api/datasets/{dataset.pk}/samples/bulk/"
    client = client_for(lead)
    down = client.post(
        url, {"action": "take_down", "ids": [a.pk, b.pk], "reason": "licence"}, format="json"
    )
    assert down.json() == {"changed": 2, "skipped": 0, "slots_opened": 0}
    no_reason = client.post(url, {"action": "take_down", "ids": [c.pk]}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()
    back = client.post(f"{url}?status=removed", {"action": "restore"}, format="json")
    assert back.json()["changed"] == 2
    priority = client.post(url, {"action": "set_priority", "priority": 7, "ids": [c.pk]})
    assert priority.json()["changed"] == 1
    assert dict(Sample.objects.values_list("pk", "priority"))[c.pk] == 7
    assert set(Sample.objects.values_list("status", flat=True)) == {SampleStatus.PENDING_REVIEW}
    bad = client.post(url, {"action": "delete_all"}, format="json")
    assert bad.status_code == 400 and "action" in bad.json()


def test_samples_are_assigned_and_unassigned_by_api(lead: Any, annotator: Any) -> None:
    """The bulk endpoint assigns the chosen samples to annotators of the dataset (the claim
    then serves them to them first) and takes them back; a non-member, a missing or
    malformed list of assignees get a 400 naming the field, and nothing is assigned."""
    dataset = dataset_with(0, n_pending=3)
    services.dataset_add_member(dataset=dataset, user=annotator)
    queue_sync(dataset=dataset)
    stranger = UserFactory.create(role="annotator")
    _a, b, c = Sample.objects.filter(dataset=dataset).order_by("id")
    url = f"/api/datasets/{dataset.pk}/samples/bulk/"
    client = client_for(lead)
    body = {"action": "assign", "ids": [b.pk, c.pk], "assignees": [annotator.username]}
    conflict = client.post(
        url, {**body, "assignees": [annotator.username, stranger.username]}, format="json"
    )
    assert conflict.status_code == 409, conflict.content  # not a member yet: may succeed later
    assert stranger.username in str(conflict.json()), conflict.json()
    for refused, field in (
        ({**body, "assignees": []}, "assignees"),
        ({"action": "assign", "ids": [b.pk]}, "assignees"),
        ({**body, "assignees": "everyone"}, "assignees"),
        ({**body, "assignees": [{"name": 1}]}, "assignees"),
    ):
        response = client.post(url, refused, format="json")
        assert response.status_code == 400, (refused, response.content)
        assert field in response.json(), response.json()
    wrong = client.post(url, {**body, "assignees": [stranger.username]}, format="json")
    assert wrong.status_code == 409
    assert f"Not an annotator of this dataset: {stranger.username}." in str(wrong.json())
    assert not Assignment.objects.exists()
    done = client.post(url, body, format="json")
    assert done.json() == {"changed": 2, "skipped": 0, "slots_opened": 0}
    assert set(Assignment.objects.values_list("sample_id", "reviewer_id")) == {
        (b.pk, annotator.pk),
        (c.pk, annotator.pk),
    }
    claimed = client_for(annotator).post(f"/api/datasets/{dataset.pk}/claim/", {}, format="json")
    assert claimed.json()["sample"]["id"] == b.pk  # before a, first in the queue's order
    back = client.post(url, {"action": "unassign", "ids": [c.pk]}, format="json")
    assert back.json()["changed"] == 1
    assert list(Assignment.objects.values_list("sample_id", flat=True)) == [b.pk]
    annotators = client_for(annotator).post(url, body, format="json")
    assert annotators.status_code == 403


def test_every_filter_can_select_what_a_bulk_action_changes(lead: Any) -> None:
    """The selection may use every filter at once (subqueries included) while its rows are
    locked for the move."""
    dataset = dataset_with(2)
    judges_agreed(dataset)
    url = (
        f"/api/datasets/{dataset.pk}/send-to-review/?search=car&category=VFP&scenario="
        "coarse_perception&question_format=mcq&judges_disagree=false&changed=true"
        "&ordering=-priority"
    )
    response = client_for(lead).post(url, {}, format="json")
    assert response.json() == {"changed": 2, "skipped": 0, "slots_opened": 4}
    nobody = client_for(lead).post(f"{url}&reviewer=ghost", {}, format="json")
    assert nobody.json() == {"changed": 0, "skipped": 0, "slots_opened": 0}


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_only_leads_send_or_act_in_bulk(request: pytest.FixtureRequest, role: str) -> None:
    """Members who are not leads get 403 with the reason, and nothing moves."""
    user = request.getfixturevalue(role)
    dataset = dataset_with(2)
    services.dataset_add_member(dataset=dataset, user=user)
    client = client_for(user)
    for url, body in (
        (f"/api/datasets/{dataset.pk}/send-to-review/", {}),
        (f"/api/datasets/{dataset.pk}/samples/bulk/", {"action": "take_down", "reason": "x"}),
    ):
        response = client.post(url, body, format="json")
        assert response.status_code == 403
        assert "Only project leads" in response.json()["detail"]
    patch = client.patch(f"/api/datasets/{dataset.pk}/", {"auto_send_to_review": True})
    assert patch.status_code == 403
    assert set(Sample.objects.values_list("status", flat=True)) == {SampleStatus.IMPORTED}
    assert not Slot.objects.exists()
    assert client.get(f"/api/datasets/{dataset.pk}/samples/?status=imported").status_code == 200


def test_leads_turn_the_automatic_sending_on(lead: Any) -> None:
    """PATCH /api/datasets/{id}/ sets "send new imports to review automatically"."""
    dataset = mmooc_dataset()
    response = client_for(lead).patch(
        f"/api/datasets/{dataset.pk}/", {"auto_send_to_review": True}, format="json"
    )
    assert response.status_code == 200 and response.json()["auto_send_to_review"] is True
    dataset.refresh_from_db()
    assert dataset.auto_send_to_review is True


def test_dataset_detail_shows_archived_and_retired_terms(lead: Any) -> None:
    """The dataset API says whether a dataset is archived and which of its terms are retired."""
    dataset = mmooc_dataset()
    term = dataset.terms.get(kind="category", code="VFP")
    services.taxonomy_term_set_retired(term=term, retired=True)
    services.dataset_set_archived(dataset=dataset, archived=True)
    body = client_for(lead).get(f"/api/datasets/{dataset.pk}/").json()
    assert body["archived"] is True
    retired = {t["code"] for t in body["terms"] if t["retired"]}
    assert retired == {"VFP"}


def test_bad_values_of_the_new_filters_get_400_naming_each(lead: Any) -> None:
    """An unknown decision or verdict lists the values allowed; a score out of [0, 1] or a
    date not as YYYY-MM-DD is named; each under its own parameter."""
    dataset = mmooc_dataset()
    response = client_for(lead).get(
        f"/api/datasets/{dataset.pk}/samples/?decision=maybe&verdict=x&score_min=-1"
        "&score_max=nan&created_before=yesterday&has_response=2"
    )
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {
        "decision",
        "verdict",
        "score_min",
        "score_max",
        "created_before",
        "has_response",
    }
    assert "accept, correct, reject, skip" in body["decision"]
    assert "answerable, unanswerable" in body["verdict"]
    assert "0 to 1" in body["score_max"] and "YYYY-MM-DD" in body["created_before"]


@pytest.mark.parametrize(
    "query", ["has_response=true", "response_model=m", "verdict=safe", "score_min=0.5"]
)
def test_judge_derived_filters_are_for_leads_only(annotator: Any, query: str) -> None:
    """Filtering on responses or verdicts would reveal the judges' work: 403 for a reviewer."""
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    response = client_for(annotator).get(f"/api/datasets/{dataset.pk}/samples/?{query}")
    assert response.status_code == 403
    assert "judges' votes" in response.json()["detail"]


def test_in_blind_review_only_leads_filter_on_other_reviewers_work(annotator: Any) -> None:
    """In blind review a reviewer may list their own reviews, not anybody else's decisions."""
    dataset = open_queue(mmooc_dataset(), blind=True, members=[annotator])
    url = f"/api/datasets/{dataset.pk}/samples/"
    client = client_for(annotator)
    for query in ("reviewer=someone", "decision=reject"):
        refused = client.get(f"{url}?{query}")
        assert refused.status_code == 403 and "blind review" in refused.json()["detail"]
    own = client.get(f"{url}?reviewer={annotator.username}&decision=accept")
    assert own.status_code == 200 and own.json()["count"] == 0
    open_queue(dataset, blind=False)
    assert client.get(f"{url}?decision=reject").status_code == 200


def test_the_new_filters_cost_no_query_of_their_own(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Decision, responses, verdicts, scores and dates are conditions of the count's and the
    page's statements: the same five queries as any filtered list."""
    dataset = dataset_with(3)
    url = (
        f"/api/datasets/{dataset.pk}/samples/?decision=skip&has_response=false&verdict=abstain"
        "&score_min=0&score_max=1&response_model=m&created_after=2020-01-01"
        "&updated_before=2100-01-01"
    )
    fresh = client_for(type(lead).objects.get(pk=lead.pk))
    # roles, dataset, the estimate, the count (5): nothing matches, no page
    with django_assert_num_queries(8):
        assert fresh.get(url).json()["count"] == 0
    fresh = client_for(type(lead).objects.get(pk=lead.pk))
    dated = url.split("?")[0] + "?created_after=2020-01-01&updated_before=2100-01-01"
    with django_assert_num_queries(10):  # roles, dataset, estimate, count (5), page, media
        assert fresh.get(dated).json()["count"] == 3


def _walk(client: Any, url: str) -> list[int]:
    """The ids of every page from ``url`` on, following the ``next`` links."""
    ids: list[int] = []
    while url:
        body = client.get(url).json()
        ids += [row["id"] for row in body["results"]]
        url = body["next"]
    return ids


@pytest.mark.parametrize("ordering", ["id", "-priority", "status", "-updated", "external_id"])
def test_next_links_carry_a_cursor_and_walk_what_the_offsets_do(lead: Any, ordering: str) -> None:
    """From the first page, the next links are cursors (keyset pages) that keep the filter and
    the sort, and visit the rows the offsets do, in the same order; previous links go back;
    an offset's page still works as before, its next link a cursor too."""
    dataset = mmooc_dataset()
    made = bulk_samples(dataset, 11)
    for n, sample in enumerate(made):  # ties on the sort column, broken by id
        Sample.objects.filter(pk=sample.pk).update(priority=n % 3)
    Sample.objects.filter(pk=made[0].pk).update(status=SampleStatus.IMPORTED)
    client = client_for(lead)
    url = f"/api/datasets/{dataset.pk}/samples/?status=pending_review&ordering={ordering}"
    expected = [row["id"] for row in client.get(f"{url}&limit=100").json()["results"]]
    assert len(expected) == 10
    first = client.get(f"{url}&limit=3").json()
    assert first["count"] == 10 and first["count_estimated"] is False
    assert "cursor=" in first["next"] and "offset" not in first["next"]
    assert "status=pending_review" in first["next"] and f"ordering={ordering}" in first["next"]
    assert first["previous"] is None
    assert _walk(client, f"{url}&limit=3") == expected
    second = client.get(first["next"]).json()
    assert [r["id"] for r in second["results"]] == expected[3:6]
    back = client.get(second["previous"]).json()
    assert [r["id"] for r in back["results"]] == expected[:3]
    offset = client.get(f"{url}&limit=3&offset=6").json()
    assert [r["id"] for r in offset["results"]] == expected[6:9]
    assert "offset=3" in offset["previous"] and "cursor=" in offset["next"]
    assert [r["id"] for r in client.get(offset["next"]).json()["results"]] == expected[9:]


def test_a_deep_offset_reads_the_keys_first_and_gives_the_same_rows(lead: Any) -> None:
    """From core.pagination.DEFERRED_FROM on, an offset finds the page's keys first: the same
    rows as a plain offset would."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 1010)
    client = client_for(lead)
    url = f"/api/datasets/{dataset.pk}/samples/?ordering=-id&limit=7&offset=1001"
    expected = list(
        Sample.objects.filter(dataset=dataset)
        .order_by("-id")
        .values_list("pk", flat=True)[1001:1008]
    )
    assert [r["id"] for r in client.get(url).json()["results"]] == expected


def _signed_cursor(client: Any, url: str) -> str:
    from urllib.parse import parse_qs, urlsplit

    token: str = parse_qs(urlsplit(client.get(url).json()["next"]).query)["cursor"][0]
    return token


def test_a_cursor_that_cannot_be_used_is_a_400_naming_it(lead: Any) -> None:
    """Garbage, an altered or cut cursor, one of another sort, two cursors, or a cursor with an
    offset: a 400 that names ``cursor``, never a 500."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 5)
    client = client_for(lead)
    url = f"/api/datasets/{dataset.pk}/samples/"
    token = _signed_cursor(client, f"{url}?limit=2&ordering=-priority")
    value, _colon, signature = token.rpartition(":")
    altered = f"{value[:-1]}{'A' if value[-1] != 'A' else 'B'}:{signature}"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"cursor": "garbage"}, "not valid"),
        ({"cursor": "é" * 2000}, "not valid"),
        ({"cursor": token[:-3], "ordering": "-priority"}, "not valid"),
        ({"cursor": altered, "ordering": "-priority"}, "not valid"),
        ({"cursor": token}, "another sort order"),
        ({"cursor": token, "ordering": "priority"}, "another sort order"),
        ({"cursor": [token, token], "ordering": "-priority"}, "One cursor"),
        ({"cursor": token, "ordering": "-priority", "offset": "2"}, "One cursor"),
    ]
    for query, says in cases:
        answer = client.get(url, query)
        assert answer.status_code == 400, query
        assert says in answer.json()["cursor"][0], (query, answer.json())
    good = client.get(url, {"cursor": token, "ordering": "-priority", "limit": "2"})
    assert good.status_code == 200 and len(good.json()["results"]) == 2


def test_a_page_by_cursor_costs_the_same_queries_for_3_or_13_samples(
    lead: Any, django_assert_num_queries: Any, monkeypatch: Any
) -> None:
    """A page by its cursor, the first page and a deep offset run a fixed number of queries,
    with an exact count or, over the threshold, the planner's estimate (labelled)."""
    from core.pagination import KeysetOrOffsetPagination

    dataset = dataset_with(3)
    url = f"/api/datasets/{dataset.pk}/samples/?ordering=-updated&limit=2"

    def costs(expect: int) -> None:
        client = client_for(type(lead).objects.get(pk=lead.pk))
        with django_assert_num_queries(expect):
            first = client.get(url).json()
        client = client_for(type(lead).objects.get(pk=lead.pk))
        with django_assert_num_queries(expect):
            assert client.get(first["next"]).status_code == 200
        client = client_for(type(lead).objects.get(pk=lead.pk))
        with django_assert_num_queries(expect):
            assert client.get(f"{url}&offset=1").status_code == 200

    # roles, dataset, the planner's estimate, the count within its budget (savepoint, timeout,
    # count, rollback, release), page, media
    costs(10)
    for _ in range(10):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    costs(10)
    monkeypatch.setattr(KeysetOrOffsetPagination, "exact_below", 1)
    costs(5)  # the estimate is the count: no count tried
    body = client_for(lead).get(url).json()
    assert body["count_estimated"] is True and body["count"] >= 0


def test_the_schema_documents_the_cursor_and_the_estimated_count(lead: Any) -> None:
    schema = client_for(lead).get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/datasets/{dataset_id}/samples/"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"cursor", "limit", "offset"} <= names
    page = operation["responses"]["200"]["content"]["application/json"]["schema"]
    if "$ref" in page:
        page = schema["components"]["schemas"][page["$ref"].rpartition("/")[2]]
    assert "count_estimated" in page["properties"]
