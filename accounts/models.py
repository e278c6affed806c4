"""People on the site: per-user preferences, invitations, and the access log."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _

from core.roles import ANNOTATOR, AUDITOR, LEAD


class Theme(models.TextChoices):
    """The colours of every page: light, dark, or whichever the device asks for."""

    SYSTEM = "", _("Follow the system")
    LIGHT = "light", _("Light")
    DARK = "dark", _("Dark")


class UserPreference(models.Model):
    """What a user chose for the whole site: the interface language and the theme."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    language = models.CharField(
        _("language"), max_length=10, choices=settings.LANGUAGES, blank=True, default=""
    )
    # A database default too: a row written without it (SQL of its own, or the former
    # mmooc_site table that 0001 takes over) follows the system.
    theme = models.CharField(
        _("theme"),
        max_length=8,
        choices=Theme.choices,
        blank=True,
        default=Theme.SYSTEM,
        db_default=Theme.SYSTEM,
    )

    class Meta:
        verbose_name = _("user preference")
        verbose_name_plural = _("user preferences")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language or '-'}"


class InvitedRole(models.TextChoices):
    """The role an invitation gives (a member's role in each of its datasets, or lead)."""

    ANNOTATOR = ANNOTATOR, _("Annotator")
    AUDITOR = AUDITOR, _("Auditor")
    BOTH = "both", _("Annotator and auditor")
    LEAD = LEAD, _("Lead")


class InvitationState(models.TextChoices):
    PENDING = "pending", _("Pending")
    EXPIRED = "expired", _("Expired")
    ACCEPTED = "accepted", _("Accepted")
    REVOKED = "revoked", _("Revoked")


class Invitation(models.Model):
    """A single-use link, sent by e-mail (or copied), that brings one person onto the site in
    a role and into some datasets. The link's secret is derived from ``nonce`` and the site's
    key (``accounts.invitations``), so the table holds nothing that opens it; re-sending
    draws a new nonce, and the earlier link stops working."""

    email = models.EmailField(_("e-mail address"))
    role = models.CharField(_("role"), max_length=16, choices=InvitedRole.choices)
    datasets = models.ManyToManyField(
        "annotation.Dataset", blank=True, related_name="+", verbose_name=_("datasets")
    )
    nonce = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("invited by"),
    )
    created_at = models.DateTimeField(_("invited at"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"))
    sent_at = models.DateTimeField(_("last sent at"), null=True, blank=True)
    times_sent = models.PositiveIntegerField(_("times sent"), default=0)
    send_error = models.TextField(_("last sending error"), blank=True, default="")
    accepted_at = models.DateTimeField(_("accepted at"), null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("accepted by"),
    )
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One open invitation per address: a second one is a re-send of the first.
            models.UniqueConstraint(
                Lower("email"),
                condition=models.Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="uniq_open_invitation_email",
            ),
        ]
        verbose_name = _("invitation")
        verbose_name_plural = _("invitations")

    def __str__(self) -> str:
        return f"{self.email} ({self.role})"

    def state(self, now: dt.datetime) -> InvitationState:
        if self.accepted_at is not None:
            return InvitationState.ACCEPTED
        if self.revoked_at is not None:
            return InvitationState.REVOKED
        if self.expires_at <= now:
            return InvitationState.EXPIRED
        return InvitationState.PENDING


class AccessEventKind(models.TextChoices):
    INVITED = "invited", _("Invited")
    INVITATION_RESENT = "invitation_resent", _("Invitation sent again")
    INVITATION_REVOKED = "invitation_revoked", _("Invitation revoked")
    INVITATION_ACCEPTED = "invitation_accepted", _("Invitation accepted")
    INVITATION_REFUSED = "invitation_refused", _("Invitation link refused")
    ROLE_CHANGED = "role_changed", _("Role changed")
    MEMBER_ADDED = "member_added", _("Added to a dataset")
    MEMBER_ROLE_CHANGED = "member_role_changed", _("Role in a dataset changed")
    MEMBER_REMOVED = "member_removed", _("Removed from a dataset")
    DEACTIVATED = "deactivated", _("Deactivated")
    REACTIVATED = "reactivated", _("Reactivated")
    SIGNED_IN = "signed_in", _("Signed in")
    SIGN_IN_FAILED = "sign_in_failed", _("Sign-in failed")
    LOCKED_OUT = "locked_out", _("Locked out")
    SSO_REFUSED = "sso_refused", _("Single sign-on refused")
    PASSWORD_CHANGED = "password_changed", _("Password changed")
    PASSWORD_RESET = "password_reset", _("Password reset")
    SECOND_FACTOR_ENABLED = "second_factor_enabled", _("Second factor turned on")
    SECOND_FACTOR_DISABLED = "second_factor_disabled", _("Second factor turned off")
    RECOVERY_CODE_USED = "recovery_code_used", _("Recovery code used")
    LEAD_CREATED = "lead_created", _("Lead created by command")


class AccessEvent(models.Model):
    """One line of the access log: who did what to whom, when. Append-only: the application
    has no path that changes or deletes a line, and the database refuses both (a trigger,
    migration 0003). The names are kept as they were, so a line outlives renames; the user
    and dataset ids are kept without a foreign-key constraint, so deleting a user or a
    dataset (which the site itself never does to people) leaves the log as it is."""

    at = models.DateTimeField(_("when"), db_index=True)
    kind = models.CharField(_("what"), max_length=32, choices=AccessEventKind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("by"),
    )
    actor_name = models.CharField(_("by"), max_length=150, blank=True, default="")
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("person"),
    )
    subject_name = models.CharField(_("person"), max_length=254, blank=True, default="")
    dataset = models.ForeignKey(
        "annotation.Dataset",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("dataset"),
    )
    dataset_name = models.CharField(_("dataset"), max_length=200, blank=True, default="")
    detail = models.JSONField(_("detail"), default=dict, blank=True)
    ip_address = models.GenericIPAddressField(_("address"), null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["kind", "-at"], name="access_kind_at_idx"),
            models.Index(fields=["subject", "-at"], name="access_subject_at_idx"),
        ]
        verbose_name = _("access event")
        verbose_name_plural = _("access log")

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} {self.subject_name}"
