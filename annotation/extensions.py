"""Extension points: apps built on annotation plug into it at start-up without annotation
importing them. Each app registers its parts from its ``AppConfig.ready()``.

- **Dataset list columns**: review adds each dataset's work left for the reader.
- **Sample list buttons and sample page panels**: review adds marking samples as gold items
  (and unmarking them), the list's gold column and filter, and the sample's reviews, judging
  the models' responses with the judges' verdicts (also a card of the adjudication page).
- **Manifest sections**: review records in each release which reviewers it excluded.
- **Sample list filters**: review adds the decisions among a sample's reviews, judging the
  models' responses and the judges' verdicts (labels, scores), as conditions on the sample.
- **Membership changes**: accounts writes every change of a dataset's members to its access log.
- **Work from another tool**: an import of a Label Studio export hands its completed
  annotations to review (reviews) and its predictions to judging (verdicts).
- **The review queue**: annotation owns samples and their statuses but may not import review.
  When its services move samples into or out of review (sent to review, taken down, restored,
  re-prioritised, an import that sends its samples on), they tell the queue through this port,
  and the sample list asks it which samples a reviewer reviewed. Without a queue plugged in
  (annotation alone) the calls open no slot and match no sample. A port rather than entry
  points in review, because the status change and its history are annotation's data and one
  caller (the end of an import) lives in annotation: every entry point (sample list, API,
  command, import) runs the same annotation service, the single place the rule lives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from django.utils.functional import Promise

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.db.models import Exists, QuerySet

    from annotation.models import Dataset


@dataclass(frozen=True)
class DatasetListColumn:
    """A column of the dataset list: its heading, the template of a cell (given ``value``),
    and a loader that returns the values of a whole page of datasets at once, by dataset id."""

    heading: str | Promise
    template: str
    load: Callable[..., Mapping[int, Any]]  # load(*, user, datasets) -> {dataset id: value}
    # Who sees the column at all (everyone when None): "My review work" is for reviewers.
    shown_to: Callable[[User], bool] | None = None


_dataset_list_columns: list[DatasetListColumn] = []


def dataset_list_column_register(column: DatasetListColumn) -> None:
    """Add a column to the dataset list (an app calls this from its ``AppConfig.ready``)."""
    if column not in _dataset_list_columns:
        _dataset_list_columns.append(column)


def dataset_list_columns(*, user: User | None = None) -> list[DatasetListColumn]:
    """The registered columns; with ``user``, only those shown to them."""
    return [
        c
        for c in _dataset_list_columns
        if c.shown_to is None or (user is not None and c.shown_to(user))
    ]


def dataset_list_cells(
    *, user: User | None, datasets: list[Dataset]
) -> list[tuple[Dataset, list[tuple[str, Any]]]]:
    """Each dataset with its extra cells: (template, value) per registered column."""
    columns = dataset_list_columns(user=user)
    loaded = [column.load(user=user, datasets=datasets) if user else {} for column in columns]
    return [
        (dataset, [(c.template, v.get(dataset.pk)) for c, v in zip(columns, loaded, strict=True)])
        for dataset in datasets
    ]


class ReviewQueue(Protocol):
    def sync(self, *, dataset: Dataset, sample_ids: Sequence[int] | None = None) -> int:
        """Bring the dataset's queue in line with its samples' statuses and priorities (of
        ``sample_ids`` only, when given); return the number of review slots opened."""
        ...

    def refresh(self, *, dataset_id: int, sample_ids: Sequence[int] | None = None) -> int:
        """Like ``sync``, but only for a dataset whose queue is open (a queue is never opened
        by it): after an import or a judge job changed statuses or judges' flags (of
        ``sample_ids`` only, when given: none costs nothing)."""
        ...

    def reviewed_by(self, *, dataset: Dataset, username: str) -> QuerySet[Any]:
        """The ids of the dataset's samples that this user reviewed, as a subquery."""
        ...

    def has_reviews(self, *, dataset: Dataset) -> bool:
        """Whether anyone has reviewed or adjudicated a sample of the dataset."""
        ...

    def assignees_check(self, *, dataset: Dataset, usernames: Iterable[str]) -> None:
        """Refuse (ValidationError) anyone named who is not an annotator of the dataset."""
        ...

    def assign(
        self,
        *,
        dataset: Dataset,
        sample_ids: Sequence[int],
        usernames: Iterable[str],
        by: User | None,
    ) -> int:
        """Assign the samples to the annotators named: served to them first, and to nobody
        else while one of them can still take them; the number of assignments made."""
        ...

    def unassign(
        self, *, dataset: Dataset, sample_ids: Sequence[int], usernames: Iterable[str]
    ) -> int:
        """Take the samples back from the people named (from everyone, when none is); the
        number of assignments removed."""
        ...


_queue: ReviewQueue | None = None


def review_queue_register(queue: ReviewQueue | None) -> None:
    """Plug in the review queue (``None`` unplugs it, for tests)."""
    global _queue
    _queue = queue


def review_queue_sync(*, dataset: Dataset, sample_ids: Sequence[int] | None = None) -> int:
    """Tell the review queue that samples of this dataset changed (``sample_ids``, when
    known; else any); the slots it opened."""
    if _queue is None:
        return 0
    return _queue.sync(dataset=dataset, sample_ids=sample_ids)


def review_queue_refresh(*, dataset_id: int, sample_ids: Sequence[int] | None = None) -> int:
    """Tell an open review queue that samples changed (statuses, judges' flags): these
    ``sample_ids``, when known, else any; 0 when the dataset has no open queue."""
    if _queue is None:
        return 0
    return _queue.refresh(dataset_id=dataset_id, sample_ids=sample_ids)


def review_queue_assignees_check(*, dataset: Dataset, usernames: Iterable[str]) -> None:
    """Refuse anyone named who is not an annotator of the dataset (no one, without a queue)."""
    if _queue is not None:
        _queue.assignees_check(dataset=dataset, usernames=usernames)


def review_queue_assign(
    *, dataset: Dataset, sample_ids: Sequence[int], usernames: Iterable[str], by: User | None
) -> int:
    """Assign samples to annotators in the review queue; the assignments made."""
    if _queue is None:
        return 0
    return _queue.assign(dataset=dataset, sample_ids=sample_ids, usernames=usernames, by=by)


def review_queue_unassign(
    *, dataset: Dataset, sample_ids: Sequence[int], usernames: Iterable[str]
) -> int:
    """Take samples back from annotators in the review queue; the assignments removed."""
    if _queue is None:
        return 0
    return _queue.unassign(dataset=dataset, sample_ids=sample_ids, usernames=usernames)


def samples_reviewed_by(*, dataset: Dataset, username: str) -> QuerySet[Any] | None:
    """The sample ids reviewed by a user, or None when no review queue is plugged in."""
    return _queue.reviewed_by(dataset=dataset, username=username) if _queue else None


def dataset_has_reviews(*, dataset: Dataset) -> bool:
    """Whether the dataset holds reviews (never, when no review queue is plugged in)."""
    return _queue.has_reviews(dataset=dataset) if _queue is not None else False


# Which samples are gold items (review's): the sample list's gold column and its "gold: yes/no"
# filter, on the page and in the API, for leads. ``exists(*, dataset)`` returns an ``Exists``
# over the outer sample (``OuterRef("pk")``), so the filter stays one indexed query.
_gold_exists: Callable[..., Exists] | None = None


def gold_samples_register(exists: Callable[..., Exists] | None) -> None:
    """Plug in ``exists(*, dataset) -> Exists`` (``None`` unplugs it, for tests)."""
    global _gold_exists
    _gold_exists = exists


def gold_exists(*, dataset: Dataset) -> Exists | None:
    """Whether the outer sample is a gold item, or None when nothing plugged in gold items
    (then no sample is gold)."""
    return _gold_exists(dataset=dataset) if _gold_exists is not None else None


@dataclass(frozen=True)
class SampleListButton:
    """A button of the sample list's bulk form for leads: it posts the form (``ids`` or
    ``scope=all``, and the filter) to the view named ``url_name`` (given the dataset id)."""

    label: str | Promise
    url_name: str


_sample_list_buttons: list[SampleListButton] = []


def sample_list_button_register(button: SampleListButton) -> None:
    if button not in _sample_list_buttons:
        _sample_list_buttons.append(button)


def sample_list_buttons() -> list[SampleListButton]:
    return list(_sample_list_buttons)


@dataclass(frozen=True)
class SamplePanel:
    """A card of the sample page: its template, given ``panel`` (what ``load`` returned), or
    nothing when ``load`` returns None."""

    template: str
    load: Callable[..., Any]  # load(*, user, sample) -> context value or None
    # Also a card of review's adjudication page (which includes it the same way).
    in_adjudication: bool = False


_sample_panels: list[SamplePanel] = []


def sample_panel_register(panel: SamplePanel) -> None:
    if panel not in _sample_panels:
        _sample_panels.append(panel)


def sample_panels(*, user: Any, sample: Any, adjudication: bool = False) -> list[tuple[str, Any]]:
    """The sample page's extra cards (with ``adjudication``, the adjudication page's):
    (template, value) for each panel that has one."""
    loaded = [
        (panel.template, panel.load(user=user, sample=sample))
        for panel in _sample_panels
        if panel.in_adjudication or not adjudication
    ]
    return [(template, value) for template, value in loaded if value is not None]


# Whether a reader may see what other people did on a sample: review's blind rule (in blind
# review an annotator sees only their own work). The sample page's history then names no other
# reviewer. Without review plugged in, everyone may.
_others_work_visible: Callable[..., bool] | None = None


def others_work_visible_register(check: Callable[..., bool] | None) -> None:
    """Plug in ``check(*, user, sample) -> bool`` (``None`` unplugs it, for tests)."""
    global _others_work_visible
    _others_work_visible = check


def others_work_visible(*, user: Any, sample: Any) -> bool:
    return _others_work_visible is None or _others_work_visible(user=user, sample=sample)


# The same rule for a whole dataset: whether the sample list lets a reader filter on other
# reviewers' work there (reviewer, decision). Without review plugged in, everyone may.
_others_work_visible_in: Callable[..., bool] | None = None


def others_work_visible_in_register(check: Callable[..., bool] | None) -> None:
    """Plug in ``check(*, user, dataset) -> bool`` (``None`` unplugs it, for tests)."""
    global _others_work_visible_in
    _others_work_visible_in = check


def others_work_visible_in(*, user: Any, dataset: Dataset) -> bool:
    return _others_work_visible_in is None or _others_work_visible_in(user=user, dataset=dataset)


# Conditions of the sample list's filter on data other apps own, by name: each
# ``build(*, dataset, **values)`` returns an ``Exists`` over the outer sample (``OuterRef("pk")``)
# on an index of its table, so every filter stays one indexed query. Review gives the decisions
# among a sample's reviews, judging the models' responses and the judges' verdicts.
REVIEW_DECISION = "review_decision"  # values: decision (accept|correct|reject|skip), username
MODEL_RESPONSE = "model_response"  # values: model (None: any model)
VERDICT_LABEL = "verdict_label"  # values: label
VERDICT_SCORE = "verdict_score"  # values: low, high (either may be None)
_sample_conditions: dict[str, Callable[..., Exists]] = {}


def sample_condition_register(name: str, build: Callable[..., Exists] | None) -> None:
    """Plug in the condition ``name`` (``None`` unplugs it, for tests)."""
    if build is None:
        _sample_conditions.pop(name, None)
    else:
        _sample_conditions[name] = build


def sample_condition(name: str, *, dataset: Dataset, **values: Any) -> Exists | None:
    """The condition ``name`` on the outer sample, or None when no app plugged it in (then no
    sample meets it)."""
    build = _sample_conditions.get(name)
    return build(dataset=dataset, **values) if build is not None else None


# Called with the dataset at the end of every import (whether or not its samples were sent to
# review): review makes the verified samples that the file flagged ``gold`` gold items.
_import_finished: list[Callable[..., object]] = []


def import_finished_register(callback: Callable[..., object]) -> None:
    """Call ``callback(dataset=…, sample_ids=…)`` at the end of each import: ``sample_ids``
    the samples it changed, or None when it does not know them (any may have changed)."""
    if callback not in _import_finished:
        _import_finished.append(callback)


def import_finished(*, dataset: Dataset, sample_ids: Sequence[int] | None = None) -> None:
    """The end of an import that changed ``sample_ids`` (None: it cannot tell which, so any
    sample may have changed). What follows costs what the import changed: an unchanged
    re-import into a dataset of a million samples costs no statement here."""
    # A re-import sends changed samples back to review: an open queue gives them k slots in a
    # new round at once, before any other callback looks at the queue.
    review_queue_refresh(dataset_id=dataset.pk, sample_ids=sample_ids)
    for callback in _import_finished:
        callback(dataset=dataset, sample_ids=sample_ids)


# Sections other apps add to a release's manifest, by key: review lists the reviewers it
# left out of consensus. Each ``load(dataset=…)`` returns plain JSON data.
_manifest_sections: dict[str, Callable[..., Any]] = {}


def manifest_section_register(key: str, load: Callable[..., Any]) -> None:
    """Add ``key`` to every snapshot's manifest, its value ``load(dataset=…)``."""
    _manifest_sections[key] = load


def manifest_sections(*, dataset: Dataset) -> dict[str, Any]:
    return {key: load(dataset=dataset) for key, load in sorted(_manifest_sections.items())}


@dataclass(frozen=True)
class MembershipChange:
    """A change of who works in a dataset: ``before`` and ``after`` are the member's roles
    in it (None: not a member), ``actor`` who made the change (None: a command or a job)."""

    dataset: Dataset
    user: User
    actor: User | None
    before: frozenset[str] | None
    after: frozenset[str] | None


# Called after every change of a dataset's members, inside its transaction: accounts writes
# each change to the access log.
_membership_changed: list[Callable[[MembershipChange], object]] = []


def membership_changed_register(callback: Callable[[MembershipChange], object]) -> None:
    """Call ``callback(change)`` after each change of a dataset's members."""
    if callback not in _membership_changed:
        _membership_changed.append(callback)


def membership_changed(change: MembershipChange) -> None:
    for callback in _membership_changed:
        callback(change)


# Work done in another annotation tool that an import brings along (Label Studio's completed
# annotations and predictions): review keeps the annotations as reviews, judging the
# predictions as a judge's verdicts. Each handler returns notes for the import's summary.


@dataclass(frozen=True)
class ImportedAnnotation:
    """A person's labels of one sample, made in another tool."""

    sample_id: int
    key: str  # stable across imports of the same export (the tool's ids)
    email: str
    user_id: str
    name: str
    labels: dict[str, str]
    rejected: bool
    seconds: float


@dataclass(frozen=True)
class ImportedPrediction:
    """A model's labels of one sample, made in another tool."""

    sample_id: int
    model_version: str
    labels: dict[str, str]
    score: float | None


_annotations_handler: Callable[..., list[str]] | None = None
_predictions_handler: Callable[..., list[str]] | None = None


def imported_work_register(
    *,
    annotations: Callable[..., list[str]] | None = None,
    predictions: Callable[..., list[str]] | None = None,
) -> None:
    """Take imported annotations (review) or predictions (judging): ``handler(dataset=…,
    items=[…], by=user or None) -> notes``."""
    global _annotations_handler, _predictions_handler
    if annotations is not None:
        _annotations_handler = annotations
    if predictions is not None:
        _predictions_handler = predictions


def imported_annotations(
    *, dataset: Dataset, items: list[ImportedAnnotation], by: User | None
) -> list[str]:
    if _annotations_handler is None or not items:
        return []
    return _annotations_handler(dataset=dataset, items=items, by=by)


def imported_predictions(
    *, dataset: Dataset, items: list[ImportedPrediction], by: User | None
) -> list[str]:
    if _predictions_handler is None or not items:
        return []
    return _predictions_handler(dataset=dataset, items=items, by=by)
