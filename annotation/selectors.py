"""Reads of the annotation app: what a user may see, and how it is loaded."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import (
    BooleanField,
    CharField,
    Count,
    Exists,
    F,
    ForeignKey,
    Func,
    IntegerField,
    JSONField,
    Model,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    prefetch_related_objects,
)
from psycopg import sql

from annotation.duplicates import Keyed
from annotation.extensions import gold_exists
from annotation.formats.records import GOLD_KEY
from annotation.formats.validate import TaxonomyView
from annotation.models import (
    MEMBER_ROLE_FIELDS,
    Dataset,
    DatasetMembership,
    DuplicatePair,
    MediaAsset,
    MediaRole,
    NoteKey,
    Sample,
    SampleBulkJob,
    SampleMedia,
    SampleNote,
    SampleRevision,
    SampleStatus,
    TaxonomyTerm,
    TermKind,
    term_kinds,
)
from annotation.sample_filters import BulkAction, SampleFilter, samples_filtered
from core.lookups import AnyOf
from core.roles import is_lead, user_roles

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser

M = TypeVar("M", bound=Model)


def role_held(*, user: AnyUser, role: str | None) -> bool:
    """Whether the user holds ``role`` on the site (None: any role is enough), which working in
    a dataset in that role needs besides the dataset's membership; leads hold every role."""
    return role is None or role in user_roles(user) or is_lead(user)


def dataset_visible(user: AnyUser, dataset_field: str = "pk", role: str | None = None) -> Func:
    """The condition "the user may see the dataset ``dataset_field`` (and work in it in
    ``role``, when given)", for a queryset's filter: annotation's SQL function
    ``annotation_dataset_visible`` (migration 0015), which the review loop's own statements call
    too, so the rule is written once. A lead sees and works in every dataset; anybody else in
    the datasets they are a member of, in the roles their membership there holds."""
    return Func(
        F(dataset_field),
        Value(user.pk),
        Value(is_lead(user)),
        Value(role),
        function="annotation_dataset_visible",
        output_field=BooleanField(),
    )


def dataset_list_visible(*, user: AnyUser, role: str | None = None) -> QuerySet[Dataset]:
    """Leads see every dataset; everybody else only the datasets they are members of (and,
    with ``role``, only those whose membership holds that role)."""
    if not user.is_authenticated or not role_held(user=user, role=role):
        return Dataset.objects.none()
    return Dataset.objects.filter(dataset_visible(user, role=role))


def dataset_role_allows(*, user: AnyUser, dataset: Dataset, role: str) -> bool:
    """Whether the user works in this dataset in ``role`` (leads in every role)."""
    if is_lead(user):
        return True
    return dataset_list_visible(user=user, role=role).filter(pk=dataset.pk).exists()


def dataset_get_visible(
    *, user: AnyUser, dataset_id: int, role: str | None = None
) -> Dataset | None:
    return dataset_list_visible(user=user, role=role).filter(pk=dataset_id).first()


def taxonomy_view(dataset: Dataset) -> TaxonomyView:
    """The dataset's taxonomy as the plain sets that validation works with."""
    # A retired term is no longer a value to give; samples that hold it keep it (a held value
    # outside the taxonomy never blocks an edit of another field).
    terms = TaxonomyTerm.objects.filter(dataset=dataset, retired=False).values_list(
        "kind", "code", "parent_code"
    )
    return TaxonomyView.of_terms(terms)


def taxonomy_terms(*, dataset: Dataset) -> QuerySet[TaxonomyTerm]:
    return TaxonomyTerm.objects.filter(dataset=dataset)


@dataclass(frozen=True)
class TermsOfKind:
    kind: str
    label: str
    terms: list[TaxonomyTerm]


def taxonomy_by_kind(*, dataset: Dataset) -> list[TermsOfKind]:
    """The dataset's terms grouped by kind, every kind its samples use listed (empty ones too;
    a term of another kind, left by an older version, under its own kind); one query."""
    terms = list(taxonomy_terms(dataset=dataset))
    kinds = list(term_kinds(dataset.kind))
    kinds += [TermKind(t.kind) for t in terms if t.kind not in kinds and t.kind in TermKind.values]
    return [
        TermsOfKind(kind=kind, label=str(kind.label), terms=[t for t in terms if t.kind == kind])
        for kind in dict.fromkeys(kinds)
    ]


@dataclass(frozen=True)
class Member:
    membership: DatasetMembership
    roles: list[str]  # the roles the member holds in this dataset, by name


def dataset_members(*, dataset: Dataset) -> list[Member]:
    """The dataset's members by username, each with the roles they hold in it; one query."""
    memberships = (
        DatasetMembership.objects.filter(dataset=dataset)
        .select_related("user")
        .order_by("user__username")
    )
    return [
        Member(m, [role for role, field in MEMBER_ROLE_FIELDS.items() if getattr(m, field)])
        for m in memberships
    ]


def dataset_annotator_usernames(*, dataset: Dataset) -> list[str]:
    """The usernames of the dataset's active members with the annotator role, in order (the
    people samples may be assigned to); one query."""
    return list(
        DatasetMembership.objects.filter(dataset=dataset, annotates=True, user__is_active=True)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )


MEMBER_CANDIDATES_SHOWN = 500


def dataset_member_candidates(*, dataset: Dataset) -> list[str]:
    """The usernames of active people who are not members of the dataset, in order (at most
    MEMBER_CANDIDATES_SHOWN), for the members page to suggest; one query."""
    members = DatasetMembership.objects.filter(dataset=dataset).values("user_id")
    return list(
        get_user_model()
        .objects.filter(is_active=True)
        .exclude(pk__in=members)
        .order_by("username")
        .values_list("username", flat=True)[:MEMBER_CANDIDATES_SHOWN]
    )


def sample_list(*, dataset: Dataset, status: str | None = None) -> QuerySet[Sample]:
    """Samples of a dataset with their media in two queries, whatever the page size."""
    samples = Sample.objects.filter(dataset=dataset).prefetch_related(
        Prefetch("media_links", queryset=SampleMedia.objects.select_related("asset"))
    )
    if status:
        samples = samples.filter(status=status)
    return samples.order_by("id")


def samples_matching(*, dataset: Dataset, filter: SampleFilter) -> QuerySet[Sample]:
    """The dataset's samples that the sample list's filter selects, in its order, bare.

    One query whatever the filter: each parameter is a condition of the filter set
    (``annotation.sample_filters.SampleFilterSet``), those on other apps' data ``EXISTS``
    subqueries over their indexes.
    """
    return samples_filtered(dataset=dataset, filter=filter)


def samples_selected(
    *, dataset: Dataset, filter: SampleFilter, ids: Iterable[int] | None = None
) -> QuerySet[Sample]:
    """A bulk action's selection: the filtered samples, narrowed to ``ids`` when given."""
    samples = samples_matching(dataset=dataset, filter=filter)
    return samples if ids is None else samples.filter(pk__in=list(ids))


def sample_bulk_job_get(*, user: AnyUser, job_id: int) -> SampleBulkJob | None:
    """A bulk job of a dataset the user may see, with its dataset."""
    return (
        SampleBulkJob.objects.select_related("dataset")
        .filter(pk=job_id, dataset__in=dataset_list_visible(user=user))
        .first()
    )


def samples_bulk_affected(
    *, action: str, samples: QuerySet[Sample], from_statuses: Iterable[str]
) -> int:
    """How many of the selected samples a bulk action would change (for its confirmation)."""
    if action == BulkAction.SEND_TO_REVIEW:
        return samples.filter(status__in=list(from_statuses)).count()
    if action == BulkAction.TAKE_DOWN:
        return samples.exclude(status=SampleStatus.REMOVED).count()
    if action == BulkAction.RESTORE:
        return samples.filter(status=SampleStatus.REMOVED).count()
    return samples.count()


def sample_list_filtered(
    *, dataset: Dataset, filter: SampleFilter, with_gold: bool = False
) -> QuerySet[Sample]:
    """The filtered samples in the filter's order, with their media in one more query; with
    ``with_gold`` each one's ``is_gold`` in the same query (the lead's gold column)."""
    samples = samples_matching(dataset=dataset, filter=filter)
    if with_gold:
        gold = gold_exists(dataset=dataset)
        samples = samples.annotate(is_gold=gold if gold is not None else Value(False))
    return samples.prefetch_related(
        Prefetch("media_links", queryset=SampleMedia.objects.select_related("asset"))
    )


# What the sample list page shows of a sample (templates/annotation/sample_list.html): the
# other columns (the options, the extra fields and the other JSON and long text columns) are
# left in the table.
_PAGE_FIELDS = (
    "external_id",
    "question",
    "speech_utterance",
    "reference_answer",
    "category_code",
    "safety_category",
    "question_format",
    "scenario",
    "answerability_group",
    "split",
    "status",
    "judges_disagree",
    "priority",
    "created_at",
    "updated_at",
)


def sample_list_page(
    *, dataset: Dataset, filter: SampleFilter, with_gold: bool = False
) -> QuerySet[Sample]:
    """The sample list page's rows: ``sample_list_filtered`` with only the columns the page
    shows, and each sample's media links (role and asset id, no asset) in one more query."""
    samples = samples_matching(dataset=dataset, filter=filter).only(*_PAGE_FIELDS)
    if with_gold:
        gold = gold_exists(dataset=dataset)
        samples = samples.annotate(is_gold=gold if gold is not None else Value(False))
    links = SampleMedia.objects.only("sample_id", "role", "asset_id")
    return samples.prefetch_related(Prefetch("media_links", queryset=links))


# The values each drop-down's column holds in a dataset, every column walked as a skip scan
# of its (dataset, column) index (annotation 0026): one probe per distinct value, where a
# DISTINCT reads every sample's entry (15 ms for the four at 41,883 samples, 4 statements).
_CHOICE_COLUMNS = (
    ("category", "category_code"),
    ("category", "safety_category"),
    ("question_format", "question_format"),
    ("scenario", "scenario"),
)
_CHOICE_WALK = sql.SQL("""{name}(value) AS (
    (SELECT {column} FROM {sample}
     WHERE dataset_id = %(dataset)s AND {column} > '' ORDER BY {column} LIMIT 1)
    UNION ALL
    SELECT (SELECT s.{column} FROM {sample} s
            WHERE s.dataset_id = %(dataset)s AND s.{column} > w.value
            ORDER BY s.{column} LIMIT 1)
    FROM {name} w WHERE w.value IS NOT NULL
)""")
_CHOICE_READ = sql.SQL("SELECT {key}, value FROM {name} WHERE value IS NOT NULL")


@cache
def _choices_statement() -> str:
    sample = sql.Identifier(Sample._meta.db_table)
    names = [sql.Identifier(f"walk_{n}") for n in range(len(_CHOICE_COLUMNS))]
    walks = sql.SQL(",\n").join(
        _CHOICE_WALK.format(name=name, column=sql.Identifier(column), sample=sample)
        for name, (_key, column) in zip(names, _CHOICE_COLUMNS, strict=True)
    )
    reads = sql.SQL("\nUNION ALL\n").join(
        _CHOICE_READ.format(key=sql.Literal(key), name=name)
        for name, (key, _column) in zip(names, _CHOICE_COLUMNS, strict=True)
    )
    statement = sql.SQL("WITH RECURSIVE {walks}\n{reads}").format(walks=walks, reads=reads)
    return statement.as_string(None)


def sample_filter_choices(*, dataset: Dataset) -> dict[str, list[str]]:
    """The values the sample list offers in its drop-downs: the taxonomy's codes and the values
    the dataset's samples already use (in one statement, ``_choices_statement``)."""
    choices: dict[str, set[str]] = {"category": set(), "question_format": set(), "scenario": set()}
    with connection.cursor() as cursor:
        cursor.execute(_choices_statement(), {"dataset": dataset.pk})
        for key, value in cursor.fetchall():
            choices[key].add(value)
    kinds = {
        TermKind.CATEGORY: "category",
        TermKind.SAFETY_CATEGORY: "category",
        TermKind.FORMAT: "question_format",
        TermKind.SCENARIO: "scenario",
    }
    for kind, code in (
        taxonomy_terms(dataset=dataset).filter(kind__in=kinds).values_list("kind", "code")
    ):
        choices[kinds[TermKind(kind)]].add(code)
    return {key: sorted(values) for key, values in choices.items()}


def sample_fields(*, sample_id: int, fields: Iterable[str]) -> dict[str, Any] | None:
    """Some fields of one sample as plain values, for an answer that needs no model."""
    row: dict[str, Any] | None = Sample.objects.filter(pk=sample_id).values(*fields).first()
    return row


def sample_media_rows(*, sample_id: int) -> list[dict[str, Any]]:
    """A sample's media links in order: role, asset id and MIME type."""
    rows = (
        SampleMedia.objects.filter(sample_id=sample_id)
        .order_by("role", "position")
        .values("role", "asset_id", "asset__mime_type")
    )
    return [dict(row) for row in rows]


@dataclass(frozen=True)
class SampleCard:
    """What a reviewer is shown of a sample when it is leased to them: its dataset's kind,
    external id, status, question, the label fields (``fields``: both kinds' label fields, as
    the sample holds them) and its media links (role, asset id, MIME type, in order)."""

    kind: str
    external_id: str
    status: str
    question: str
    fields: dict[str, Any]
    media: list[dict[str, Any]]


def sample_card_from(value: Any) -> SampleCard:
    """A card as the SQL function ``annotation_sample_card`` (migration 0015) answers it."""
    card = dict(json.loads(value) if isinstance(value, str | bytes) else value)
    media = [
        {"role": role, "asset_id": asset, "mime_type": mime}
        for role, asset, mime in card.pop("media")
    ]
    return SampleCard(
        kind=card.pop("kind"),
        external_id=card.pop("external_id"),
        status=card.pop("status"),
        question=card.pop("question"),
        fields=card,
        media=media,
    )


def sample_card(*, sample_id: int) -> SampleCard | None:
    """A sample's card in one statement (the SQL function the claim statement reads it by
    too); None when there is no such sample."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT annotation_sample_card(%s)", [sample_id])
        (value,) = cursor.fetchone()
    return None if value is None else sample_card_from(value)


def sample_get_visible(
    *, user: AnyUser, sample_id: int, with_media: bool = True, role: str | None = None
) -> Sample | None:
    """A sample the user may see (and work on in ``role``, when given), with its dataset (and
    its pair and media unless told not: then in one statement, annotation's SQL function
    ``annotation_sample_visible``, which the review submission's lock calls too)."""
    if not user.is_authenticated or not role_held(user=user, role=role):
        return None
    if not with_media:
        if not BIGINT_MIN <= sample_id <= BIGINT_MAX:
            return None
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT annotation_sample_visible(%s, %s, %s, %s)",
                [sample_id, user.pk, is_lead(user), role],
            )
            (value,) = cursor.fetchone()
        return sample_from_visible(value)
    samples = Sample.objects.filter(dataset_visible(user, "dataset_id", role), pk=sample_id)
    return (
        samples.select_related("dataset", "pair")
        .prefetch_related(
            Prefetch("media_links", queryset=SampleMedia.objects.select_related("asset"))
        )
        .first()
    )


BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1  # the range of a sample id's column


# Fields whose values JSON holds as the model does (strings, numbers, booleans, JSON).
_AS_IN_JSON = (CharField, TextField, IntegerField, BooleanField, JSONField)


@dataclass(frozen=True)
class _RowFields:
    """A model's concrete fields, in its order: their names, their columns, and how to turn
    each JSON value into the model's (None: as it is; else the field's ``to_python``, which
    parses datetimes)."""

    names: tuple[str, ...]
    columns: tuple[tuple[str, Callable[[Any], Any] | None], ...]


@cache
def _row_fields(model: type[Model]) -> _RowFields:
    fields = model._meta.concrete_fields
    columns = []
    for field in fields:
        kind = field.target_field if isinstance(field, ForeignKey) else field
        columns.append((field.column, None if isinstance(kind, _AS_IN_JSON) else field.to_python))
    return _RowFields(tuple(field.attname for field in fields), tuple(columns))


def _from_row(model: type[M], row: dict[str, Any]) -> M:
    """A model instance from its row as PostgreSQL's ``to_jsonb`` writes it."""
    fields = _row_fields(model)
    values = [
        row[column] if convert is None else convert(row[column])
        for column, convert in fields.columns
    ]
    # ``connection`` (the default database's) ran the statement: its alias without a lookup
    # through Django's per-thread connection handler.
    return model.from_db(DEFAULT_DB_ALIAS, fields.names, values)


def sample_from_visible(value: Any) -> Sample | None:
    """The sample with its dataset, as ``annotation_sample_visible`` (migration 0019) answers
    them; None when it answered NULL (no such sample, or not visible)."""
    if value is None:
        return None
    sample_row, dataset_row = json.loads(value) if isinstance(value, str | bytes) else value
    sample = _from_row(Sample, sample_row)
    sample.dataset = _from_row(Dataset, dataset_row)
    return sample


def samples_by_id(*, dataset: Dataset, sample_ids: Iterable[int]) -> QuerySet[Sample]:
    """Some samples of a dataset, by id, with their dataset."""
    return Sample.objects.filter(dataset=dataset, pk__in=list(sample_ids)).select_related("dataset")


def sample_ids_flagged_gold(
    *, dataset: Dataset, statuses: Iterable[str], sample_ids: Iterable[int] | None = None
) -> list[int]:
    """The samples (of these statuses) that an import's ``gold`` key or column flagged."""
    samples = Sample.objects.filter(
        dataset=dataset, status__in=list(statuses), **{f"extra__{GOLD_KEY}": True}
    )
    if sample_ids is not None:
        samples = samples.filter(pk__in=list(sample_ids))
    return list(samples.order_by("pk").values_list("pk", flat=True))


def sample_table() -> str:
    """The samples' table, for apps whose SQL joins it (the review queue's claim)."""
    return Sample._meta.db_table


def sample_ids_by_external_id(*, dataset: Dataset, external_ids: Iterable[str]) -> dict[str, int]:
    """The ids of a dataset's samples, by external id (unknown ids are absent)."""
    return dict(
        Sample.objects.filter(dataset=dataset, external_id__in=set(external_ids)).values_list(
            "external_id", "id"
        )
    )


def sample_order(*, dataset: Dataset, split: str = "") -> list[tuple[int, str, str]]:
    """(id, external id, reference answer) of a dataset's samples in import order: the order
    an evaluation harness's positional ``doc_id`` counts in. With ``split``, only that split's
    samples, when the dataset has any of it."""
    rows = Sample.objects.filter(dataset=dataset)
    if split and rows.filter(split=split).exists():
        rows = rows.filter(split=split)
    return list(rows.order_by("id").values_list("id", "external_id", "reference_answer"))


def sample_label_rows(
    *, dataset: Dataset, fields: Iterable[str], chunk_size: int = 2000
) -> Iterator[tuple[Any, ...]]:
    """(id, *fields) of every sample of a dataset, streamed in id order."""
    rows = Sample.objects.filter(dataset=dataset).order_by("id").values_list("id", *fields)
    return rows.iterator(chunk_size=chunk_size)


def sample_media_prefetch(path: str = "media_links") -> Prefetch[Any]:
    """A prefetch of samples' media links with their assets, in display order, for a query of
    another app that reaches samples through ``path``."""
    return Prefetch(
        path, queryset=SampleMedia.objects.select_related("asset").order_by("role", "position")
    )


def sample_notes(*, sample_ids: Iterable[int], key: NoteKey) -> dict[int, Any]:
    """The notes of one key on samples, by sample id (samples without the note are absent)."""
    return dict(
        SampleNote.objects.filter(sample_id__in=list(sample_ids), key=key).values_list(
            "sample_id", "value"
        )
    )


def sample_note(*, sample_id: int, key: NoteKey) -> Any:
    """One sample's note of one key, or None."""
    return sample_notes(sample_ids=[sample_id], key=key).get(sample_id)


def sample_history(*, sample: Sample) -> QuerySet[SampleRevision]:
    return SampleRevision.objects.filter(sample=sample).select_related("changed_by")


def label_revisions(
    *, dataset: Dataset, sources: Iterable[str]
) -> list[tuple[int, Any, dict[str, Any]]]:
    """(sample id, changed at, values before) of the dataset's revisions from the given
    sources, in sample and revision order: what the labels were before a change."""
    revisions = SampleRevision.objects.filter(sample__dataset=dataset, source__in=list(sources))
    return list(
        revisions.order_by("sample_id", "number").values_list("sample_id", "changed_at", "before")
    )


def media_asset_get_visible(*, user: AnyUser, asset_id: int) -> MediaAsset | None:
    """An asset is visible to a user who may see at least one sample that uses it."""
    assets = MediaAsset.objects.filter(pk=asset_id)
    if not user.is_authenticated:
        return None
    if not is_lead(user):
        links = SampleMedia.objects.filter(dataset_visible(user, "sample__dataset_id"))
        assets = assets.filter(Exists(links.filter(asset_id=OuterRef("pk"))))
    return assets.first()


@dataclass(frozen=True)
class StatusCount:
    status: str
    label: str
    count: int


def dataset_status_counts(*, dataset: Dataset) -> list[StatusCount]:
    """Counts of samples per status, every status listed (zero included), in one query."""
    rows = dict(
        Sample.objects.filter(dataset=dataset)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return [
        StatusCount(status=value, label=str(label), count=rows.get(value, 0))
        for value, label in SampleStatus.choices
    ]


def sample_values_in_use(
    *, dataset: Dataset, fields: Iterable[str], limit: int = 200
) -> dict[str, list[str]]:
    """The distinct non-empty values each of these fields holds in a dataset (one query per
    field, at most ``limit`` values each, sorted): suggestions for a field without terms."""
    found: dict[str, list[str]] = {}
    for name in fields:
        rows = (
            Sample.objects.filter(dataset=dataset)
            .exclude(**{name: ""})
            .order_by(name)
            .values_list(name, flat=True)
            .distinct()[:limit]
        )
        found[name] = [str(value) for value in rows]
    return found


# -- possible duplicates ----------------------------------------------------------------------


def _first_image_phash() -> Subquery:
    """The perceptual hash of a sample's first image (null without one), for an annotation."""
    return Subquery(
        SampleMedia.objects.filter(sample=OuterRef("pk"), role=MediaRole.IMAGE)
        .order_by("position")
        .values("asset__phash")[:1]
    )


def sample_duplicate_keys(
    *,
    dataset_id: int,
    question_keys: Iterable[int] | None = None,
    besides: Iterable[int] = (),
) -> list[Keyed]:
    """The duplicate keys of a dataset's samples with a text key (those with one of
    ``question_keys`` only, when given), but for the samples ``besides``, in the order they
    were stored. One query."""
    samples = Sample.objects.filter(dataset_id=dataset_id, question_key__isnull=False)
    if question_keys is not None:
        samples = samples.filter(AnyOf(F("question_key"), question_keys))
    left_out = list(besides)
    if left_out:
        samples = samples.exclude(AnyOf(F("pk"), left_out))
    rows = (
        samples.annotate(image_phash=_first_image_phash())
        .order_by("pk")
        .values_list("pk", "question_key", "image_phash")
    )
    return [Keyed(pk, key, phash) for pk, key, phash in rows.iterator(chunk_size=5000)]


def duplicate_pairs_of_job(*, job_id: int) -> QuerySet[DuplicatePair]:
    """The possible duplicates an import found, in the order it stored the later samples."""
    return (
        DuplicatePair.objects.filter(job_id=job_id)
        .select_related("original", "sample")
        .order_by("sample_id", "original_id")
    )


def duplicate_pair_get(*, dataset: Dataset, pair_id: int) -> DuplicatePair | None:
    """One possible duplicate of a dataset with both samples and their media (3 queries)."""
    media = Prefetch(
        "media_links",
        queryset=SampleMedia.objects.select_related("asset").order_by("role", "position"),
    )
    pair = (
        DuplicatePair.objects.filter(dataset=dataset, pk=pair_id)
        .select_related("original", "sample")
        .first()
    )
    if pair is None:
        return None
    prefetch_related_objects([pair.original, pair.sample], media)
    return pair


def duplicate_pairs_of_sample(*, sample: Sample) -> QuerySet[DuplicatePair]:
    """The possible duplicates a sample takes part in, either side."""
    return (
        DuplicatePair.objects.filter(Q(sample=sample) | Q(original=sample))
        .select_related("original", "sample")
        .order_by("original_id", "sample_id")
    )


def duplicate_pairs_of_dataset(*, dataset: Dataset) -> QuerySet[DuplicatePair]:
    """A dataset's possible duplicates, the latest-stored duplicate first."""
    return (
        DuplicatePair.objects.filter(dataset=dataset)
        .select_related("original", "sample", "job")
        .order_by("-sample_id", "original_id")
    )
