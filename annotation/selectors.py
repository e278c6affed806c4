"""Reads of the annotation app: what a user may see, and how it is loaded."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Exists, OuterRef, Prefetch, QuerySet

from annotation.formats.validate import TaxonomyView
from annotation.models import (
    Dataset,
    DatasetMembership,
    MediaAsset,
    NoteKey,
    Sample,
    SampleMedia,
    SampleNote,
    SampleRevision,
    SampleStatus,
    TaxonomyTerm,
    TermKind,
)
from core.roles import is_lead, lead_link, roles_known

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser


def dataset_list_visible(*, user: AnyUser) -> QuerySet[Dataset]:
    """Leads see every dataset; everybody else only the datasets they are members of."""
    if not user.is_authenticated:
        return Dataset.objects.none()
    if not roles_known(user):
        # One query instead of two (the user's roles, then their datasets): an API call that
        # only needs this answer tests the lead role inside it.
        member = DatasetMembership.objects.filter(dataset=OuterRef("pk"), user_id=user.pk)
        return Dataset.objects.filter(Exists(lead_link(user)) | Exists(member))
    if is_lead(user):
        return Dataset.objects.all()
    return Dataset.objects.filter(memberships__user=user)


def dataset_get_visible(*, user: AnyUser, dataset_id: int) -> Dataset | None:
    return dataset_list_visible(user=user).filter(pk=dataset_id).first()


def taxonomy_view(dataset: Dataset) -> TaxonomyView:
    """The dataset's taxonomy as the plain sets that validation works with."""
    view = TaxonomyView(
        groups=set(), categories={}, formats=set(), scenarios=set(), safety_categories={}
    )
    terms = TaxonomyTerm.objects.filter(dataset=dataset).values_list("kind", "code", "parent_code")
    for kind, code, parent in terms:
        if kind == TermKind.GROUP:
            view.groups.add(code)
        elif kind == TermKind.CATEGORY:
            view.categories[code] = parent
        elif kind == TermKind.FORMAT:
            view.formats.add(code)
        elif kind == TermKind.SCENARIO:
            view.scenarios.add(code)
        elif kind == TermKind.SAFETY_CATEGORY:
            view.safety_categories.setdefault(code, set())
        elif kind == TermKind.SAFETY_SUBCATEGORY:
            view.safety_categories.setdefault(parent, set()).add(code)
    return view


def taxonomy_terms(*, dataset: Dataset) -> QuerySet[TaxonomyTerm]:
    return TaxonomyTerm.objects.filter(dataset=dataset)


def sample_list(*, dataset: Dataset, status: str | None = None) -> QuerySet[Sample]:
    """Samples of a dataset with their media in two queries, whatever the page size."""
    samples = Sample.objects.filter(dataset=dataset).prefetch_related(
        Prefetch("media_links", queryset=SampleMedia.objects.select_related("asset"))
    )
    if status:
        samples = samples.filter(status=status)
    return samples.order_by("id")


def sample_fields(*, sample_id: int, fields: Iterable[str]) -> dict[str, Any] | None:
    """Some fields of one sample as plain values, for an answer that needs no model."""
    return Sample.objects.filter(pk=sample_id).values(*fields).first()


def sample_media_rows(*, sample_id: int) -> list[dict[str, Any]]:
    """A sample's media links in order: role, asset id and MIME type."""
    rows = (
        SampleMedia.objects.filter(sample_id=sample_id)
        .order_by("role", "position")
        .values("role", "asset_id", "asset__mime_type")
    )
    return [dict(row) for row in rows]


def sample_get_visible(*, user: AnyUser, sample_id: int, with_media: bool = True) -> Sample | None:
    """A sample the user may see, with its dataset (and its pair and media unless told not)."""
    datasets = dataset_list_visible(user=user)
    samples = Sample.objects.filter(pk=sample_id, dataset__in=datasets)
    if not with_media:
        return samples.select_related("dataset").first()
    return (
        samples.select_related("dataset", "pair")
        .prefetch_related(
            Prefetch("media_links", queryset=SampleMedia.objects.select_related("asset"))
        )
        .first()
    )


def sample_ids_by_external_id(*, dataset: Dataset, external_ids: Iterable[str]) -> dict[str, int]:
    """The ids of a dataset's samples, by external id (unknown ids are absent)."""
    return dict(
        Sample.objects.filter(dataset=dataset, external_id__in=set(external_ids)).values_list(
            "external_id", "id"
        )
    )


def sample_label_rows(
    *, dataset: Dataset, fields: Iterable[str], chunk_size: int = 2000
) -> Iterator[tuple[Any, ...]]:
    """(id, *fields) of every sample of a dataset, streamed in id order."""
    rows = Sample.objects.filter(dataset=dataset).order_by("id").values_list("id", *fields)
    return rows.iterator(chunk_size=chunk_size)


def sample_media_prefetch(path: str = "media_links") -> Prefetch:
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


def media_asset_get_visible(*, user: AnyUser, asset_id: int) -> MediaAsset | None:
    """An asset is visible to a user who may see at least one sample that uses it."""
    assets = MediaAsset.objects.filter(pk=asset_id)
    if not user.is_authenticated:
        return None
    if not is_lead(user):
        assets = assets.filter(samples__dataset__memberships__user=user)
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
