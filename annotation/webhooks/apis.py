"""The webhooks' API (leads only): endpoints (made with their secret, shown once), a test
event, a delivery's state with its attempts, and Redeliver."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.lookups import dataset_or_404
from annotation.models import SUBSCRIBABLE, WebhookDelivery, WebhookEndpoint
from annotation.webhooks import selectors, services
from core.api import IsLead
from core.roles import acting_user


class EndpointOutput(serializers.ModelSerializer[WebhookEndpoint]):
    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "description", "dataset", "events", "enabled", "created_at"]


class DeliveryOutput(serializers.ModelSerializer[WebhookDelivery]):
    status_label = serializers.CharField(source="get_status_display")
    finished = serializers.SerializerMethodField()
    attempts = serializers.SerializerMethodField()

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "endpoint",
            "event",
            "message_id",
            "payload",
            "status",
            "status_label",
            "finished",
            "tries",
            "next_attempt_at",
            "last_status_code",
            "message",
            "created_at",
            "finished_at",
            "attempts",
        ]

    def get_finished(self, delivery: WebhookDelivery) -> bool:
        return delivery.status in ("succeeded", "failed", "cancelled")

    def get_attempts(self, delivery: WebhookDelivery) -> list[dict[str, Any]]:
        return [
            {
                "number": a.number,
                "started_at": a.started_at,
                "status_code": a.status_code,
                "error": a.error,
                "duration_ms": a.duration_ms,
            }
            for a in selectors.webhook_attempts(delivery=delivery)
        ]


class EndpointListCreateApi(APIView):
    permission_classes = [IsLead]

    class EndpointInput(serializers.Serializer[Any]):
        url = serializers.URLField(max_length=500)
        events = serializers.ListField(
            child=serializers.ChoiceField(choices=[str(e) for e in SUBSCRIBABLE]),
            allow_empty=False,
        )
        dataset = serializers.IntegerField(required=False, allow_null=True, default=None)
        description = serializers.CharField(
            required=False, allow_blank=True, default="", max_length=200
        )

    @extend_schema(responses={200: EndpointOutput(many=True)})
    def get(self, request: Request) -> Response:
        return Response(EndpointOutput(selectors.webhook_endpoints(), many=True).data)

    @extend_schema(request=EndpointInput, responses={201: EndpointOutput})
    def post(self, request: Request) -> Response:
        """Register an endpoint; the answer carries its ``secret``, this once."""
        payload = self.EndpointInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        dataset = dataset_or_404(request, data["dataset"]) if data["dataset"] else None
        endpoint, secret = services.webhook_endpoint_create(
            url=data["url"],
            events=data["events"],
            dataset=dataset,
            description=data["description"],
            created_by=acting_user(request.user),
        )
        return Response(
            {**EndpointOutput(endpoint).data, "secret": secret}, status=status.HTTP_201_CREATED
        )


def _endpoint(endpoint_id: int) -> WebhookEndpoint:
    endpoint = selectors.webhook_endpoint_get(endpoint_id=endpoint_id)
    if endpoint is None:
        raise NotFound
    return endpoint


def _delivery(delivery_id: int) -> WebhookDelivery:
    delivery = selectors.webhook_delivery_get(delivery_id=delivery_id)
    if delivery is None:
        raise NotFound
    return delivery


class EndpointTestApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses={202: DeliveryOutput})
    def post(self, request: Request, endpoint_id: int) -> Response:
        delivery = services.webhook_test_send(
            endpoint=_endpoint(endpoint_id), by=acting_user(request.user)
        )
        return Response(DeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)


class EndpointDeliveriesApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(responses={200: DeliveryOutput(many=True)})
    def get(self, request: Request, endpoint_id: int) -> Response:
        deliveries = selectors.webhook_deliveries(endpoint=_endpoint(endpoint_id))
        return Response(DeliveryOutput(deliveries, many=True).data)


class DeliveryApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(responses={200: DeliveryOutput})
    def get(self, request: Request, delivery_id: int) -> Response:
        return Response(DeliveryOutput(_delivery(delivery_id)).data)


class DeliveryRedeliverApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses={202: DeliveryOutput})
    def post(self, request: Request, delivery_id: int) -> Response:
        delivery = services.webhook_redeliver(delivery=_delivery(delivery_id))
        return Response(DeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)
