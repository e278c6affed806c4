"""REST API of reviewer quality: the figures of the Reviewers page, per dataset and field.

A lead gets every reviewer; anyone else who may see the dataset gets only their own figures,
with their co-reviewers unnamed.

The figures are computed by a worker and stored (``review.quality.computations``); the API
never computes them, nor waits for them. It returns the stored figures with ``status``
(queued, running, succeeded, failed), ``computing`` (a newer computation is on its way: the
data changed since, and this request queued it if nobody had), ``computed_at`` (the time of
the data they reflect), ``reviews_since`` (reviews submitted since) and ``failed`` (why the
last computation failed). Before the first computation there is nothing to return: the reply
is 202 with ``computed_at`` null, empty figures and a ``Retry-After`` header; poll it (or the
lighter ``reviewers/computation/``) until ``computing`` is false.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.lookups import dataset_or_404
from core.roles import request_user
from review.quality.computations import reviewer_quality_state, reviewer_report_read

RETRY_AFTER_SECONDS = 10


class FigureOutput(serializers.Serializer[Any]):
    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(
        source="ci_low", allow_null=True, help_text="95 % interval, lower bound"
    )
    high = serializers.FloatField(
        source="ci_high", allow_null=True, help_text="95 % interval, upper bound"
    )
    n = serializers.IntegerField()


class KappaOutput(serializers.Serializer[Any]):
    co_reviewer = serializers.CharField()
    kappa = FigureOutput(source="figure")


class FieldOutput(serializers.Serializer[Any]):
    field = serializers.CharField()
    field_label = serializers.CharField(source="label")
    gold_accuracy = FigureOutput()
    outcome_agreement = FigureOutput()
    alpha_contribution = FigureOutput()
    kappas = KappaOutput(many=True)


class ReviewerOutput(serializers.Serializer[Any]):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    reviews = serializers.IntegerField()
    gold_accuracy = FigureOutput()
    median_seconds = FigureOutput()
    reject_rate = FigureOutput()
    skip_rate = FigureOutput()
    by_field = FieldOutput(many=True, source="fields")


class ComputationOutput(serializers.Serializer[Any]):
    status = serializers.CharField(help_text="queued, running, succeeded or failed")
    computing = serializers.BooleanField(help_text="a newer computation is on its way")
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="when the data the figures reflect was read (null: never)"
    )
    seconds = serializers.FloatField(allow_null=True, help_text="how long it took")
    failed = serializers.CharField(help_text="why the last computation failed (or empty)")


class ReportOutput(ComputationOutput):
    reviews_since = serializers.IntegerField(help_text="reviews submitted since computed_at")
    field_names = serializers.ListField(child=serializers.CharField(), source="fields")
    everyone = serializers.BooleanField()
    n_replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    reviewers = ReviewerOutput(many=True, source="rows")


def _no_report() -> dict[str, Any]:
    return {"fields": [], "everyone": False, "n_replicates": 0, "seed": 0, "rows": []}


class ReviewerQualityApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: ReportOutput, 202: ReportOutput, 404: None})
    def get(self, request: Request, dataset_id: int) -> Response:
        """Each reviewer's gold accuracy, agreement with the settled outcome, κ with each
        co-reviewer, α contribution (per field), median seconds, reject and skip rates, each
        with its n and 95 % item-bootstrap interval, as last computed by a worker, with the
        state of their computation (202 and no figures before the first one)."""
        dataset = dataset_or_404(request, dataset_id)
        read = reviewer_report_read(dataset=dataset, user=request_user(request))
        report = read.report if read.report is not None else _no_report()
        data = ReportOutput({**read.as_api(), **_fields(report)}).data
        if read.report is not None:
            return Response(data)
        return Response(data, status=202, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def _fields(report: Any) -> dict[str, Any]:
    if isinstance(report, dict):
        return report
    return {
        "fields": report.fields,
        "everyone": report.everyone,
        "n_replicates": report.n_replicates,
        "seed": report.seed,
        "rows": report.rows,
    }


class ReviewerQualityComputationApi(APIView):
    """The state of the figures' computation alone (what a waiting page polls)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: ComputationOutput, 404: None})
    def get(self, request: Request, dataset_id: int) -> Response:
        dataset = dataset_or_404(request, dataset_id)
        return Response(reviewer_quality_state(dataset=dataset))
