"""REST API of the annotation app: one view per operation, thin, with nested serializers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.models import (
    ChangeSource,
    Dataset,
    DatasetKind,
    Sample,
    SampleMedia,
    SampleStatus,
    TaxonomyTerm,
)
from annotation.presets import PRESETS
from core.api import IsLead
from core.roles import acting_user, is_lead, user_roles


class TermOutput(serializers.ModelSerializer[TaxonomyTerm]):
    class Meta:
        model = TaxonomyTerm
        fields = [
            "kind",
            "code",
            "name",
            "name_zh",
            "description",
            "description_zh",
            "expected_behaviour",
            "expected_behaviour_zh",
            "parent_code",
            "position",
        ]


class DatasetOutput(serializers.ModelSerializer[Dataset]):
    class Meta:
        model = Dataset
        fields = ["id", "name", "kind", "version", "description", "preset", "created_at"]


class DatasetDetailOutput(DatasetOutput):
    terms = TermOutput(many=True, read_only=True)
    status_counts = serializers.SerializerMethodField()

    class Meta(DatasetOutput.Meta):
        fields = [*DatasetOutput.Meta.fields, "terms", "status_counts"]

    def get_status_counts(self, dataset: Dataset) -> dict[str, int]:
        return {c.status: c.count for c in selectors.dataset_status_counts(dataset=dataset)}


class DatasetListCreateApi(APIView):
    class DatasetCreateInputSerializer(serializers.Serializer[Any]):
        name = serializers.CharField(max_length=200)
        kind = serializers.ChoiceField(choices=DatasetKind.choices)
        preset = serializers.ChoiceField(choices=sorted(PRESETS), required=False, default="")
        version = serializers.CharField(max_length=50, required=False, default="1.0")
        description = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(responses=DatasetOutput(many=True))
    def get(self, request: Request) -> Response:
        datasets = selectors.dataset_list_visible(user=request.user).order_by("name")
        return Response(DatasetOutput(datasets, many=True).data)

    @extend_schema(request=DatasetCreateInputSerializer, responses={201: DatasetDetailOutput})
    def post(self, request: Request) -> Response:
        if not is_lead(request.user):
            self.permission_denied(request, message=IsLead.message)
        payload = self.DatasetCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        dataset = services.dataset_create(
            created_by=acting_user(request.user), **payload.validated_data
        )
        return Response(DatasetDetailOutput(dataset).data, status=status.HTTP_201_CREATED)


def _visible_dataset(request: Request, dataset_id: int) -> Dataset:
    dataset = selectors.dataset_get_visible(user=request.user, dataset_id=dataset_id)
    if dataset is None:
        raise NotFound()
    return dataset


class DatasetDetailApi(APIView):
    @extend_schema(responses=DatasetDetailOutput)
    def get(self, request: Request, dataset_id: int) -> Response:
        dataset = _visible_dataset(request, dataset_id)
        return Response(DatasetDetailOutput(dataset).data)


class DatasetMemberApi(APIView):
    permission_classes = [IsLead]

    class MemberAddInputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField()

    @extend_schema(request=MemberAddInputSerializer, responses={204: None})
    def post(self, request: Request, dataset_id: int) -> Response:
        dataset = _visible_dataset(request, dataset_id)
        payload = self.MemberAddInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        user = get_object_or_404(get_user_model(), username=payload.validated_data["username"])
        services.dataset_add_member(dataset=dataset, user=user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MediaLinkOutput(serializers.ModelSerializer[SampleMedia]):
    asset_id = serializers.IntegerField(source="asset.id")
    kind = serializers.CharField(source="asset.kind")
    sha256 = serializers.CharField(source="asset.sha256")
    mime_type = serializers.CharField(source="asset.mime_type")
    size_bytes = serializers.IntegerField(source="asset.size_bytes")
    width = serializers.IntegerField(source="asset.width", allow_null=True)
    height = serializers.IntegerField(source="asset.height", allow_null=True)
    duration_seconds = serializers.FloatField(source="asset.duration_seconds", allow_null=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = SampleMedia
        fields = [
            "role",
            "position",
            "asset_id",
            "kind",
            "sha256",
            "mime_type",
            "size_bytes",
            "width",
            "height",
            "duration_seconds",
            "url",
        ]

    def get_url(self, link: SampleMedia) -> str:
        return reverse("annotation:media_file", kwargs={"asset_id": link.asset_id})


class SampleOutput(serializers.ModelSerializer[Sample]):
    media = MediaLinkOutput(source="media_links", many=True, read_only=True)

    class Meta:
        model = Sample
        fields = [
            "id",
            "dataset",
            "external_id",
            *services.LABEL_FIELDS,
            "status",
            "pair",
            "judges_disagree",
            "priority",
            "revision",
            "extra",
            "media",
        ]


class DatasetSampleListApi(ListAPIView[Sample]):
    serializer_class = SampleOutput

    def get_queryset(self):  # type: ignore[no-untyped-def]
        dataset = _visible_dataset(self.request, self.kwargs["dataset_id"])
        status_filter = self.request.query_params.get("status")
        if status_filter not in SampleStatus.values:
            status_filter = None
        return selectors.sample_list(dataset=dataset, status=status_filter)


class SampleDetailApi(APIView):
    class SampleUpdateInputSerializer(serializers.Serializer[Any]):
        changes = serializers.DictField()
        reason = serializers.CharField()

    def _sample(self, request: Request, sample_id: int) -> Sample:
        sample = selectors.sample_get_visible(user=request.user, sample_id=sample_id)
        if sample is None:
            raise NotFound()
        return sample

    @extend_schema(responses=SampleOutput)
    def get(self, request: Request, sample_id: int) -> Response:
        return Response(SampleOutput(self._sample(request, sample_id)).data)

    @extend_schema(request=SampleUpdateInputSerializer, responses=SampleOutput)
    def patch(self, request: Request, sample_id: int) -> Response:
        """A lead corrects label fields; the change is kept in the sample's history."""
        if not is_lead(request.user):
            self.permission_denied(request, message=IsLead.message)
        sample = self._sample(request, sample_id)
        payload = self.SampleUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        changes = payload.validated_data["changes"]
        unknown = sorted(set(changes) - set(services.LABEL_FIELDS))
        if unknown:
            raise serializers.ValidationError(
                {"changes": [f"Not editable fields: {', '.join(unknown)}"]}
            )
        services.sample_update(
            sample=sample,
            changes=changes,
            by=acting_user(request.user),
            source=ChangeSource.EDIT,
            reason=payload.validated_data["reason"],
        )
        return Response(SampleOutput(self._sample(request, sample_id)).data)


class MeApi(APIView):
    class MeOutputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses=MeOutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(
            {"username": request.user.get_username(), "roles": sorted(user_roles(request.user))}
        )
