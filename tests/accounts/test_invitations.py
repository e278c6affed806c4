"""Invitations (accounts/invitations.py and the Invitations and acceptance pages): made for
one or many addresses, sent by mail, single use, expiring, revocable and sent again; a bad
link or a bad address gets a message and changes nothing."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts import invitations
from accounts.models import AccessEvent, AccessEventKind, Invitation
from annotation.models import DatasetMembership
from core.roles import ANNOTATOR, AUDITOR, LEAD
from tests.annotation.factories import UserFactory, mmooc_dataset

pytestmark = pytest.mark.django_db

BASE = "http://testserver"


def _browser(user: Any = None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _link(message: Any) -> str:
    found = re.search(r"http://testserver(/invitations/\d+/\w+/)", message.body)
    assert found, message.body
    return found.group(1)


def _invite(lead: Any, *emails: str, role: str = ANNOTATOR, datasets: Any = ()) -> list[Invitation]:
    made = invitations.invitations_create(
        emails=list(emails), role=role, datasets=list(datasets), actor=lead
    )
    invitations.invitations_send(invitations=made, base_url=BASE)
    return made


def test_a_lead_invites_several_people_and_each_gets_a_working_link(lead: Any) -> None:
    """Three addresses in one form: three invitations, three mails each with its own link;
    the page lists them as pending with their links to copy."""
    dataset = mmooc_dataset()
    page = _browser(lead).post(
        reverse("accounts:invitations"),
        {
            "emails": "ann@example.org, bob@example.org\ncarla@example.org",
            "role": ANNOTATOR,
            "datasets": [dataset.pk],
        },
        follow=True,
    )
    assert "3 invitations were sent." in page.content.decode()
    assert sorted(m.to[0] for m in mail.outbox) == [
        "ann@example.org",
        "bob@example.org",
        "carla@example.org",
    ]
    links = {_link(m) for m in mail.outbox}
    assert len(links) == 3
    listed = page.content.decode()
    assert all(link in listed for link in links)
    assert listed.count('data-state="pending"') == 3
    assert AccessEvent.objects.filter(kind=AccessEventKind.INVITED).count() == 3


def test_accepting_sets_a_password_and_lands_on_the_work(lead: Any) -> None:
    """The link opens a form; a username and password make the account in the invitation's
    role and datasets, sign the person in and open their review queue; the link is used."""
    dataset = mmooc_dataset()
    _invite(lead, "ann@example.org", datasets=[dataset])
    link = _link(mail.outbox[0])
    browser = _browser()
    assert "Accept the invitation" in browser.get(link).content.decode()
    response = browser.post(
        link, {"username": "ann", "password1": "a-long-pass-1", "password2": "a-long-pass-1"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("review:queue", args=[dataset.pk])
    ann = get_user_model().objects.get(username="ann")
    assert ann.email == "ann@example.org"
    assert set(ann.groups.values_list("name", flat=True)) == {ANNOTATOR}
    membership = DatasetMembership.objects.get(user=ann, dataset=dataset)
    assert membership.annotates and not membership.audits
    assert browser.get(reverse("annotation:dataset_list")).status_code == 200
    again = _browser().get(link)
    assert again.status_code == 410
    assert "used already" in again.content.decode()
    assert AccessEvent.objects.filter(kind=AccessEventKind.INVITATION_ACCEPTED).exists()


@pytest.mark.parametrize("state", ["expired", "revoked", "used", "forged", "resent"])
def test_a_link_that_cannot_be_used_says_why_and_changes_nothing(lead: Any, state: str) -> None:
    """Expired, revoked, used, forged and superseded links answer 410 with the reason; the
    form posted to them makes no account."""
    (invitation,) = _invite(lead, "ann@example.org", datasets=[mmooc_dataset()])
    link = _link(mail.outbox[0])
    if state == "expired":
        Invitation.objects.filter(pk=invitation.pk).update(
            expires_at=timezone.now() - dt.timedelta(seconds=1)
        )
    elif state == "revoked":
        invitations.invitation_revoke(invitation=invitation, actor=lead)
    elif state == "used":
        invitations.invitation_accept(
            invitation=invitation, username="ann", password="a-long-pass-1"
        )
    elif state == "forged":
        link = link[:-5] + "0000/"
    elif state == "resent":
        invitations.invitation_renew(invitation=invitation, actor=lead)
    users = get_user_model().objects.count()
    page = _browser().post(
        link, {"username": "ann2", "password1": "a-long-pass-1", "password2": "a-long-pass-1"}
    )
    assert page.status_code == 410
    text = page.content.decode()
    reason = {
        "expired": "expired",
        "revoked": "revoked",
        "used": "used already",
        "forged": "not valid",
        "resent": "not valid",
    }[state]
    assert reason in text
    assert get_user_model().objects.count() == users


def test_inviting_an_address_with_an_account_or_a_bad_address_invites_nobody(lead: Any) -> None:
    """One bad address in the list (an account's, one invited already, not an address):
    every reason is shown, no invitation is made, no mail goes."""
    UserFactory.create(email="taken@example.org")
    _invite(lead, "pending@example.org", role=LEAD)
    mail.outbox.clear()
    before = Invitation.objects.count()
    page = _browser(lead).post(
        reverse("accounts:invitations"),
        {
            "emails": "new@example.org TAKEN@example.org pending@example.org not-an-address",
            "role": AUDITOR,
            "datasets": [mmooc_dataset().pk],
        },
    )
    assert page.status_code == 400
    text = page.content.decode().replace("&ldquo;", "“").replace("&rdquo;", "”")
    assert "“TAKEN@example.org” already has an account" in text
    assert "“pending@example.org” is invited already" in text
    assert "“not-an-address” is not an e-mail address." in text
    assert Invitation.objects.count() == before
    assert mail.outbox == []


def test_annotators_need_a_dataset_and_a_bad_role_is_refused(lead: Any) -> None:
    with pytest.raises(ValidationError, match="Choose the datasets"):
        invitations.invitations_create(
            emails=["a@example.org"], role=ANNOTATOR, datasets=[], actor=lead
        )
    with pytest.raises(ValidationError, match="Unknown role"):
        invitations.invitations_create(
            emails=["a@example.org"], role="root", datasets=[], actor=lead
        )
    assert not Invitation.objects.exists()


def test_resending_gives_a_new_link_and_a_new_expiry_and_revoking_ends_it(lead: Any) -> None:
    """Send again: a second mail whose link works, the first link no longer; revoke: the
    state says revoked and the buttons go."""
    (invitation,) = _invite(lead, "ann@example.org", role=AUDITOR, datasets=[mmooc_dataset()])
    Invitation.objects.filter(pk=invitation.pk).update(
        expires_at=timezone.now() - dt.timedelta(days=1)
    )
    browser = _browser(lead)
    listed = browser.get(reverse("accounts:invitations")).content.decode()
    assert 'data-state="expired"' in listed
    browser.post(reverse("accounts:invitation_resend", args=[invitation.pk]))
    assert len(mail.outbox) == 2
    first, second = _link(mail.outbox[0]), _link(mail.outbox[1])
    assert first != second
    assert _browser().get(first).status_code == 410
    assert _browser().get(second).status_code == 200
    invitation.refresh_from_db()
    assert invitation.times_sent == 2
    assert invitation.expires_at > timezone.now() + dt.timedelta(days=6)
    browser.post(reverse("accounts:invitation_revoke", args=[invitation.pk]))
    listed = browser.get(reverse("accounts:invitations")).content.decode()
    assert 'data-state="revoked"' in listed
    assert _browser().get(second).status_code == 410
    twice = browser.post(reverse("accounts:invitation_revoke", args=[invitation.pk]), follow=True)
    assert "was revoked" in twice.content.decode()


def test_a_mail_that_cannot_be_sent_keeps_the_invitation_and_says_so(
    lead: Any, settings: Any
) -> None:
    """With no mail server, the invitation is made, the page names the error and the link
    can be copied from the list."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 2
    page = _browser(lead).post(
        reverse("accounts:invitations"),
        {"emails": "ann@example.org", "role": LEAD},
        follow=True,
    )
    text = page.content.decode()
    assert "was not sent" in text
    invitation = Invitation.objects.get()
    assert invitation.send_error and invitation.times_sent == 0
    assert invitations.invitation_path(invitation) in text


def test_an_invited_lead_joins_no_dataset_and_sees_every_one(lead: Any) -> None:
    """A lead's invitation needs no dataset; the new lead lands on the dataset list."""
    _invite(lead, "lena@example.org", role=LEAD)
    response = _browser().post(
        _link(mail.outbox[0]),
        {"username": "lena", "password1": "a-long-pass-1", "password2": "a-long-pass-1"},
    )
    assert response["Location"] == reverse("annotation:dataset_list")
    lena = get_user_model().objects.get(username="lena")
    assert set(lena.groups.values_list("name", flat=True)) == {LEAD}


def test_the_acceptance_form_refuses_taken_names_and_weak_or_differing_passwords(
    lead: Any,
) -> None:
    """Each problem is shown beside its field (400) and the invitation stays open."""
    UserFactory.create(username="ann")
    _invite(lead, "ann@example.org", datasets=[mmooc_dataset()])
    link = _link(mail.outbox[0])
    cases = [
        ({"username": "ann", "password1": "a-long-pass-1", "password2": "a-long-pass-1"}, "taken"),
        ({"username": "ann2", "password1": "123", "password2": "123"}, "too short"),
        ({"username": "ann2", "password1": "a-long-pass-1", "password2": "other-pass-2"}, "differ"),
        ({"username": "a b", "password1": "a-long-pass-1", "password2": "a-long-pass-1"}, "valid"),
    ]
    for data, message in cases:
        page = _browser().post(link, data)
        assert page.status_code == 400, data
        assert message in page.content.decode(), data
    assert Invitation.objects.get().accepted_at is None


def test_only_leads_open_the_invitations_page(annotator: Any) -> None:
    assert _browser(annotator).get(reverse("accounts:invitations")).status_code == 403
    response = _browser(annotator).post(
        reverse("accounts:invitations"), {"emails": "x@example.org", "role": LEAD}
    )
    assert response.status_code == 403
    assert not Invitation.objects.exists()


def test_the_invitations_page_costs_a_fixed_number_of_queries(
    lead: Any, django_assert_max_num_queries: Any
) -> None:
    dataset = mmooc_dataset()
    _invite(lead, *[f"p{i}@example.org" for i in range(6)], datasets=[dataset])
    browser = _browser(lead)
    with django_assert_max_num_queries(8):
        assert browser.get(reverse("accounts:invitations")).status_code == 200
