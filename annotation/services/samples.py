"""Samples: creation with their media, label changes with history, status and pairing."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import duplicates
from annotation.formats.records import GOLD_KEY, MediaRef, ParsedSample, shown
from annotation.formats.records import LABEL_FIELDS as LABEL_FIELDS
from annotation.formats.validate import taxonomy_problems, validate_sample
from annotation.models import (
    ChangeSource,
    Dataset,
    MediaAsset,
    NoteKey,
    Sample,
    SampleMedia,
    SampleRevision,
    SampleStatus,
)
from annotation.selectors import taxonomy_view

if TYPE_CHECKING:
    from django.contrib.auth.models import User

_PARSED_FIELDS = {f.name for f in dataclass_fields(ParsedSample)}
_LABEL_SET = frozenset(LABEL_FIELDS)
# The fields the question key is made from (sample_question_key).
_TEXT_FIELDS = frozenset({"question", "speech_utterance"})


class SampleInvalid(ValidationError):
    """A sample's fields break its dataset's taxonomy or format rules."""


def _content_hash(
    values: Mapping[str, Any], media_hashes: Iterable[str], extra: Mapping[str, Any] | None
) -> str:
    return sample_content_hash_of_json(
        sample_values_json(values), media_hashes, sample_custom_json(extra)
    )


def sample_question_key(question: str, speech_utterance: str) -> int | None:
    """The text key near-duplicates share: the question's, or a scenario's speech utterance's
    when it has no question."""
    return duplicates.text_key(question or speech_utterance)


def sample_values_json(values: Mapping[str, Any]) -> str:
    """A sample's label fields as JSON text (sorted keys), as its content hash encodes them;
    an import stores the same text, so that each row's values are encoded once."""
    fields = values if values.keys() == _LABEL_SET else {k: values.get(k) for k in LABEL_FIELDS}
    return json.dumps(fields, sort_keys=True, ensure_ascii=False)


def sample_custom_fields(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """A sample's custom fields as content: its ``extra`` without the gold flag (a request
    about the sample, not data of it: it changes no content hash)."""
    return {k: v for k, v in (extra or {}).items() if k != GOLD_KEY}


def sample_custom_json(extra: Mapping[str, Any] | None) -> str:
    """A sample's custom fields as the content hash encodes them (sorted keys); "" for none."""
    custom = sample_custom_fields(extra)
    return json.dumps(custom, sort_keys=True, ensure_ascii=False) if custom else ""


def sample_content_hash_of_json(
    values_json: str, media_hashes: Iterable[str], custom_json: str = ""
) -> str:
    """The content hash of label fields encoded by ``sample_values_json``, media hashes and
    custom fields encoded by ``sample_custom_json``: the SHA-256 of ``{"custom": {…},
    "fields": …, "media": […]}`` with sorted keys, the stored format. A sample without custom
    fields leaves ``custom`` out, so its hash is the one kept before custom fields counted."""
    media = json.dumps(list(media_hashes), ensure_ascii=False)
    custom = f'"custom": {custom_json}, ' if custom_json else ""
    payload = f'{{{custom}"fields": {values_json}, "media": {media}}}'
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _size(value: object) -> int:
    """A field's size: a text's length, a list's or an object's JSON length (0 for other
    values, and for one JSON cannot hold: other checks refuse those)."""
    if isinstance(value, str):
        return len(value)
    if not value or not isinstance(value, list | tuple | dict):
        return 0
    try:
        return len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return 0


def sample_size_problems(
    values: Mapping[str, Any], *, extra: Mapping[str, Any] | None = None
) -> list[str]:
    """The fields (and keys of ``extra``) longer than SAMPLE_MAX_TEXT_CHARS, each a problem:
    the one limit on a sample's text, for imports, the API and the pages alike."""
    limit: int = settings.SAMPLE_MAX_TEXT_CHARS
    fields = [(name, value) for name, value in values.items()]
    if extra and _size(dict(extra)) > limit:
        fields += [(f"extra.{shown(str(key))}", value) for key, value in extra.items()]
    return [
        _("'%(field)s' is longer than %(limit)s characters") % {"field": name, "limit": limit}
        for name, value in fields
        if _size(value) > limit
    ]


def _check(
    dataset: Dataset,
    external_id: str,
    values: Mapping[str, Any],
    media_roles: Iterable[str],
    *,
    current: Mapping[str, Any] | None = None,
) -> None:
    """Refuse values with problems; with ``current`` (an update), only problems the change
    brings: a value the sample already held outside the taxonomy stays acceptable."""
    roles = list(media_roles)
    taxonomy = taxonomy_view(dataset)

    def problems_of(fields: Mapping[str, Any]) -> dict[str, str]:
        """Each problem's message and its code: ``unknown_code`` for a value the taxonomy
        lacks (core.api answers it 404, as review's edits), ``breaks_sample_rules`` for a
        format rule (409), ``too_long`` for a text over the limit (400)."""
        parsed = ParsedSample(
            row=0,
            external_id=external_id,
            media=[MediaRef(role=role, position=i) for i, role in enumerate(roles)],  # type: ignore[arg-type]
            **{k: v for k, v in fields.items() if k in _PARSED_FIELDS},
        )
        outside = {str(problem) for problem in taxonomy_problems(parsed, taxonomy)}
        problems = [str(problem) for problem in validate_sample(parsed, taxonomy)]
        return dict.fromkeys(sample_size_problems(fields), "too_long") | {
            p: "unknown_code" if p in outside else "breaks_sample_rules" for p in problems
        }

    problems = problems_of(values)
    if problems and current is not None:
        already = problems_of(current)
        problems = {p: code for p, code in problems.items() if p not in already}
    if problems:
        raise SampleInvalid([ValidationError(p, code=code) for p, code in problems.items()])


@transaction.atomic
def sample_create(
    *,
    dataset: Dataset,
    external_id: str,
    media: Iterable[tuple[str, MediaAsset]] = (),
    by: User | None = None,
    source: str = ChangeSource.CREATE,
    reason: str = "",
    status: str = SampleStatus.IMPORTED,
    priority: int = 0,
    extra: Mapping[str, Any] | None = None,
    **values: Any,
) -> Sample:
    """Create a sample with its media links and its first revision.

    ``values`` are label fields (see LABEL_FIELDS); ``media`` is a list of (role, asset) in
    order. Raises SampleInvalid with readable messages when the fields break the taxonomy.
    """
    unknown = set(values) - set(LABEL_FIELDS)
    if unknown:
        raise TypeError(f"Not label fields: {sorted(unknown)}")
    positions: dict[str, int] = {}
    slots = [(role, _next(positions, role), asset) for role, asset in media]
    _check(dataset, external_id, values, (role for role, _position, _asset in slots))
    # Hashed in (role, position) order, as sample_update and the import hash them.
    ordered = sorted(slots, key=lambda slot: (slot[0], slot[1]))
    sample = Sample(
        dataset=dataset,
        external_id=external_id,
        status=status,
        priority=priority,
        extra=dict(extra or {}),
        **values,
    )
    # Hashed from the instance, so fields left out hash as their defaults, as in updates.
    sample.content_hash = _content_hash(
        {k: getattr(sample, k) for k in LABEL_FIELDS},
        (asset.sha256 for _r, _p, asset in ordered),
        sample.extra,
    )
    sample.question_key = sample_question_key(sample.question, sample.speech_utterance)
    sample.save(force_insert=True)
    SampleMedia.objects.bulk_create(
        SampleMedia(sample=sample, asset=asset, role=role, position=position)
        for role, position, asset in slots
    )
    SampleRevision.objects.create(
        sample=sample,
        number=1,
        changed_by=by,
        source=source,
        before={},
        after={k: getattr(sample, k) for k in LABEL_FIELDS} | {"status": sample.status},
        reason=reason,
    )
    return sample


def _next(positions: dict[str, int], role: str) -> int:
    positions[role] = positions.get(role, -1) + 1
    return positions[role]


@transaction.atomic
def sample_update(
    *,
    sample: Sample,
    changes: Mapping[str, Any],
    by: User | None,
    source: str,
    reason: str = "",
    status: str | None = None,
) -> SampleRevision | None:
    """Change label fields (and optionally the status), keeping before/after in the history.

    Returns the new revision, or None when nothing actually changed.
    """
    unknown = set(changes) - set(LABEL_FIELDS)
    if unknown:
        raise TypeError(f"Not label fields: {sorted(unknown)}")
    locked = Sample.objects.select_for_update().get(pk=sample.pk)
    before = {k: getattr(locked, k) for k, v in changes.items() if getattr(locked, k) != v}
    after = {k: changes[k] for k in before}
    if status is not None and status != locked.status:
        before["status"], after["status"] = locked.status, status
    if not before:
        return None
    label_changes = {k: v for k, v in after.items() if k != "status"}
    if label_changes:
        # Only label changes need the taxonomy check and a new content hash; a status move
        # (every review claim starts one) stays two cheap statements.
        current = {k: getattr(locked, k) for k in LABEL_FIELDS}
        merged = current | label_changes
        roles = locked.media_links.values_list("role", flat=True)
        _check(locked.dataset, locked.external_id, merged, roles, current=current)
        media_hashes = locked.media_links.order_by("role", "position").values_list(
            "asset__sha256", flat=True
        )
        locked.content_hash = _content_hash(merged, media_hashes, locked.extra)
    for key, value in after.items():
        setattr(locked, key, value)
    locked.revision += 1
    kept = [*after.keys(), "content_hash", "revision", "updated_at"]
    if _TEXT_FIELDS & after.keys():
        locked.question_key = sample_question_key(locked.question, locked.speech_utterance)
        kept.append("question_key")
    locked.save(update_fields=kept)
    revision = SampleRevision.objects.create(
        sample=locked,
        number=locked.revision,
        changed_by=by,
        source=source,
        before=before,
        after=after,
        reason=reason,
    )
    for key in (*after.keys(), "revision", "content_hash", "question_key"):
        setattr(sample, key, getattr(locked, key))
    return revision


def sample_set_status(
    *, sample: Sample, status: str, by: User | None, reason: str = ""
) -> SampleRevision | None:
    """Move a sample to another status, recorded in its history."""
    if status not in SampleStatus.values:
        raise ValidationError(_("Unknown status “%(status)s”.") % {"status": status})
    return sample_update(
        sample=sample, changes={}, by=by, source=ChangeSource.STATUS, reason=reason, status=status
    )


# Samples noted per call of annotation_sample_notes_set.
NOTE_BATCH = 1000


def sample_advance_status(
    *,
    sample: Sample,
    from_status: str,
    to_status: str,
    by: User | None,
    source: str,
    reason: str = "",
) -> bool:
    """Move a sample on from one status to the next if it is still in the first.

    A workflow step (a first review moves a sample to "in review"): one call of the SQL
    function ``annotation_sample_step`` (migration 0014), which counts the revision and writes
    the history row, and which the review loop's statements call too. False, with nothing
    written, when the sample was no longer in ``from_status``.
    """
    if to_status not in SampleStatus.values:
        raise ValidationError(_("Unknown status “%(status)s”.") % {"status": to_status})
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT annotation_sample_step(%s, %s, %s, %s, %s, %s, %s)",
            [sample.pk, from_status, to_status, by.pk if by else None, source, reason, now],
        )
        (revision,) = cursor.fetchone()
    if revision is None:
        return False
    sample.status, sample.revision, sample.updated_at = to_status, revision, now
    return True


@transaction.atomic
def sample_link_pair(*, unsafe: Sample, safe: Sample) -> None:
    """Pair an unsafe tri-modal scenario with its minimally different safe twin, both ways."""
    if unsafe.dataset_id != safe.dataset_id:
        raise ValidationError(_("Paired samples must belong to the same dataset."))
    if unsafe.pk == safe.pk:
        raise ValidationError(_("A sample cannot be paired with itself."))
    Sample.objects.filter(pair__in=[unsafe, safe]).update(pair=None)
    Sample.objects.filter(pk__in=[unsafe.pk, safe.pk]).update(pair=None)
    Sample.objects.filter(pk=unsafe.pk).update(pair=safe)
    Sample.objects.filter(pk=safe.pk).update(pair=unsafe)
    unsafe.pair, safe.pair = safe, unsafe


def sample_set_note(*, sample_ids: Iterable[int], key: NoteKey, values: Mapping[int, Any]) -> int:
    """Note another app's summary about samples (``values`` maps sample id to a JSON value).

    Used by review (``NoteKey.REVIEW_SUMMARY``) and judging (``NoteKey.JUDGE_VOTES``) so that
    annotation, which knows neither, can show and export them. One upsert per batch, by the
    SQL function ``annotation_sample_notes_set`` (migration 0014), which the review loop's
    statements call too: a note written by another app at the same time, under another key,
    is never lost. Ids of samples gone are left out; answers the number noted.
    """
    ids = list(dict.fromkeys(sample_ids))
    noted = 0
    with connection.cursor() as cursor:
        for start in range(0, len(ids), NOTE_BATCH):
            batch = ids[start : start + NOTE_BATCH]
            cursor.execute(
                "SELECT annotation_sample_notes_set(%s, %s, %s::jsonb[], %s)",
                [batch, str(key), [json.dumps(values.get(pk)) for pk in batch], timezone.now()],
            )
            noted += cursor.fetchone()[0]
    return noted


def sample_flag_judges(*, sample_ids: Iterable[int], disagree: bool | None) -> int:
    """Mark samples whose judges disagreed (the review queue serves them first), agreed, or
    cast no vote (``None``: the "Judges: agree" filter does not match them)."""
    return Sample.objects.filter(pk__in=list(sample_ids)).update(judges_disagree=disagree)


def sample_mark_inferred_answerability(*, groups: Mapping[int, str]) -> int:
    """Note on each sample the answerability group judging inferred from its reference
    answer ("" where the sample's own group decides); only rows that change are written."""
    by_group: dict[str, list[int]] = defaultdict(list)
    for pk, group in groups.items():
        by_group[group].append(pk)
    changed = 0
    for group, ids in by_group.items():
        changed += (
            Sample.objects.filter(pk__in=ids)
            .exclude(inferred_answerability=group)
            .update(inferred_answerability=group)
        )
    return changed


def sample_content_hash(
    values: Mapping[str, Any],
    media_hashes: Iterable[str],
    extra: Mapping[str, Any] | None = None,
) -> str:
    """The content hash a sample stores: its label fields, its media hashes, in order, and its
    custom fields (``extra`` without the gold flag).

    Imports compare it with ``Sample.content_hash`` to recognise an unchanged row; pass the
    media hashes ordered by (role, position), as ``sample_update`` computes them.
    """
    return _content_hash(values, media_hashes, extra)
