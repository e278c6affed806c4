"""What views and APIs of every app look up first: a dataset the request may see, or a 404.

One typed helper for pages and APIs alike (Django REST framework answers ``Http404`` as its
own 404, with the message).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.utils.functional import Promise
from django.utils.translation import gettext as _

from annotation import selectors
from annotation.models import Dataset


def dataset_or_404(
    request: HttpRequest,
    dataset_id: int,
    *,
    role: str | None = None,
    refusal: str | Promise | None = None,
) -> Dataset:
    """The dataset, when the request's user may see it (and work in it in ``role``, when
    given); otherwise a 404, or a 403 with ``refusal`` for a member without that role."""
    dataset = selectors.dataset_get_visible(user=request.user, dataset_id=dataset_id, role=role)
    if dataset is None:
        if role is not None and selectors.dataset_get_visible(
            user=request.user, dataset_id=dataset_id
        ):
            raise PermissionDenied(refusal or _("Your role in this dataset does not allow this."))
        raise Http404(_("No such dataset."))
    return dataset
