"""Admin pages of the review app: read-mostly views of the queue and the reviews."""

from __future__ import annotations

from django.contrib import admin

from review.models import (
    Assignment,
    Comment,
    Draft,
    GoldAnswer,
    GoldItem,
    Outcome,
    Review,
    ReviewerExclusion,
    ReviewerQualityComputation,
    ReviewSettings,
    Skip,
    Slot,
)


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(admin.ModelAdmin[ReviewSettings]):
    # Every setting, a new one included.
    list_display = [
        f.name for f in ReviewSettings._meta.fields if f.name not in {"id", "updated_at"}
    ]
    list_select_related = ["dataset"]


@admin.register(Slot)
class SlotAdmin(admin.ModelAdmin[Slot]):
    list_display = [
        "id",
        "dataset",
        "sample",
        "position",
        "reviewer",
        "done",
        "gold",
        "lease_expires_at",
    ]
    list_filter = ["done", "gold", "dataset"]
    list_select_related = ["dataset", "sample", "reviewer"]
    raw_id_fields = ["sample", "reviewer"]


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin[Review]):
    list_display = ["id", "sample", "reviewer", "decision", "reject_reason", "created_at"]
    list_filter = ["decision", "reject_reason", "dataset"]
    list_select_related = ["sample", "reviewer"]
    raw_id_fields = ["sample", "slot", "reviewer"]


@admin.register(Draft)
class DraftAdmin(admin.ModelAdmin[Draft]):
    list_display = ["sample", "reviewer"]
    list_select_related = ["sample", "reviewer"]
    raw_id_fields = ["sample", "reviewer"]


@admin.register(Skip)
class SkipAdmin(admin.ModelAdmin[Skip]):
    list_display = ["sample", "reviewer", "reason"]
    list_select_related = ["sample", "reviewer"]
    raw_id_fields = ["sample", "reviewer"]


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin[Comment]):
    list_display = ["sample", "author", "created_at"]
    list_select_related = ["sample", "author"]
    raw_id_fields = ["sample", "author"]


@admin.register(Outcome)
class OutcomeAdmin(admin.ModelAdmin[Outcome]):
    list_display = ["sample", "status", "agreement", "adjudicated", "decided_at"]
    list_select_related = ["sample"]
    raw_id_fields = ["sample"]


@admin.register(GoldItem)
class GoldItemAdmin(admin.ModelAdmin[GoldItem]):
    list_display = ["sample", "dataset", "attention_check", "created_by", "created_at"]
    list_filter = ["attention_check", "dataset"]
    list_select_related = ["sample", "dataset", "created_by"]
    raw_id_fields = ["sample", "created_by"]


@admin.register(GoldAnswer)
class GoldAnswerAdmin(admin.ModelAdmin[GoldAnswer]):
    list_display = ["sample", "reviewer", "decision", "matched", "created_at"]
    list_filter = ["matched", "dataset"]
    list_select_related = ["sample", "reviewer"]
    raw_id_fields = ["gold_item", "slot", "sample", "reviewer"]


@admin.register(ReviewerExclusion)
class ReviewerExclusionAdmin(admin.ModelAdmin[ReviewerExclusion]):
    list_display = ["reviewer", "dataset", "excluded_by", "created_at"]
    list_filter = ["dataset"]
    list_select_related = ["reviewer", "dataset", "excluded_by"]
    raw_id_fields = ["reviewer", "excluded_by"]


@admin.register(ReviewerQualityComputation)
class ReviewerQualityComputationAdmin(admin.ModelAdmin[ReviewerQualityComputation]):
    """Computed by workers: shown for inspection, never edited."""

    list_display = ["dataset", "status", "computed_at", "seconds", "attempts"]
    list_filter = ["status"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset"]

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin[Assignment]):
    """Made by the sample list's Assign action; shown for inspection."""

    list_display = ["sample", "reviewer", "dataset", "open", "created_at"]
    list_filter = ["open", "dataset"]
    list_select_related = ["sample", "reviewer", "dataset"]
    raw_id_fields = ["sample", "reviewer", "dataset"]
