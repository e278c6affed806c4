"""REST API of judge tests: queue one small call to a judge, and read its outcome."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import IsLead
from core.jobs import ACTIVE
from core.roles import acting_user
from judging import selectors
from judging.models import Judge, JudgeCheck
from judging.services import checks as check_services


class JudgeCheckOutput(serializers.ModelSerializer[JudgeCheck]):
    finished = serializers.SerializerMethodField()
    error_label = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = JudgeCheck
        fields = [
            "id",
            "judge",
            "status",
            "finished",
            "ok",
            "latency_ms",
            "reply",
            "error_kind",
            "error_label",
            "error",
            "message",
            "created_at",
            "finished_at",
            "url",
        ]

    def get_finished(self, check: JudgeCheck) -> bool:
        return check.status not in ACTIVE

    def get_error_label(self, check: JudgeCheck) -> str:
        return check_services.error_label(check)

    def get_url(self, check: JudgeCheck) -> str:
        return reverse("api_judge_check", kwargs={"check_id": check.pk})


class JudgeTestApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses={202: JudgeCheckOutput})
    def post(self, request: Request, judge_id: int) -> Response:
        """Queue one small call to an endpoint judge; poll the test's ``url`` for its
        latency and parsed reply, or the exact error."""
        judge = Judge.objects.filter(pk=judge_id).first()
        if judge is None:
            raise NotFound()
        check = check_services.judge_check_create(judge=judge, by=acting_user(request.user))
        return Response(JudgeCheckOutput(check).data, status=status.HTTP_202_ACCEPTED)


class JudgeCheckApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(responses=JudgeCheckOutput)
    def get(self, request: Request, check_id: int) -> Response:
        check = selectors.judge_check_get(check_id=check_id)
        if check is None:
            raise NotFound()
        return Response(JudgeCheckOutput(check).data)
