"""REST API of imports: leads start an import and watch its progress and rejected rows."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imports import selectors as import_selectors
from annotation.imports import services as import_services
from annotation.imports.formats import FORMATS
from annotation.lookups import dataset_or_404
from annotation.models import (
    ImportJob,
    ImportJobStatus,
    ImportKind,
    ImportRowError,
    ImportSourceKind,
)
from core.api import IsLead, job_accepted
from core.jobs import ACTIVE, RETRYABLE
from core.pagination import LimitOffsetPagination
from core.parsers import FormParser, JSONParser, MultiPartParser
from core.roles import acting_user
from core.schema import when

ERRORS_IN_DETAIL = 100


class ImportRowErrorOutput(serializers.ModelSerializer[ImportRowError]):
    class Meta:
        model = ImportRowError
        fields = ["row", "external_id", "message"]


class ImportJobOutput(serializers.ModelSerializer[ImportJob]):
    status_label = serializers.CharField(source="get_status_display")
    percent = serializers.SerializerMethodField()
    finished = serializers.SerializerMethodField()
    can_cancel = serializers.SerializerMethodField()
    can_retry = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    errors_csv_url = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "dataset",
            "kind",
            "status",
            "status_label",
            "finished",
            "source_kind",
            "source_name",
            "format",
            "options",
            "total_rows",
            "rows_done",
            "percent",
            "imported",
            "unchanged",
            "updated",
            "rejected",
            "message",
            "attempts",
            "heartbeat_at",
            "can_cancel",
            "can_retry",
            "created_at",
            "started_at",
            "finished_at",
            "page_url",
            "errors_csv_url",
        ]

    def get_percent(self, job: ImportJob) -> int:
        if job.status in (ImportJobStatus.SUCCEEDED, ImportJobStatus.SUCCEEDED_WITH_ERRORS):
            return 100
        if not job.total_rows:
            return 0
        return min(100, job.rows_done * 100 // job.total_rows)

    def get_finished(self, job: ImportJob) -> bool:
        return job.status not in ACTIVE

    def get_can_cancel(self, job: ImportJob) -> bool:
        return job.status in ACTIVE

    def get_can_retry(self, job: ImportJob) -> bool:
        return job.status in RETRYABLE

    def get_page_url(self, job: ImportJob) -> str:
        return reverse("annotation:import_job", kwargs={"job_id": job.pk})

    def get_errors_csv_url(self, job: ImportJob) -> str:
        return reverse("annotation:import_job_errors_csv", kwargs={"job_id": job.pk})


class ImportJobDetailOutput(ImportJobOutput):
    row_errors = serializers.SerializerMethodField()

    class Meta(ImportJobOutput.Meta):
        fields = [*ImportJobOutput.Meta.fields, "row_errors"]

    def get_row_errors(self, job: ImportJob) -> list[dict[str, Any]]:
        """The first rejected rows; the rest are in the CSV and the errors endpoint."""
        errors = import_selectors.import_row_errors(job=job)[:ERRORS_IN_DETAIL]
        return list(ImportRowErrorOutput(errors, many=True).data)


def _job(job_id: int) -> ImportJob:
    job = import_selectors.import_job_get(job_id=job_id)
    if job is None:
        raise NotFound()
    return job


class DatasetImportListCreateApi(ListAPIView[ImportJob]):
    # GET lists the dataset's imports, newest first, as a limit/offset page.
    permission_classes = [IsLead]
    parser_classes = [MultiPartParser, FormParser, JSONParser]
    serializer_class = ImportJobOutput
    pagination_class = LimitOffsetPagination

    class ImportCreateInputSerializer(serializers.Serializer[Any]):
        # services.import_job_create: an upload sends its file, a server path is absolute,
        # an S3 prefix is an s3://bucket/prefix address.
        schema_rules = [
            when("source_kind", [ImportSourceKind.UPLOAD.value], {"required": ["file"]}),
            when(
                "source_kind",
                [ImportSourceKind.SERVER_PATH.value],
                {"properties": {"location": {"pattern": "^\\s*/"}}, "required": ["location"]},
            ),
            when(
                "source_kind",
                [ImportSourceKind.S3_PREFIX.value],
                {
                    "properties": {"location": {"pattern": "^\\s*s3://[^/\\s]"}},
                    "required": ["location"],
                },
            ),
        ]

        format = serializers.ChoiceField(choices=sorted(FORMATS))
        source_kind = serializers.ChoiceField(
            choices=ImportSourceKind.choices, default=ImportSourceKind.UPLOAD
        )
        file = serializers.FileField(required=False, help_text="for source_kind=upload")
        location = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            max_length=1000,
            help_text="server path or s3://bucket/prefix",
        )
        dataset_file = serializers.CharField(
            required=False, allow_blank=True, default="", max_length=300
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=list(ImportKind.values), required=False),
        ]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):  # type: ignore[no-untyped-def]
        # ?kind=responses (or verdicts, or samples, the default) lists the imports of a kind.
        kind = self.request.query_params.get("kind", ImportKind.SAMPLES)
        if kind not in ImportKind.values:
            raise ValidationError({"kind": [f"one of {', '.join(ImportKind.values)}"]})
        return import_selectors.import_job_list(
            dataset=dataset_or_404(self.request, self.kwargs["dataset_id"]), kinds=(kind,)
        )

    @extend_schema(request=ImportCreateInputSerializer, responses={202: ImportJobOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        dataset = dataset_or_404(request, dataset_id)
        payload = self.ImportCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        job = import_services.import_job_create(
            dataset=dataset,
            format=data["format"],
            source_kind=data["source_kind"],
            source=data["location"],
            upload=data.get("file"),
            options={"file": data["dataset_file"]},
            created_by=acting_user(request.user),
        )
        return job_accepted(ImportJobOutput(job).data, url_name="api_import_job", job_id=job.pk)


class ImportJobDetailApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(responses=ImportJobDetailOutput)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(ImportJobDetailOutput(_job(job_id)).data)


class ImportJobCancelApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses=ImportJobOutput)
    def post(self, request: Request, job_id: int) -> Response:
        """End a queued or running import now; the rows it stored stay."""
        job = import_services.import_job_cancel(job=_job(job_id), by=acting_user(request.user))
        return Response(ImportJobOutput(job).data)


class ImportJobRetryApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses=ImportJobOutput)
    def post(self, request: Request, job_id: int) -> Response:
        """Run a failed or cancelled import again from its first row."""
        job = import_services.import_job_retry(job=_job(job_id))
        return Response(ImportJobOutput(job).data)


class ImportJobErrorListApi(ListAPIView[ImportRowError]):
    permission_classes = [IsLead]
    serializer_class = ImportRowErrorOutput

    def get_queryset(self):  # type: ignore[no-untyped-def]
        return import_selectors.import_row_errors(job=_job(self.kwargs["job_id"]))
