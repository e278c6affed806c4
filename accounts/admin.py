from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from accounts.models import AccessEvent, Invitation, UserPreference


@admin.register(UserPreference)
class UserPreferenceAdmin(admin.ModelAdmin[UserPreference]):
    list_display = ["user", "language"]
    list_select_related = ["user"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin[Invitation]):
    """Read-only: invitations are made, sent and revoked on the Invitations page."""

    list_display = ["email", "role", "created_by", "created_at", "expires_at", "accepted_at"]
    list_select_related = ["created_by"]
    readonly_fields = [f.name for f in Invitation._meta.fields if f.name not in ("id", "nonce")]
    exclude = ["nonce"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AccessEvent)
class AccessEventAdmin(admin.ModelAdmin[AccessEvent]):
    """Read-only, as the access log is: lines are never changed or deleted."""

    list_display = ["at", "kind", "subject_name", "actor_name", "dataset_name", "ip_address"]
    list_filter = ["kind"]
    search_fields = ["subject_name", "actor_name"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
