"""The Reviewers page: each reviewer's quality on a dataset (a lead sees everyone, a
reviewer only themselves), as a worker last computed them: the page never computes them, it
queues a computation when they are out of date and follows it (``job-progress.js``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.lookups import dataset_or_404
from core.roles import request_user
from review.quality.computations import reviewer_report_read


@require_GET
def reviewers(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    read = reviewer_report_read(dataset=dataset, user=request_user(request))
    return render(
        request, "review/reviewers.html", {"dataset": dataset, "report": read.report, "read": read}
    )
