"""Forms of the audit pages: the design of a new audit set."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import Form as MarkedForm
from judging.audit.services import MAX_AUDIT_SIZE, MAX_OVERSAMPLING, MAX_SEED
from judging.models import AllocationMethod, AuditTask


class AuditSetForm(MarkedForm):
    name = forms.CharField(label=_("Name"), max_length=200, required=False)
    task = forms.ChoiceField(label=_("Task"), choices=AuditTask.choices)
    size = forms.IntegerField(
        label=_("Items to audit (N)"), min_value=1, max_value=MAX_AUDIT_SIZE, initial=2000
    )
    method = forms.ChoiceField(
        label=_("Allocation"), choices=AllocationMethod.choices, initial=AllocationMethod.SQRT
    )
    floor = forms.IntegerField(
        label=_("Minimum items per stratum"), min_value=0, max_value=MAX_AUDIT_SIZE, initial=5
    )
    oversample_rare = forms.FloatField(
        label=_("Oversampling of rare classes (refusals, unsafe, unanswerable)"),
        min_value=1,
        max_value=MAX_OVERSAMPLING,
        initial=3,
    )
    oversample_disagree = forms.FloatField(
        label=_("Oversampling of judge disagreements"),
        min_value=1,
        max_value=MAX_OVERSAMPLING,
        initial=2,
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, max_value=MAX_SEED, initial=0)
    double_rating_fraction = forms.FloatField(
        label=_("Share of items rated twice (human–human agreement)"),
        min_value=0,
        max_value=1,
        initial=0.1,
    )


class AuditRatingPostForm(forms.Form):
    """What the rating form posts besides the rubric's values (read by ``rubric.posted_values``):
    its submission id (the same post twice makes one rating), the note, and when the page was
    shown (for the time spent)."""

    submission_uuid = forms.UUIDField()
    note = forms.CharField(required=False, max_length=5000, strip=True)
    shown_at = forms.IntegerField(required=False, min_value=0)
