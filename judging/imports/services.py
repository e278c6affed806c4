"""Imports of model responses and of verdicts made elsewhere, as background jobs.

They run on annotation's import jobs (kinds ``responses`` and ``verdicts``): the same page
with live progress, rejected rows and their CSV, cancel, retry and recovery. A request only
stores the upload; a worker reads it in chunks, each stored with its rejected rows and the
job's counts in one transaction fenced by the worker's claim, so a job records how far it
got. A resumed job reads its committed rows again without storing them; a retried one runs
from the first row, and rows already stored count as unchanged, never twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.formats.records import FormatError, RowError
from annotation.formats.textio import iter_json_objects, read_json_document
from annotation.imports.jobs import (
    import_job_conclude,
    import_job_counts,
    import_job_finish,
    import_stored_job_create,
    import_upload_job_create,
    import_upload_store,
)
from annotation.imports.pipeline import Counts
from annotation.imports.sources import SourceError
from annotation.imports.uploads import open_stored_files, open_upload_files
from annotation.imports.writes import row_errors_insert
from annotation.models import Dataset, ImportJob, ImportKind
from core.jobs import Claim, Heartbeat, JobStatus, JobStopped, job_claim, job_heartbeat
from judging.audit import computations
from judging.formats import harness
from judging.formats.responses import ParsedResponse, model_from_filename
from judging.models import Judge
from judging.services.harness import (
    DOC_ORDERS,
    FilePreview,
    HarnessRun,
    harness_import_batch,
    harness_notes,
    harness_preview,
    harness_replay,
)
from judging.services.responses import (
    AUTO,
    HARNESS_FORMATS,
    RESPONSE_FORMATS,
    ImportSummary,
    response_import_batch,
    response_reader,
)
from judging.services.verdicts import verdict_import_record

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files import File

logger = logging.getLogger(__name__)

CHUNK_ROWS = 1000
VERDICT_FORMATS = ("jsonl",)
SUFFIXES = {
    "jsonl": (".jsonl", ".json"),
    "logicvista": (".json",),
    harness.LMMS_EVAL: (".json", ".jsonl"),
    harness.VLMEVALKIT: harness.TABLE_SUFFIXES,
}
# Every file a response upload may hold, read to detect its format.
ANY_SUFFIXES = (".json", ".jsonl", *harness.TABLE_SUFFIXES)

Row = TypeVar("Row")


def response_upload_create(
    *,
    dataset: Dataset,
    format: str,
    upload: File[Any] | None,
    model: str = "",
    doc_order: str = "",
    created_by: User | None = None,
) -> ImportJob:
    """Queue the import of an uploaded response file, or a zip of them; the job is returned
    at once and a worker imports it. With ``format`` "auto", or a harness's format, the
    upload is kept and inspected first (``response_upload_inspect``): a file of another
    layout, or an lmms-eval log without its ``doc_order``, is refused before any job."""
    _check_response_format(format)
    if format not in HARNESS_FORMATS and format != AUTO:
        return import_upload_job_create(
            dataset=dataset,
            kind=ImportKind.RESPONSES,
            format=format,
            upload=upload,
            options={"model": model.strip()},
            created_by=created_by,
        )
    source, source_name = import_upload_store(upload)
    try:
        inspection = response_upload_inspect(
            source=source, source_name=source_name, format=format, model=model, dataset=dataset
        )
        if inspection.needs_doc_order and doc_order not in DOC_ORDERS:
            raise ValidationError(
                _(
                    "lmms-eval names items by doc_id, their position in the task's split: say "
                    "which order the dataset follows (doc order “position” or “external_id”)."
                ),
                code="doc_order",
            )
        return response_stored_create(
            dataset=dataset,
            source=source,
            source_name=source_name,
            format=inspection.format,
            model=model,
            doc_order=doc_order,
            created_by=created_by,
        )
    except ValidationError:
        default_storage.delete(source)
        raise


def _check_response_format(format: str) -> None:
    if format not in RESPONSE_FORMATS and format != AUTO:
        raise ValidationError(
            _("Unknown response format “%(format)s” (known: %(known)s).")
            % {"format": format, "known": ", ".join((AUTO, *RESPONSE_FORMATS))},
            code="bad_format",
        )


@dataclass
class UploadInspection:
    """What a kept response upload holds: its format (detected when asked), and for a
    harness's layout its files and how their first rows match the dataset."""

    format: str
    plan: harness.HarnessPlan | None = None
    previews: list[FilePreview] = field(default_factory=list)

    @property
    def needs_doc_order(self) -> bool:
        return self.plan is not None and self.plan.positional

    @property
    def format_name(self) -> str:
        return harness.FORMAT_NAMES.get(self.format, self.format)


def response_upload_inspect(
    *, source: str, source_name: str, format: str, model: str, dataset: Dataset
) -> UploadInspection:
    """Read the layout of a kept upload (in the request: names, headers and the first rows
    only): the format, detected from the files' shape when ``format`` is "auto", and for a
    harness's output its plan and match preview. ValidationError when the files are not of
    the format, or of none known."""
    _check_response_format(format)
    try:
        with open_stored_files(source, source_name, ANY_SUFFIXES, full_names=True) as files:
            listed = [(name, str(path)) for name, path in files]
            found = harness.detect_format(listed)
            if format == AUTO:
                if found is None:
                    raise FormatError(
                        _(
                            "The file is none of the response formats (lmms-eval log, "
                            "VLMEvalKit predictions, LogicVista answers, JSON lines); see the "
                            "format reference."
                        )
                    )
                format = found
            if format not in HARNESS_FORMATS:
                return UploadInspection(format)
            plan = harness.harness_plan(listed, format, model=model.strip())
            previews = harness_preview(dataset=dataset, plan=plan) if plan.positional else []
            return UploadInspection(format, plan, previews)
    except (FormatError, SourceError) as exc:
        raise ValidationError(exc.message, code="bad_file") from exc


def response_stored_create(
    *,
    dataset: Dataset,
    source: str,
    source_name: str,
    format: str,
    model: str = "",
    doc_order: str = "",
    created_by: User | None = None,
) -> ImportJob:
    """Queue the import of a kept response upload, read as ``format`` (with lmms-eval's
    ``doc_order`` the lead confirmed)."""
    _check_response_format(format)
    if doc_order and doc_order not in DOC_ORDERS:
        raise ValidationError(
            _("Unknown doc order “%(order)s” (known: %(known)s).")
            % {"order": doc_order, "known": ", ".join(DOC_ORDERS)},
            code="doc_order",
        )
    return import_stored_job_create(
        dataset=dataset,
        kind=ImportKind.RESPONSES,
        format=format,
        source=source,
        source_name=source_name,
        options={"model": model.strip(), "doc_order": doc_order},
        created_by=created_by,
    )


def verdict_upload_create(
    *, dataset: Dataset, upload: File[Any] | None, created_by: User | None = None
) -> ImportJob:
    """Queue the import of an uploaded verdict file (JSON lines), or a zip of them."""
    return import_upload_job_create(
        dataset=dataset,
        kind=ImportKind.VERDICTS,
        format="jsonl",
        upload=upload,
        created_by=created_by,
    )


def upload_create(
    *,
    dataset: Dataset,
    kind: str,
    upload: File[Any] | None,
    format: str = "",
    model: str = "",
    created_by: User | None = None,
) -> ImportJob:
    """Queue the import of an upload of either kind: verdicts, or model responses in `format`
    (by `model`, when the file does not say)."""
    if kind == ImportKind.VERDICTS:
        return verdict_upload_create(dataset=dataset, upload=upload, created_by=created_by)
    return response_upload_create(
        dataset=dataset, format=format, upload=upload, model=model, created_by=created_by
    )


def _count(path: Path, format: str) -> int:
    name = path.name.lower()
    if format == harness.VLMEVALKIT:
        if name.endswith(harness.TABLE_SUFFIXES) and not name.endswith(("_score.csv", "_acc.csv")):
            return harness.count_table_rows(str(path))
        return 0
    if format == harness.LMMS_EVAL and name.endswith(".json"):
        return 0
    if format == "logicvista":
        document = read_json_document(path)
        return len(document) if isinstance(document, dict) else 0
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


@contextmanager
def _file_named(name: str | None) -> Iterator[None]:
    """Name the file in a whole-file error of one file among several."""
    try:
        yield
    except FormatError as exc:
        raise FormatError(f"{name}: {exc.message}" if name else exc.message) from exc


class _ChunkedRun:
    """Stores a job's rows chunk by chunk; rows an earlier attempt committed are replayed."""

    def __init__(self, job: ImportJob, claim: Claim, heartbeat: Heartbeat) -> None:
        self.job, self.claim, self.heartbeat = job, claim, heartbeat
        self.counts = import_job_counts(job)
        self.committed = self.counts.rows_done
        self.read = 0
        self.notes: list[str] = []
        self.name: str | None = None

    def run(
        self,
        rows: Iterable[Row],
        store: Callable[[list[Row], ImportSummary], None],
        replay: Callable[[list[Row]], None] = lambda rows: None,
        *,
        name: str | None = None,
    ) -> None:
        """Store the rows of one file (``name`` given when it is one of several, to name it
        in its rejected rows), going on from where the job's rows stand."""
        self.name = name
        iterator = iter(rows)
        while chunk := list(islice(iterator, CHUNK_ROWS)):
            self.heartbeat.beat()
            if self.read + len(chunk) <= self.committed:
                self.read += len(chunk)
                replay(chunk)
                continue
            skip = max(0, self.committed - self.read)
            replay(chunk[:skip])
            self.read += len(chunk)
            self._store(chunk[skip:], store)

    def _store(self, chunk: list[Row], store: Callable[[list[Row], ImportSummary], None]) -> None:
        summary = ImportSummary()
        with transaction.atomic():
            store(chunk, summary)
            prefix = f"{self.name}: " if self.name else ""
            row_errors_insert(self.job.pk, summary.rejected, prefix=prefix)
            counts = self.counts
            counts.rows_done += len(chunk)
            counts.imported += summary.imported
            counts.unchanged += summary.unchanged
            counts.updated += summary.updated
            counts.rejected += len(summary.rejected)
            if not self.claim.mine().update(**counts.fields(), heartbeat_at=timezone.now()):
                raise JobStopped
        self.notes += summary.notes


def _import_responses(job: ImportJob, files: list[tuple[str, Path]], run: _ChunkedRun) -> None:
    seen: set[tuple[str, str]] = set()

    def replay(rows: list[ParsedResponse | RowError]) -> None:
        seen.update((r.external_id, r.model) for r in rows if isinstance(r, ParsedResponse))

    def store(rows: list[ParsedResponse | RowError], summary: ImportSummary) -> None:
        response_import_batch(job.dataset, rows, summary, seen)

    model = str(job.options.get("model", ""))
    several = len(files) > 1
    for name, path in files:
        with _file_named(name if several else None):
            rows = response_reader(path, job.format, model or model_from_filename(name))
            run.run(rows, store, replay, name=name if several else None)


def _import_harness(job: ImportJob, files: list[tuple[str, Path]], run: _ChunkedRun) -> None:
    """Import an upload as an evaluation harness wrote it: every file's layout is read first
    (a file of the wrong shape fails the job before any row is stored), then each file's rows
    in chunks: responses, and the harness's scores as its judges' verdicts."""
    model = str(job.options.get("model", ""))
    doc_order = str(job.options.get("doc_order", ""))
    plan = harness.harness_plan(
        [(name, str(path)) for name, path in files], job.format, model=model
    )
    if plan.positional and doc_order not in DOC_ORDERS:
        raise FormatError(
            _(
                "lmms-eval names items by doc_id, their position in the task's split: say "
                "which order the dataset follows (doc order “position” or “external_id”)."
            )
        )
    state = HarnessRun.start(job.dataset, doc_order)
    rows_per_file: dict[str, int] = {}
    several = len(plan.files) > 1
    for file in plan.files:

        def store(rows: list[Any], summary: ImportSummary, file: Any = file) -> None:
            harness_import_batch(state, file, rows, summary)

        def counted(file: harness.HarnessFile) -> Iterator[Any]:
            for row in file.rows():
                rows_per_file[file.name] = rows_per_file.get(file.name, 0) + 1
                yield row

        with _file_named(file.name if several else None):
            run.run(
                counted(file),
                store,
                lambda rows: harness_replay(state, rows),
                name=file.name if several else None,
            )
    run.notes += harness_notes(state, plan, rows_per_file)


def _import_verdicts(job: ImportJob, files: list[tuple[str, Path]], run: _ChunkedRun) -> None:
    judges: dict[str, Judge] = {}

    def store(rows: list[tuple[int, Any]], summary: ImportSummary) -> None:
        for row, record in rows:
            verdict_import_record(
                dataset=job.dataset, row=row, record=record, judges=judges, summary=summary
            )

    several = len(files) > 1
    for name, path in files:
        with _file_named(name if several else None):
            run.run(iter_json_objects(path), store, name=name if several else None)


def _summary(counts: Counts, notes: list[str]) -> str:
    text = _(
        "%(imported)s imported, %(unchanged)s unchanged, %(updated)s updated, "
        "%(rejected)s rejected."
    ) % {
        "imported": counts.imported,
        "unchanged": counts.unchanged,
        "updated": counts.updated,
        "rejected": counts.rejected,
    }
    return " ".join([text, *dict.fromkeys(notes)])


def judging_import_job_run(*, job_id: int) -> ImportJob | None:
    """Run (or resume) a response or verdict import job to its end; a job that has ended, or
    that another worker runs, is left alone. A file that cannot be read as a whole fails the
    job with the reason; a bad row is recorded and skipped; a cancel stops it at its next
    chunk."""
    claim = job_claim(ImportJob, job_id)
    if claim is None:
        return ImportJob.objects.filter(pk=job_id).first()
    job = ImportJob.objects.select_related("dataset").get(pk=job_id)
    if job.started_at is None:
        ImportJob.objects.filter(pk=job.pk).update(started_at=timezone.now())
    suffixes = SUFFIXES.get(job.format, (".jsonl", ".json"))
    full_names = job.format in HARNESS_FORMATS
    run: _ChunkedRun | None = None
    succeeded = False
    try:
        with (
            job_heartbeat(claim) as heartbeat,
            open_upload_files(job, suffixes, full_names=full_names) as files,
        ):
            heartbeat.beat(total_rows=sum(_count(path, job.format) for _name, path in files))
            run = _ChunkedRun(job, claim, heartbeat)
            if job.kind == ImportKind.VERDICTS:
                _import_verdicts(job, files, run)
            elif job.format in HARNESS_FORMATS:
                _import_harness(job, files, run)
            else:
                _import_responses(job, files, run)
    except JobStopped:
        logger.info("import job %s was cancelled or taken over", job.pk)
    except (FormatError, SourceError) as exc:
        message = exc.message
        if run is not None and run.counts.rows_done:
            message += " " + _(
                "The %(done)s rows before the problem were processed; importing the corrected "
                "file again leaves them unchanged."
            ) % {"done": run.counts.rows_done}
        counts = None if run is None else run.counts
        import_job_finish(claim, counts=counts, status=JobStatus.FAILED, message=message)
    except Exception:
        logger.exception("import job %s failed", job.pk)
        import_job_finish(
            claim,
            counts=None if run is None else run.counts,
            status=JobStatus.FAILED,
            message=_("The import stopped because of an internal error."),
        )
    else:
        assert run is not None
        summary = _summary(run.counts, run.notes)
        succeeded = import_job_conclude(claim, counts=run.counts, summary=summary)
    if run is not None and run.counts.rows_done:
        # The stored audit figures and strata rest on the responses and verdicts: recount.
        computations.dataset_figures_request(dataset_id=job.dataset_id)
    # An upload is kept until its import succeeds, so that a failed one can be retried.
    if succeeded:
        default_storage.delete(job.source)
    job.refresh_from_db()
    return job
