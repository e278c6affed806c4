"""API plumbing shared by every app: errors as readable JSON, never a 500 for bad input."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from core.parsers import too_large_message
from core.roles import is_lead, is_reviewer


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Turn Django's ValidationError from services into a 400 with its messages, and Django's
    refusals of over-large requests into a 400 that says so."""
    if isinstance(exc, RequestDataTooBig):
        exc = exceptions.ParseError(too_large_message())
    elif isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        exc = exceptions.ParseError(_("The request holds too many fields or files."))
    elif isinstance(exc, DjangoValidationError):
        detail: Any = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        exc = exceptions.ValidationError(detail=detail)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    return drf_exception_handler(exc, context)


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
