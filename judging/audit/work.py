"""Reads of the auditor's side: the audit items waiting for an auditor, per dataset, for the
dataset list (their home page)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Dataset, JobStatus
from annotation.selectors import dataset_list_visible
from core.roles import AUDITOR, is_auditor, is_lead
from judging.models import AuditLease

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class AuditWaiting:
    """An audit set with items this auditor can still rate."""

    audit_set_id: int
    name: str
    waiting: int


@dataclass
class AuditorWork:
    """The audit sets of one dataset with items waiting for this auditor."""

    audits: list[AuditWaiting] = field(default_factory=list)

    @property
    def waiting(self) -> int:
        return sum(audit.waiting for audit in self.audits)


def auditor_work(*, auditor: User, dataset_ids: list[int]) -> dict[int, AuditorWork]:
    """Per dataset, the drawn audit sets with items the auditor can rate: an open slot of an
    item they have not rated (free, or whose lease expired), or the slot they hold. One query
    whatever the number of datasets."""
    if not dataset_ids:
        return {}
    mine = AuditLease.objects.filter(item=OuterRef("item"), auditor=auditor)
    claimable = Q(lease_expires_at__lt=timezone.now()) & ~Exists(mine)
    rows = (
        AuditLease.objects.filter(
            audit_set__dataset_id__in=dataset_ids, audit_set__status=JobStatus.SUCCEEDED, done=False
        )
        .filter(Q(auditor=auditor) | claimable)
        .values_list("audit_set__dataset_id", "audit_set_id", "audit_set__name")
        .annotate(n=Count("item", distinct=True))
        .order_by("audit_set__dataset_id", "-audit_set_id")
    )
    work = {pk: AuditorWork() for pk in dataset_ids}
    for dataset_id, audit_set_id, name, waiting in rows:
        work[dataset_id].audits.append(AuditWaiting(audit_set_id, name, waiting))
    return work


def dataset_list_audits(*, user: User, datasets: list[Dataset]) -> dict[int, AuditorWork]:
    """What the dataset list shows beside each dataset for an auditor (or lead): the audit
    items waiting for them, and a link to the dataset's audits, for the datasets they audit
    in. Nothing for other users."""
    if not is_auditor(user):
        return {}
    ids = [d.pk for d in datasets]
    if not is_lead(user):
        audited = dataset_list_visible(user=user, role=AUDITOR).filter(pk__in=ids)
        ids = list(audited.values_list("pk", flat=True))
    return auditor_work(auditor=user, dataset_ids=ids)
