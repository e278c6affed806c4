"""API plumbing shared by every app: errors as readable JSON, never a 500 for bad input."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from core.parsers import too_large_message
from core.roles import is_lead, is_reviewer

# A service's refusal with one of these codes is about the object's present state, not the
# request (retry what has not failed, cancel what has ended, delete the built-in judge, test a
# judge that makes no calls, redeliver what is still being tried, gold an unsettled sample):
# 409 Conflict, the same request may succeed later. Other refusals are 400.
CONFLICT_CODES = frozenset(
    {"not_failed", "ended", "not_ended", "finished", "not_retryable", "built_in", "not_endpoint"}
    | {"active"}
    | {"not_verified"}
    # The dataset holds samples of another kind than the format imports, or than the
    # fields a reviewer edits.
    | {"wrong_kind", "other_kind_field"}
    # A change that would leave a sample breaking its format's rules (an empty question, an
    # answer that is no option): the rules of the sample as it stands.
    | {"breaks_sample_rules"}
    # Samples assigned to someone who is not (yet) an annotator of the dataset.
    | {"not_annotator"}
    # A lead's saved view of the sample list with the name of one they already have.
    | {"duplicate_name"}
)
# A service's refusal with one of these codes names something that does not exist (a code
# the dataset's taxonomy does not have, a path or object no one stored): 404 Not Found.
NOT_FOUND_CODES = frozenset(
    {"unknown_code", "no_path"}
    # review.editing: a value the dataset's taxonomy does not have
    | {"unknown_group", "unknown_category", "unknown_scenario"}
    | {"unknown_safety_category", "unknown_safety_subcategory"}
)
# ... or asks for what the site's settings do not allow to anyone (a server path outside the
# import roots): 403 Forbidden.
FORBIDDEN_CODES = frozenset({"path_not_allowed"})


class Conflict(exceptions.APIException):
    status_code = 409
    default_detail = gettext_lazy("The object's state does not allow this now.")
    default_code = "conflict"


def job_accepted(data: Any, *, url_name: str, job_id: int) -> Response:
    """The answer to a job's start (import, snapshot, judge job, bulk action): 202 Accepted
    with the job and, in ``Location``, the URL to follow its progress at."""
    return Response(data, status=202, headers={"Location": reverse(url_name, args=[job_id])})


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Turn Django's ValidationError from services into a 400 with its messages, and Django's
    refusals of over-large requests into a 400 that says so."""
    if isinstance(exc, RequestDataTooBig):
        exc = exceptions.ParseError(too_large_message())
    elif isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        exc = exceptions.ParseError(_("The request holds too many fields or files."))
    elif isinstance(exc, DjangoValidationError) and _all_codes_in(exc, CONFLICT_CODES):
        exc = Conflict(detail={"detail": exc.messages})
    elif isinstance(exc, DjangoValidationError) and _all_codes_in(exc, NOT_FOUND_CODES):
        exc = exceptions.NotFound(detail={"detail": exc.messages})
    elif isinstance(exc, DjangoValidationError) and _all_codes_in(
        exc, CONFLICT_CODES | NOT_FOUND_CODES
    ):
        # A value the taxonomy lacks beside a rule the object's state breaks: a conflict.
        exc = Conflict(detail={"detail": exc.messages})
    elif isinstance(exc, DjangoValidationError) and _all_codes_in(exc, FORBIDDEN_CODES):
        exc = exceptions.PermissionDenied(detail={"detail": exc.messages})
    elif isinstance(exc, DjangoValidationError):
        detail: Any = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        exc = exceptions.ValidationError(detail=detail)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    return drf_exception_handler(exc, context)


def _all_codes_in(exc: DjangoValidationError, codes: frozenset[str]) -> bool:
    errors = (
        [e for field in exc.error_dict.values() for e in field]
        if hasattr(exc, "error_dict")
        else exc.error_list
    )
    return all(error.code in codes for error in errors)


class IsLead(permissions.BasePermission):
    """Only leads import, configure and export."""

    message = "Only project leads may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.is_authenticated and is_lead(request.user))


class IsReviewer(permissions.BasePermission):
    """Only annotators (and leads) claim and submit review work."""

    message = gettext_lazy("Only annotators may claim or submit review work.")

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.is_authenticated and is_reviewer(request.user))
