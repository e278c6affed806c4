"""REST API of quality in consensus: the reviewers a lead excluded from a dataset's consensus,
excluding one (``POST``) and counting them again (``DELETE ?reviewer=``). Leads only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.lookups import dataset_or_404
from core.api import IsLead
from core.roles import request_user
from review.exclusions import selectors as consensus_selectors
from review.exclusions import services as exclusions


class ExclusionOutput(serializers.Serializer[Any]):
    reviewer = serializers.CharField()
    excluded_by = serializers.CharField()
    excluded_at = serializers.CharField()
    reason = serializers.CharField()


class ResettledOutput(serializers.Serializer[Any]):
    affected = serializers.IntegerField()
    resettled = serializers.IntegerField()
    returned = serializers.IntegerField()
    left = serializers.IntegerField()


def _refused(exc: ValidationError) -> Response:
    detail: Any = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
    return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)


def _reviewer(username: str) -> User:
    """The named user: 400 when none is named, 404 when nobody has the name."""
    if not username:
        raise serializers.ValidationError({"reviewer": [_("This field is required.")]})
    reviewer = User.objects.filter(username=username).first()
    if reviewer is None:
        raise NotFound(_("No such reviewer."))
    return reviewer


class ReviewerExclusionsApi(APIView):
    permission_classes = [IsLead]

    class ExcludeInput(serializers.Serializer[Any]):
        reviewer = serializers.CharField(max_length=150)
        reason = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(responses=ExclusionOutput(many=True))
    def get(self, request: Request, dataset_id: int) -> Response:
        dataset = dataset_or_404(request, dataset_id)
        rows = consensus_selectors.excluded_reviewers(dataset=dataset)
        return Response(ExclusionOutput(rows, many=True).data)

    @extend_schema(request=ExcludeInput, responses={201: ResettledOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Exclude the reviewer (by username) from the dataset's consensus; the samples they
        reviewed are settled again or go back to review (the counts answer)."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.ExcludeInput(data=request.data)
        payload.is_valid(raise_exception=True)
        reviewer = _reviewer(payload.validated_data["reviewer"])
        try:
            result = exclusions.reviewer_exclude(
                dataset=dataset,
                reviewer=reviewer,
                by=request_user(request),
                reason=payload.validated_data["reason"],
            )
        except ValidationError as exc:
            return _refused(exc)
        return Response(ResettledOutput(result).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("reviewer", {"type": "string", "minLength": 1}, required=True)
        ],
        request=None,
        responses={200: ResettledOutput},
    )
    def delete(self, request: Request, dataset_id: int) -> Response:
        """Count the reviewer (``?reviewer=username``) in the dataset's consensus again."""
        dataset = dataset_or_404(request, dataset_id)
        reviewer = _reviewer(request.query_params.get("reviewer", ""))
        try:
            result = exclusions.reviewer_include(
                dataset=dataset, reviewer=reviewer, by=request_user(request)
            )
        except ValidationError as exc:
            return _refused(exc)
        return Response(ResettledOutput(result).data)
