"""REST API of reviewer quality: the figures of the Reviewers page, per dataset and field.

A lead gets every reviewer; anyone else who may see the dataset gets only their own figures,
with their co-reviewers unnamed.
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
from review.quality_selectors import reviewer_report


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


class ReportOutput(serializers.Serializer[Any]):
    field_names = serializers.ListField(child=serializers.CharField(), source="fields")
    everyone = serializers.BooleanField()
    n_replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    reviewers = ReviewerOutput(many=True, source="rows")


class ReviewerQualityApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: ReportOutput, 404: None})
    def get(self, request: Request, dataset_id: int) -> Response:
        """Each reviewer's gold accuracy, agreement with the settled outcome, κ with each
        co-reviewer, α contribution (per field), median seconds, reject and skip rates, each
        with its n and 95 % item-bootstrap interval."""
        dataset = dataset_or_404(request, dataset_id)
        report = reviewer_report(dataset=dataset, user=request_user(request))
        return Response(ReportOutput(report).data)
