"""Review's side of annotation's review port: what annotation may ask of reviews."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import Dataset
from tests.review.factories import review_dataset, submit

pytestmark = pytest.mark.django_db


def test_a_dataset_with_a_review_cannot_be_deleted_but_can_be_archived(
    annotator: Any, lead: Any
) -> None:
    """Once one review is submitted, the port reports reviews: the delete page refuses and
    offers archiving, a forced POST deletes nothing, and archiving works."""
    dataset = review_dataset(n=2, members=[annotator])
    assert annotation_services.dataset_deletable(dataset=dataset)
    first = dataset.samples.first()
    assert first is not None
    submit(annotator, first)
    assert not annotation_services.dataset_deletable(dataset=dataset)
    with pytest.raises(ValidationError):
        annotation_services.dataset_delete(dataset=dataset)
    client = Client()
    client.force_login(lead)
    url = reverse("annotation:dataset_delete", args=[dataset.pk])
    page = client.get(url).text
    assert "holds reviews, so it cannot be deleted" in page
    assert 'id="confirm-delete"' not in page
    assert 'id="archive"' in page
    response = client.post(url, follow=True)
    assert "archive it instead" in response.text
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    client.post(reverse("annotation:dataset_archive", args=[dataset.pk]), {"archived": "1"})
    dataset.refresh_from_db()
    assert dataset.archived
