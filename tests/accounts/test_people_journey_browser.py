"""A team is brought in and run in the browser, from a site with one lead and no one else.

The lead (made by ``manage.py create_lead``) invites two annotators and an auditor by
e-mail; a real SMTP server receives the mails; each person follows the link from their mail
in Chromium, sets a password and reviews or rates. The lead changes one person's role in
one dataset, deactivates another (whose open session and API token stop at once, whose
review stays) and reads all of it in the access log. No admin page, no shell after the
command. The datasets are seeded with the import's and the audit's own services (their
journeys are tested elsewhere); the review dataset holds real LogicVista images.
"""

from __future__ import annotations

import io
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from accounts.models import AccessEvent, AccessEventKind
from annotation.models import DatasetMembership
from judging.models import AuditRating
from review.models import Review
from tests.conftest import SHARED_DATA
from tests.judging import audit_factories as af
from tests.review.factories import logicvista_dataset
from tests.support.browser import chromium
from tests.support.smtp import Mailbox, first_link, smtp_server

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.shared_data,
    pytest.mark.django_db(transaction=True),
]

LEAD_PASSWORD = "lead-pass-for-the-journey-7"


@pytest.fixture
def mailbox(settings: Any) -> Iterator[Mailbox]:
    """The site sends its mail by SMTP to a real server this test started."""
    with smtp_server() as box:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = box.host, box.port
        settings.EMAIL_USE_TLS = False
        settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
        yield box


def _create_lead() -> None:
    """The documented first step of a production site: ``manage.py create_lead``."""
    stdin = sys.stdin
    try:
        sys.stdin = io.StringIO(LEAD_PASSWORD + "\n")
        call_command("create_lead", "lena", "--email", "lena@example.org", "--password-stdin")
    finally:
        sys.stdin = stdin


def _sign_in(page: Any, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form [type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


def _accept(page: Any, link: str, username: str) -> None:
    page.goto(link)
    page.fill("#accept-form input[name=username]", username)
    page.fill("#accept-form input[name=password1]", f"{username}-pass-for-tests-9")
    page.fill("#accept-form input[name=password2]", f"{username}-pass-for-tests-9")
    page.click("#accept-form button[type=submit]")
    page.wait_for_url(lambda url: "/invitations/" not in url)


def _api_status(base: str, key: str) -> int:
    request = urllib.request.Request(f"{base}/api/me/", headers={"Authorization": f"Token {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_a_lead_brings_a_team_in_and_runs_it_in_the_browser(
    live_server: Any, mailbox: Mailbox
) -> None:
    _create_lead()
    image = (SHARED_DATA / "logicvista" / "images" / "v1_287.png").read_bytes()
    reviewed = logicvista_dataset(3, k=2, image=image)
    audited, _judges = af.scoring_dataset(n_samples=3, models=("gpt-4o",))
    audit_set = af.draw(audited, size=2, double_rating_fraction=0)
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["lena"]
    base = live_server.url

    with chromium() as browser:
        lead = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        _sign_in(lead, base, "lena", LEAD_PASSWORD)
        lead.click("#nav-people")
        lead.click("#to-invitations")
        lead.fill("#invite-form textarea[name=emails]", "ann@example.org\nbob@example.org")
        lead.select_option("#invite-form select[name=role]", "annotator")
        lead.check(f"#invite-form input[name=datasets][value='{reviewed.pk}']")
        lead.click("#invite-form button[type=submit]")
        assert "2 invitations were sent." in lead.inner_text(".messages")
        lead.fill("#invite-form textarea[name=emails]", "cy@example.org")
        lead.select_option("#invite-form select[name=role]", "auditor")
        lead.check(f"#invite-form input[name=datasets][value='{audited.pk}']")
        lead.click("#invite-form button[type=submit]")
        assert "1 invitation was sent." in lead.inner_text(".messages")
        assert lead.locator("#invitations td[data-state=pending]").count() == 3

        people = {}
        for name in ("ann", "bob", "cy"):
            message = mailbox.to(f"{name}@example.org")
            assert "invites you to the review studio" in str(message["Subject"])
            link = first_link(message, r"http://\S+/invitations/\d+/\w+/")
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            _accept(page, link, name)
            people[name] = page

        for name in ("ann", "bob"):  # annotators land on the review queue of their dataset
            page = people[name]
            assert page.url.endswith(f"/review/datasets/{reviewed.pk}/")
            page.click("#start-review")
            page.wait_for_url("**/review/samples/*/")
            first = page.url
            page.keyboard.press("a")
            page.keyboard.press("Control+Enter")
            page.wait_for_url(lambda url, first=first: url != first)  # the next sample
        assert set(Review.objects.values_list("reviewer__username", flat=True)) == {"ann", "bob"}

        auditor = people["cy"]  # the auditor lands on the audits of her dataset
        assert auditor.url.endswith(f"/datasets/{audited.pk}/audits/")
        auditor.goto(f"{base}/audits/{audit_set.pk}/")
        auditor.click("#start-rating")
        auditor.wait_for_url("**/audit-items/*/rate/")
        first = auditor.url
        auditor.keyboard.press("1")
        auditor.keyboard.press("r")
        auditor.keyboard.press("Enter")
        auditor.wait_for_url(lambda url: url != first)  # saved: the next item opens
        assert AuditRating.objects.get().auditor.username == "cy"

        # Ann makes an API token, still signed in in her browser.
        ann = people["ann"]
        ann.goto(f"{base}/account/token/")
        ann.click("button[value=create]")
        key = ann.inner_text("#token-key").strip()
        assert _api_status(base, key) == 200

        # The lead makes Bob an auditor in the review dataset, and deactivates Ann.
        lead.goto(f"{base}/people/")
        row = lead.locator("tr[data-person=bob]")
        form = row.locator(f"form.person-dataset[data-dataset='{reviewed.name}']")
        form.locator("select[name=role]").select_option("auditor")
        form.locator("button:not([name=remove])").click()
        assert "is saved" in lead.inner_text(".messages")
        membership = DatasetMembership.objects.get(user__username="bob", dataset=reviewed)
        assert (membership.annotates, membership.audits) == (False, True)
        lead.locator("tr[data-person=ann] form.person-activation button").click()
        assert "is deactivated" in lead.inner_text(".messages")

        ann.goto(f"{base}/datasets/")
        assert "/login/" in ann.url  # her open session ended
        assert _api_status(base, key) in (401, 403)  # her token too
        ann.fill("input[name=username]", "ann")
        ann.fill("input[name=password]", "ann-pass-for-tests-9")
        ann.click("form [type=submit]")
        assert "deactivated" in ann.inner_text("#login-error")
        assert Review.objects.filter(reviewer__username="ann").count() == 1
        row = lead.locator("tr[data-person=ann]")
        lead.reload()
        assert row.locator(".person-reviews").inner_text() == "1"
        assert "Deactivated" in row.locator(".person-state").inner_text()

        # Bob, now an auditor there, can no longer take review work in that dataset.
        bob = people["bob"]
        bob.goto(f"{base}/review/datasets/{reviewed.pk}/")
        assert bob.locator("#start-review").count() == 0

        # The lead reads all of it in the access log, and filters it.
        lead.goto(f"{base}/people/access-log/")
        kinds = set(
            lead.locator("#access-log tr[data-kind]").evaluate_all(
                "rows => rows.map(r => r.dataset.kind)"
            )
        )
        assert {
            "lead_created",
            "invited",
            "invitation_accepted",
            "member_added",
            "member_role_changed",
            "deactivated",
            "signed_in",
            "sign_in_failed",
        } <= kinds
        lead.fill("#access-filter input[name=person]", "ann")
        lead.select_option("#access-filter select[name=kind]", "deactivated")
        lead.click("#access-filter button[type=submit]")
        rows = lead.locator("#access-log tr[data-kind]")
        assert rows.count() == 1
        assert rows.locator(".event-actor").inner_text() == "lena"
        assert AccessEvent.objects.filter(kind=AccessEventKind.INVITED).count() == 3
