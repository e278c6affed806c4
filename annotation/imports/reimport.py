"""A re-imported row against the sample it updates, compared with the row as last imported.

What the source changed since its last import is applied; what reviewers changed since is
kept; a field that both changed goes to adjudication with both values recorded (the sample
keeps the reviewed value until then). A row the source did not change changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db.models import F
from django.utils.translation import gettext as _

from annotation.formats.records import GOLD_KEY
from annotation.imports.writes import Media
from annotation.models import (
    ChangeSource,
    ImportedVersion,
    Sample,
    SampleMedia,
    SampleRevision,
    SampleStatus,
)
from annotation.services.media import media_assets_provenance_update
from annotation.services.samples import (
    LABEL_FIELDS,
    SampleInvalid,
    sample_content_hash,
    sample_custom_fields,
    sample_update,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# A change from the source sends a sample in one of these states back to the review queue.
REVIEWED = frozenset(
    {
        SampleStatus.IN_REVIEW,
        SampleStatus.VERIFIED,
        SampleStatus.REJECTED,
        SampleStatus.NEEDS_ADJUDICATION,
    }
)
Slot = tuple[str, int, str]  # role, position, sha256


@dataclass
class Plan:
    """What a re-imported row does to a sample's label fields."""

    applied: dict[str, Any] = field(default_factory=dict)
    # {"field", "reviewed", "imported", "previous"}: the source changed a corrected field.
    conflicts: list[dict[str, Any]] = field(default_factory=list)


def plan_changes(
    *,
    previous: Mapping[str, Any] | None,
    current: Mapping[str, Any],
    incoming: Mapping[str, Any],
    reviewed: bool,
    fields: Sequence[str] = LABEL_FIELDS,
) -> Plan:
    """Compare a row with the row as last imported (``previous``) and the sample now.

    A field the source did not change is left as it is, whatever reviewers did; a field the
    source changed is applied if nobody changed it since the last import, and is a conflict if
    somebody did (unless they arrived at the same value). Without a ``previous`` row (a sample
    from before imports kept one), a differing field is applied while the sample has not been
    reviewed, and is a conflict once it has: nothing a reviewer may have done is overwritten.
    """
    plan = Plan()
    for name in fields:
        new, now = incoming.get(name), current.get(name)
        if new == now:
            continue
        before = None if previous is None else previous.get(name)
        if previous is None:
            keep_review = reviewed
        elif new == before:
            continue
        else:
            keep_review = now != before
        if keep_review:
            plan.conflicts.append(
                {"field": name, "reviewed": now, "imported": new, "previous": before}
            )
        else:
            plan.applied[name] = new
    return plan


@dataclass
class Outcome:
    updated: bool
    # Every open conflict of the sample after this row, for its ImportedVersion.
    conflicts: list[dict[str, Any]]
    to_adjudication: bool


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def _reason(base: str, conflicts: list[dict[str, Any]]) -> str:
    if not conflicts:
        return base
    fields = "; ".join(
        _("%(field)s (source: “%(imported)s”, reviewed: “%(reviewed)s”)")
        % {
            "field": c["field"],
            "imported": _shown(c["imported"]),
            "reviewed": _shown(c["reviewed"]),
        }
        for c in conflicts
    )
    return _(
        "%(reason)s. The source changed what a reviewer had corrected; the reviewed values "
        "are kept until adjudication: %(fields)s."
    ) % {"reason": base, "fields": fields}


def apply_row(
    *,
    sample: Sample,
    version: ImportedVersion | None,
    values: Mapping[str, Any],
    media: Sequence[Slot],
    extra: Mapping[str, Any],
    asset_ids: Mapping[str, int],
    job_id: int,
    by: User | None,
    reason: str,
    stated: Mapping[str, tuple[str, str]] | None = None,
    held: dict[str, tuple[str, str]] | None = None,
) -> Outcome:
    """Apply a re-imported row whose content differs from the row as last imported.

    Its custom fields (``extra``) replace the sample's, so a key the source dropped goes;
    ``stated`` is the row's (licence, source URL) of each medium by hash, ``held`` the stored
    assets' (updated here): a medium whose row names another licence or source gets it. Every
    change of either is in the sample's history, old and new.
    """
    links: list[Slot] = list(
        SampleMedia.objects.filter(sample=sample)
        .order_by("role", "position")
        .values_list("role", "position", "asset__sha256")
    )
    new_media: list[Slot] = [(str(r), int(p), str(sha)) for r, p, sha in media]
    source_before: list[Slot] = (
        [(str(r), int(p), str(sha)) for r, p, sha in version.media]
        if version is not None
        else links
    )
    media_changed = new_media != source_before and new_media != links
    if media_changed:
        SampleMedia.objects.filter(sample=sample).delete()
        SampleMedia.objects.bulk_create(
            SampleMedia(sample=sample, asset_id=asset_ids[sha], role=role, position=position)
            for role, position, sha in new_media
        )
    current = {name: getattr(sample, name) for name in LABEL_FIELDS}
    reviewed = sample.status in REVIEWED
    previous: dict[str, Any] = version.values if version is not None else {}
    plan = plan_changes(
        previous=version.values if version is not None else None,
        current=current,
        incoming=values,
        reviewed=reviewed,
    )
    revision = None
    for attempt in range(2):
        if attempt:
            # Applied beside the kept reviewed values, the source's changes break the
            # taxonomy (a category of another group, an answer of removed options): keep the
            # sample as reviewed and let adjudication decide every changed field.
            plan.conflicts += [
                {"field": k, "reviewed": current[k], "imported": v, "previous": previous.get(k)}
                for k, v in plan.applied.items()
            ]
            plan.applied = {}
        conflicted = {c["field"] for c in plan.conflicts}
        carried = [
            dict(c)
            for c in (version.conflicts if version is not None else [])
            if sample.status == SampleStatus.NEEDS_ADJUDICATION
            and c.get("field") not in conflicted
            and values.get(c.get("field", "")) != current.get(c.get("field", ""))
        ]
        status: str | None = None
        if plan.conflicts or carried:
            status = SampleStatus.NEEDS_ADJUDICATION
        elif (plan.applied or media_changed) and reviewed:
            status = SampleStatus.PENDING_REVIEW
        try:
            revision = sample_update(
                sample=sample,
                changes=plan.applied,
                by=by,
                source=ChangeSource.IMPORT,
                reason=_reason(reason, plan.conflicts),
                status=status,
            )
        except SampleInvalid:
            if attempt:
                raise
            continue
        break
    new_conflicts = [c | {"job": job_id} for c in plan.conflicts]
    content_hash = sample_content_hash(
        {name: getattr(sample, name) for name in LABEL_FIELDS},
        (sha for _r, _p, sha in new_media),
        extra,
    )
    Sample.objects.filter(pk=sample.pk).update(extra=dict(extra), content_hash=content_hash)
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    if media_changed:
        before["media"] = [sha for _r, _p, sha in links]
        after["media"] = [sha for _r, _p, sha in new_media]
    old_custom, new_custom = custom_changes(sample.extra or {}, extra)
    if old_custom or new_custom:
        before["extra"], after["extra"] = old_custom, new_custom
    provenance = _provenance_update(new_media, stated or {}, held if held is not None else {})
    before |= provenance[0]
    after |= provenance[1]
    if before or after:
        _record_changes(sample, revision, before, after, by=by, reason=reason)
    return Outcome(
        updated=bool(plan.applied or plan.conflicts or before or after),
        conflicts=new_conflicts + carried,
        to_adjudication=bool(plan.conflicts),
    )


def custom_changes(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The custom fields a change touches, as (before, after): a key only in ``before`` was
    dropped, one only in ``after`` added (the gold flag is no custom field)."""
    was, now = sample_custom_fields(old), sample_custom_fields(new)
    before = {k: v for k, v in was.items() if k not in now or now[k] != v}
    after = {k: v for k, v in now.items() if k not in was or was[k] != v}
    return before, after


def provenance_changed(media: Sequence[Media], held: Mapping[str, tuple[str, str]]) -> bool:
    """Whether a row names a licence or source for a stored medium that it does not have."""
    for item in media:
        current = held.get(item.sha)
        if current is None:
            continue
        if (item.licence and item.licence != current[0]) or (
            item.source_url and item.source_url != current[1]
        ):
            return True
    return False


def _provenance_update(
    media: Sequence[Slot],
    stated: Mapping[str, tuple[str, str]],
    held: dict[str, tuple[str, str]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Give the stored media of a row the licence and source it names (a row that names none
    leaves them); returns the change for the history: ``licence`` and ``source_url`` as lists
    in media order, like ``media``."""
    order = [sha for _r, _p, sha in media if sha in held]
    updates: dict[str, tuple[str, str]] = {}
    for sha in dict.fromkeys(order):
        licence, source_url = stated.get(sha, ("", ""))
        current = held[sha]
        wanted = (licence or current[0], source_url or current[1])
        if wanted != current:
            updates[sha] = wanted
    if not updates:
        return {}, {}
    old = {sha: held[sha] for sha in updates}
    media_assets_provenance_update(updates)
    held.update(updates)
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for index, name in enumerate(("licence", "source_url")):
        was = [old.get(sha, held[sha])[index] for sha in order]
        now = [held[sha][index] for sha in order]
        if was != now:
            before[name], after[name] = was, now
    return before, after


def _record_changes(
    sample: Sample,
    revision: SampleRevision | None,
    before: dict[str, Any],
    after: dict[str, Any],
    *,
    by: User | None,
    reason: str,
) -> None:
    """Add what a re-import changed besides label fields (media, custom fields, licences) to
    the row's revision, or record it as a revision of its own."""
    if revision is not None:
        revision.before |= before
        revision.after |= after
        revision.save(update_fields=["before", "after"])
        return
    Sample.objects.filter(pk=sample.pk).update(revision=F("revision") + 1)
    number = Sample.objects.values_list("revision", flat=True).get(pk=sample.pk)
    SampleRevision.objects.create(
        sample_id=sample.pk,
        number=number,
        changed_by=by,
        source=ChangeSource.IMPORT,
        before=before,
        after=after,
        reason=reason,
    )


def existing_rows(
    rows: Sequence[Any], existing: Mapping[str, Sample], *, besides: set[int]
) -> list[tuple[Any, Sample]]:
    """The rows of a chunk that match a sample already in the dataset (not removed, not one
    of ``besides``), with that sample."""
    pairs = [(r, existing.get(r.parsed.external_id)) for r in rows]
    return [
        (r, s)
        for r, s in pairs
        if s is not None and s.status != SampleStatus.REMOVED and s.pk not in besides
    ]


def gold_flags_refresh(pairs: Sequence[tuple[Mapping[str, Any], Sample]]) -> list[int]:
    """Carry a re-imported row's ``gold`` flag onto its sample, whether or not its labels
    changed (the flag is no label: it changes no content hash); returns the ids of the
    samples changed."""
    stale = []
    for extra, sample in pairs:
        flag = extra.get(GOLD_KEY, False)
        if bool(sample.extra.get(GOLD_KEY, False)) != flag:
            sample.extra = {**sample.extra, GOLD_KEY: flag}
            stale.append(sample)
    Sample.objects.bulk_update(stale, ["extra"])
    return [sample.pk for sample in stale]
