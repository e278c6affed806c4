"""REST API of the review app: claim, submit, drafts, skips, comments, settings, adjudication."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors as annotation_selectors
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, Sample, SampleStatus
from core.api import IsLead, IsReviewer
from core.leases import MAX_LEASE_SECONDS, MIN_LEASE_SECONDS
from core.reused_serializers import ReusedSerializer
from core.roles import ANNOTATOR, is_lead, is_reviewer, request_user
from core.schema import when
from review import editing, selectors, services
from review.models import Comment, Decision, RejectReason, ReviewSettings
from review.queue import services as queue_services


def _sample(
    request: Request, sample_id: int, *, with_media: bool = True, role: str | None = None
) -> Sample:
    """The sample, when the user may see it (and work on it in ``role``); otherwise 404."""
    sample = annotation_selectors.sample_get_visible(
        user=request.user, sample_id=sample_id, with_media=with_media, role=role
    )
    if sample is None:
        raise NotFound()
    return sample


class LeasedSampleOutput(serializers.Serializer[Any]):
    class ClaimLeaseOutput(serializers.Serializer[Any]):
        slot = serializers.IntegerField()
        expires_at = serializers.DateTimeField()
        resumed = serializers.BooleanField()

    class ClaimSampleOutput(serializers.Serializer[Any]):
        class ClaimMediaOutput(serializers.Serializer[Any]):
            role = serializers.CharField()
            asset_id = serializers.IntegerField()
            mime_type = serializers.CharField()
            url = serializers.CharField()

        id = serializers.IntegerField()
        dataset = serializers.IntegerField()
        external_id = serializers.CharField()
        status = serializers.CharField()
        question = serializers.CharField()
        values = serializers.DictField()
        media = ClaimMediaOutput(many=True)

    lease = ClaimLeaseOutput()
    sample = ClaimSampleOutput()
    url = serializers.CharField()


def _leased_output(leased: queue_services.LeasedCard) -> dict[str, Any]:
    """The claim's answer (``LeasedSampleOutput``): the lease and what the reviewer sees of
    its sample."""
    lease, card = leased.lease, leased.card
    return {
        "lease": {"slot": lease.slot_id, "expires_at": lease.expires_at, "resumed": lease.resumed},
        "sample": {
            "id": lease.sample_id,
            "dataset": lease.dataset_id,
            "external_id": card.external_id,
            # A gold item is shown as any sample in review: reviewers cannot tell it apart.
            "status": SampleStatus.IN_REVIEW if lease.gold else card.status,
            "question": card.question,
            "values": {name: card.fields[name] for name in editing.reviewable_fields(card.kind)},
            "media": [
                {**link, "url": reverse("annotation:media_file", args=[link["asset_id"]])}
                for link in card.media
            ],
        },
        "url": reverse("review:workbench", args=[lease.sample_id]),
    }


def _reviewable_dataset(request: Request, dataset_id: int) -> Dataset:
    """The dataset, if this user may review in it: 403 for a member who is no annotator."""
    dataset = annotation_selectors.dataset_get_visible(
        user=request.user, dataset_id=dataset_id, role=ANNOTATOR
    )
    if dataset is None:
        dataset_or_404(request, dataset_id)  # 404 when not visible at all
        raise PermissionDenied(IsReviewer.message)
    return dataset


class ClaimApi(APIView):
    class ClaimInputSerializer(serializers.Serializer[Any]):
        skipped = serializers.BooleanField(required=False, default=False)
        sample = serializers.IntegerField(required=False, allow_null=True, default=None)

    @extend_schema(request=ClaimInputSerializer, responses={200: LeasedSampleOutput, 204: None})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Lease the next sample this reviewer should review; 204 when nothing is left."""
        if not is_reviewer(request.user):
            _reviewable_dataset(request, dataset_id)  # a dataset out of reach answers first
        try:
            payload = _CLAIM_INPUT.validate(request.data)
        except ValidationError:
            _reviewable_dataset(request, dataset_id)
            raise
        leased = queue_services.slot_claim_card(
            dataset_id=dataset_id,
            reviewer=request_user(request),
            skipped=payload["skipped"],
            sample_id=payload["sample"],
        )
        if leased is None:
            _reviewable_dataset(request, dataset_id)  # 404 or 403 when that was why
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_LEASED_OUTPUT.represent(_leased_output(leased)))


class ReviewOutput(serializers.Serializer[Any]):
    """A review, or a gold answer (which has a review's fields and answers alike)."""

    # It serializes a ``services.SubmitResult``: the review and the status it settled.
    id = serializers.IntegerField(source="review.id")
    sample = serializers.IntegerField(source="review.sample_id")
    client_uuid = serializers.UUIDField(source="review.client_uuid")
    decision = serializers.ChoiceField(source="review.decision", choices=Decision.choices)
    reject_reason = serializers.CharField(source="review.reject_reason")
    values = serializers.DictField(source="review.values")
    clarity = serializers.IntegerField(source="review.clarity", allow_null=True)
    naturalness = serializers.IntegerField(source="review.naturalness", allow_null=True)
    image_aligned = serializers.BooleanField(source="review.image_aligned", allow_null=True)
    audio_aligned = serializers.BooleanField(source="review.audio_aligned", allow_null=True)
    note = serializers.CharField(source="review.note")
    seconds_spent = serializers.FloatField(source="review.seconds_spent")
    created_at = serializers.DateTimeField(source="review.created_at")
    settled_status = serializers.SerializerMethodField()
    # Only after a gold item, when the dataset's gold feedback is on (else always null).
    feedback = serializers.SerializerMethodField()

    def get_settled_status(self, result: services.SubmitResult) -> str | None:
        return result.settled_status

    def get_feedback(self, result: services.SubmitResult) -> dict[str, Any] | None:
        return _feedback(result.review)


def _feedback(review: Any) -> dict[str, Any] | None:
    shown = selectors.gold_feedback_get(submitted=review)
    if shown is None:
        return None
    return {
        "matched": shown.matched,
        "matches": shown.matches,
        "expected": shown.expected,
        "explanation": shown.explanation,
    }


@extend_schema_field(
    {
        "type": "object",
        "description": "The label fields the reviewer corrects (those of the dataset's kind; "
        "a field of the other kind is a 409, a code the taxonomy lacks a 404).",
        "properties": {
            **{name: {} for name in editing.ALL_FIELDS},
            "safety_label": {"enum": sorted(editing.SAFETY_LABELS)},
        },
        "additionalProperties": False,
    }
)
class ReviewValuesField(serializers.DictField):
    """The edited label fields, by name (review.values.edits_checked checks them)."""


# review.values.review_fields_checked: a rejection names its reason.
REJECTION_NEEDS_A_REASON = when(
    "decision",
    [Decision.REJECT.value],
    {
        "properties": {"reject_reason": {"enum": [r for r in RejectReason.values if r]}},
        "required": ["reject_reason"],
    },
)


class ReviewFieldsInput(serializers.Serializer[Any]):
    schema_rules = [REJECTION_NEEDS_A_REASON]

    decision = serializers.ChoiceField(choices=Decision.choices)
    values = ReviewValuesField(required=False, default=dict)
    reject_reason = serializers.ChoiceField(
        choices=RejectReason.choices, required=False, default=""
    )
    clarity = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=5
    )
    naturalness = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=5
    )
    image_aligned = serializers.BooleanField(required=False, allow_null=True, default=None)
    audio_aligned = serializers.BooleanField(required=False, allow_null=True, default=None)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    seconds_spent = serializers.FloatField(required=False, default=0.0, min_value=0)


class ReviewCreateApi(APIView):
    permission_classes = [IsReviewer]

    class ReviewInputSerializer(ReviewFieldsInput):
        client_uuid = serializers.UUIDField()
        sample = serializers.IntegerField()

    @extend_schema(
        request=ReviewInputSerializer,
        responses={201: ReviewOutput, 200: ReviewOutput, 409: None},
    )
    def post(self, request: Request) -> Response:
        """Submit a review; resending the same client_uuid returns the first one (200).

        ``values`` holds the fields the reviewer changed; a field left out (or sent as the
        sample holds it) is not an edit, so an accept without values changes only the status.
        """
        data = dict(_REVIEW_INPUT.validate(request.data))
        sample_id = data.pop("sample")
        try:
            result = services.review_submit_visible(
                reviewer=request_user(request), sample_id=sample_id, **data
            )
        except services.ReviewConflict as exc:
            return Response({"detail": exc.messages}, status=status.HTTP_409_CONFLICT)
        if result is None:
            raise NotFound()
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(_REVIEW_OUTPUT.represent(result), status=code)


# The review loop's serializers, built once (``core.reused_serializers``).
_CLAIM_INPUT = ReusedSerializer(ClaimApi.ClaimInputSerializer)
_LEASED_OUTPUT = ReusedSerializer(LeasedSampleOutput)
_REVIEW_INPUT = ReusedSerializer(ReviewCreateApi.ReviewInputSerializer)
_REVIEW_OUTPUT = ReusedSerializer(ReviewOutput)


class ReviewAmendApi(APIView):
    permission_classes = [IsReviewer]

    @extend_schema(request=ReviewFieldsInput, responses={200: ReviewOutput, 409: None})
    def put(self, request: Request, review_id: int) -> Response:
        """Amend one's own review while its sample still waits for the other reviews;
        409 once the sample is settled."""
        user = request_user(request)
        review = selectors.review_get_own(reviewer=user, review_id=review_id)
        if review is None:
            raise NotFound()
        payload = ReviewFieldsInput(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            amended = services.review_amend(reviewer=user, review=review, **payload.validated_data)
        except services.ReviewConflict as exc:
            return Response({"detail": exc.messages}, status=status.HTTP_409_CONFLICT)
        answer = services.SubmitResult(amended, created=False, settled_status=None)
        return Response(_REVIEW_OUTPUT.represent(answer))


class DraftApi(APIView):
    permission_classes = [IsReviewer]

    class DraftSerializer(serializers.Serializer[Any]):
        payload = serializers.DictField()

    @extend_schema(responses=DraftSerializer)
    def get(self, request: Request, sample_id: int) -> Response:
        sample = _sample(request, sample_id, role=ANNOTATOR)
        workbench_draft = selectors.draft_get(reviewer=request_user(request), sample=sample)
        if workbench_draft is None:
            raise NotFound()
        return Response({"payload": workbench_draft})

    @extend_schema(request=DraftSerializer, responses={204: None})
    def put(self, request: Request, sample_id: int) -> Response:
        """Keep the reviewer's form state; the page saves it as they work."""
        sample = _sample(request, sample_id, role=ANNOTATOR)
        payload = self.DraftSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        services.draft_save(
            sample=sample, reviewer=request_user(request), payload=payload.validated_data["payload"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class SkipApi(APIView):
    permission_classes = [IsReviewer]

    class SkipInputSerializer(serializers.Serializer[Any]):
        reason = serializers.CharField(max_length=500)

    @extend_schema(request=SkipInputSerializer, responses={204: None})
    def post(self, request: Request, sample_id: int) -> Response:
        """Set the sample aside with a reason; it comes back with ``skipped`` claims."""
        sample = _sample(request, sample_id, role=ANNOTATOR)
        payload = self.SkipInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        queue_services.slot_skip(
            sample=sample, reviewer=request_user(request), reason=payload.validated_data["reason"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class CommentOutput(serializers.ModelSerializer[Comment]):
    author = serializers.CharField(source="author.username")

    class Meta:
        model = Comment
        fields = ["id", "author", "text", "created_at"]


class CommentApi(APIView):
    class CommentInputSerializer(serializers.Serializer[Any]):
        text = serializers.CharField(max_length=5000)

    @extend_schema(responses=CommentOutput(many=True))
    def get(self, request: Request, sample_id: int) -> Response:
        sample = _sample(request, sample_id)
        comments = selectors.comments_visible(user=request_user(request), sample=sample)
        return Response(CommentOutput(comments, many=True).data)

    @extend_schema(request=CommentInputSerializer, responses={201: CommentOutput})
    def post(self, request: Request, sample_id: int) -> Response:
        sample = _sample(request, sample_id)
        payload = self.CommentInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        comment = services.comment_create(
            sample=sample, author=request_user(request), text=payload.validated_data["text"]
        )
        return Response(CommentOutput(comment).data, status=status.HTTP_201_CREATED)


class ReviewSettingsSerializer(serializers.ModelSerializer[ReviewSettings]):
    class Meta:
        model = ReviewSettings
        fields = [
            "overlap",
            "blind",
            "show_judge_hints",
            "lease_seconds",
            "gold_rate",
            "gold_feedback",
            "min_gold_accuracy",
            "min_gold_items",
        ]
        # PUT replaces the settings: every field is needed (an empty body gets field errors),
        # but the gold rate, which older clients do not send, is kept when left out.
        extra_kwargs = {
            **{name: {"required": True} for name in fields},
            # The model's check constraints, stated where the schema reads them.
            "overlap": {"required": True, "min_value": 1, "max_value": 10},
            "lease_seconds": {
                "required": True,
                "min_value": MIN_LEASE_SECONDS,
                "max_value": MAX_LEASE_SECONDS,
            },
            "gold_rate": {"required": False, "min_value": 0, "max_value": 0.5},
            "gold_feedback": {"required": False},
            "min_gold_accuracy": {"required": False, "min_value": 0, "max_value": 1},
            "min_gold_items": {"required": False, "min_value": 1, "max_value": 100_000},
        }


class ReviewSettingsApi(APIView):
    @extend_schema(responses=ReviewSettingsSerializer)
    def get(self, request: Request, dataset_id: int) -> Response:
        dataset = dataset_or_404(request, dataset_id)
        return Response(
            ReviewSettingsSerializer(selectors.review_settings_get(dataset=dataset)).data
        )

    @extend_schema(request=ReviewSettingsSerializer, responses=ReviewSettingsSerializer)
    def put(self, request: Request, dataset_id: int) -> Response:
        """A lead sets overlap k, blind review, judge hints, the lease duration, the share of
        claims that serve a gold item (``gold_rate``, 0 to 0.5; 0 turns gold off) and whether
        reviewers see feedback after a gold item (``gold_feedback``)."""
        if not is_lead(request.user):
            self.permission_denied(request, message=IsLead.message)
        dataset = dataset_or_404(request, dataset_id)
        payload = ReviewSettingsSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        saved = queue_services.review_settings_update(dataset=dataset, **payload.validated_data)
        return Response(ReviewSettingsSerializer(saved).data)


class QueueSyncApi(APIView):
    permission_classes = [IsLead]

    class QueueSyncOutputSerializer(serializers.Serializer[Any]):
        created = serializers.IntegerField()

    @extend_schema(request=None, responses=QueueSyncOutputSerializer)
    def post(self, request: Request, dataset_id: int) -> Response:
        """Open (or refresh) the dataset's queue: k slots for every sample awaiting review."""
        dataset = dataset_or_404(request, dataset_id)
        return Response({"created": queue_services.queue_sync(dataset=dataset)})


class AdjudicationApi(APIView):
    permission_classes = [IsLead]

    class AdjudicationInputSerializer(serializers.Serializer[Any]):
        schema_rules = [REJECTION_NEEDS_A_REASON]

        decision = serializers.ChoiceField(choices=Decision.choices)
        values = ReviewValuesField(required=False, default=dict)
        reject_reason = serializers.ChoiceField(
            choices=RejectReason.choices, required=False, default=""
        )
        note = serializers.CharField(max_length=5000)

    class AdjudicationOutputSerializer(serializers.Serializer[Any]):
        status = serializers.CharField()
        agreement = serializers.BooleanField()
        adjudicated = serializers.BooleanField()
        note = serializers.CharField()

    @extend_schema(request=AdjudicationInputSerializer, responses=AdjudicationOutputSerializer)
    def post(self, request: Request, sample_id: int) -> Response:
        """A lead sets the final values (or rejects) with a note; kept in the history."""
        sample = _sample(request, sample_id)
        payload = self.AdjudicationInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        outcome = services.sample_adjudicate(
            sample=sample, by=request_user(request), **payload.validated_data
        )
        return Response(self.AdjudicationOutputSerializer(outcome).data)
