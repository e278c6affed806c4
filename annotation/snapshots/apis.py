"""REST API of release snapshots: leads list, create, watch and compare snapshots and fetch
a short-lived download link. Annotators and auditors get 403 on every operation.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.lookups import dataset_or_404
from annotation.models import JobStatus, Snapshot
from annotation.snapshots import selectors as snapshot_selectors
from annotation.snapshots import services as snapshot_services
from core.api import IsLead, job_accepted
from core.roles import acting_user


class SnapshotOutput(serializers.ModelSerializer[Snapshot]):
    status_label = serializers.CharField(source="get_status_display", read_only=True)
    url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = Snapshot
        fields = [
            "id",
            "dataset",
            "name",
            "format",
            "filter",
            "status",
            "status_label",
            "total",
            "done",
            "message",
            "attempts",
            "previous",
            "created_at",
            "finished_at",
            "url",
            "download_url",
        ]

    def get_url(self, snapshot: Snapshot) -> str:
        return reverse("api_snapshot", kwargs={"snapshot_id": snapshot.pk})

    def get_download_url(self, snapshot: Snapshot) -> str:
        return reverse("api_snapshot_download", kwargs={"snapshot_id": snapshot.pk})


class SnapshotDetailOutput(SnapshotOutput):
    class Meta(SnapshotOutput.Meta):
        fields = [*SnapshotOutput.Meta.fields, "manifest"]


class SnapshotDiffOutput(serializers.Serializer[Any]):
    """What changed from ``against`` to the snapshot (see ``snapshot_compare``)."""

    class AgainstSerializer(serializers.Serializer[Any]):
        id = serializers.IntegerField(source="pk")
        name = serializers.CharField()

    class ChangedSampleSerializer(serializers.Serializer[Any]):
        class FieldChangeSerializer(serializers.Serializer[Any]):
            name = serializers.CharField()
            old = serializers.CharField(help_text="The old value as text, shortened when long.")
            new = serializers.CharField(help_text="The new value as text, shortened when long.")

        external_id = serializers.CharField()
        changes = FieldChangeSerializer(
            source="fields",
            many=True,
            allow_null=True,
            help_text="Null when a snapshot was built before contents were kept.",
        )

    against = AgainstSerializer()
    added = serializers.IntegerField(source="diff.added")
    removed = serializers.IntegerField(source="diff.removed")
    taken_down = serializers.IntegerField(source="diff.taken_down")
    changed = serializers.IntegerField(source="diff.changed")
    unchanged = serializers.IntegerField(source="diff.unchanged")
    added_ids = serializers.ListField(
        child=serializers.CharField(), source="diff.added_ids", help_text="The first 200."
    )
    removed_ids = serializers.ListField(
        child=serializers.CharField(), source="diff.removed_ids", help_text="The first 200."
    )
    taken_down_ids = serializers.ListField(
        child=serializers.CharField(), source="diff.taken_down_ids", help_text="The first 200."
    )
    changed_samples = ChangedSampleSerializer(
        source="changed", many=True, help_text="This page of the changed samples."
    )
    page = serializers.IntegerField()
    pages = serializers.IntegerField()


def _snapshot(request: Request, snapshot_id: int) -> Snapshot:
    snapshot = snapshot_selectors.snapshot_get_for_lead(user=request.user, snapshot_id=snapshot_id)
    if snapshot is None:
        raise NotFound(_("No such snapshot."))
    return snapshot


class DatasetSnapshotListCreateApi(APIView):
    permission_classes = [IsLead]

    class SnapshotCreateInputSerializer(serializers.Serializer[Any]):
        name = serializers.CharField(max_length=200)
        format = serializers.ChoiceField(choices=list(snapshot_services.EXPORT_FORMATS))
        statuses = serializers.ListField(
            child=serializers.ChoiceField(choices=snapshot_services.EXPORTABLE_STATUSES),
            required=False,
        )
        groups = serializers.ListField(child=serializers.CharField(), required=False)
        categories = serializers.ListField(child=serializers.CharField(), required=False)
        formats = serializers.ListField(child=serializers.CharField(), required=False)
        scenarios = serializers.ListField(child=serializers.CharField(), required=False)
        splits = serializers.ListField(child=serializers.CharField(), required=False)

    @extend_schema(responses=SnapshotOutput(many=True))
    def get(self, request: Request, dataset_id: int) -> Response:
        snapshots = snapshot_selectors.snapshot_list(dataset=dataset_or_404(request, dataset_id))
        return Response(SnapshotOutput(snapshots, many=True).data)

    @extend_schema(request=SnapshotCreateInputSerializer, responses={202: SnapshotOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Queue a snapshot; its build runs in a worker (watch ``status``, ``done``, ``total``)."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.SnapshotCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        snapshot = snapshot_services.snapshot_create_from_fields(
            dataset=dataset, fields=payload.validated_data, by=acting_user(request.user)
        )
        return job_accepted(
            SnapshotOutput(snapshot).data, url_name="api_snapshot", job_id=snapshot.pk
        )


class SnapshotDetailApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(responses=SnapshotDetailOutput)
    def get(self, request: Request, snapshot_id: int) -> Response:
        return Response(SnapshotDetailOutput(_snapshot(request, snapshot_id)).data)


class SnapshotRetryApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses=SnapshotOutput)
    def post(self, request: Request, snapshot_id: int) -> Response:
        """Build a failed snapshot again."""
        snapshot = snapshot_services.snapshot_retry(snapshot=_snapshot(request, snapshot_id))
        return Response(SnapshotOutput(snapshot).data)


class SnapshotDiffApi(APIView):
    permission_classes = [IsLead]

    class DiffInputSerializer(serializers.Serializer[Any]):
        against = serializers.IntegerField(
            required=False,
            help_text="Another finished snapshot of the dataset; the previous one by default.",
        )
        page = serializers.IntegerField(required=False, min_value=1, default=1)

    @extend_schema(
        parameters=[DiffInputSerializer],
        responses={
            200: SnapshotDiffOutput,
            409: OpenApiResponse(
                description="The snapshot is not built yet, or has nothing to compare with."
            ),
        },
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        """What changed from another snapshot of the dataset (``against``) to this one: ids
        added, removed and taken down, and changed samples with their fields old → new, 50 a
        page. 404 for a snapshot of another dataset, 409 while either is not built."""
        snapshot = _snapshot(request, snapshot_id)
        query = self.DiffInputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        against_id = query.validated_data.get("against", snapshot.previous_id)
        if snapshot.status != JobStatus.SUCCEEDED or against_id is None:
            return Response(
                {"detail": _("Only two finished snapshots can be compared.")},
                status=status.HTTP_409_CONFLICT,
            )
        against = snapshot_selectors.snapshot_get_against(snapshot=snapshot, against_id=against_id)
        if against is None:
            raise NotFound(_("No such snapshot of this dataset to compare with."))
        comparison = snapshot_selectors.snapshot_compare(
            snapshot=snapshot, against=against, page=query.validated_data["page"]
        )
        return Response(SnapshotDiffOutput(comparison).data)


class SnapshotDownloadApi(APIView):
    permission_classes = [IsLead]

    class DownloadOutputSerializer(serializers.Serializer[Any]):
        url = serializers.CharField()
        expires_in = serializers.IntegerField()

    @extend_schema(
        parameters=[OpenApiParameter("file", str, enum=["release", "manifest"], required=False)],
        responses=DownloadOutputSerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        """A short-lived link to the release (or ``?file=manifest``); 409 until it is built."""
        snapshot = _snapshot(request, snapshot_id)
        which = request.query_params.get("file", "release")
        if which not in {"release", "manifest"}:
            raise serializers.ValidationError({"file": [_("Choose “release” or “manifest”.")]})
        link = snapshot_selectors.snapshot_download_link(snapshot=snapshot, which=which)
        if link is None:
            return Response(
                {"detail": _("The snapshot is not ready to download.")},
                status=status.HTTP_409_CONFLICT,
            )
        return Response(
            {
                "url": request.build_absolute_uri(link),
                "expires_in": snapshot_selectors.download_seconds(),
            }
        )
