"""Which task runs each kind of import job, and which page lists a dataset's jobs of that kind.

Samples are imported here; the judging app registers its kinds (model responses, verdicts)
when it is ready, so that this app names none of its tasks or pages while every kind shares
the job model, its page, its error report, cancel, retry and the recovery sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import ImportKind


@dataclass(frozen=True)
class ImportKindSpec:
    # The name of the Celery task that runs (or resumes) a job of this kind, given its id.
    task: str
    # The URL name, taking ``dataset_id``, of the page where these imports are started.
    home_url: str


_KINDS: dict[str, ImportKindSpec] = {
    ImportKind.SAMPLES: ImportKindSpec("annotation.run_import_job", "annotation:dataset_import"),
}


def import_kind_register(kind: str, spec: ImportKindSpec) -> None:
    """Have ``spec.task`` run the import jobs of ``kind`` (called from an app's ``ready``)."""
    if kind not in ImportKind.values:
        raise ValueError(f"unknown import kind {kind!r}")
    _KINDS[kind] = spec


def import_kind_spec(kind: str) -> ImportKindSpec:
    return _KINDS[kind]


def import_kinds() -> dict[str, ImportKindSpec]:
    return dict(_KINDS)
