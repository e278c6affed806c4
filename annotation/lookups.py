"""What views and APIs of every app look up first: a dataset the request may see, or a 404.

One typed helper for pages and APIs alike (Django REST framework answers ``Http404`` as its
own 404, with the message).
"""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.utils.translation import gettext as _

from annotation import selectors
from annotation.models import Dataset


def dataset_or_404(request: HttpRequest, dataset_id: int) -> Dataset:
    """The dataset, when the request's user may see it; otherwise a 404."""
    dataset = selectors.dataset_get_visible(user=request.user, dataset_id=dataset_id)
    if dataset is None:
        raise Http404(_("No such dataset."))
    return dataset
