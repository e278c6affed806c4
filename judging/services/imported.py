"""Verdicts from another annotation tool (Label Studio's predictions), handed over by
annotation's import through ``annotation.extensions.imported_predictions``.

A prediction's answerability (its ``answerability_group`` choice, ooc or shifted_ic, or an
answerable / unanswerable choice) becomes an answerability verdict of the external judge
"Label Studio <model_version>", with the category it chose; re-importing updates it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.extensions import ImportedPrediction
from annotation.models import Dataset
from judging.consensus import ANSWERABLE, UNANSWERABLE
from judging.models import Judge, JudgeTask, Verdict, VerdictSource
from judging.services.judges import judge_get_or_create_external

if TYPE_CHECKING:
    from django.contrib.auth.models import User

PROMPT_VERSION = "external"
_LABELS = {
    "ooc": UNANSWERABLE,
    "shifted_ic": ANSWERABLE,
    UNANSWERABLE: UNANSWERABLE,
    ANSWERABLE: ANSWERABLE,
}


def _label(prediction: ImportedPrediction) -> str:
    for key in ("answerability_group", "answerability"):
        value = prediction.labels.get(key, "").strip().lower()
        if value in _LABELS:
            return _LABELS[value]
    return ""


@transaction.atomic
def verdicts_from_imported(
    *, dataset: Dataset, items: list[ImportedPrediction], by: User | None
) -> list[str]:
    """Store each prediction that labels answerability as its model's verdict."""
    judges: dict[str, Judge] = {}
    made = updated = unchanged = skipped = 0
    for item in items:
        label = _label(item)
        if not label:
            skipped += 1
            continue
        name = f"Label Studio {item.model_version}"[:100]
        if name not in judges:
            judges[name], _created = judge_get_or_create_external(name=name)
        values = {
            "label": label,
            "category": item.labels.get("category_code", "")[:100],
            "rationale": "" if item.score is None else _("score %(score)s") % {"score": item.score},
        }
        verdict, created = Verdict.objects.get_or_create(
            judge=judges[name],
            task=JudgeTask.ANSWERABILITY,
            prompt_version=PROMPT_VERSION,
            repeat=0,
            sample_id=item.sample_id,
            response=None,
            defaults={**values, "source": VerdictSource.IMPORT},
        )
        if created:
            made += 1
        elif all(getattr(verdict, k) == v for k, v in values.items()):
            unchanged += 1
        else:
            Verdict.objects.filter(pk=verdict.pk).update(**values, error_kind="", error="")
            updated += 1
    notes = [
        _(
            "%(made)s verdicts made from Label Studio predictions (%(updated)s updated, "
            "%(unchanged)s unchanged)."
        )
        % {"made": made, "updated": updated, "unchanged": unchanged}
    ]
    if skipped:
        notes.append(
            _("%(count)s predictions name no answerability and were left out.") % {"count": skipped}
        )
    return notes
