"""Pages of imports: the upload form with a dataset's jobs, a job's progress, its error CSV."""

from __future__ import annotations

from collections.abc import Iterator

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors
from annotation.imports import selectors as import_selectors
from annotation.imports import services as import_services
from annotation.imports.forms import ImportForm
from annotation.imports.kinds import import_kind_spec
from annotation.lookups import dataset_or_404
from annotation.models import ImportJob
from core import csv as safe_csv
from core.roles import acting_user, require_lead

ERRORS_SHOWN = 100
DUPLICATES_SHOWN = 100
JOBS_SHOWN = 20


def _job(request: HttpRequest, job_id: int) -> ImportJob:
    require_lead(request, _("Only project leads may import samples."))
    job = import_selectors.import_job_get(job_id=job_id)
    if job is None:
        raise Http404(_("No such import."))
    return job


@require_http_methods(["GET", "POST"])
def dataset_import(request: HttpRequest, dataset_id: int) -> HttpResponse:
    require_lead(request, _("Only project leads may import samples."))
    dataset = dataset_or_404(request, dataset_id)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = import_services.import_job_create(
                dataset=dataset,
                format=form.cleaned_data["format"],
                source_kind=form.cleaned_data["source_kind"],
                source=form.source(),
                upload=form.cleaned_data.get("file"),
                options={"file": form.cleaned_data["dataset_file"]},
                created_by=acting_user(request.user),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return redirect("annotation:import_job", job_id=job.pk)
    status = 400 if request.method == "POST" else 200
    jobs = import_selectors.import_job_list(dataset=dataset)[:JOBS_SHOWN]
    return render(
        request,
        "annotation/import_form.html",
        {"dataset": dataset, "form": form, "jobs": jobs},
        status=status,
    )


@require_GET
def import_job(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job(request, job_id)
    errors = import_selectors.import_row_errors(job=job)[:ERRORS_SHOWN]
    home = reverse(import_kind_spec(job.kind).home_url, kwargs={"dataset_id": job.dataset_id})
    pairs = selectors.duplicate_pairs_of_job(job_id=job.pk)
    shown = list(pairs[: DUPLICATES_SHOWN + 1])
    # Counted apart only when there are more than the table shows.
    count = len(shown) if len(shown) <= DUPLICATES_SHOWN else pairs.count()
    return render(
        request,
        "annotation/import_job.html",
        {
            "job": job,
            "errors": errors,
            "errors_shown": ERRORS_SHOWN,
            "home_url": home,
            "duplicates": shown[:DUPLICATES_SHOWN],
            "duplicates_count": count,
            "duplicates_shown": DUPLICATES_SHOWN,
        },
    )


@require_POST
def import_job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job(request, job_id)
    try:
        import_services.import_job_cancel(job=job, by=acting_user(request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("The import was cancelled; the rows imported so far stay."))
    return redirect("annotation:import_job", job_id=job.pk)


@require_POST
def import_job_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job(request, job_id)
    try:
        import_services.import_job_retry(job=job)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("The import runs again from its first row."))
    return redirect("annotation:import_job", job_id=job.pk)


class _Echo:
    def write(self, value: str) -> str:
        return value


@require_GET
def import_job_errors_csv(request: HttpRequest, job_id: int) -> StreamingHttpResponse:
    job = _job(request, job_id)
    writer = safe_csv.writer(_Echo())

    def lines() -> Iterator[str]:
        yield writer.writerow(["row", "external_id", "message"])
        for row, external_id, message in (
            import_selectors.import_row_errors(job=job)
            .values_list("row", "external_id", "message")
            .iterator(chunk_size=2000)
        ):
            yield writer.writerow([row, external_id, message])

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="import-{job.pk}-errors.csv"'
    return response
