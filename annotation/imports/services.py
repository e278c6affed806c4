"""Imports of candidate samples: a job per import, created by a lead, run by a worker.

``import_job_create`` records the job (and stores an uploaded file where a worker can read
it); ``import_job_run`` does the work in chunks (see ``annotation.imports.pipeline``) and keeps
the job's progress, counts and row errors up to date. Running a job twice is harmless: rows
already imported count as unchanged.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.text import get_valid_filename
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation import extensions
from annotation.archives import ArchiveError
from annotation.formats.records import FormatError, NotThisFormat, ParsedSample
from annotation.formats.validate import TaxonomyView, is_trimodal, validate_sample
from annotation.imports import reader
from annotation.imports.formats import FORMATS, ImportFormat
from annotation.imports.jobs import (
    import_dataset_check_open,
    import_job_conclude,
    import_job_counts,
    import_job_enqueue,
    import_job_finish,
    import_upload_store,
)
from annotation.imports.jobs import import_job_cancel as import_job_cancel
from annotation.imports.jobs import import_job_retry as import_job_retry
from annotation.imports.jobs import import_jobs_sweep as import_jobs_sweep
from annotation.imports.pipeline import CHUNK_ROWS, ImportRun
from annotation.imports.selectors import import_stored_media
from annotation.imports.sources import (
    OpenedSource,
    SourceError,
    count_rows,
    open_local,
    open_s3,
    parse_s3_url,
)
from annotation.models import (
    Dataset,
    DatasetKind,
    ImportedVersion,
    ImportJob,
    ImportKind,
    ImportSourceKind,
    Sample,
)
from annotation.presets import PRESETS
from annotation.services.bulk import dataset_send_imports_on
from annotation.services.datasets import dataset_create
from core.jobs import (
    SERVICE_RETRY_SECONDS,
    Claim,
    JobStatus,
    JobStopped,
    job_claim,
    job_heartbeat,
    job_wait,
)
from core.outages import storage_down_message, storage_unreachable
from core.tasks import enqueue

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files import File

logger = logging.getLogger(__name__)

# "mapping": the Label Studio mapping (annotation.formats.labelstudio.LsMapping.as_options).
OPTION_KEYS = ("file", "image_dir", "licence", "default_group", "mapping")


def import_format_kind(format: str) -> str:
    """The kind of dataset a format fills: tri-modal scenarios or image questions."""
    return FORMATS[format].dataset_kind if format in FORMATS else DatasetKind.IMAGE_QUESTION


def _known_format(format: str) -> ImportFormat:
    """The import format named ``format``; an unknown name is refused, listing the known ones."""
    fmt = FORMATS.get(format)
    if fmt is None:
        raise ValidationError(
            _("Unknown import format “%(format)s” (known: %(known)s).")
            % {"format": format, "known": ", ".join(FORMATS)},
            code="bad_format",
        )
    return fmt


def _check_format(dataset: Dataset, format: str) -> ImportFormat:
    fmt = _known_format(format)
    # The site's own export carries either kind of sample.
    if not fmt.any_kind and fmt.dataset_kind != dataset.kind:
        raise ValidationError(
            _("The format %(format)s imports %(kind)s samples, but “%(dataset)s” holds %(held)s.")
            % {
                "format": fmt.code,
                "kind": DatasetKind(fmt.dataset_kind).label,
                "dataset": dataset.name,
                "held": DatasetKind(dataset.kind).label,
            },
            code="wrong_kind",
        )
    return fmt


def server_roots() -> list[Path]:
    """The folders (links resolved) that the site may import server paths from."""
    return [Path(root).resolve() for root in settings.IMPORT_SERVER_ROOTS]


def _check_server_path(path: str, *, trusted: bool) -> str:
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        raise ValidationError(_("Give the server path as an absolute path."), code="bad_path")
    resolved = candidate.resolve()
    if not trusted:
        roots = server_roots()
        if not any(resolved.is_relative_to(root) for root in roots):
            raise ValidationError(
                _("Imports from server paths are allowed only under: %(roots)s.")
                % {"roots": ", ".join(map(str, roots)) or _("(no folder is configured)")},
                code="path_not_allowed",
            )
    if not resolved.exists():
        raise ValidationError(
            _("There is no file or folder at “%(path)s”.") % {"path": path}, code="no_path"
        )
    return str(resolved)


@transaction.atomic
def import_job_create(
    *,
    dataset: Dataset,
    format: str,
    source_kind: str,
    source: str = "",
    upload: File[Any] | None = None,
    options: dict[str, str] | None = None,
    created_by: User | None = None,
    trusted: bool = False,
    queue: bool = True,
) -> ImportJob:
    """Record an import of a file, zip, server path or S3 prefix into a dataset.

    The job is queued for a worker once committed (``queue=False`` leaves it to the caller, as
    the ``import_samples`` command does). Server paths must lie under IMPORT_SERVER_ROOTS
    unless ``trusted`` (the command run by an operator), here and again, file by file with
    links resolved, when the job runs. Raises ValidationError with a readable message for
    anything that cannot be imported.
    """
    import_dataset_check_open(dataset)
    _check_format(dataset, format)
    source_name = ""
    if source_kind == ImportSourceKind.UPLOAD:
        source, source_name = import_upload_store(upload)
    elif source_kind == ImportSourceKind.SERVER_PATH:
        source = _check_server_path(source.strip(), trusted=trusted)
        source_name = Path(source).name
    elif source_kind == ImportSourceKind.S3_PREFIX:
        try:
            parse_s3_url(source.strip())
        except SourceError as exc:
            raise ValidationError(exc.message, code="bad_s3_url") from exc
        source = source.strip()
        source_name = source
    else:
        raise ValidationError(
            _("Unknown source kind “%(kind)s”.") % {"kind": source_kind}, code="bad_source"
        )
    kept = {k: str(v) for k, v in (options or {}).items() if k in OPTION_KEYS and v}
    job = ImportJob.objects.create(
        dataset=dataset,
        created_by=created_by,
        source_kind=source_kind,
        source=source,
        source_name=source_name[:300],
        format=format,
        options=kept,
        trusted=trusted and source_kind == ImportSourceKind.SERVER_PATH,
    )
    if queue:
        transaction.on_commit(lambda: import_job_enqueue(job.pk, ImportKind.SAMPLES))
    return job


def import_dataset_get_or_create(
    *, name: str, format: str, preset: str = "", created_by: User | None = None
) -> Dataset:
    """The dataset of this name, created with the format's kind and preset when missing."""
    dataset, _created = import_dataset_prepare(
        name=name, format=format, preset=preset, created_by=created_by
    )
    return dataset


def import_dataset_prepare(
    *,
    name: str,
    format: str,
    preset: str = "",
    source_kind: str = "",
    source: str = "",
    options: dict[str, str] | None = None,
    created_by: User | None = None,
) -> tuple[Dataset, bool]:
    """The dataset an import goes into, and whether it was created for it.

    A new dataset gets the format's kind and the format's preset (MMOOC, MMT-Bench, MCBench)
    unless ``preset`` names another; the site's own exports, which carry either kind, make a
    tri-modal dataset when the source's first row is a tri-modal scenario. An existing dataset
    is kept as it is: a ``preset`` that differs from its own is refused, naming both.
    """
    fmt = _known_format(format)
    dataset = Dataset.objects.filter(name=name.strip()).first()
    if dataset is not None:
        if preset and preset != dataset.preset:
            raise ValidationError(
                _(
                    "The dataset “%(name)s” uses the taxonomy preset “%(held)s”, not "
                    "“%(preset)s”; leave the preset out or give its own."
                )
                % {"name": dataset.name, "held": dataset.preset or _("none"), "preset": preset},
                code="preset_differs",
            )
        return dataset, False
    kind = fmt.dataset_kind
    rows = _first_rows(fmt, source_kind, source, options or {}) if source else []
    if fmt.any_kind and rows:
        kind = DatasetKind.TRIMODAL if is_trimodal(rows[0]) else DatasetKind.IMAGE_QUESTION
    if not preset:
        preset = _fitting_preset(fmt.default_preset, kind, rows)
    dataset = dataset_create(name=name, kind=kind, preset=preset, created_by=created_by)
    return dataset, True


# How many of a source's first rows choose the preset of a dataset created for it.
PRESET_ROWS = 200


def _first_rows(
    fmt: ImportFormat, source_kind: str, source: str, options: dict[str, str]
) -> list[ParsedSample]:
    """Up to PRESET_ROWS of a source's first samples (none when it cannot be read)."""
    rows: list[ParsedSample] = []
    try:
        # Only the operator's command names datasets to create; it may read any path.
        with _open_source(
            source_kind, source, "", fmt, options.get("file", ""), roots=None
        ) as opened:
            for item in fmt.read(opened.dataset_path, options):
                if isinstance(item, ParsedSample):
                    rows.append(item)
                    if len(rows) >= PRESET_ROWS:
                        break
    except (FormatError, SourceError, ArchiveError, OSError) as exc:
        logger.info("the rows of %s cannot be read ahead: %s", source, exc)
    return rows


def _fitting_preset(default: str, kind: str, rows: list[ParsedSample]) -> str:
    """The format's preset, unless the source's first rows break it (this site's TSV of
    open-ended items read as MMT-Bench, which knows multiple choice only): then the first
    other preset of the kind that they fit, else none."""
    if not default or not rows:
        return default

    def problems(view: TaxonomyView) -> int:
        return sum(len(validate_sample(row, view)) for row in rows)

    baseline = problems(TaxonomyView())
    others = [code for code, p in PRESETS.items() if p.kind == kind and code != default]
    for code in [default, *others]:
        terms = ((t.kind, t.code, t.parent_code) for t in PRESETS[code].terms)
        if problems(TaxonomyView.of_terms(terms)) == baseline:
            return code
    return ""


def import_conflicts_close(*, sample: Sample) -> int:
    """Forget a sample's conflicts with its source once adjudication has settled them.

    Returns how many were open. The next re-import compares with the row as last imported, so
    a settled field only comes back if the source changes it again.
    """
    version = ImportedVersion.objects.filter(sample=sample).only("id", "conflicts").first()
    if version is None or not version.conflicts:
        return 0
    count = len(version.conflicts)
    ImportedVersion.objects.filter(pk=version.pk).update(conflicts=[])
    return count


def import_dataset_discard(*, dataset: Dataset) -> bool:
    """Delete a dataset that an import created but filled with nothing; False if it has samples.

    Its import jobs go with it: an import that failed or rejected every row leaves no empty
    dataset behind.
    """
    if Sample.objects.filter(dataset=dataset).exists():
        return False
    dataset.delete()
    return True


@contextmanager
def _open(job: ImportJob, fmt: ImportFormat) -> Iterator[OpenedSource]:
    with _open_source(
        job.source_kind,
        job.source,
        job.source_name,
        fmt,
        str(job.options.get("file", "")),
        roots=None if job.trusted else server_roots(),
    ) as opened:
        yield opened


@contextmanager
def _open_source(
    source_kind: str,
    source: str,
    source_name: str,
    fmt: ImportFormat,
    wanted: str,
    *,
    roots: list[Path] | None,
) -> Iterator[OpenedSource]:
    """The source, opened; server paths only under ``roots``, checked file by file (a link
    inside an allowed folder may point out), or anywhere when ``roots`` is None (trusted)."""
    if source_kind == ImportSourceKind.S3_PREFIX:
        with open_s3(source, fmt, wanted=wanted) as opened:
            yield opened
        return
    if source_kind == ImportSourceKind.SERVER_PATH:
        with open_local(Path(source), fmt, wanted=wanted, roots=roots) as opened:
            yield opened
        return
    if not default_storage.exists(source):
        raise SourceError(_("the uploaded file is no longer stored; upload it again"))
    with tempfile.TemporaryDirectory(prefix="import-upload-") as folder:
        try:
            local = Path(default_storage.path(source))
        except NotImplementedError:  # remote storage: work on a local copy
            local = Path(folder) / (get_valid_filename(source_name) or "upload")
            with default_storage.open(source, "rb") as remote, open(local, "wb") as out:
                for chunk in remote.chunks():
                    out.write(chunk)
        with open_local(local, fmt, wanted=wanted, media_allowed=False) as opened:
            yield opened


def _finish(claim: Claim, run: ImportRun | None, status: str, message: str) -> None:
    import_job_finish(
        claim, counts=None if run is None else run.counts, status=status, message=message
    )


def _summary(run: ImportRun) -> str:
    counts = run.counts
    parts: list[str] = [
        _(
            "%(imported)s imported, %(unchanged)s unchanged, %(updated)s updated, "
            "%(rejected)s rejected."
        )
        % {
            "imported": counts.imported,
            "unchanged": counts.unchanged,
            "updated": counts.updated,
            "rejected": counts.rejected,
        }
    ]
    if counts.unpaired:
        parts.append(
            ngettext(
                "%(count)s scenario names a pair that is not in the dataset (%(ids)s).",
                "%(count)s scenarios name a pair that is not in the dataset (%(ids)s).",
                len(counts.unpaired),
            )
            % {"count": len(counts.unpaired), "ids": ", ".join(counts.unpaired[:10])}
        )
    if counts.adjudication:
        parts.append(
            ngettext(
                "%(count)s sample went to adjudication: the source changed a field that a "
                "reviewer had corrected.",
                "%(count)s samples went to adjudication: the source changed fields that "
                "reviewers had corrected.",
                counts.adjudication,
            )
            % {"count": counts.adjudication}
        )
    return " ".join([*parts, *run.notes])


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Run an import job to its end; safe to call twice (a finished job is left alone).

    A job whose worker died is resumed: the chunks an earlier attempt committed are read
    again but neither stored nor counted twice. A problem with the whole source (not a zip,
    not UTF-8, an unsafe archive, a missing S3 prefix) fails the job with a readable message;
    a bad row is recorded and skipped. A cancel stops the job at its next chunk.
    """
    claim = job_claim(ImportJob, job_id)
    if claim is None:
        return ImportJob.objects.filter(pk=job_id).first()
    job = ImportJob.objects.select_related("dataset", "created_by").get(pk=job_id)
    if job.started_at is None:
        ImportJob.objects.filter(pk=job.pk).update(started_at=timezone.now())
    fmt = FORMATS[job.format]
    run: ImportRun | None = None
    succeeded = False
    try:
        with job_heartbeat(claim) as heartbeat, _open(job, fmt) as opened:
            total = count_rows(opened.dataset_path, fmt)
            heartbeat.beat(total_rows=total)
            run = ImportRun(
                job=job,
                dataset=job.dataset,
                source=opened,
                by=job.created_by,
                track_media_owners=fmt.code == "vlmevalkit",
                attempt=claim.attempt,
                resume=import_job_counts(job),
            )
            chunks = reader.read_checked(
                lambda: fmt.read(opened.dataset_path, job.options),
                run.checker,
                CHUNK_ROWS,
                skip_media=job.rows_done,
                parallel=total >= reader.PARALLEL_MIN_ROWS,
                stored=import_stored_media,
            )
            with closing(chunks):
                for chunk in chunks:
                    heartbeat.beat()
                    run.process(chunk)
            run.link_pairs()
            if fmt.after is not None:
                heartbeat.beat()
                run.notes += fmt.after(job=job, path=opened.dataset_path)
    except JobStopped:
        logger.info("import job %s was cancelled or taken over", job.pk)
    except (FormatError, SourceError, ArchiveError) as exc:
        message = exc.message
        if isinstance(exc, NotThisFormat):
            message = _("This is not a file of the format “%(format)s”: %(detail)s.") % {
                "format": fmt.label,
                "detail": exc.message,
            }
        if run is not None and run.counts.rows_done:
            message += " " + _(
                "The %(done)s rows before the problem were processed; importing the corrected "
                "file again leaves them unchanged."
            ) % {"done": run.counts.rows_done}
        _finish(claim, run, JobStatus.FAILED, message)
    except Exception as exc:
        if storage_unreachable(exc):
            logger.warning("import job %s waits for the media storage", job.pk, exc_info=True)
            job_wait(
                claim,
                message=storage_down_message(),
                send=lambda: enqueue(
                    "annotation.run_import_job", job.pk, countdown=SERVICE_RETRY_SECONDS
                ),
            )
            job.refresh_from_db()
            return job
        logger.exception("import job %s failed", job.pk)
        _finish(claim, run, JobStatus.FAILED, _("The import stopped because of an internal error."))
    else:
        assert run is not None
        succeeded = import_job_conclude(claim, counts=run.counts, summary=_summary(run))
    finally:
        if run is not None:
            run.close()
    # An upload is kept until its import succeeds, so that a failed one can be retried.
    if succeeded and job.source_kind == ImportSourceKind.UPLOAD:
        default_storage.delete(job.source)
    job.refresh_from_db()
    dataset_send_imports_on(dataset=job.dataset, by=job.created_by)
    # What follows costs what this import changed, not the dataset's size; when the run
    # cannot tell (it never started, it resumed an earlier attempt, an after-step wrote
    # more), the whole dataset is refreshed.
    changed = None if run is None else run.changed_sample_ids(whole_dataset=fmt.after is not None)
    extensions.import_finished(dataset=job.dataset, sample_ids=changed)
    return job
