"""Roles and blindness through every API and page that could carry judge votes.

Judge votes are noted on a sample by judging (``SampleNote``) and can also sit in ``extra`` of
a re-imported export; the disagreement flag is derived from them. A reviewer never receives
them when the dataset is blind or hides judge hints, an auditor never does while rating, and
only annotators (and leads) claim and submit review work.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import NoteKey, Sample
from core import roles
from tests.annotation.factories import UserFactory
from tests.conftest import client_for
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db

VOTE = "secret-judge-vote"


def _voted_dataset(*, blind: bool, hints: bool, members: Any = ()) -> tuple[Any, Sample]:
    dataset = review_dataset(1, k=2, blind=blind, hints=hints, members=members)
    sample = Sample.objects.filter(dataset=dataset).get()
    Sample.objects.filter(pk=sample.pk).update(
        extra={"judge_votes": [{"judge": "gpt", "label": VOTE}], "source": "kept"},
        judges_disagree=True,
    )
    annotation_services.sample_set_note(
        sample_ids=[sample.pk],
        key=NoteKey.JUDGE_VOTES,
        values={sample.pk: [{"judge": "gpt", "label": VOTE, "category": None}]},
    )
    return dataset, sample


def _users() -> dict[str, Any]:
    both = UserFactory.create(role=roles.AUDITOR)
    both.groups.add(*UserFactory.create(role=roles.ANNOTATOR).groups.all())
    return {
        "lead": UserFactory.create(role=roles.LEAD),
        "annotator": UserFactory.create(role=roles.ANNOTATOR),
        "auditor": UserFactory.create(role=roles.AUDITOR),
        "both": both,
    }


def _browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(("blind", "hints"), [(True, True), (True, False), (False, False)])
def test_the_sample_api_gives_judge_votes_to_leads_only(blind: bool, hints: bool) -> None:
    """Sample detail and list: an annotator and an auditor get no judge key in ``extra`` and a
    null disagreement flag; the lead gets both; other extra keys stay for everyone."""
    users = _users()
    dataset, sample = _voted_dataset(blind=blind, hints=hints, members=users.values())
    for name, user in users.items():
        client = client_for(user)
        detail = client.get(reverse("api_sample", args=[sample.pk]))
        listed = client.get(reverse("api_dataset_samples", args=[dataset.pk]))
        assert detail.status_code == listed.status_code == 200, name
        for body in (detail.json(), listed.json()["results"][0]):
            assert body["extra"]["source"] == "kept"
            if name == "lead":
                assert body["judges_disagree"] is True
                assert VOTE in str(body["extra"])
            else:
                assert body["judges_disagree"] is None, name
                assert VOTE not in str(body), name
                assert "judge_votes" not in body["extra"], name


def test_only_leads_filter_samples_on_the_judges_votes() -> None:
    """Filtering on the flag would reveal it sample by sample: 403 with a reason for others."""
    users = _users()
    dataset, _sample = _voted_dataset(blind=True, hints=False, members=users.values())
    url = reverse("api_dataset_samples", args=[dataset.pk]) + "?judges_disagree=true"
    assert client_for(users["lead"]).get(url).json()["count"] == 1
    for name in ("annotator", "auditor"):
        refused = client_for(users[name]).get(url)
        assert refused.status_code == 403, name
        assert "judges' votes" in refused.json()["detail"]


def test_the_sample_list_page_hides_the_flag_from_reviewers() -> None:
    """The page drops the judges' filter and badge for readers who may not see votes."""
    users = _users()
    dataset, _sample = _voted_dataset(blind=True, hints=False, members=users.values())
    url = reverse("annotation:sample_list", args=[dataset.pk])
    assert 'name="judges_disagree"' in _browser(users["lead"]).get(url).content.decode()
    page = _browser(users["annotator"]).get(url + "?judges_disagree=false")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="judges_disagree"' not in html
    assert "judges disagree" not in html
    assert "<td>" in html  # the filter was dropped, not applied: the sample is listed


@pytest.mark.parametrize(
    ("blind", "hints", "shown"), [(True, True, False), (False, False, False), (False, True, True)]
)
def test_the_workbench_shows_votes_only_when_hints_are_on_and_review_is_not_blind(
    blind: bool, hints: bool, shown: bool
) -> None:
    """Blind review or hints off: no vote and no "Judges disagree" badge for the reviewer;
    the lead always sees them."""
    users = _users()
    _dataset, sample = _voted_dataset(blind=blind, hints=hints, members=users.values())
    url = reverse("review:workbench", args=[sample.pk])
    html = _browser(users["annotator"]).get(url).content.decode()
    assert (VOTE in html) is shown
    assert ("Judges disagree" in html) is shown
    lead_html = _browser(users["lead"]).get(url).content.decode()
    assert VOTE in lead_html


def test_the_claim_response_carries_no_judge_vote() -> None:
    """The leased sample's fields are the reviewable ones: no extra, no notes, no flag."""
    users = _users()
    dataset, _sample = _voted_dataset(blind=True, hints=False, members=users.values())
    response = client_for(users["annotator"]).post(
        reverse("api_review_claim", args=[dataset.pk]), {}, format="json"
    )
    assert response.status_code == 200
    assert VOTE not in str(response.json())
    assert "judges_disagree" not in str(response.json())


def test_only_annotators_and_leads_claim_and_submit_review_work() -> None:
    """An auditor who is not an annotator gets 403 from the claim, submit, draft and skip APIs
    and from the claim and workbench pages; a user holding both roles may review."""
    users = _users()
    dataset, sample = _voted_dataset(blind=True, hints=False, members=users.values())
    auditor = client_for(users["auditor"])
    assert (
        auditor.post(reverse("api_review_claim", args=[dataset.pk]), {}, format="json").status_code
        == 403
    )
    review = {"client_uuid": str(uuid.uuid4()), "sample": sample.pk, "decision": "accept"}
    assert auditor.post(reverse("api_reviews"), review, format="json").status_code == 403
    draft = reverse("api_review_draft", args=[sample.pk])
    assert auditor.put(draft, {"payload": {}}, format="json").status_code == 403
    skip = reverse("api_review_skip", args=[sample.pk])
    assert auditor.post(skip, {"reason": "no"}, format="json").status_code == 403
    assert (
        _browser(users["auditor"]).post(reverse("review:next", args=[dataset.pk])).status_code
        == 403
    )
    workbench = reverse("review:workbench", args=[sample.pk])
    assert _browser(users["auditor"]).get(workbench).status_code == 403
    queue = _browser(users["auditor"]).get(reverse("review:queue", args=[dataset.pk]))
    assert 'id="start-review"' not in queue.content.decode()
    assert 'id="not-a-reviewer"' in queue.content.decode()
    for name in ("both", "annotator"):
        claimed = client_for(users[name]).post(
            reverse("api_review_claim", args=[dataset.pk]), {}, format="json"
        )
        assert claimed.status_code == 200, name
    submitted = client_for(users["both"]).post(reverse("api_reviews"), review, format="json")
    assert submitted.status_code == 201


def test_snapshot_exports_with_judge_votes_are_for_leads_only() -> None:
    """Release snapshots (whose review layout carries the judge votes) refuse reviewers and
    auditors."""
    users = _users()
    dataset, _sample = _voted_dataset(blind=True, hints=False, members=users.values())
    url = reverse("api_dataset_snapshots", args=[dataset.pk])
    for name in ("annotator", "auditor", "both"):
        assert client_for(users[name]).get(url).status_code == 403, name
    assert client_for(users["lead"]).get(url).status_code == 200
