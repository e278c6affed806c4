"""The Django admin covers every model, and its list pages open without errors."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from tests.annotation.factories import mmooc_sample

OWN_APPS = ("annotation", "review", "judging", "accounts")


def _own_models() -> list[Any]:
    return [m for app in OWN_APPS for m in apps.get_app_config(app).get_models()]


def test_every_model_of_the_project_has_an_admin_page() -> None:
    """No model of the project is missing from the admin."""
    missing = [m._meta.label for m in _own_models() if m not in admin.site._registry]
    assert missing == []


@pytest.mark.django_db
def test_every_admin_list_page_opens_for_a_superuser() -> None:
    """Each model's admin list page answers 200 with data present."""
    mmooc_sample()
    user = get_user_model().objects.create_superuser("root", "root@example.org", "pw-12345-x")
    client = Client()
    client.force_login(user)
    for model in _own_models():
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert client.get(url).status_code == 200, url
