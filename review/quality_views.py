"""The Reviewers page: each reviewer's quality on a dataset (a lead sees everyone, a
reviewer only themselves; see ``review.quality_selectors``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.lookups import dataset_or_404
from core.roles import request_user
from review.quality_selectors import reviewer_report


@require_GET
def reviewers(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    report = reviewer_report(dataset=dataset, user=request_user(request))
    return render(request, "review/reviewers.html", {"dataset": dataset, "report": report})
