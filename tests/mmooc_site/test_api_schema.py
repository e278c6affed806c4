"""Schemathesis against /api/schema/ on a live server (PostgreSQL), as a lead, an annotator and
an auditor, with every check (``--checks all``): generated valid requests are accepted (or
refused for a documented reason: auth, 404, 409), invalid ones rejected, no server error, and
every response conforms to the schema with its documented status and headers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS as CHECK_REGISTRY
from schemathesis.checks import load_all_checks

from annotation import services as annotation_services
from annotation.imports import services as import_services
from annotation.models import (
    ImportSourceKind,
    Sample,
    SampleBulkJob,
    SampleStatus,
    SavedView,
    WebhookDelivery,
    WebhookEndpoint,
)
from annotation.snapshots import services as snapshot_services
from annotation.webhooks import sending as webhook_sending
from judging import services as judging_services
from judging.models import JudgeCheck
from review.queue import services as queue_services
from tests.judging import audit_factories as af
from tests.judging.factories import rule_judge
from tests.review.factories import submit

pytestmark = pytest.mark.postgres

# Examples per operation and generation mode: about 40 operations x 2 modes x 3 roles.
MAX_EXAMPLES = {GenerationMode.POSITIVE: 5, GenerationMode.NEGATIVE: 3}
# Every check schemathesis has (``--checks all``), none excluded.
load_all_checks()
CHECKS = CHECK_REGISTRY.get_all()


def _world(lead: Any, annotator: Any) -> dict[str, int]:
    """One of everything the API's paths name, with the annotator a member of the dataset."""
    dataset, _judges = af.scoring_dataset(n_samples=12)
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    sample = Sample.objects.filter(dataset=dataset).order_by("pk").first()
    assert sample is not None
    audit_set = af.draw(dataset, size=8)
    Sample.objects.filter(pk=sample.pk).update(status=SampleStatus.PENDING_REVIEW)
    queue_services.queue_sync(dataset=dataset)
    review = submit(annotator, sample).review
    judge_job = judging_services.judge_job_start(
        dataset=dataset, task="scoring", judges=[rule_judge()]
    )
    upload = SimpleUploadedFile("m.jsonl", b'{"question_id": "x"}\n{oops\n')
    import_job = import_services.import_job_create(
        dataset=dataset, format="mmooc", source_kind=ImportSourceKind.UPLOAD, upload=upload
    )
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="jsonl", queue=False
    )
    snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    bulk_job = SampleBulkJob.objects.create(
        dataset=dataset,
        action="set_priority",
        params={"filter": "", "ids": [sample.pk], "priority": 1, "reason": ""},
        selected=1,
    )
    check = JudgeCheck.objects.create(judge=rule_judge())
    # A loopback address no setting allows: every attempt is refused before it connects.
    endpoint = WebhookEndpoint.objects.create(
        url="http://127.0.0.1:9/hook", events=["import.finished"], secret="whsec_dGVzdA=="
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event="import.finished", message_id="msg_schema", payload={}
    )
    view = SavedView.objects.create(
        dataset=dataset, owner=lead, name="shared", shared=True, query="status=imported"
    )
    return {
        "view_id": view.pk,
        "endpoint_id": endpoint.pk,
        "delivery_id": delivery.pk,
        "check_id": check.pk,
        "dataset_id": dataset.pk,
        "sample_id": sample.pk,
        "audit_set_id": audit_set.pk,
        "judge_id": rule_judge().pk,
        "snapshot_id": snapshot.pk,
        "review_id": review.pk,
        "/api/imports/": import_job.pk,
        "/api/judge-jobs/": judge_job.pk,
        "/api/bulk-actions/": bulk_job.pk,
    }


def _path_parameters(path: str, ids: dict[str, int]) -> dict[str, int]:
    """The real objects' ids for a path's parameters (job_id depends on the path)."""
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    values = {}
    for name in names:
        if name == "job_id":
            values[name] = next(v for k, v in ids.items() if path.startswith(k))
        else:
            values[name] = ids[name]
    return values


def _failures(base_url: str, token: str, ids: dict[str, int]) -> list[str]:
    headers = {"Authorization": f"Token {token}"}
    schema = schemathesis.openapi.from_url(f"{base_url}/api/schema/", headers=headers)

    # The token as schemathesis' auth, not fixed headers: a case that leaves the credential
    # out on purpose (negative testing of the security scheme) is sent without it.
    @schema.auth()
    class _Token:
        def get(self, case: Any, context: Any) -> str:
            return token

        def set(self, case: Any, data: str, context: Any) -> None:
            case.headers = {**(case.headers or {}), "Authorization": f"Token {data}"}

    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        fixed = _path_parameters(operation.path, ids)
        for mode, examples in MAX_EXAMPLES.items():
            if mode == GenerationMode.NEGATIVE and not (len(operation.body) or operation.query):
                continue  # with the path's ids fixed, nothing is left to make invalid
            strategy = operation.as_strategy(generation_mode=mode, path_parameters=fixed)
            test = _hypothesis_test(strategy, examples, base_url)
            try:
                test()
            except (Exception, BaseExceptionGroup) as exc:  # schemathesis' FailureGroup
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    return failures


def _hypothesis_test(strategy: Any, examples: int, base_url: str) -> Callable[[], None]:
    @hypothesis.settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(case=strategy)
    def test(case: Any) -> None:
        case.call_and_validate(base_url=base_url, checks=CHECKS, timeout=30)

    return test


@pytest.mark.parametrize("role", ["lead", "annotator", "auditor"])
def test_the_api_never_errs_and_answers_as_its_schema_says(
    live_server: Any,
    transactional_db: None,
    lead: Any,
    annotator: Any,
    auditor: Any,
    role: str,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every operation, with valid and invalid generated input on real objects' ids: no 5xx,
    and every documented response matches its schema (0 failures)."""
    # Generated endpoints may name public addresses: no webhook request leaves this process.
    monkeypatch.setattr(
        webhook_sending,
        "send",
        lambda *args, **kwargs: webhook_sending.Outcome(None, "", "not sent in this test", 0.0),
    )
    with django_capture_on_commit_callbacks(execute=True):
        ids = _world(lead, annotator)
    user = {"lead": lead, "annotator": annotator, "auditor": auditor}[role]
    token = Token.objects.create(user=user).key
    failures = _failures(live_server.url, token, ids)
    assert failures == [], "\n\n".join(failures)
