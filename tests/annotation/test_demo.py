"""The demo: one user per role and a small dataset of each kind, loaded twice without change."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.demo import demo_load
from annotation.models import Dataset, MediaAsset, Sample

pytestmark = pytest.mark.django_db


def test_demo_loads_every_benchmark_kind_once() -> None:
    """The demo makes three datasets and paired tri-modal samples with audio, idempotently."""
    logins = demo_load()
    assert {login.role for login in logins} == {"lead", "annotator", "auditor"}
    counts = (Dataset.objects.count(), Sample.objects.count(), MediaAsset.objects.count())
    assert counts[0] == 3
    tri = Sample.objects.get(external_id="kitchen-unsafe")
    assert tri.pair is not None and tri.pair.safety_label == "safe"
    assert tri.media_links.filter(role="audio").exists()
    demo_load()
    assert (Dataset.objects.count(), Sample.objects.count(), MediaAsset.objects.count()) == counts


def test_each_demo_role_logs_in_and_sees_what_it_may() -> None:
    """Every printed demo login works; the annotator sees the demo datasets, anonymous nothing."""
    logins = demo_load()
    for login in logins:
        client = Client()
        response = client.post(
            "/login/", {"username": login.username, "password": login.password, "next": "/"}
        )
        assert response.status_code == 302, login.username
        page = client.get("/datasets/").content.decode()
        assert "Demo MMOOC" in page and "Demo MCBench" in page
        creating = client.get("/datasets/new/").status_code
        assert creating == (200 if login.role == "lead" else 403)
    anonymous = Client().get("/datasets/")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
