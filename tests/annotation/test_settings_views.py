"""The dataset settings pages: members, taxonomy, delete or archive; leads only."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from pytest_django.asserts import assertInHTML

from annotation import services
from annotation.models import Dataset, DatasetKind, DatasetMembership, TaxonomyTerm, TermKind
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _urls(dataset: Dataset) -> list[tuple[str, str]]:
    term = TaxonomyTerm.objects.filter(dataset=dataset).first()
    assert term is not None
    return [
        ("get", reverse("annotation:dataset_members", args=[dataset.pk])),
        ("post", reverse("annotation:dataset_member_remove", args=[dataset.pk, 1])),
        ("get", reverse("annotation:dataset_taxonomy", args=[dataset.pk])),
        ("post", reverse("annotation:taxonomy_term_edit", args=[dataset.pk, term.pk])),
        ("get", reverse("annotation:dataset_delete", args=[dataset.pk])),
        ("post", reverse("annotation:dataset_archive", args=[dataset.pk])),
    ]


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_settings_pages_refuse_non_leads_with_the_reason_shown(
    role: str, annotator: Any, auditor: Any
) -> None:
    """A member annotator or auditor gets a 403 page that says only leads may change settings,
    and the POST endpoints change nothing."""
    user = {"annotator": annotator, "auditor": auditor}[role]
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=user)
    client = _client(user)
    for method, url in _urls(dataset):
        response = getattr(client, method)(url, {"archived": "1", "action": "retire"})
        assert response.status_code == 403, url
        assert "Only project leads may change a dataset&#x27;s settings." in response.text
    dataset.refresh_from_db()
    assert not dataset.archived
    assert not TaxonomyTerm.objects.filter(retired=True).exists()


def test_dataset_page_links_to_the_settings_pages(lead: Any) -> None:
    """The lead's dataset page links to members, taxonomy and delete-or-archive."""
    dataset = mmooc_dataset()
    page = _client(lead).get(reverse("annotation:dataset_detail", args=[dataset.pk])).text
    for name in ("dataset_members", "dataset_taxonomy", "dataset_delete"):
        assert reverse(f"annotation:{name}", args=[dataset.pk]) in page


def test_members_page_lists_adds_and_removes(
    lead: Any, annotator: Any, auditor: Any, django_assert_num_queries: Any
) -> None:
    """The page lists members with their roles in the dataset in a fixed number of queries,
    suggests the people who are not members yet (no member, nobody deactivated), adds a member
    by username and removes one."""
    dataset = mmooc_dataset()
    for _ in range(3):
        services.dataset_add_member(dataset=dataset, user=UserFactory.create(role="annotator"))
    client = _client(lead)
    url = reverse("annotation:dataset_members", args=[dataset.pk])
    client.get(url)
    gone = UserFactory.create(role="annotator", is_active=False)
    # session, user, roles, dataset, memberships (with their roles in the dataset), candidates
    with django_assert_num_queries(6):
        page = client.get(url)
    assert page.text.count("Annotator") >= 3
    suggested = re.search(r'<datalist id="member-candidates">(.*?)</datalist>', page.text, re.S)
    assert suggested is not None and f'value="{auditor.username}"' in suggested.group(1)
    member = DatasetMembership.objects.filter(dataset=dataset).first()
    assert member is not None and f'value="{member.user.username}"' not in suggested.group(1)
    assert f'value="{gone.username}"' not in suggested.group(1)
    assert 'list="member-candidates"' in page.text
    response = client.post(url, {"username": auditor.username}, follow=True)
    assert f"{auditor.username} was added." in response.text
    assert "Auditor" in response.text
    remove = reverse("annotation:dataset_member_remove", args=[dataset.pk, auditor.pk])
    response = client.post(remove, follow=True)
    assert f"{auditor.username} was removed." in response.text
    assert not DatasetMembership.objects.filter(dataset=dataset, user=auditor).exists()
    del annotator


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("ghost", "There is no user named “ghost”."),
        ("leader", "is neither an annotator nor an auditor"),
        ("member", "is already a member of this dataset."),
    ],
)
def test_members_form_shows_clear_errors(
    lead: Any, annotator: Any, username: str, message: str
) -> None:
    """An unknown user, a user without the annotator or auditor role and an existing member
    are refused on the page with a 400 and the reason next to the field."""
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    name = {"ghost": "ghost", "leader": lead.username, "member": annotator.username}[username]
    url = reverse("annotation:dataset_members", args=[dataset.pk])
    response = _client(lead).post(url, {"username": name})
    assert response.status_code == 400
    text = response.text.replace("&#x27;", "'").replace("&ldquo;", "“").replace("&rdquo;", "”")
    assert message in text
    assert DatasetMembership.objects.filter(dataset=dataset).count() == 1


def test_taxonomy_page_lists_terms_by_kind_in_one_query(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Every kind an image-question dataset's samples use is listed, with its terms, in a
    number of queries that does not grow with the terms; the tri-modal kinds are not offered
    (a rough edge of issue 29: "tri-modal kinds on an image-question taxonomy")."""
    dataset = mmooc_dataset()
    client = _client(lead)
    url = reverse("annotation:dataset_taxonomy", args=[dataset.pk])
    client.get(url)
    # session, user, roles, dataset, terms
    with django_assert_num_queries(5):
        page = client.get(url)
    for label in ("Answerability group", "Category", "Question format", "Scenario"):
        assertInHTML(f"<h2>{label}</h2>", page.text)
    assert "VFP" in page.text
    for label in ("Safety category", "Safety subcategory"):
        assertInHTML(f"<h2>{label}</h2>", page.text, count=0)
    for kind in ("safety_category", "safety_subcategory"):
        assert f'value="{kind}"' not in page.text
    assert 'value="scenario"' in page.text


def test_a_trimodal_taxonomy_page_offers_only_the_safety_kinds(lead: Any) -> None:
    """A tri-modal dataset's taxonomy lists and offers its safety kinds, and only the presets
    for tri-modal datasets; adding an image-question kind by a crafted post is refused."""
    dataset = services.dataset_create(name="scenarios", kind=DatasetKind.TRIMODAL)
    client = _client(lead)
    url = reverse("annotation:dataset_taxonomy", args=[dataset.pk])
    page = client.get(url)
    for label in ("Safety category", "Safety subcategory"):
        assertInHTML(f"<h2>{label}</h2>", page.text)
    for label in ("Answerability group", "Category", "Question format", "Scenario"):
        assertInHTML(f"<h2>{label}</h2>", page.text, count=0)
    assert 'value="safety_category"' in page.text
    assert 'value="group"' not in page.text
    assert 'value="mcbench"' in page.text
    assert 'value="mmooc"' not in page.text
    crafted = client.post(url, {"action": "add", "kind": "group", "code": "ooc", "name": "OOC"})
    assert crafted.status_code == 400
    assert not TaxonomyTerm.objects.filter(dataset=dataset).exists()
    wrong_preset = client.post(url, {"action": "load_preset", "preset": "mmooc"})
    assert wrong_preset.status_code == 400
    assert not TaxonomyTerm.objects.filter(dataset=dataset).exists()


def test_taxonomy_page_adds_renames_retires_and_loads(lead: Any) -> None:
    """A lead adds a term, renames it, retires it and brings it back, and loads a preset's
    terms into an empty dataset; a duplicate is refused on the page."""
    dataset = services.dataset_create(name="empty", kind="image_question")
    client = _client(lead)
    url = reverse("annotation:dataset_taxonomy", args=[dataset.pk])
    add = {"action": "add", "kind": "scenario", "code": "dusk", "name": "Dusk"}
    assert "The term “dusk” was added." in client.post(url, add, follow=True).text
    duplicate = client.post(url, add)
    assert duplicate.status_code == 400
    assert "already exists" in duplicate.text
    term = TaxonomyTerm.objects.get(dataset=dataset, code="dusk")
    edit = reverse("annotation:taxonomy_term_edit", args=[dataset.pk, term.pk])
    assert client.get(url).text.count(f'action="{edit}"') == 2  # rename, and retire
    client.post(edit, {"action": "rename", "name": "Evening", "name_zh": "傍晚"})
    client.post(edit, {"action": "retire"})
    term.refresh_from_db()
    assert (term.name, term.name_zh, term.retired) == ("Evening", "傍晚", True)
    assert "Retired" in client.get(url).text
    client.post(edit, {"action": "restore"})
    term.refresh_from_db()
    assert not term.retired
    loaded = client.post(url, {"action": "load_preset", "preset": "mmooc"}, follow=True)
    assert "terms were loaded." in loaded.text
    assert TaxonomyTerm.objects.filter(dataset=dataset, kind=TermKind.CATEGORY).exists()
    assert list(
        TaxonomyTerm.objects.filter(dataset=dataset, kind=TermKind.SCENARIO).values_list(
            "code", flat=True
        )
    ) == ["dusk"]


def test_delete_page_confirms_then_deletes(lead: Any) -> None:
    """The delete page asks for confirmation with the sample count; confirming deletes the
    dataset and returns to the list."""
    dataset = mmooc_dataset(name="failed import")
    mmooc_sample(dataset)
    client = _client(lead)
    url = reverse("annotation:dataset_delete", args=[dataset.pk])
    page = client.get(url)
    assert "and its 1 sample? This cannot be undone." in page.text
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    response = client.post(url, follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:dataset_list")
    assert "was deleted." in response.text
    assert not Dataset.objects.filter(pk=dataset.pk).exists()


def test_archived_datasets_are_hidden_unless_asked_for(lead: Any) -> None:
    """Archiving hides a dataset from the list (a toggle shows it, badged) and hides its import
    link; bringing it back shows it again."""
    dataset = mmooc_dataset(name="retired-set")
    client = _client(lead)
    client.post(reverse("annotation:dataset_archive", args=[dataset.pk]), {"archived": "1"})
    listing = reverse("annotation:dataset_list")
    assert "retired-set" not in client.get(listing).text
    shown = client.get(listing, {"archived": "1"}).text
    assert "retired-set" in shown and "Archived" in shown
    detail = client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).text
    assert reverse("annotation:dataset_import", args=[dataset.pk]) not in detail
    client.post(reverse("annotation:dataset_archive", args=[dataset.pk]), {"archived": "0"})
    assert "retired-set" in client.get(listing).text


def test_a_lead_writes_the_instructions_and_sees_them_rendered(lead: Any) -> None:
    """The lead's Markdown is kept and shown as reviewers will see it, its HTML as text."""
    dataset = mmooc_dataset()
    client = _client(lead)
    url = reverse("annotation:dataset_instructions", args=[dataset.pk])
    assert client.get(url).status_code == 200
    text = "## Before you start\n\n- check the **label**\n\n<script>alert(1)</script>"
    response = client.post(url, {"instructions": f"  {text}\n"})
    assert response.status_code == 302
    dataset.refresh_from_db()
    assert dataset.instructions == text
    page = client.get(url).content.decode()
    assert "<h2>Before you start</h2>" in page and "<strong>label</strong>" in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    detail = client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).content.decode()
    assert url in detail


def test_instructions_too_long_are_refused_with_the_limit(lead: Any) -> None:
    """Instructions over the limit get a 400 that names it, and the old ones stay."""
    from annotation.services.datasets import MAX_INSTRUCTIONS_CHARS

    dataset = mmooc_dataset()
    services.dataset_set_instructions(dataset=dataset, instructions="keep me")
    url = reverse("annotation:dataset_instructions", args=[dataset.pk])
    response = _client(lead).post(url, {"instructions": "x" * (MAX_INSTRUCTIONS_CHARS + 1)})
    assert response.status_code == 400
    assert f"at most {MAX_INSTRUCTIONS_CHARS}" in response.content.decode().replace(",", "")
    dataset.refresh_from_db()
    assert dataset.instructions == "keep me"


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_only_leads_change_the_instructions(role: str, annotator: Any, auditor: Any) -> None:
    """An annotator or auditor member gets a 403 and the instructions stay as they were."""
    user = {"annotator": annotator, "auditor": auditor}[role]
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=user)
    url = reverse("annotation:dataset_instructions", args=[dataset.pk])
    client = _client(user)
    assert client.get(url).status_code == 403
    assert client.post(url, {"instructions": "mine"}).status_code == 403
    dataset.refresh_from_db()
    assert dataset.instructions == ""
