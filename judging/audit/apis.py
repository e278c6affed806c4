"""REST API of the calibration audit: statistics, claiming an item, submitting a rating.

Auditors and leads of the dataset only: annotators get 403, a set or item they may not see 404.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import IsLead
from core.roles import is_auditor, request_user
from judging.audit import computations, selectors, services
from judging.models import AuditItem, AuditRating, AuditSet


class IsAuditor(permissions.BasePermission):
    """Auditors and leads (leads count as auditors)."""

    message = "Only auditors and project leads may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.is_authenticated and is_auditor(request.user))


def _audit_set(request: Request, audit_set_id: int) -> AuditSet:
    audit_set = selectors.audit_set_get_visible(user=request.user, audit_set_id=audit_set_id)
    if audit_set is None:
        raise NotFound()
    return audit_set


class AuditStatisticsApi(APIView):
    permission_classes = [IsAuditor]

    @extend_schema(responses={200: dict[str, Any], 202: dict[str, Any]})
    def get(self, request: Request, audit_set_id: int) -> Response:
        """Every figure of the audit with its n, 95 % interval and too-small flag, as a worker
        last computed them (``computed_at``; ``computing`` while a newer result is on its way).
        202 with no figures before the first result."""
        audit_set = _audit_set(request, audit_set_id)
        stored = computations.audit_statistics_read(audit_set=audit_set)
        if stored.result is None:
            return Response(
                {"audit_set": audit_set.pk, **stored.as_api()}, status=status.HTTP_202_ACCEPTED
            )
        return Response({**stored.result, **stored.as_api()})


class AuditSetStatusOutput(serializers.ModelSerializer[AuditSet]):
    status_label = serializers.CharField(source="get_status_display", read_only=True)

    class Meta:
        model = AuditSet
        fields = ["id", "name", "status", "status_label", "message", "attempts"]


class AuditSetStatusApi(APIView):
    permission_classes = [IsAuditor]

    @extend_schema(responses=AuditSetStatusOutput)
    def get(self, request: Request, audit_set_id: int) -> Response:
        """Where the drawing of an audit set stands (its page follows it)."""
        return Response(AuditSetStatusOutput(_audit_set(request, audit_set_id)).data)


class AuditSetRetryApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses=AuditSetStatusOutput)
    def post(self, request: Request, audit_set_id: int) -> Response:
        """Draw a failed audit set again."""
        audit_set = services.audit_set_retry(audit_set=_audit_set(request, audit_set_id))
        return Response(AuditSetStatusOutput(audit_set).data)


class AuditClaimOutput(serializers.Serializer[Any]):
    """The leased item as the rating form shows it: never a judge's verdict."""

    class AuditMediaOutput(serializers.Serializer[Any]):
        role = serializers.CharField()
        url = serializers.CharField()

    lease = serializers.IntegerField()
    item = serializers.IntegerField()
    slot = serializers.IntegerField()
    expires_at = serializers.DateTimeField()
    resumed = serializers.BooleanField()
    task = serializers.CharField()
    question = serializers.CharField()
    reference_answer = serializers.CharField()
    reasoning = serializers.CharField()
    response = serializers.CharField(allow_null=True)
    media = AuditMediaOutput(many=True)
    url = serializers.CharField()


class AuditClaimApi(APIView):
    permission_classes = [IsAuditor]

    @extend_schema(request=None, responses={200: AuditClaimOutput, 204: None})
    def post(self, request: Request, audit_set_id: int) -> Response:
        """Lease the next item this auditor should rate; 204 when nothing is left."""
        audit_set = _audit_set(request, audit_set_id)
        user = request_user(request)
        lease = services.audit_claim(audit_set=audit_set, auditor=user)
        if lease is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        view = selectors.audit_item_for_rating(user=user, item_id=lease.item_id)
        assert view is not None  # the claim only leases items of a visible set
        return Response(
            AuditClaimOutput(
                {
                    "lease": lease.lease_id,
                    "item": lease.item_id,
                    "slot": lease.slot,
                    "expires_at": lease.expires_at,
                    "resumed": lease.resumed,
                    "task": audit_set.task,
                    "question": view.sample.question or view.sample.speech_utterance,
                    "reference_answer": view.sample.reference_answer,
                    "reasoning": view.sample.explanation,
                    "response": view.response.response if view.response else None,
                    "media": [
                        {
                            "role": link.role,
                            "url": reverse("annotation:media_file", args=[link.asset_id]),
                        }
                        for link in view.sample.media_links.all()
                    ],
                    "url": reverse("judging:audit_rate", args=[lease.item_id]),
                }
            ).data
        )


class AuditRatingOutput(serializers.ModelSerializer[AuditRating]):
    class Meta:
        model = AuditRating
        fields = [
            "id",
            "item",
            "submission_uuid",
            "answer_score",
            "reasoning_score",
            "refused",
            "safety_label",
            "note",
            "seconds_spent",
            "created_at",
        ]


class AuditRatingCreateApi(APIView):
    permission_classes = [IsAuditor]

    class InputSerializer(serializers.Serializer[Any]):
        item = serializers.IntegerField()
        submission_uuid = serializers.UUIDField()
        # Types are checked by the service's rubric, which names the allowed values.
        answer_score = serializers.JSONField(required=False, default=None)
        reasoning_score = serializers.JSONField(required=False, default=None)
        refused = serializers.JSONField(required=False, default=None)
        safety_label = serializers.JSONField(required=False, default=None)
        note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
        seconds_spent = serializers.FloatField(required=False, default=0.0, min_value=0)

    @extend_schema(
        request=InputSerializer,
        responses={201: AuditRatingOutput, 200: AuditRatingOutput, 409: None},
    )
    def post(self, request: Request) -> Response:
        """Rate an item; the same ``submission_uuid`` sent again returns the first rating (200)."""
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = dict(payload.validated_data)
        user = request_user(request)
        item = AuditItem.objects.select_related("audit_set").filter(pk=data.pop("item")).first()
        if (
            item is None
            or selectors.audit_set_get_visible(user=user, audit_set_id=item.audit_set_id) is None
        ):
            raise NotFound()
        try:
            result = services.audit_rating_submit(auditor=user, item=item, **data)
        except services.AuditConflict as exc:
            return Response({"detail": exc.messages}, status=status.HTTP_409_CONFLICT)
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(AuditRatingOutput(result.rating).data, status=code)
