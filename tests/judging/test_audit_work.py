"""The auditor's home (judging.audit.work): the dataset list names the audit items waiting for
each auditor, with counts, and links to the dataset's audits."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

from judging.audit import services
from judging.audit.work import auditor_work
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.support.http import browser

pytestmark = pytest.mark.django_db


def test_waiting_items_count_what_the_auditor_can_still_rate(auditor: Any) -> None:
    """Items rated by the auditor, or held by someone else's live lease, wait no more; the
    item the auditor holds still waits for them."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    audit_set = af.draw(dataset, size=8, double_rating_fraction=0)
    other = UserFactory.create(role="auditor")
    assert auditor_work(auditor=auditor, dataset_ids=[dataset.pk])[dataset.pk].waiting == 8
    held = services.audit_claim(audit_set=audit_set, auditor=other)
    assert held is not None
    mine = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert mine is not None
    work = auditor_work(auditor=auditor, dataset_ids=[dataset.pk])[dataset.pk]
    assert [(a.audit_set_id, a.waiting) for a in work.audits] == [(audit_set.pk, 7)]
    af.rate_all(audit_set, [auditor])
    assert auditor_work(auditor=auditor, dataset_ids=[dataset.pk])[dataset.pk].waiting == 0


def test_the_auditors_home_lists_their_audit_work_with_links(
    auditor: Any, annotator: Any, django_assert_max_num_queries: Any
) -> None:
    """An auditor's dataset list shows, per dataset, each audit with the items waiting for
    them and a link to the dataset's audits, in a fixed number of queries; an annotator sees
    a dash."""
    datasets = []
    for n in (6, 4):
        dataset, _ = af.scoring_dataset(n_samples=n)
        af.add_member(dataset, auditor)
        af.add_member(dataset, annotator)
        af.draw(dataset, size=n, double_rating_fraction=0)
        datasets.append(dataset)
    client = browser(auditor)
    url = reverse("annotation:dataset_list")
    client.get(url)
    with django_assert_max_num_queries(12):
        html = client.get(url).content.decode()
    assert sorted(int(n) for n in re.findall(r'data-audit-waiting="(\d+)"', html)) == [4, 6]
    for dataset in datasets:
        assert reverse("judging:audit_list", args=[dataset.pk]) in html
    assert "items wait for you" in html
    other = browser(annotator).get(url).content.decode()
    assert "data-audit-waiting" not in other and "My audit work" in other
