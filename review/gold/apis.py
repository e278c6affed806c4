"""REST API of gold items: a lead marks and unmarks them, one by one or in bulk, and lists
them with the reviewers' agreement with each.

Lead only: reviewers must not learn which samples are gold, nor their expected answers.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors as annotation_selectors
from annotation.lookups import dataset_or_404
from annotation.models import Sample
from core.api import IsLead
from core.roles import request_user
from review import selectors
from review.gold import services as gold_services


class GoldItemOutput(serializers.Serializer[Any]):
    sample = serializers.IntegerField(source="sample_id")
    expected = serializers.DictField()
    explanation = serializers.CharField()
    attention_check = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class GoldItemListOutput(GoldItemOutput):
    served = serializers.IntegerField(help_text="Reviewers served it as a gold item")
    answered = serializers.IntegerField(help_text="Reviewers who answered it")
    agreed = serializers.IntegerField(help_text="Answers that agreed with the expected one")


def _sample(request: Request, sample_id: int) -> Sample:
    sample = annotation_selectors.sample_get_visible(
        user=request.user, sample_id=sample_id, with_media=False
    )
    if sample is None:
        raise NotFound()
    return sample


class SampleGoldApi(APIView):
    permission_classes = [IsLead]

    class GoldInputSerializer(serializers.Serializer[Any]):
        expected = serializers.DictField(required=False, default=None, allow_null=True)
        explanation = serializers.CharField(
            required=False, allow_blank=True, default="", max_length=5000
        )
        attention_check = serializers.BooleanField(required=False, default=False)

    @extend_schema(responses={200: GoldItemOutput, 404: None})
    def get(self, request: Request, sample_id: int) -> Response:
        """The sample's gold item; 404 when it is not gold."""
        item = selectors.gold_item_get(sample=_sample(request, sample_id))
        if item is None:
            raise NotFound()
        return Response(GoldItemOutput(item).data)

    @extend_schema(request=GoldInputSerializer, responses={200: GoldItemOutput})
    def post(self, request: Request, sample_id: int) -> Response:
        """Mark a verified sample as gold (or change its expected answer). ``expected`` holds
        ``decision`` and the reviewable fields checked; left out, the sample's current values.
        A sample that is not verified is refused (409)."""
        sample = _sample(request, sample_id)
        payload = self.GoldInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            item = gold_services.gold_mark(
                sample=sample, by=request_user(request), **payload.validated_data
            )
        except ValidationError:
            raise  # core.api: 409 for a sample not verified yet, 400 for bad values
        return Response(GoldItemOutput(item).data)

    @extend_schema(request=None, responses={204: None, 404: None})
    def delete(self, request: Request, sample_id: int) -> Response:
        """The sample is gold no more (its answers go with it); 404 when it was not gold."""
        if not gold_services.gold_unmark(sample=_sample(request, sample_id)):
            raise NotFound()
        return Response(status=status.HTTP_204_NO_CONTENT)


class DatasetGoldApi(APIView):
    permission_classes = [IsLead]

    class BulkGoldInputSerializer(serializers.Serializer[Any]):
        samples = serializers.ListField(
            child=serializers.IntegerField(), allow_empty=False, max_length=10_000
        )
        attention_check = serializers.BooleanField(required=False, default=False)

    class BulkGoldOutputSerializer(serializers.Serializer[Any]):
        marked = serializers.IntegerField()
        refused = serializers.ListField(child=serializers.CharField())
        unknown = serializers.ListField(child=serializers.IntegerField())

    @extend_schema(responses=GoldItemListOutput(many=True))
    def get(self, request: Request, dataset_id: int) -> Response:
        """The dataset's gold items, each with the reviewers served it, those who answered
        it and the answers that agreed with it (the gold list page's accuracy)."""
        dataset = dataset_or_404(request, dataset_id)
        items = selectors.gold_items_with_accuracy(dataset=dataset)
        return Response(GoldItemListOutput(items, many=True).data)

    @extend_schema(request=BulkGoldInputSerializer, responses=BulkGoldOutputSerializer)
    def post(self, request: Request, dataset_id: int) -> Response:
        """Mark samples as gold with their current values as the expected answer; samples
        that are not verified are listed in ``refused`` (by external id), ids that are no
        sample of the dataset in ``unknown``, and both left alone."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.BulkGoldInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        result = gold_services.gold_mark_bulk(
            dataset=dataset,
            sample_ids=payload.validated_data["samples"],
            by=request_user(request),
            attention_check=payload.validated_data["attention_check"],
        )
        body = {"marked": result.marked, "refused": result.refused, "unknown": result.unknown}
        return Response(body)


class DatasetGoldUnmarkApi(APIView):
    permission_classes = [IsLead]

    class UnmarkInputSerializer(serializers.Serializer[Any]):
        samples = serializers.ListField(
            child=serializers.IntegerField(), allow_empty=False, max_length=10_000
        )

    class UnmarkOutputSerializer(serializers.Serializer[Any]):
        unmarked = serializers.IntegerField()
        skipped = serializers.IntegerField()

    @extend_schema(request=UnmarkInputSerializer, responses=UnmarkOutputSerializer)
    def post(self, request: Request, dataset_id: int) -> Response:
        """The chosen samples are gold items no more (their answers go with them); chosen
        samples of the dataset that were no gold item are counted in ``skipped``."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.UnmarkInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        result = gold_services.gold_unmark_bulk(
            dataset=dataset, sample_ids=payload.validated_data["samples"]
        )
        return Response({"unmarked": result.unmarked, "skipped": result.skipped})
