"""Admin pages of the calibration audit (read mostly: audit sets are drawn by the service)."""

from __future__ import annotations

from django.contrib import admin

from judging.models import AuditComputation, AuditItem, AuditLease, AuditRating, AuditSet


@admin.register(AuditSet)
class AuditSetAdmin(admin.ModelAdmin[AuditSet]):
    list_display = ["name", "dataset", "task", "size", "method", "seed", "created_at"]
    list_filter = ["task", "method"]
    readonly_fields = ["frame", "created_by", "created_at"]


@admin.register(AuditItem)
class AuditItemAdmin(admin.ModelAdmin[AuditItem]):
    list_display = ["audit_set", "position", "stratum", "weight", "needs_second_rating"]
    list_filter = ["needs_second_rating", "rare", "judges_disagree"]
    raw_id_fields = ["sample", "response"]


@admin.register(AuditLease)
class AuditLeaseAdmin(admin.ModelAdmin[AuditLease]):
    list_display = ["item", "slot", "auditor", "lease_expires_at", "done"]
    list_filter = ["done", "slot"]
    raw_id_fields = ["item"]


@admin.register(AuditRating)
class AuditRatingAdmin(admin.ModelAdmin[AuditRating]):
    list_display = ["item", "auditor", "answer_score", "reasoning_score", "refused", "safety_label"]
    raw_id_fields = ["item", "lease"]


@admin.register(AuditComputation)
class AuditComputationAdmin(admin.ModelAdmin[AuditComputation]):
    """Computed by workers: shown for inspection, never edited."""

    list_display = ["kind", "dataset", "audit_set", "task", "status", "computed_at", "seconds"]
    list_filter = ["kind", "status"]
    raw_id_fields = ["dataset", "audit_set"]

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_add_permission(self, request: object) -> bool:
        return False
