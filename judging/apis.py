"""REST API of the judging app: judges, jobs and their progress, imports, the leaderboard."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.storage import default_storage
from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imports.apis import ImportJobOutput
from annotation.imports.jobs import import_refused_job_create, import_upload_store
from annotation.lookups import dataset_or_404
from annotation.models import ImportKind
from core.api import IsLead, job_accepted
from core.parsers import FormParser, MultiPartParser
from core.roles import acting_user
from core.schema import NOT_BLANK, when
from judging import selectors, services
from judging.imports import services as import_services
from judging.models import Judge, JudgeJob, JudgeKind
from judging.services.harness import DOC_ORDERS
from judging.services.responses import AUTO, RESPONSE_FORMAT_CHOICES

MAX_JOBS_LISTED = 50


class JudgeOutput(serializers.ModelSerializer[Judge]):
    class Meta:
        model = Judge
        fields = ["id", "name", *services.JUDGE_FIELDS]


def _key_name_rule() -> dict[str, Any]:
    """services.judges: a key variable's name starts with the JUDGE_KEY_ENV_PREFIX."""
    prefix = services.judge_key_prefix()
    return {
        "properties": {
            "api_key_env": {"anyOf": [{"maxLength": 0}, {"pattern": f"^{re.escape(prefix)}"}]}
        }
    }


class JudgeInput(serializers.Serializer[Any]):
    schema_rules: list[Any] = [_key_name_rule]

    kind = serializers.ChoiceField(choices=JudgeKind.choices, required=False)
    base_url = serializers.URLField(required=False, allow_blank=True, max_length=500)
    model = serializers.CharField(required=False, allow_blank=True, max_length=200)
    api_key_env = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        validators=[RegexValidator(services.ENV_NAME, message=services.ENV_NAME_MESSAGE)],
    )
    temperature = serializers.FloatField(required=False, min_value=0, max_value=2)
    timeout_s = serializers.FloatField(required=False, min_value=0.001)
    max_concurrency = serializers.IntegerField(required=False, min_value=1, max_value=1024)
    requests_per_minute = serializers.IntegerField(required=False, min_value=1, allow_null=True)
    max_tokens = serializers.IntegerField(required=False, min_value=1, max_value=100_000)
    text_only = serializers.BooleanField(required=False)
    family = serializers.CharField(required=False, allow_blank=True, max_length=100)
    prompt_version = serializers.CharField(required=False, max_length=20)
    max_attempts = serializers.IntegerField(required=False, min_value=1, max_value=20)
    backoff_base_s = serializers.FloatField(required=False, min_value=0)
    backoff_max_s = serializers.FloatField(required=False, min_value=0)
    retry_after_max_s = serializers.FloatField(required=False, min_value=0)
    enabled = serializers.BooleanField(required=False)


class JudgeListCreateApi(APIView):
    permission_classes = [IsLead]

    class JudgeCreateInput(JudgeInput):
        # services.judges._check: an endpoint judge (the default kind) names its URL and
        # model; a name is not blank and holds no comma.
        schema_rules = [
            *JudgeInput.schema_rules,
            when(
                "kind",
                [JudgeKind.OPENAI.value],
                {
                    "properties": {"base_url": {"minLength": 1}, "model": NOT_BLANK},
                    "required": ["base_url", "model"],
                },
            ),
        ]

        name = serializers.CharField(max_length=100)

    @extend_schema(responses=JudgeOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(JudgeOutput(selectors.judge_list(), many=True).data)

    @extend_schema(request=JudgeCreateInput, responses={201: JudgeOutput})
    def post(self, request: Request) -> Response:
        payload = self.JudgeCreateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        judge = services.judge_create(**payload.validated_data)
        return Response(JudgeOutput(judge).data, status=status.HTTP_201_CREATED)


class JudgeDetailApi(APIView):
    permission_classes = [IsLead]

    patch_is_partial = True  # the schema describes its PATCH body as partial

    def _judge(self, judge_id: int) -> Judge:
        judge = selectors.judge_list().filter(pk=judge_id).first()
        if judge is None:
            raise NotFound()
        return judge

    @extend_schema(responses=JudgeOutput)
    def get(self, request: Request, judge_id: int) -> Response:
        return Response(JudgeOutput(self._judge(judge_id)).data)

    @extend_schema(request=JudgeInput, responses=JudgeOutput)
    def patch(self, request: Request, judge_id: int) -> Response:
        payload = JudgeInput(data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        judge = services.judge_update(judge=self._judge(judge_id), changes=payload.validated_data)
        return Response(JudgeOutput(judge).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, judge_id: int) -> Response:
        """Delete a judge without verdicts (400 with the reason otherwise: disable it)."""
        services.judge_delete(judge=self._judge(judge_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class JobOutput(serializers.ModelSerializer[JudgeJob]):
    judges = serializers.SerializerMethodField()
    # Failed calls per judge and kind ({judge: {kind: n}}), when the list gave them.
    error_counts = serializers.SerializerMethodField()
    dataset_name = serializers.CharField(source="dataset.name")

    class Meta:
        model = JudgeJob
        fields = [
            "id",
            "dataset",
            "dataset_name",
            "task",
            "judges",
            "repeats",
            "model_names",
            "status",
            "total",
            "created_at",
            "started_at",
            "finished_at",
            "cancel_requested",
            "message",
            "error_counts",
        ]

    def get_judges(self, job: JudgeJob) -> list[dict[str, str]]:
        return [
            {"name": jj.judge.name, "prompt_version": jj.prompt_version}
            for jj in job.job_judges.all()
        ]

    def get_error_counts(self, job: JudgeJob) -> dict[str, dict[str, int]]:
        return dict(self.context.get("error_counts", {}).get(job.pk, {}))


class ErrorCountOutput(serializers.Serializer[Any]):
    judge = serializers.CharField()
    kind = serializers.CharField()
    n = serializers.IntegerField()


class RecentErrorOutput(serializers.Serializer[Any]):
    judge = serializers.CharField()
    item = serializers.CharField()
    kind = serializers.CharField()
    error = serializers.CharField()


class ProgressOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    status = serializers.CharField()
    status_label = serializers.CharField()
    task = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    verdicts = serializers.IntegerField()
    made = serializers.IntegerField()
    errors = serializers.IntegerField()  # type: ignore[assignment]
    preexisting = serializers.IntegerField()
    percent = serializers.FloatField()
    chunks_total = serializers.IntegerField()
    chunks_done = serializers.IntegerField()
    chunks_failed = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    verdicts_per_second = serializers.FloatField(allow_null=True)
    elapsed_seconds = serializers.FloatField(allow_null=True)
    cancel_requested = serializers.BooleanField()
    rate_limit_scope = serializers.CharField()
    message = serializers.CharField()
    error_kinds = serializers.DictField(child=serializers.IntegerField())
    finished = serializers.BooleanField()
    can_retry = serializers.BooleanField()
    error_counts = ErrorCountOutput(many=True)
    recent_errors = RecentErrorOutput(many=True)


def _job(request: Request, job_id: int) -> JudgeJob:
    job = selectors.job_get_visible(user=request.user, job_id=job_id)
    if job is None:
        raise NotFound()
    return job


class DatasetJobListCreateApi(APIView):
    class JobCreateInput(serializers.Serializer[Any]):
        task = serializers.ChoiceField(choices=["answerability", "scoring"])
        judges = serializers.ListField(child=serializers.CharField(), min_length=1)
        repeats = serializers.IntegerField(min_value=1, max_value=20, default=1)
        models = serializers.ListField(child=serializers.CharField(), required=False, default=[])

    @extend_schema(responses=JobOutput(many=True))
    def get(self, request: Request, dataset_id: int) -> Response:
        jobs = list(
            selectors.job_list(dataset=dataset_or_404(request, dataset_id))[:MAX_JOBS_LISTED]
        )
        counts = selectors.job_error_counts(job_ids=[job.pk for job in jobs])
        return Response(JobOutput(jobs, many=True, context={"error_counts": counts}).data)

    @extend_schema(request=JobCreateInput, responses={202: JobOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        if not IsLead().has_permission(request, self):
            self.permission_denied(request, message=IsLead.message)
        dataset = dataset_or_404(request, dataset_id)
        payload = self.JobCreateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        judges, unknown = selectors.judges_by_names(data["judges"])
        if unknown:
            raise NotFound(_("Unknown judges: %(names)s.") % {"names": ", ".join(unknown)})
        job = services.judge_job_start(
            dataset=dataset,
            task=data["task"],
            judges=judges,
            repeats=data["repeats"],
            model_names=data["models"],
            by=acting_user(request.user),
        )
        return job_accepted(
            JobOutput(_job(request, job.pk)).data, url_name="api_judge_job", job_id=job.pk
        )


class JobProgressApi(APIView):
    @extend_schema(responses=ProgressOutput)
    def get(self, request: Request, job_id: int) -> Response:
        progress = selectors.job_progress(job=_job(request, job_id))
        return Response(ProgressOutput(progress.as_dict()).data)


class JobCancelApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses=ProgressOutput)
    def post(self, request: Request, job_id: int) -> Response:
        job = services.judge_job_cancel(job=_job(request, job_id))
        return Response(ProgressOutput(selectors.job_progress(job=job).as_dict()).data)


class JobRetryApi(APIView):
    permission_classes = [IsLead]

    @extend_schema(request=None, responses=ProgressOutput)
    def post(self, request: Request, job_id: int) -> Response:
        """Run a failed or cancelled job again (only the missing verdicts are made)."""
        job = services.judge_job_retry(job=_job(request, job_id))
        return Response(ProgressOutput(selectors.job_progress(job=job).as_dict()).data)


class LeaderboardApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "prompt_version",
                str,
                description="Only the verdicts made with this prompt version (default: all)",
            )
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, dataset_id: int) -> Response:
        """Per model: the ensemble's and each judge's scores by group, category, format and
        scenario, each cell with its mean and n and the 95 % interval of its mean score
        (``ci95_low``, ``ci95_high``; ``ci_method`` "wilson" where every response scored 0 or
        1, else "wilson_effective_n"; null bounds with ``no_ci_reason`` "n_below_2" below 2
        responses, or "not_recomputed" until a recomputation keeps the sums it needs);
        ``prompt_versions`` lists the versions to filter by."""
        version = request.query_params.get("prompt_version") or None
        board = selectors.leaderboard(
            dataset=dataset_or_404(request, dataset_id), prompt_version=version
        )
        if board.unknown_prompt_version:
            raise NotFound(
                _("No verdicts were made with prompt version “%(version)s” (known: %(known)s).")
                % {"version": version, "known": ", ".join(board.prompt_versions) or "—"}
            )
        return Response(asdict(board))


class VerdictImportApi(APIView):
    permission_classes = [IsLead]
    parser_classes = [MultiPartParser, FormParser]

    class VerdictImportInput(serializers.Serializer[Any]):
        file = serializers.FileField(help_text="JSON lines, or a zip of such files")

    @extend_schema(request=VerdictImportInput, responses={202: ImportJobOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Queue the import of verdicts made elsewhere; watch the job at its ``page_url``."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.VerdictImportInput(data=request.data)
        payload.is_valid(raise_exception=True)
        job = import_services.verdict_upload_create(
            dataset=dataset,
            upload=payload.validated_data["file"],
            created_by=acting_user(request.user),
        )
        return job_accepted(ImportJobOutput(job).data, url_name="api_import_job", job_id=job.pk)


class ResponseImportApi(APIView):
    permission_classes = [IsLead]
    parser_classes = [MultiPartParser, FormParser]

    class ResponseImportInput(serializers.Serializer[Any]):
        file = serializers.FileField(help_text="one file, or a zip of files of the format")
        format = serializers.ChoiceField(
            choices=RESPONSE_FORMAT_CHOICES,
            required=False,
            default=AUTO,
            help_text="auto: detected from the files' shape",
        )
        # A form field is text: one that holds a JSON object or list is a client's mistake (a
        # structure put where a name goes), refused rather than stored as a model's name. The
        # name is checked as sent and stripped after (trim first and " {…" would pass).
        model = serializers.RegexField(
            r"^(?![\[{])",
            required=False,
            allow_blank=True,
            default="",
            max_length=200,
            trim_whitespace=False,
            help_text="the model's name when the files do not say it (not a JSON object or list)",
            error_messages={"invalid": gettext_lazy("A model's name, not a JSON object or list.")},
        )
        doc_order = serializers.ChoiceField(
            choices=list(DOC_ORDERS),
            required=False,
            default="",
            help_text="lmms-eval: doc_id is the sample's position in the dataset's import "
            "order, or its external id (required for lmms-eval logs; see the inspect call)",
        )

    @extend_schema(request=ResponseImportInput, responses={202: ImportJobOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Queue the import of model responses; watch the job at its ``page_url``."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.ResponseImportInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        try:
            job = import_services.response_upload_create(
                dataset=dataset,
                format=data["format"],
                upload=data["file"],
                model=data["model"].strip(),
                doc_order=data["doc_order"],
                created_by=acting_user(request.user),
            )
        except DjangoValidationError as exc:
            if getattr(exc, "code", None) != "bad_file":
                raise
            # The file's content is the job's to judge, as for every import: the start is
            # accepted, and the job says why it failed.
            job = import_refused_job_create(
                dataset=dataset,
                kind=ImportKind.RESPONSES,
                format=data["format"],
                source_name=data["file"].name or "",
                message=" ".join(exc.messages),
                created_by=acting_user(request.user),
            )
        return job_accepted(ImportJobOutput(job).data, url_name="api_import_job", job_id=job.pk)


class ResponseInspectApi(APIView):
    """What a response upload holds, without importing it: the format (detected; null with
    a ``problem`` when it is none of the formats), and for an lmms-eval log how its first
    rows match the dataset under each doc order."""

    permission_classes = [IsLead]
    parser_classes = [MultiPartParser, FormParser]

    class InspectInput(serializers.Serializer[Any]):
        file = serializers.FileField()
        format = serializers.ChoiceField(
            choices=RESPONSE_FORMAT_CHOICES, required=False, default=AUTO
        )
        model = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)

    @extend_schema(request=InspectInput, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, dataset_id: int) -> Response:
        dataset = dataset_or_404(request, dataset_id)
        payload = self.InspectInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        source, name = import_upload_store(data["file"])
        try:
            inspection = import_services.response_upload_inspect(
                source=source,
                source_name=name,
                format=data["format"],
                model=data["model"],
                dataset=dataset,
            )
        except DjangoValidationError as exc:
            if getattr(exc, "code", None) != "bad_file":
                raise
            # What the upload holds is the answer, also when it is none of the formats.
            empty: dict[str, Any] = {
                "format": None,
                "doc_order_needed": False,
                "files": [],
                "previews": [],
            }
            return Response({**empty, "problem": " ".join(exc.messages)})
        finally:
            default_storage.delete(source)
        plan = inspection.plan
        return Response(
            {
                "format": inspection.format,
                "doc_order_needed": inspection.needs_doc_order,
                "files": [
                    {
                        "name": f.name,
                        "model": f.model,
                        "task": f.task,
                        "kind": f.kind,
                        "judges": (
                            [f.judge_name(m) for m in f.metrics]
                            if f.harness == "lmms_eval"
                            else ([f.judge_name()] if f.kind == "evaluated" else [])
                        ),
                    }
                    for f in (plan.files if plan else [])
                ],
                "previews": [asdict(p) for p in inspection.previews],
            }
        )
