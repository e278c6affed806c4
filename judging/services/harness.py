"""Model outputs from the evaluation harnesses (lmms-eval, VLMEvalKit): responses and the
harness's per-sample metrics as verdicts, matched to the dataset's samples.

lmms-eval names an item by ``doc_id``, its position in the task's split: the lead confirms
which order of the dataset's samples it follows (their import order, or their external ids),
helped by a preview that shows the harness's target beside each matched sample's reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from django.db import transaction
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.formats.records import FormatError, RowError
from annotation.models import Dataset, DatasetKind
from core.bulk import rows_insert
from judging.audit import computations
from judging.formats.harness import (
    HarnessFile,
    HarnessPlan,
    HarnessRow,
    aggregate_overall,
    harness_plan,
)
from judging.formats.responses import ParsedResponse
from judging.models import Judge, JudgeTask, ModelResponse, Verdict, VerdictSource
from judging.services.judges import judge_get_or_create_external
from judging.services.responses import ImportSummary, response_import_batch

POSITION = "position"
EXTERNAL_ID = "external_id"
DOC_ORDERS = (POSITION, EXTERNAL_ID)
PROMPT_VERSION = "external"
PREVIEW_ROWS = 8
# Rows read to count how often the harness's target equals the matched sample's reference.
AGREEMENT_ROWS = 200


def doc_order_label(order: str) -> str:
    return {
        POSITION: _("doc_id is the position in the dataset's import order (from 0)"),
        EXTERNAL_ID: _("doc_id is the sample's external id"),
    }.get(order, order)


@dataclass
class SampleOrder:
    """The samples a file's positions count in, and the dataset's samples by external id."""

    rows: list[tuple[int, str, str]]

    def at(self, position: int) -> tuple[int, str, str] | None:
        return self.rows[position] if 0 <= position < len(self.rows) else None


class SampleOrders:
    """Each split's sample order, loaded once per import."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._orders: dict[str, SampleOrder] = {}

    def of(self, split: str) -> SampleOrder:
        if split not in self._orders:
            self._orders[split] = SampleOrder(
                annotation_selectors.sample_order(dataset=self.dataset, split=split)
            )
        return self._orders[split]


def _norm(text: str) -> str:
    return " ".join(text.lower().strip().strip(".").split())


@dataclass
class PreviewRow:
    doc_id: str
    target: str
    # Per doc order: (external id, reference) of the sample it matches, or None.
    matches: dict[str, tuple[str, str] | None]


@dataclass
class FilePreview:
    name: str
    model: str
    task: str
    split: str
    rows: list[PreviewRow] = field(default_factory=list)
    # Per doc order: rows read, rows matched to a sample, matched rows whose target equals
    # the sample's reference.
    agreement: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def harness_preview(*, dataset: Dataset, plan: HarnessPlan) -> list[FilePreview]:
    """How the first rows of each positional file match the dataset under each doc order."""
    orders = SampleOrders(dataset)
    previews = []
    for file in plan.files:
        order = orders.of(file.split)
        by_external = {external: (external, ref) for _id, external, ref in order.rows}
        if not by_external:
            by_external = {
                external: (external, ref)
                for _id, external, ref in orders.of("").rows  # the whole dataset
            }
        preview = FilePreview(file.name, file.model, file.task, file.split)
        counts = {o: [0, 0, 0] for o in DOC_ORDERS}
        for row in islice(_rows(file), AGREEMENT_ROWS):
            if not isinstance(row, HarnessRow):
                continue
            matches: dict[str, tuple[str, str] | None] = {}
            for doc_order in DOC_ORDERS:
                if row.by_position and doc_order == POSITION:
                    found = order.at(int(row.key))
                    match = (found[1], found[2]) if found else None
                else:
                    match = by_external.get(row.key)
                matches[doc_order] = match
                counts[doc_order][0] += 1
                if match is not None:
                    counts[doc_order][1] += 1
                    counts[doc_order][2] += int(
                        bool(row.target) and _norm(row.target) == _norm(match[1])
                    )
            if len(preview.rows) < PREVIEW_ROWS:
                preview.rows.append(PreviewRow(row.key, row.target, matches))
        preview.agreement = {o: (c[0], c[1], c[2]) for o, c in counts.items()}
        previews.append(preview)
    return previews


def _rows(file: HarnessFile) -> Iterator[HarnessRow | RowError]:
    try:
        yield from file.rows()
    except FormatError:
        return


def harness_task(dataset: Dataset) -> str | None:
    """The verdict task a harness's metrics score on this dataset (None: they are kept in the
    responses' extra only, as on a tri-modal dataset, whose verdicts are safety labels)."""
    return None if dataset.kind == DatasetKind.TRIMODAL else JudgeTask.MMOOC_SCORING


@dataclass
class HarnessRun:
    """The state one import keeps across its batches."""

    dataset: Dataset
    doc_order: str
    orders: SampleOrders
    seen: set[tuple[str, str]] = field(default_factory=set)
    judges: dict[str, Judge] = field(default_factory=dict)
    verdicts: dict[str, int] = field(default_factory=dict)  # judge -> verdicts stored
    hits: dict[tuple[str, str], int] = field(default_factory=dict)  # (model, judge) -> hits

    @classmethod
    def start(cls, dataset: Dataset, doc_order: str) -> HarnessRun:
        return cls(dataset, doc_order, SampleOrders(dataset))


def _external_id(run: HarnessRun, file: HarnessFile, row: HarnessRow) -> str | RowError:
    if not row.by_position or run.doc_order == EXTERNAL_ID:
        return row.key
    if run.doc_order != POSITION:
        raise FormatError(
            _(
                "lmms-eval names items by doc_id, their position in the task's split: say "
                "which order the dataset follows (doc order “position” or “external_id”)."
            )
        )
    order = run.orders.of(file.split)
    found = order.at(int(row.key))
    if found is None:
        return RowError(
            row.row,
            row.key,
            _("line %(row)s: doc_id %(doc)s is past the %(n)s samples of dataset %(dataset)s")
            % {"row": row.row, "doc": row.key, "n": len(order.rows), "dataset": run.dataset.name},
        )
    return found[1]


def harness_replay(run: HarnessRun, rows: Iterable[HarnessRow | RowError]) -> None:
    """Note the rows an earlier attempt stored (a resumed job reads them again)."""
    for row in rows:
        if isinstance(row, HarnessRow) and row.response is not None:
            run.seen.add((row.key, row.model))


@transaction.atomic
def harness_import_batch(
    run: HarnessRun,
    file: HarnessFile,
    batch: list[HarnessRow | RowError],
    summary: ImportSummary,
) -> None:
    """Store a batch of one harness file: its responses (as ``response_import_batch`` does,
    counted in ``summary``), then its scores as verdicts of the harness's judges. A row whose
    item matches no sample is rejected with its line and reason, and brings no verdict."""
    resolved: list[tuple[HarnessRow, str]] = []
    for row in batch:
        if isinstance(row, RowError):
            summary.rejected.append(row)
            continue
        external = _external_id(run, file, row)
        if isinstance(external, RowError):
            summary.rejected.append(external)
            continue
        resolved.append((row, external))
    with_response = [(r, e) for r, e in resolved if r.response is not None]
    rejected_before = {e.row for e in summary.rejected}
    response_import_batch(
        run.dataset,
        [
            ParsedResponse(
                row=r.row, external_id=e, model=r.model, response=r.response or "", extra=r.extra
            )
            for r, e in with_response
        ],
        summary,
        run.seen,
    )
    rejected = {e.row for e in summary.rejected} - rejected_before
    kept = [(r, e) for r, e in resolved if r.row not in rejected]
    sample_ids = annotation_selectors.sample_ids_by_external_id(
        dataset=run.dataset, external_ids=(e for _r, e in kept)
    )
    responses = {
        (r.sample_id, r.model_name): r
        for r in ModelResponse.objects.filter(
            sample_id__in=sample_ids.values(), model_name__in={r.model for r, _e in kept}
        )
    }
    task = harness_task(run.dataset)
    wanted: list[tuple[HarnessRow, ModelResponse, str]] = []
    for row, external in kept:
        sample_id = sample_ids.get(external)
        response = responses.get((sample_id, row.model)) if sample_id is not None else None
        if row.response is None:
            # An evaluated file beside its prediction file: verdicts on stored responses.
            if sample_id is None:
                summary.rejected.append(
                    RowError(
                        row.row,
                        row.key,
                        _("row %(row)s: no sample “%(id)s” in dataset %(dataset)s")
                        % {"row": row.row, "id": external, "dataset": run.dataset.name},
                    )
                )
                continue
            if response is None:
                summary.rejected.append(
                    RowError(
                        row.row,
                        row.key,
                        _("row %(row)s: no response of model “%(model)s” to sample “%(id)s”")
                        % {"row": row.row, "model": row.model, "id": external},
                    )
                )
                continue
        if response is None or task is None:
            continue
        for judge_name in row.scores:
            wanted.append((row, response, judge_name))
    outcomes = _store_verdicts(run, task, wanted) if task is not None else {}
    for row, _external in kept:
        if row.response is None and row.row in outcomes:
            outcome = outcomes[row.row]
            setattr(summary, outcome, getattr(summary, outcome) + 1)


def _store_verdicts(
    run: HarnessRun, task: str, wanted: list[tuple[HarnessRow, ModelResponse, str]]
) -> dict[int, str]:
    """Create or update the verdicts; the outcome per row (imported, updated, unchanged)."""
    for _row, _response, name in wanted:
        if name not in run.judges:
            run.judges[name], _created = judge_get_or_create_external(name=name)
    existing = {
        (v.judge_id, v.response_id): v
        for v in Verdict.objects.filter(
            judge__in=[run.judges[name] for name in {n for _r, _s, n in wanted}],
            response__in=[response for _r, response, _n in wanted],
            task=task,
            prompt_version=PROMPT_VERSION,
            repeat=0,
        )
    }
    new: list[dict[str, object]] = []
    changed: list[Verdict] = []
    outcomes: dict[int, str] = {}
    for row, response, name in wanted:
        judge = run.judges[name]
        score = row.scores[name]
        run.verdicts[name] = run.verdicts.get(name, 0) + 1
        run.hits[(row.model, name)] = run.hits.get((row.model, name), 0) + score.answer
        values = {
            "answer_score": score.answer,
            "reasoning_score": score.reasoning,
            "rationale": score.rationale,
            "label": "",
        }
        current = existing.get((judge.pk, response.pk))
        if current is None:
            new.append(
                {
                    "judge_id": judge.pk,
                    "task": task,
                    "prompt_version": PROMPT_VERSION,
                    "repeat": 0,
                    "sample_id": response.sample_id,
                    "response_id": response.pk,
                    "source": VerdictSource.IMPORT,
                    "raw": {"harness": row.extra.get("harness"), "key": row.key},
                    **values,
                }
            )
            outcomes.setdefault(row.row, "imported")
            continue
        if all(getattr(current, k) == v for k, v in values.items()) and not current.error_kind:
            outcomes.setdefault(row.row, "unchanged")
            continue
        for key, value in values.items():
            setattr(current, key, value)
        current.error_kind, current.error, current.source = "", "", VerdictSource.IMPORT
        changed.append(current)
        outcomes[row.row] = "updated"
    # COPY on PostgreSQL: the ORM's bulk_create spent more on quoting than the database.
    rows_insert(Verdict, new)
    Verdict.objects.bulk_update(
        changed,
        ["answer_score", "reasoning_score", "rationale", "label", "error_kind", "error", "source"],
        batch_size=500,
    )
    return outcomes


def harness_notes(run: HarnessRun, plan: HarnessPlan, files_rows: dict[str, int]) -> list[str]:
    """What the summary says beyond the counts: the judges made, rows fewer than the harness
    ran, and VLMEvalKit's aggregate figures checked against the verdicts."""
    notes = []
    for name, count in sorted(run.verdicts.items()):
        notes.append(
            _("%(count)s verdicts of the harness judge %(judge)s.")
            % {"count": count, "judge": name}
        )
    if harness_task(run.dataset) is None and any(
        f.metrics or f.kind == "evaluated" for f in plan.files
    ):
        notes.append(
            _(
                "The harness's metrics are kept with the responses: on a tri-modal dataset "
                "verdicts are safety labels."
            )
        )
    for file in plan.files:
        seen = files_rows.get(file.name, 0)
        if file.expected_rows is not None and seen < file.expected_rows:
            notes.append(
                _("%(name)s holds %(seen)s rows; lmms-eval's results file counts %(n)s.")
                % {"name": file.name, "seen": seen, "n": file.expected_rows}
            )
    for name, path in plan.aggregates:
        overall = aggregate_overall(path)
        if overall is None:
            continue
        total, hits = overall
        matching = [
            hits_seen
            for (model, judge), hits_seen in run.hits.items()
            if any(
                f.kind == "evaluated"
                and f.judge_name() == judge
                and f.model == model
                and name.startswith(f.name.rsplit(".", 1)[0].removesuffix("_result"))
                for f in plan.files
            )
        ]
        if not matching:
            continue
        if matching[0] == hits:
            notes.append(
                _("%(name)s: its Overall hits (%(hits)s of %(total)s) match the imported verdicts.")
                % {"name": name, "hits": hits, "total": total}
            )
        else:
            notes.append(
                _(
                    "%(name)s: its Overall hits (%(hits)s of %(total)s) differ from the "
                    "imported verdicts (%(mine)s)."
                )
                % {"name": name, "hits": hits, "total": total, "mine": matching[0]}
            )
    return notes


def harness_import(
    *,
    dataset: Dataset,
    files: list[tuple[str, str]],
    format: str,
    model: str = "",
    doc_order: str = "",
    batch_rows: int = 1000,
) -> ImportSummary:
    """Import a harness's output inline (the import_responses command): the same reading and
    storing as an upload's job, in batches of ``batch_rows``. Raises FormatError when a file
    is not of the layout (before any row is stored)."""
    plan = harness_plan(files, format, model=model.strip())
    if plan.positional and doc_order not in DOC_ORDERS:
        raise FormatError(
            _(
                "lmms-eval names items by doc_id, their position in the task's split: say "
                "which order the dataset follows (doc order “position” or “external_id”)."
            )
        )
    run = HarnessRun.start(dataset, doc_order)
    summary = ImportSummary()
    rows_per_file: dict[str, int] = {}
    try:
        for file in plan.files:
            iterator = iter(file.rows())
            while batch := list(islice(iterator, batch_rows)):
                rows_per_file[file.name] = rows_per_file.get(file.name, 0) + len(batch)
                harness_import_batch(run, file, batch, summary)
    finally:
        computations.dataset_figures_request(dataset_id=dataset.pk)
    summary.notes += harness_notes(run, plan, rows_per_file)
    return summary
