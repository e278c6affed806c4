"""REST API of the annotation app: one view per operation, thin, with nested serializers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.validators import MaxLengthValidator
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, services
from annotation.forms import MEMBER_ROLE_CHOICES, roles_of_choice
from annotation.lookups import dataset_or_404
from annotation.models import (
    ChangeSource,
    Dataset,
    DatasetKind,
    Sample,
    SampleBulkJob,
    SampleMedia,
    SampleStatus,
    TaxonomyTerm,
)
from annotation.presets import PRESETS
from annotation.sample_filters import (
    DECISIONS,
    ORDERINGS,
    VERDICT_LABELS,
    BulkAction,
    FilterError,
    SampleFilter,
)
from annotation.services.bulk import SENDABLE
from core.api import IsLead, job_accepted
from core.pagination import KeysetOrOffsetPagination
from core.roles import acting_user, is_lead, sees_judge_votes, user_roles
from core.schema import NOT_BLANK, when


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
            "retired",
        ]


class DatasetOutput(serializers.ModelSerializer[Dataset]):
    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "kind",
            "version",
            "description",
            "preset",
            "auto_send_to_review",
            "archived",
            "created_at",
        ]


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


class DatasetDetailApi(APIView):
    class DatasetUpdateInputSerializer(serializers.Serializer[Any]):
        auto_send_to_review = serializers.BooleanField()

    @extend_schema(responses=DatasetDetailOutput)
    def get(self, request: Request, dataset_id: int) -> Response:
        dataset = dataset_or_404(request, dataset_id)
        return Response(DatasetDetailOutput(dataset).data)

    @extend_schema(request=DatasetUpdateInputSerializer, responses=DatasetDetailOutput)
    def patch(self, request: Request, dataset_id: int) -> Response:
        """A lead turns "send new imports to review automatically" on or off."""
        if not is_lead(request.user):
            self.permission_denied(request, message=IsLead.message)
        dataset = dataset_or_404(request, dataset_id)
        payload = self.DatasetUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        services.dataset_set_auto_send(
            dataset=dataset, enabled=payload.validated_data["auto_send_to_review"]
        )
        return Response(DatasetDetailOutput(dataset).data)


class DatasetMemberApi(APIView):
    permission_classes = [IsLead]

    class MemberAddInputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField()
        role = serializers.ChoiceField(
            choices=[value for value, _label in MEMBER_ROLE_CHOICES], required=False
        )

    @extend_schema(request=MemberAddInputSerializer, responses={204: None})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Add a member (``role`` in this dataset: annotator, auditor or both; by default the
        roles they hold site-wide), or change the role of one who is a member already."""
        dataset = dataset_or_404(request, dataset_id)
        payload = self.MemberAddInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        user = get_object_or_404(get_user_model(), username=payload.validated_data["username"])
        role = payload.validated_data.get("role")
        services.dataset_add_member(
            dataset=dataset,
            user=user,
            roles=roles_of_choice(role) if role else None,
            actor=acting_user(request.user),
        )
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


def _is_judge_or_review_key(key: str) -> bool:
    """Keys of ``extra`` that carry what judges or other reviewers said (``judge_votes`` or a
    release's ``review`` trail kept by an older import, ``judges``, ``judgements``,
    ``reviewers`` of a source file): hidden like the votes and the reviews themselves."""
    return key.lower().startswith(("judge", "review"))


class SampleOutput(serializers.ModelSerializer[Sample]):
    """A sample; judge- and review-derived data (``judges_disagree``, judge and review keys of
    ``extra``) only for readers who may see judge votes (``context["judge_votes"]``), else null
    and left out: a blind annotator learns nothing of other verdicts from it."""

    media = MediaLinkOutput(source="media_links", many=True, read_only=True)
    judges_disagree = serializers.BooleanField(allow_null=True, read_only=True)

    def to_representation(self, instance: Sample) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        if not self.context.get("judge_votes", False):
            data["judges_disagree"] = None
            extra = data.get("extra")
            if isinstance(extra, dict):
                data["extra"] = {
                    k: v for k, v in extra.items() if not _is_judge_or_review_key(str(k))
                }
        return data

    class Meta:
        model = Sample
        fields = [
            "id",
            "dataset",
            "external_id",
            *services.LABEL_FIELDS,
            "inferred_answerability",
            "status",
            "pair",
            "judges_disagree",
            "priority",
            "revision",
            "extra",
            "media",
        ]


# A judge's score: the mean of the answer score (0 or 1) and the reasoning score (0 to 1).
SCORE_SCHEMA = {"type": "number", "minimum": 0, "maximum": 1}
FILTER_PARAMETERS = [
    OpenApiParameter(
        "search", str, description="Substring of the external id, question or reference answer"
    ),
    OpenApiParameter(
        "status",
        str,
        many=True,
        enum=SampleStatus.values,
        description="One or more statuses (repeat the parameter or separate with commas)",
    ),
    OpenApiParameter("category", str, description="Category code (or tri-modal safety category)"),
    OpenApiParameter("question_format", str),
    OpenApiParameter("scenario", str),
    OpenApiParameter("external_id", str, description="Exactly this external id"),
    OpenApiParameter("judges_disagree", OpenApiTypes.BOOL),
    OpenApiParameter("reviewer", str, description="Samples this username reviewed"),
    OpenApiParameter(
        "changed",
        OpenApiTypes.BOOL,
        description="Only samples changed since the last snapshot, or not in it",
    ),
    OpenApiParameter(
        "duplicates",
        OpenApiTypes.BOOL,
        description="Only samples in a possible duplicate pair (false: only samples in none)",
    ),
    OpenApiParameter(
        "gold",
        OpenApiTypes.BOOL,
        description="Only gold items (false: only samples that are none); leads only",
    ),
    OpenApiParameter(
        "decision",
        str,
        enum=list(DECISIONS),
        description="Samples with a review of this decision (accept: nothing changed, correct: "
        "accepted with edits, reject) or a skip; with reviewer, that reviewer's. Other "
        "reviewers' work is for leads only in blind review",
    ),
    OpenApiParameter(
        "has_response",
        OpenApiTypes.BOOL,
        description="Only samples with a model's response (false: with none); leads only",
    ),
    OpenApiParameter(
        "response_model",
        str,
        description="Only samples with a response of this model; leads only",
    ),
    OpenApiParameter(
        "verdict",
        str,
        enum=list(VERDICT_LABELS),
        description="Only samples with a judge's verdict of this label; leads only",
    ),
    OpenApiParameter(
        "score_min",
        SCORE_SCHEMA,
        description="Only samples with a judge's score (the mean of the answer and reasoning "
        "scores, 0 to 1) at least this; with score_max, the same verdict; leads only",
    ),
    OpenApiParameter(
        "score_max",
        SCORE_SCHEMA,
        description="Only samples with a judge's score at most this; leads only",
    ),
    *(
        OpenApiParameter(
            name,
            OpenApiTypes.DATE,
            description=f"Only samples {verb} on or {side} this day (YYYY-MM-DD)",
        )
        for name, verb, side in (
            ("created_after", "created", "after"),
            ("created_before", "created", "before"),
            ("updated_after", "last changed", "after"),
            ("updated_before", "last changed", "before"),
        )
    ),
    OpenApiParameter(
        "ordering",
        str,
        enum=[f"{d}{key}" for key in ORDERINGS for d in ("", "-")],
        description="Sort key; a leading '-' sorts descending",
    ),
]

# Send to review selects by status among the statuses it can move only.
SEND_PARAMETERS = [
    OpenApiParameter(
        "status",
        str,
        many=True,
        enum=[str(status) for status in SENDABLE],
        description="One or more statuses to send (repeat the parameter or separate with "
        "commas); imported when left out",
    )
    if parameter.name == "status"
    else parameter
    for parameter in FILTER_PARAMETERS
]


def _filter(request: Request) -> SampleFilter:
    try:
        return SampleFilter.from_params(request.query_params).strict()
    except FilterError as exc:
        raise serializers.ValidationError(exc.problems) from exc


class DatasetSampleListApi(ListAPIView[Sample]):
    """A dataset's samples, filtered, sorted and paged like the sample list page: by
    ``limit``/``offset``, or by the ``cursor`` its ``next`` and ``previous`` links carry (a
    keyset page: a deep one costs what the first does)."""

    serializer_class = SampleOutput
    pagination_class = KeysetOrOffsetPagination
    keyset_order: tuple[str, ...] = ("id",)

    @extend_schema(parameters=FILTER_PARAMETERS)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_serializer_context(self) -> dict[str, Any]:
        return {
            **super().get_serializer_context(),
            "judge_votes": sees_judge_votes(self.request.user),
        }

    def get_queryset(self):  # type: ignore[no-untyped-def]
        # The roles first: loaded once, they also spare the visibility test its role subquery.
        sees_judge_votes(self.request.user)
        dataset = dataset_or_404(self.request, self.kwargs["dataset_id"])
        filter = _filter(self.request)
        # Judge-derived parameters and gold items are for leads; in blind review other
        # reviewers' work too: filtering on them would reveal them sample by sample.
        refused = filter.refused_for(user=self.request.user, dataset=dataset)
        if refused:
            raise PermissionDenied(next(iter(refused.values())))
        self.keyset_order = filter.order_by()  # the pagination's keyset
        return selectors.sample_list_filtered(dataset=dataset, filter=filter)


class SampleChangesInput(serializers.ModelSerializer[Sample]):
    """The label fields a lead corrects, any of them, each of its own type: texts kept as
    sent, the options a list of {label, text}, the generator models and the predicate lists
    of texts. Another name is refused."""

    refuses_unknown = True

    options = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField(allow_blank=True)),
        required=False,
    )
    generator_models = serializers.ListField(child=serializers.CharField(), required=False)
    predicate = serializers.ListField(child=serializers.CharField(), required=False)

    class Meta:
        model = Sample
        fields = list(services.LABEL_FIELDS)
        extra_kwargs = {
            name: {"required": False, "trim_whitespace": False}
            for name in services.LABEL_FIELDS
            if name not in ("options", "generator_models", "predicate")
            and name not in ("pipeline", "safety_label")  # choices: no whitespace to keep
        } | {"pipeline": {"required": False}, "safety_label": {"required": False}}

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        limit = settings.SAMPLE_MAX_TEXT_CHARS
        for name, field in fields.items():
            if isinstance(field, serializers.CharField) and field.max_length is None:
                field.max_length = limit
                # The services' own words for the limit (annotation.services.samples).
                wording = _("'%(field)s' is longer than %(limit)s characters")
                message = wording % {"field": name, "limit": limit}
                field.validators.append(MaxLengthValidator(limit, message=message))
        return fields

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            # A text is a JSON string: DRF's CharField would take a number as its digits.
            errors = {
                name: [_("Not a field a lead may change.")]
                for name in sorted(set(data) - set(self.fields))
            } | {
                name: [_("Not a valid string.")]
                for name, value in data.items()
                if isinstance(self.fields.get(name), serializers.CharField)
                and not isinstance(value, str)
            }
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class BulkResultOutput(serializers.Serializer[Any]):
    changed = serializers.IntegerField(help_text="samples changed")
    skipped = serializers.IntegerField(help_text="selected samples the action left alone")
    slots_opened = serializers.IntegerField(help_text="review slots opened")


class _SelectionInput(serializers.Serializer[Any]):
    ids = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        allow_empty=False,
        help_text="only these samples (of those the filter selects); all of them when left out",
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class BulkJobOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    action = serializers.CharField()
    status = serializers.CharField()
    selected = serializers.IntegerField(help_text="samples selected when it was asked")
    changed = serializers.IntegerField(help_text="samples changed (once succeeded)")
    skipped = serializers.IntegerField(help_text="selected samples the action left alone")
    slots_opened = serializers.IntegerField(help_text="review slots opened")
    message = serializers.CharField(help_text="why it failed, if it did")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    status_url = serializers.SerializerMethodField(help_text="this job's API address")
    page_url = serializers.SerializerMethodField(help_text="this job's page in the site")

    def get_status_url(self, job: SampleBulkJob) -> str:
        return reverse("api_sample_bulk_job", args=[job.pk])

    def get_page_url(self, job: SampleBulkJob) -> str:
        return reverse("annotation:sample_bulk_job", args=[job.pk])


BULK_RESPONSES = {200: BulkResultOutput, 202: BulkJobOutput}


def _run_bulk(request: Request, dataset_id: int, action: str, data: dict[str, Any]) -> Response:
    """Run the action in the request, or, on more than ``INLINE_MAX`` samples, queue it as a
    background job: 202 with the job, whose ``status_url`` tells when it is done."""
    result = services.samples_bulk_start(
        dataset=dataset_or_404(request, dataset_id),
        action=action,
        filter=_filter(request),
        ids=data.get("ids"),
        by=acting_user(request.user),
        priority=data.get("priority"),
        reason=data.get("reason", ""),
        assignees=data.get("assignees") or (),
    )
    if isinstance(result, SampleBulkJob):
        return job_accepted(
            BulkJobOutput(result).data, url_name="api_sample_bulk_job", job_id=result.pk
        )
    return Response(
        {"changed": result.changed, "skipped": result.skipped, "slots_opened": result.slots_opened}
    )


class SendToReviewApi(APIView):
    """Send samples to review and open their review slots (leads only).

    Takes the sample list's filter as query parameters: without ``status`` it sends the
    imported samples the filter selects; with ``status=verified`` or ``rejected`` it sends
    those back for a new round. Every move is written to the sample's history.
    """

    permission_classes = [IsLead]

    @extend_schema(
        parameters=SEND_PARAMETERS,
        request=_SelectionInput,
        responses=BULK_RESPONSES,
    )
    def post(self, request: Request, dataset_id: int) -> Response:
        payload = _SelectionInput(data=request.data)
        payload.is_valid(raise_exception=True)
        return _run_bulk(request, dataset_id, BulkAction.SEND_TO_REVIEW, payload.validated_data)


class SampleBulkApi(APIView):
    """A bulk action on the samples the filter (and ``ids``) select (leads only)."""

    permission_classes = [IsLead]

    class BulkInputSerializer(_SelectionInput):
        # services.bulk_jobs: a takedown says why; setting a priority gives it.
        schema_rules = [
            when(
                "action",
                [BulkAction.TAKE_DOWN.value],
                {"properties": {"reason": NOT_BLANK}, "required": ["reason"]},
            ),
            when("action", [BulkAction.SET_PRIORITY.value], {"required": ["priority"]}),
            # Assigning names the annotators; unassigning without names frees the samples.
            when(
                "action",
                [BulkAction.ASSIGN.value],
                {"properties": {"assignees": {"minItems": 1}}, "required": ["assignees"]},
            ),
        ]

        action = serializers.ChoiceField(choices=BulkAction.choices)
        priority = serializers.IntegerField(required=False, min_value=-1000, max_value=1000)
        assignees = serializers.ListField(
            child=serializers.CharField(max_length=150),
            required=False,
            max_length=50,
            help_text=(
                "usernames of the dataset's annotators (assign: at least one; unassign: "
                "from these people only, from everyone when left out)"
            ),
        )

    @extend_schema(
        parameters=FILTER_PARAMETERS,
        request=BulkInputSerializer,
        responses=BULK_RESPONSES,
    )
    def post(self, request: Request, dataset_id: int) -> Response:
        payload = self.BulkInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        return _run_bulk(request, dataset_id, data["action"], data)


class SampleBulkJobApi(APIView):
    """A bulk action running in the background (leads only)."""

    permission_classes = [IsLead]

    @extend_schema(responses=BulkJobOutput)
    def get(self, request: Request, job_id: int) -> Response:
        job = selectors.sample_bulk_job_get(user=request.user, job_id=job_id)
        if job is None:
            raise NotFound()
        return Response(BulkJobOutput(job).data)


class SampleDetailApi(APIView):
    class SampleUpdateInputSerializer(serializers.Serializer[Any]):
        changes = SampleChangesInput()
        reason = serializers.CharField()

    def _sample(self, request: Request, sample_id: int) -> Sample:
        sample = selectors.sample_get_visible(user=request.user, sample_id=sample_id)
        if sample is None:
            raise NotFound()
        return sample

    @extend_schema(responses=SampleOutput)
    def get(self, request: Request, sample_id: int) -> Response:
        context = {"judge_votes": sees_judge_votes(request.user)}
        sample = self._sample(request, sample_id)
        return Response(SampleOutput(sample, context=context).data)

    @extend_schema(request=SampleUpdateInputSerializer, responses=SampleOutput)
    def patch(self, request: Request, sample_id: int) -> Response:
        """A lead corrects label fields; the change is kept in the sample's history."""
        if not is_lead(request.user):
            self.permission_denied(request, message=IsLead.message)
        sample = self._sample(request, sample_id)
        payload = self.SampleUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        changes = dict(payload.validated_data["changes"])
        services.sample_update(
            sample=sample,
            changes=changes,
            by=acting_user(request.user),
            source=ChangeSource.EDIT,
            reason=payload.validated_data["reason"],
        )
        sample = self._sample(request, sample_id)
        return Response(SampleOutput(sample, context={"judge_votes": True}).data)


class MeApi(APIView):
    class MeOutputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses=MeOutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(
            {"username": request.user.get_username(), "roles": sorted(user_roles(request.user))}
        )
