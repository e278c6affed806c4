"""Statistics off the request path (judging.audit.computations): what queues a computation, the
debounce, runs that outlive their worker, pages and the API that only read the stored result,
and the round trip through a real worker."""

from __future__ import annotations

import sys
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from annotation.models import JobStatus
from judging import services as judging_services
from judging.audit import computations, services
from judging.models import AuditComputation, AuditItem, AuditSet, ComputationKind
from tests.annotation.factories import UserFactory
from tests.conftest import client_for
from tests.judging import audit_factories as af
from tests.judging.factories import rule_judge
from tests.support.http import browser

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The computations whose task was sent to the broker (no worker runs them here)."""
    ids: list[int] = []
    monkeypatch.setattr(computations, "_send", ids.append)
    return ids


def _statistics_row(audit_set: AuditSet) -> AuditComputation:
    return AuditComputation.objects.get(kind=ComputationKind.AUDIT_STATISTICS, audit_set=audit_set)


def _rate_one(audit_set: AuditSet, auditor: Any) -> None:
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    services.audit_rating_submit(
        auditor=auditor,
        item=AuditItem.objects.select_related("audit_set").get(pk=lease.item_id),
        submission_uuid=uuid.uuid4(),
        answer_score=1,
        reasoning_score=0.5,
    )


def test_a_burst_of_ratings_queues_one_computation(
    audit_set: AuditSet, auditor: Any, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    """Each rating requests the audit's figures on commit; while one computation is queued,
    further ratings send nothing more: the queued run will read them all."""
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            _rate_one(audit_set, auditor)
    row = _statistics_row(audit_set)
    assert sent == [row.pk] and row.status == JobStatus.QUEUED and row.computing


def test_a_request_while_running_queues_one_more_run_after_it(
    audit_set: AuditSet, auditor: Any, sent: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rating that arrives while the figures are being computed is not lost: the run stores
    its result, then the row is queued again and its task sent once more."""
    computations._request(
        ComputationKind.AUDIT_STATISTICS,
        dataset_id=audit_set.dataset_id,
        task=audit_set.task,
        audit_set_id=audit_set.pk,
    )
    real = computations._compute

    def compute_while_rated(row: AuditComputation) -> dict[str, Any]:
        result = real(row)
        computations._request(
            ComputationKind.AUDIT_STATISTICS,
            dataset_id=audit_set.dataset_id,
            task=audit_set.task,
            audit_set_id=audit_set.pk,
        )
        return result

    monkeypatch.setattr(computations, "_compute", compute_while_rated)
    row = computations.computation_run(computation_id=_statistics_row(audit_set).pk)
    assert row is not None and row.status == JobStatus.QUEUED
    assert row.result is not None and row.result["n_items"] == 12 and row.computed_at
    assert sent == [row.pk, row.pk]


def test_a_failed_computation_keeps_the_last_result_and_says_why(
    audit_set: AuditSet, monkeypatch: pytest.MonkeyPatch, sent: list[int]
) -> None:
    """A run that raises fails the row with the reason; the figures computed before stay
    readable, and the next request queues a fresh run."""
    first = computations.audit_statistics_compute(audit_set=audit_set)
    assert first is not None and first.status == JobStatus.SUCCEEDED

    def broken(row: AuditComputation) -> dict[str, Any]:
        raise RuntimeError("numpy went away")

    monkeypatch.setattr(computations, "_compute", broken)
    failed = computations.audit_statistics_compute(audit_set=audit_set)
    assert failed is not None and failed.status == JobStatus.FAILED
    assert "numpy went away" in failed.message and failed.result == first.result
    stored = computations.audit_statistics_read(audit_set=audit_set)
    assert stored.failed and stored.result is not None and not stored.computing
    computations._request(
        ComputationKind.AUDIT_STATISTICS,
        dataset_id=audit_set.dataset_id,
        task=audit_set.task,
        audit_set_id=audit_set.pk,
    )
    assert sent == [failed.pk] and _statistics_row(audit_set).status == JobStatus.QUEUED


def test_a_computation_whose_worker_died_is_run_again_then_given_up(
    audit_set: AuditSet, settings: Any, sent: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose heartbeat stopped is queued again by the sweep, so it never stays
    "computing"; once out of attempts it fails with the reason."""
    sweep_sent: list[int] = []
    monkeypatch.setattr(computations, "enqueue", lambda name, pk, **kw: sweep_sent.append(pk))
    pk = computations._request(
        ComputationKind.AUDIT_STATISTICS,
        dataset_id=audit_set.dataset_id,
        task=audit_set.task,
        audit_set_id=audit_set.pk,
    )
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 5)
    AuditComputation.objects.filter(pk=pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=stale
    )
    result = computations.computations_sweep()
    assert result.requeued == [pk] and sweep_sent == [pk]
    assert AuditComputation.objects.get(pk=pk).status == JobStatus.QUEUED
    AuditComputation.objects.filter(pk=pk).update(
        status=JobStatus.RUNNING, attempts=settings.JOB_MAX_ATTEMPTS, heartbeat_at=stale
    )
    assert computations.computations_sweep().failed == [pk]
    dead = AuditComputation.objects.get(pk=pk)
    assert dead.status == JobStatus.FAILED and "Given up" in dead.message and not dead.computing


def test_a_finished_judge_job_queues_the_frame_and_the_audits_of_its_dataset(
    audit_set: AuditSet, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    """The end of a judge job requests a recount of its task's frame and the figures of every
    drawn audit of the dataset (their corrected scores read every verdict)."""
    judge = rule_judge()
    with django_capture_on_commit_callbacks(execute=False):
        job = judging_services.judge_job_start(
            dataset=audit_set.dataset, task="scoring", judges=[judge]
        )
    with django_capture_on_commit_callbacks(execute=True):
        locked = type(job).objects.select_for_update().get(pk=job.pk)
        judging_services.jobs.judge_job_end(job=locked)
    rows = AuditComputation.objects.filter(dataset=audit_set.dataset)
    assert {(r.kind, r.task, r.audit_set_id) for r in rows} == {
        (ComputationKind.FRAME_STRATA, "scoring", None),
        (ComputationKind.AUDIT_STATISTICS, "scoring", audit_set.pk),
    }
    assert sorted(sent) == sorted(r.pk for r in rows)


def _get_pages(audit_set: AuditSet, user: Any) -> dict[str, int]:
    client = browser(user)
    dataset_id = audit_set.dataset_id
    urls = {
        "statistics": reverse("judging:audit_statistics", args=[audit_set.pk]),
        "report": reverse("judging:audit_report", args=[audit_set.pk]),
        "csv": reverse("judging:audit_statistics_csv", args=[audit_set.pk]),
        "api": reverse("api_audit_statistics", args=[audit_set.pk]),
        "leaderboard": reverse("judging:leaderboard", args=[dataset_id]),
        "api_leaderboard": reverse("api_leaderboard", args=[dataset_id]),
        "audits": reverse("judging:audit_list", args=[dataset_id]),
        "detail": reverse("judging:audit_detail", args=[audit_set.pk]),
        "home": reverse("annotation:dataset_list"),
        "preview": reverse("judging:audit_new", args=[dataset_id])
        + "?task=scoring&size=10&method=sqrt&floor=2&oversample_rare=1"
        "&oversample_disagree=1&seed=0&double_rating_fraction=0.1",
    }
    return {name: client.get(url).status_code for name, url in urls.items()}


def test_no_get_starts_a_bootstrap(
    audit_set: AuditSet, lead: Any, sent: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the bootstrap, the figures and the frame reader all raising, every page and API
    GET of the audit and the leaderboard still answers: before the first result (the
    computation is only queued) and after it (the stored result is read)."""
    af.rate_all(audit_set, [UserFactory.create(), UserFactory.create()])
    from judging.audit import report, selectors, statistics  # report loads every bootstrap

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("computed inside a GET")

    def forbid_all() -> None:
        """Every binding of the bootstrap's resampling, in every module that imported it."""
        assert report is not None
        for name, module in list(sys.modules.items()):
            if name.startswith("judging."):
                for attr in ("bootstrap_figures", "resample_indices"):
                    if hasattr(module, attr):
                        monkeypatch.setattr(module, attr, forbidden)
        for attr in ("audit_statistics",):
            monkeypatch.setattr(statistics, attr, forbidden)
        for attr in ("audit_frame", "audit_gather"):
            monkeypatch.setattr(selectors, attr, forbidden)

    forbid_all()
    before = _get_pages(audit_set, lead)
    assert before == {
        "statistics": 200,
        "report": 200,
        "csv": 503,
        "api": 202,
        "leaderboard": 200,
        "api_leaderboard": 200,
        "audits": 200,
        "detail": 200,
        "home": 200,
        "preview": 200,
    }
    assert len(sent) == 2  # the audit's figures and the frame's strata, queued once each
    monkeypatch.undo()
    monkeypatch.setattr(computations, "_send", sent.append)
    computations.audit_statistics_compute(audit_set=audit_set)
    computations.frame_strata_compute(dataset=audit_set.dataset, task="scoring")
    forbid_all()
    after = _get_pages(audit_set, lead)
    assert set(after.values()) == {200}, after


def test_pages_and_the_api_show_the_stored_figures_with_their_time(
    audit_set: AuditSet, auditor: Any, sent: list[int], django_assert_max_num_queries: Any
) -> None:
    """The API serves the stored figures with computed_at; a new rating marks them computing
    (the old figures still shown) until the next run stores the new ones."""
    af.rate_all(audit_set, [auditor])
    computations.audit_statistics_compute(audit_set=audit_set)
    api = client_for(auditor)
    url = reverse("api_audit_statistics", args=[audit_set.pk])
    with django_assert_max_num_queries(6):
        first = api.get(url).json()
    assert first["computed_at"] and first["computing"] is False and first["n_rated"] == 12
    page = browser(auditor).get(reverse("judging:audit_statistics", args=[audit_set.pk]))
    html = page.content.decode()
    assert "Computed by a worker at" in html and 'id="computing"' not in html
    af.rate_all(audit_set, [UserFactory.create()], seed=3)
    computations._request(
        ComputationKind.AUDIT_STATISTICS,
        dataset_id=audit_set.dataset_id,
        task=audit_set.task,
        audit_set_id=audit_set.pk,
    )
    waiting = api.get(url).json()
    assert waiting["computing"] is True and waiting["n_double_rated"] == first["n_double_rated"]
    marked = browser(auditor).get(reverse("judging:audit_statistics", args=[audit_set.pk]))
    assert 'id="computing"' in marked.content.decode()
    computations.computation_run(computation_id=_statistics_row(audit_set).pk)
    fresh = api.get(url).json()
    assert fresh["computing"] is False and fresh["n_double_rated"] == 3 != first["n_double_rated"]
    assert fresh["computed_at"] > first["computed_at"]


def test_notes_are_stored_in_english_and_shown_in_the_readers_language(
    audit_set: AuditSet,
) -> None:
    """The worker stores the notes untranslated; each reader gets them in their language."""
    with translation.override("zh-hans"):
        computations.audit_statistics_compute(audit_set=audit_set)
    stored = _statistics_row(audit_set).result
    assert stored is not None and stored["notes"] == [
        "No ratings yet: the human-vs-judge figures appear with the first one."
    ]
    with translation.override("zh-hans"):
        shown = computations.audit_statistics_read(audit_set=audit_set).result
    assert shown is not None and shown["notes"][0] != stored["notes"][0]


@pytest.mark.postgres
@pytest.mark.redis
def test_a_rating_reaches_the_statistics_page_through_a_real_worker(live_worker: Any) -> None:
    """Rate through the API → the computation is queued → a separate worker process computes
    it → the statistics page shows the figures with the time they were computed."""
    from tests.support.processes import wait_until

    dataset, _ = af.scoring_dataset(n_samples=20)
    auditor = UserFactory.create(role="auditor")
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=6, double_rating_fraction=0)
    api = client_for(auditor)
    claimed = api.post(reverse("api_audit_claim", args=[audit_set.pk])).json()
    rated = api.post(
        reverse("api_audit_ratings"),
        {
            "item": claimed["item"],
            "submission_uuid": str(uuid.uuid4()),
            "answer_score": 1,
            "reasoning_score": 0.75,
        },
        format="json",
    )
    assert rated.status_code == 201

    def rated_figures_stored() -> bool:
        row = AuditComputation.objects.filter(audit_set=audit_set).first()
        if row is None or row.status != JobStatus.SUCCEEDED or row.result is None:
            return False
        return bool(row.result["n_rated"] == 1)

    wait_until(rated_figures_stored, timeout=90, what="the worker to compute the figures")
    row = _statistics_row(audit_set)
    assert row.computed_at is not None and row.seconds is not None
    html = browser(auditor).get(reverse("judging:audit_statistics", args=[audit_set.pk]))
    text = html.content.decode()
    assert "Computed by a worker at" in text and 'id="inter-judge"' in text
    assert "1 rated" in text
