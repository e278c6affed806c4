"""The site's handler500 (mmooc_site.views.server_error): a database that cannot be reached is
a 503 with Retry-After, JSON on the API and a plain page elsewhere; any other error is a 500.
(tests/core/test_jobs_database_restart.py sees the 503 from a real web process while its
PostgreSQL is stopped.)"""

from __future__ import annotations

import json

import pytest
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.test import RequestFactory

from mmooc_site import views


def _answer(path: str, error: Exception) -> HttpResponse:
    request = RequestFactory().get(path)
    try:
        raise error
    except Exception:
        return views.server_error(request)


@pytest.mark.parametrize("error", [OperationalError("gone"), InterfaceError("closed")])
def test_a_database_out_of_reach_is_a_503_on_the_api_and_on_pages(error: Exception) -> None:
    api = _answer("/api/me/", error)
    assert api.status_code == 503 and api["Retry-After"] == "10"
    assert "database cannot be reached" in json.loads(api.content)["detail"]
    page = _answer("/datasets/", error)
    assert page.status_code == 503 and page["Retry-After"] == "10"
    assert b"Temporarily unavailable" in page.content


def test_any_other_error_is_djangos_500() -> None:
    assert _answer("/api/me/", ValueError("bug")).status_code == 500
