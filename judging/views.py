"""HTML pages of the judging app: judges, a dataset's jobs, live job progress, leaderboard."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.imports import jobs as import_jobs
from annotation.imports import selectors as import_selectors
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, ImportKind, Sample
from core.roles import acting_user, is_lead, require_lead, sees_judge_votes
from judging import selectors, services
from judging.audit import computations as audit_computations
from judging.forms import JobStartForm, JudgeForm
from judging.imports import services as import_services
from judging.imports.forms import DOC_ORDER_CHOICES, ConfirmForm, UploadForm
from judging.leaderboard import Cell
from judging.models import JUDGE_JOB_RETRYABLE, SCORING_TASKS, JudgeJob
from judging.services import checks as check_services

MAX_JOBS_SHOWN = 50
UPLOAD_KINDS = (ImportKind.RESPONSES, ImportKind.VERDICTS)
CHART_WIDTH = 300
CHART_LEFT = 230  # x of the bars: the models' names to their left


def sample_judging_panel(*, user: Any, sample: Sample) -> selectors.SampleJudging | None:
    """The card of the sample page (and of adjudication) with each model's response and the
    judges' verdicts: only for those who may see judge votes, and only once there is any."""
    if not sees_judge_votes(user):
        return None
    judging = selectors.sample_judging(sample=sample)
    return None if judging.empty else judging


def _job(request: HttpRequest, job_id: int) -> JudgeJob:
    job = selectors.job_get_visible(user=request.user, job_id=job_id)
    if job is None:
        raise Http404(_("No such job."))
    return job


@require_http_methods(["GET", "POST"])
def judge_list(request: HttpRequest) -> HttpResponse:
    require_lead(request)
    form = JudgeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        try:
            services.judge_create(name=data.pop("name"), **data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Judge saved."))
            return redirect("judging:judge_list")
    rows = [
        (row, services.judge_problems(row.judge), check_services.error_label(row.last_check))
        for row in selectors.judge_rows()
    ]
    status = 400 if request.method == "POST" else 200
    return render(request, "judging/judge_list.html", {"rows": rows, "form": form}, status=status)


@require_http_methods(["GET", "POST"])
def dataset_judging(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    models = selectors.response_models(dataset=dataset)
    form = JobStartForm(request.POST or None, model_names=[name for name, _n in models])
    if request.method == "POST":
        require_lead(request)
        if form.is_valid():
            try:
                job = services.judge_job_start(
                    dataset=dataset,
                    task=form.cleaned_data["task"],
                    judges=list(form.cleaned_data["judges"]),
                    repeats=form.cleaned_data["repeats"],
                    model_names=form.cleaned_data["models"],
                    by=acting_user(request.user),
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                # job-progress.js takes it away once the job has ended.
                messages.success(request, _("Job started."), extra_tags="until-job-ends")
                return redirect("judging:job_detail", job_id=job.pk)
    status = 400 if request.method == "POST" else 200
    return _judging_page(request, dataset, models, form=form, status=status)


def _judging_page(
    request: HttpRequest,
    dataset: Dataset,
    models: list[tuple[str, int]],
    *,
    form: JobStartForm | None = None,
    upload_form: UploadForm | None = None,
    status: int = 200,
) -> HttpResponse:
    lead = is_lead(request.user)
    jobs = list(selectors.job_list(dataset=dataset)[:MAX_JOBS_SHOWN])
    error_counts = selectors.job_error_counts(job_ids=[job.pk for job in jobs])
    return render(
        request,
        "judging/dataset_judging.html",
        {
            "dataset": dataset,
            "jobs": [(job, error_counts.get(job.pk, {})) for job in jobs],
            "models": models,
            "form": form or JobStartForm(model_names=[name for name, _n in models]),
            "upload_form": upload_form or UploadForm(),
            "uploads": (
                import_selectors.import_job_list(dataset=dataset, kinds=UPLOAD_KINDS)[
                    :MAX_JOBS_SHOWN
                ]
                if lead
                else []
            ),
            "can_run": lead,
        },
        status=status,
    )


@require_POST
def dataset_upload(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Queue the import of uploaded responses or verdicts and show its job (the judging page
    again, with the reasons, when the form or the files are wrong). An lmms-eval log first
    goes to a page where the lead confirms how its doc_id matches the samples."""
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    form = UploadForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            upload = import_jobs.import_upload_bundle(_uploaded_files(data))
            if data["kind"] == ImportKind.VERDICTS or data["format"] in ("jsonl", "logicvista"):
                job = import_services.upload_create(
                    dataset=dataset,
                    kind=data["kind"],
                    format=data["format"],
                    upload=upload,
                    model=data["model"],
                    created_by=acting_user(request.user),
                )
                return redirect("annotation:import_job", job_id=job.pk)
            return _kept_upload(request, dataset, upload, data)
        except ValidationError as exc:
            form.add_error(None, exc)
    models = selectors.response_models(dataset=dataset)
    return _judging_page(request, dataset, models, upload_form=form, status=400)


def _uploaded_files(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """(path, file) of every file sent: the folder's files under their paths inside it."""
    files = [(f.name, f) for f in data.get("file") or []]
    folder = data.get("folder") or []
    try:
        paths = json.loads(data.get("folder_paths") or "[]")
    except ValueError:
        paths = []
    if not isinstance(paths, list) or len(paths) != len(folder):
        paths = [f.name for f in folder]
    files += [(str(path), f) for path, f in zip(paths, folder, strict=True)]
    return files


def _kept_upload(
    request: HttpRequest, dataset: Dataset, upload: Any, data: dict[str, Any]
) -> HttpResponse:
    """Keep an upload whose format is detected or is a harness's, inspect it, and either
    queue it or ask the lead to confirm the doc order."""
    source, source_name = import_jobs.import_upload_store(upload)
    try:
        inspection = import_services.response_upload_inspect(
            source=source,
            source_name=source_name,
            format=data["format"],
            model=data["model"],
            dataset=dataset,
        )
    except ValidationError:
        default_storage.delete(source)
        raise
    if inspection.needs_doc_order:
        token = signing.dumps(
            {
                "dataset": dataset.pk,
                "source": source,
                "name": source_name,
                "format": inspection.format,
                "model": data["model"],
            },
            salt=CONFIRM_SALT,
        )
        return _confirm_page(request, dataset, inspection, ConfirmForm(initial={"token": token}))
    job = import_services.response_stored_create(
        dataset=dataset,
        source=source,
        source_name=source_name,
        format=inspection.format,
        model=data["model"],
        created_by=acting_user(request.user),
    )
    messages.success(request, _("Read as %(format)s.") % {"format": inspection.format_name})
    return redirect("annotation:import_job", job_id=job.pk)


CONFIRM_SALT = "judging.upload.confirm"
CONFIRM_MAX_AGE = 24 * 3600


def _confirm_page(
    request: HttpRequest,
    dataset: Dataset,
    inspection: import_services.UploadInspection,
    form: ConfirmForm,
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "judging/upload_confirm.html",
        {
            "dataset": dataset,
            "inspection": inspection,
            "previews": inspection.previews,
            "orders": [(code, label) for code, label in DOC_ORDER_CHOICES],
            "form": form,
        },
        status=status,
    )


@require_POST
def dataset_upload_confirm(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The lead's answer on the confirmation page: import with the chosen doc order, or
    discard the kept upload."""
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    form = ConfirmForm(request.POST)
    try:
        kept = signing.loads(
            request.POST.get("token", ""), salt=CONFIRM_SALT, max_age=CONFIRM_MAX_AGE
        )
    except signing.BadSignature:
        messages.error(request, _("This confirmation has expired; upload the files again."))
        return redirect("judging:dataset_judging", dataset_id=dataset.pk)
    if kept.get("dataset") != dataset.pk:
        raise Http404
    if "discard" in request.POST:
        default_storage.delete(kept["source"])
        messages.success(request, _("The upload was discarded; nothing was imported."))
        return redirect("judging:dataset_judging", dataset_id=dataset.pk)
    if form.is_valid():
        try:
            job = import_services.response_stored_create(
                dataset=dataset,
                source=kept["source"],
                source_name=kept["name"],
                format=kept["format"],
                model=kept["model"],
                doc_order=form.cleaned_data["doc_order"],
                created_by=acting_user(request.user),
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
            return redirect("judging:dataset_judging", dataset_id=dataset.pk)
        return redirect("annotation:import_job", job_id=job.pk)
    inspection = import_services.response_upload_inspect(
        source=kept["source"],
        source_name=kept["name"],
        format=kept["format"],
        model=kept["model"],
        dataset=dataset,
    )
    return _confirm_page(request, dataset, inspection, form, status=400)


@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job(request, job_id)
    return render(
        request,
        "judging/job_detail.html",
        {
            "job": job,
            "progress": selectors.job_progress(job=job),
            "can_cancel": is_lead(request.user) and not job.is_finished,
            "scoring": job.task in SCORING_TASKS,
            "is_lead": is_lead(request.user),
            "can_retry": is_lead(request.user) and job.status in JUDGE_JOB_RETRYABLE,
            "retryable": [str(status) for status in JUDGE_JOB_RETRYABLE],
        },
    )


def _job_action(
    request: HttpRequest, job_id: int, act: Callable[[JudgeJob], object], done: str
) -> HttpResponse:
    """A lead's action on a job; its refusal or ``done`` is shown on the job's page."""
    require_lead(request)
    job = _job(request, job_id)
    try:
        act(job)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, done)
    return redirect("judging:job_detail", job_id=job.pk)


@require_POST
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    return _job_action(
        request,
        job_id,
        lambda job: services.judge_job_cancel(job=job),
        _("The job was cancelled."),
    )


@require_POST
def job_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    return _job_action(
        request,
        job_id,
        lambda job: services.judge_job_retry(job=job),
        _("The job runs again; only the missing verdicts are made."),
    )


@dataclass(frozen=True)
class Bar:
    """One bar of the leaderboard chart; ``mean`` None (n = 0) draws no bar and reads "—".
    ``cell`` gives the label its interval (or why it has none) as the table's cell does; the
    whisker spans ``ci_from`` to ``ci_to`` (x, None without an interval), and the label starts
    at ``text_x``, past both the bar and its whisker."""

    label: str
    mean: float | None
    n: int
    y: int
    width: int
    colour: str
    cell: Cell
    ci_from: int | None = None
    ci_to: int | None = None
    text_x: int = 0


def _chart(board: selectors.Leaderboard) -> dict[str, object]:
    """Bars of the ensemble score per model and group, with the whisker of each bar's 95 %
    interval, laid out for an inline SVG."""
    colours = ["#2563eb", "#f59e0b", "#10b981", "#ef4444"]
    bars, labels, y = [], [], 0
    for row in board.models:
        labels.append({"text": row.model, "y": y + 18})
        for index, (group, cell) in enumerate(row.ensemble.groups.items()):
            mean = cell.mean if cell.n else None
            width = round((mean or 0.0) * CHART_WIDTH)
            ci_from = ci_to = None
            if mean is not None and cell.ci95_low is not None and cell.ci95_high is not None:
                ci_from = CHART_LEFT + round(cell.ci95_low * CHART_WIDTH)
                ci_to = CHART_LEFT + round(cell.ci95_high * CHART_WIDTH)
            text_x = max(CHART_LEFT + width, ci_to or 0) + 6
            bars.append(
                Bar(group, mean, cell.n, y, width, colours[index % 4], cell, ci_from, ci_to, text_x)
            )
            y += 24
        y += 12
    return {"bars": bars, "labels": labels, "height": y, "width": CHART_LEFT + CHART_WIDTH + 420}


@require_GET
def leaderboard(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    version = request.GET.get("prompt_version") or None
    board = selectors.leaderboard(dataset=dataset, prompt_version=version)
    if board.unknown_prompt_version:
        messages.error(
            request,
            _("No verdicts were made with prompt version “%(version)s”.") % {"version": version},
        )
    # The audit's correction rests on the verdicts of every prompt version.
    audit_set, corrected, corrected_state = (
        audit_computations.leaderboard_corrections(dataset=dataset)
        if version is None
        else (None, {}, None)
    )
    return render(
        request,
        "judging/leaderboard.html",
        {
            "dataset": dataset,
            "board": board,
            "chart": _chart(board),
            "audit_set": audit_set,
            "corrected": corrected,
            "corrected_state": corrected_state,
        },
    )
