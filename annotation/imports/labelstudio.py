"""Label Studio exports as imports: the tasks become samples through the import pipeline
(format ``labelstudio``, with the mapping the lead confirmed in the job's options); once
they are stored, the completed annotations and the predictions go to the apps that keep
them (``annotation.extensions``: review makes reviews, judging verdicts)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from django.utils.translation import gettext as _

from annotation import extensions
from annotation import selectors as annotation_selectors
from annotation.formats.labelstudio import (
    LsMapping,
    MappingGuess,
    is_rejection,
    labels,
    mapping_for,
    mapping_guess,
    read_tasks,
)
from annotation.formats.records import FormatError

if TYPE_CHECKING:
    from annotation.models import ImportJob


def labelstudio_inspect(*, path: Path) -> MappingGuess:
    """What an export holds and a first mapping (read in the request, before the job)."""
    return mapping_guess(read_tasks(path))


def labelstudio_after_import(*, job: ImportJob, path: Path) -> list[str]:
    """Hand the export's completed annotations and predictions, on the samples the job
    stored, to review and judging; the notes for the job's summary."""
    tasks = read_tasks(path)
    # The mapping the rows were read by (the release's own for this site's release).
    mapping = mapping_for(tasks, LsMapping.from_options(job.options))
    externals: dict[str, str] = {}
    for task in tasks:
        key = mapping.data.get("external_id", "")
        value = task.data.get(key) if key else None
        externals[task.id] = str(value).strip() if value not in (None, "") else task.id
    sample_ids = annotation_selectors.sample_ids_by_external_id(
        dataset=job.dataset, external_ids=externals.values()
    )
    annotations: list[extensions.ImportedAnnotation] = []
    predictions: list[extensions.ImportedPrediction] = []
    cancelled = 0
    ids_only = 0
    unattributed = 0
    for task in tasks:
        sample_id = sample_ids.get(externals[task.id])
        if sample_id is None or task.problem is not None:
            continue  # its row was rejected; the job lists it
        ids_only += task.prediction_ids
        unattributed += task.unattributed
        for annotation in task.annotations:
            if annotation.cancelled:
                cancelled += 1
                continue
            annotations.append(
                extensions.ImportedAnnotation(
                    sample_id=sample_id,
                    key=f"labelstudio:{task.id}:{annotation.id}",
                    email=annotation.email,
                    user_id=annotation.user_id,
                    name=annotation.name,
                    labels=labels(annotation.result, mapping),
                    rejected=is_rejection(annotation.result),
                    seconds=annotation.seconds,
                )
            )
        for prediction in task.predictions:
            predictions.append(
                extensions.ImportedPrediction(
                    sample_id=sample_id,
                    model_version=prediction.model_version,
                    labels=labels(prediction.result, mapping),
                    score=prediction.score,
                )
            )
    notes = extensions.imported_annotations(
        dataset=job.dataset, items=annotations, by=job.created_by
    )
    notes += extensions.imported_predictions(
        dataset=job.dataset, items=predictions, by=job.created_by
    )
    if cancelled:
        notes.append(
            _("%(count)s skipped annotations (cancelled in Label Studio) were left out.")
            % {"count": cancelled}
        )
    if unattributed:
        notes.append(
            _(
                "%(count)s annotations name no annotator and were not made reviews (a "
                "release's labels are its tasks' data)."
            )
            % {"count": unattributed}
        )
    if ids_only:
        notes.append(
            _(
                "%(count)s predictions were exported as ids only; export with predictions "
                "in full to import them."
            )
            % {"count": ids_only}
        )
    return notes


def labelstudio_mapping_check(mapping: LsMapping) -> None:
    """FormatError naming the required fields the mapping leaves empty."""
    missing = mapping.missing()
    if missing:
        raise FormatError(
            _("The mapping leaves %(fields)s empty: say which data key holds each.")
            % {"fields": ", ".join(missing)}
        )
