"""Reviews from another annotation tool (Label Studio's completed annotations), handed over by
annotation's import through ``annotation.extensions.imported_annotations``.

Each annotator is matched to a user by e-mail, or created inactive (no password: an account
a lead can activate later) named after the e-mail, or after the tool's user id when the
export carries none. The sample is sent to review if it was only imported, and each
annotation is submitted as that user's review with a submission id made from the tool's ids,
so the same export imported again makes no second review.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.utils.text import slugify
from django.utils.translation import gettext as _

from annotation.extensions import ImportedAnnotation
from annotation.models import Dataset, Sample, SampleStatus
from annotation.services import samples_send_to_review
from annotation.services.datasets import dataset_add_member
from core import roles
from review.models import Decision, RejectReason
from review.services.reviews import ReviewConflict, review_submit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

NAMESPACE = uuid.UUID("6f1d3c1e-2a7b-4f35-9d59-0b2c51a8e7a4")


def _user_for(item: ImportedAnnotation, created: list[str]) -> User:
    model = get_user_model()
    if item.email:
        found = model.objects.filter(email__iexact=item.email).order_by("id").first()
        if found is not None:
            return found
        base = slugify(item.email.split("@")[0]) or "annotator"
    else:
        base = f"labelstudio-{slugify(item.user_id) or 'user'}"
        found = model.objects.filter(username=base).first()
        if found is not None:
            return found
    username, n = base, 1
    while model.objects.filter(username=username).exists():
        n += 1
        username = f"{base}-{n}"
    first, _sep, last = item.name.partition(" ")
    user = model.objects.create_user(
        username=username, email=item.email, first_name=first[:150], last_name=last[:150]
    )
    user.set_unusable_password()
    user.is_active = False
    user.save(update_fields=["password", "is_active"])
    user.groups.add(Group.objects.get_or_create(name=roles.ANNOTATOR)[0])
    created.append(item.email or username)
    return user


def reviews_from_imported(
    *, dataset: Dataset, items: list[ImportedAnnotation], by: User | None
) -> list[str]:
    """Submit each imported annotation as its annotator's review; the notes for the import."""
    created: list[str] = []
    users = {}
    for item in items:
        key = item.email or f"#{item.user_id}"
        if key not in users:
            users[key] = _user_for(item, created)
            dataset_add_member(dataset=dataset, user=users[key])
    sample_ids = sorted({item.sample_id for item in items})
    samples_send_to_review(
        dataset=dataset,
        samples=Sample.objects.filter(pk__in=sample_ids, status=SampleStatus.IMPORTED),
        by=by,
        reason=_("Reviewed in Label Studio"),
    )
    samples = {s.pk: s for s in Sample.objects.select_related("dataset").filter(pk__in=sample_ids)}
    made = again = 0
    refused: list[str] = []
    for item in items:
        sample = samples[item.sample_id]
        fields: dict[str, Any] = {"seconds_spent": item.seconds}
        if item.rejected:
            decision = Decision.REJECT
            fields["reject_reason"] = RejectReason.INVALID
        else:
            decision = Decision.ACCEPT
            fields["values"] = item.labels
        try:
            result = review_submit(
                reviewer=users[item.email or f"#{item.user_id}"],
                sample=sample,
                client_uuid=uuid.uuid5(NAMESPACE, item.key),
                decision=decision,
                **fields,
            )
        except ReviewConflict as exc:
            refused.append(f"{sample.external_id}: {exc.messages[0]}")
            continue
        except ValidationError as exc:
            refused.append(f"{sample.external_id}: {'; '.join(exc.messages)}")
            continue
        if result.created:
            made += 1
        else:
            again += 1
        sample.refresh_from_db()
    notes = [
        _("%(made)s reviews made from Label Studio annotations (%(again)s already imported).")
        % {"made": made, "again": again}
    ]
    if created:
        notes.append(
            _("Created inactive users for the annotators %(names)s.")
            % {"names": ", ".join(sorted(created))}
        )
    if refused:
        notes.append(
            _("%(count)s annotations were not made reviews: %(reasons)s")
            % {"count": len(refused), "reasons": "; ".join(refused[:10])}
        )
    return notes
