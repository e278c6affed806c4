"""Tests of judges: one small call each, made by a worker (where the judges' keys are).

The lead's Test button queues a ``JudgeCheck`` that a worker runs; a job's planning checks
every endpoint judge of the job the same way before any item is sent, and the job does not
start, with each judge's reason, when one cannot answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core import egress
from core.jobs import JobStatus, SweepResult, job_claim, job_enqueue, job_finish, job_sweep
from core.tasks import enqueue
from judging.calls.probe import ProbeError, ProbeResult, ProbeTarget
from judging.calls.probe import probe as probe  # re-exported: tests replace it here
from judging.models import Judge, JudgeCheck, JudgeKind
from judging.services.judges import judge_allowed_hosts, judge_key_prefix

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 30.0
# A job's check tries a judge this many times before it refuses to start for a transient
# failure (a 5xx or a 429 says little about the next call); the Test button tries once.
PREFLIGHT_ATTEMPTS = 3
PREFLIGHT_PAUSE_S = 1.0


def error_label(check: JudgeCheck | str | None) -> str:
    """A reader's name for the kind of a failed test ("" for none, or one that answered)."""
    kind = check.error_kind if isinstance(check, JudgeCheck) else check
    if not kind:
        return ""
    labels = {
        ProbeError.KEY_MISSING: _("Key variable missing"),
        ProbeError.REFUSED: _("Address not allowed"),
        ProbeError.UNREACHABLE: _("Endpoint unreachable"),
        ProbeError.TIMEOUT: _("No answer in time"),
        ProbeError.UNKNOWN_MODEL: _("Unknown model"),
        ProbeError.AUTH: _("Key refused"),
        ProbeError.HTTP_ERROR: _("HTTP error"),
        ProbeError.MALFORMED: _("Reply is not a verdict"),
    }
    return labels.get(kind, _("Unexpected error"))


def _target(judge: Judge) -> ProbeTarget | ProbeResult:
    """What to call, or the failed result when the key cannot be read here."""
    name = judge.api_key_env
    if name and not egress.key_env_allowed(name, judge_key_prefix()):
        return ProbeResult(
            False,
            error_kind=ProbeError.KEY_MISSING,
            error=_("The key variable %(name)s does not start with %(prefix)s; it is never read.")
            % {"name": name, "prefix": judge_key_prefix()},
        )
    key = os.environ.get(name, "") if name else "not-needed"
    if not key:
        return ProbeResult(
            False,
            error_kind=ProbeError.KEY_MISSING,
            error=_("The environment variable %(name)s is not set in the workers.")
            % {"name": name},
        )
    return ProbeTarget(
        base_url=judge.base_url,
        api_key=key,
        model=judge.model,
        timeout_s=min(judge.timeout_s, PROBE_TIMEOUT_S),
        temperature=judge.temperature,
        allowed_hosts=judge_allowed_hosts(),
    )


async def _probe_all(targets: list[ProbeTarget | ProbeResult], attempts: int) -> list[ProbeResult]:
    async def one(target: ProbeTarget | ProbeResult) -> ProbeResult:
        if isinstance(target, ProbeResult):
            return target
        for attempt in range(1, attempts + 1):
            result = await probe(target)
            if result.ok or not result.transient or attempt == attempts:
                return result
            await asyncio.sleep(PREFLIGHT_PAUSE_S * attempt)
        raise AssertionError("unreachable")

    return list(await asyncio.gather(*(one(t) for t in targets)))


def judges_probe(judges: Sequence[Judge], *, attempts: int = 1) -> list[ProbeResult]:
    """A test call to each endpoint judge, all at once (the rule judge needs none); a
    transient failure (5xx, 429, a reply that is not a verdict) is tried again up to
    ``attempts`` times."""
    targets: list[ProbeTarget | ProbeResult] = [
        _target(judge) if judge.kind == JudgeKind.OPENAI else ProbeResult(True, 0.0)
        for judge in judges
    ]
    return asyncio.run(_probe_all(targets, attempts))


def judges_preflight(judges: Sequence[Judge]) -> list[str]:
    """Why each judge that cannot answer now cannot (empty when all can)."""
    endpoint = [judge for judge in judges if judge.kind == JudgeKind.OPENAI]
    if not endpoint:
        return []
    return [
        _("Judge %(name)s cannot answer: %(kind)s: %(error)s")
        % {"name": judge.name, "kind": error_label(result.error_kind), "error": result.error}
        for judge, result in zip(
            endpoint, judges_probe(endpoint, attempts=PREFLIGHT_ATTEMPTS), strict=True
        )
        if not result.ok
    ]


@transaction.atomic
def judge_check_create(*, judge: Judge, by: User | None = None) -> JudgeCheck:
    """Queue a test of an endpoint judge; a worker makes the call."""
    if judge.kind != JudgeKind.OPENAI:
        raise ValidationError(
            _("Only endpoint judges make calls that can be tested."), code="not_endpoint"
        )
    check = JudgeCheck.objects.create(judge=judge, created_by=by)
    transaction.on_commit(lambda: _enqueue(check.pk))
    return check


def _enqueue(check_id: int) -> None:
    job_enqueue(JudgeCheck, check_id, lambda: enqueue("judging.check_judge", check_id))


def judge_check_run(*, check_id: int) -> JudgeCheck | None:
    """Make a queued test's call and record its outcome (a finished test is left alone)."""
    claim = job_claim(JudgeCheck, check_id)
    if claim is None:
        return JudgeCheck.objects.filter(pk=check_id).first()
    check = JudgeCheck.objects.select_related("judge").get(pk=check_id)
    (result,) = judges_probe([check.judge])
    latency = None if result.latency_s is None else round(result.latency_s * 1000)
    job_finish(
        claim,
        status=JobStatus.SUCCEEDED,
        ok=result.ok,
        latency_ms=latency,
        reply=result.reply,
        error_kind=result.error_kind,
        error=result.error,
    )
    check.refresh_from_db()
    return check


def judge_checks_sweep() -> SweepResult:
    """Run again the tests whose worker died or whose message was lost."""
    return job_sweep(JudgeCheck, send=lambda pk: enqueue("judging.check_judge", pk))
