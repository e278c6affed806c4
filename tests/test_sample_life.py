"""The sample's life as invariants: a Hypothesis state machine drives imports, re-imports,
review, adjudication, gold, takedowns, assignments to annotators (and annotators losing their
role), judge jobs (finished and cancelled) and release round trips through the APIs a lead and
reviewers call, on PostgreSQL, and checks after every step that nothing changed without its
history, that no sample is stranded or over-reviewed, that assigned samples are served to their
assignees first and to nobody else while one of them can take them, that
no verdict lands after a cancel, that the judges' filters and the queue follow the latest
verdicts, that a blind dataset hides votes and reviewers, that a release comes back as it
was, and that the leaderboard counts what it says (issue 25, "What to build" item 1).

Invariants that still fail on main because of a defect another branch is fixing are kept,
behind a module constant named after what they check; the lead turns each on once the fix is
merged. Failing sequences found by the machine are kept below as plain regression tests.
"""

from __future__ import annotations

import io
import json
import os
import re
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.db.models import Max
from django.test import Client, TestCase
from django.urls import reverse
from django.utils import timezone
from hypothesis import Phase, currently_in_test_context, event
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from rest_framework.test import APIClient

from annotation.models import (
    ChangeSource,
    Dataset,
    MediaAsset,
    Sample,
    SampleMedia,
    SampleRevision,
    SampleStatus,
)
from annotation.services import dataset_member_set_roles
from annotation.services.samples import LABEL_FIELDS
from core import roles
from judging.calls.execution import JudgeRunner
from judging.consensus import ABSTAIN
from judging.models import JudgeJob, JudgeJobStatus, ModelResponse, Verdict
from judging.services import judge_job_apply_consensus
from review.models import Assignment, Review, Skip, Slot
from tests.annotation.factories import UserFactory
from tests.annotation.imports_support import mmooc_record
from tests.judging.factories import fake_judge, rule_judge

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

K = 2  # reviews per sample
REVIEWERS = 3
SCENARIOS = [
    "coarse_perception",
    "fine_grained_perception",
    "instance_reasoning",
    "logical_reasoning",
    "math",
    "science_and_technology",
]
# What the source may change in a row, by the record key, with the sample field it fills.
# A source key and the sample fields it changes: the options of an MMOOC question are read
# from its text, so a changed question may change them too.
SOURCE_FIELDS = {
    "reasoning": ("explanation",),
    "question": ("question", "options"),
    "category": ("scenario",),
}
CUSTOM_KEYS = ("subset", "meta")
# The release formats and how each is imported back (format, files inside the download).
RELEASES = ["jsonl", "parquet", "tsv", "mmooc", "hf"]
IMPORT_FORMAT = {
    "jsonl": "jsonl",
    "parquet": "release",
    "tsv": "vlmevalkit",
    "mmooc": "mmooc",
    "hf": "release",
}
JUDGE_TIMEOUT_S = 1.0

JSONish = Any
# SAMPLE_LIFE_TRACE=1 prints what each step did (with pytest -s), to see what examples cover.
TRACE = bool(os.environ.get("SAMPLE_LIFE_TRACE"))


def _event(text: str) -> None:
    if currently_in_test_context():
        event(text)
    if TRACE:
        print("   ", text)


def _norm(value: JSONish) -> JSONish:
    """A value as JSON would store it (tuples as lists), for comparison with the history."""
    return json.loads(json.dumps(value))


def record(n: int, **overrides: Any) -> dict[str, Any]:
    """An MMOOC row: out-of-context for even n, shifted in-context for odd n, each with a
    string and a nested custom field."""
    row = mmooc_record(n, subset=f"part-{n % 2}", meta={"difficulty": n % 3, "tags": ["t", n]})
    if n % 2:
        del row["ooc_type"]
        row.update(
            ic_type="misleading_premise",
            question=f"The red sign {n} says stop; what does the sign say? (A) Stop (B) Go",
            answer="A",
        )
    row.update(overrides)
    return row


@contextmanager
def on_commit_run() -> Iterator[None]:
    """Run what the block queues on commit (the eager Celery tasks of the suite) at its end,
    as the commit of a real request would."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        yield


class SampleLife(RuleBasedStateMachine):
    """One dataset's life, through the API; its state is rolled back after each example."""

    good_server: Any = None  # a fake OpenAI endpoint that answers
    hanging_server: Any = None  # one whose chat calls hang past the judge's timeout

    def __init__(self) -> None:
        super().__init__()
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.token = uuid.uuid4().hex[:6]
        self.lead = UserFactory.create(role=roles.LEAD, username=f"lead{self.token}")
        self.api = APIClient()
        self.api.force_authenticate(self.lead)
        self.source: dict[str, dict[str, Any]] = {}  # the source file: external id -> row
        self.next_row = 0
        self.seen: dict[int, dict[str, Any]] = {}  # sample id -> its state after the last step
        # (source, sample id, field) a step may change a label field by; "*" for any sample.
        self.allowed: set[tuple[str, int | str, str]] = set()
        self.custom_expected: dict[str, dict[str, Any]] = {}
        self.custom_dirty: dict[str, set[str]] = {}
        self.cancelled: list[tuple[int, int]] = []  # (job id, last verdict id at the cancel)
        self.answerability_jobs: list[int] = []
        self.responses_imported = False
        self.steps = 0
        self.snapshots = 0
        self.away: set[int] = set()  # reviewers (by index) who lost the annotator role

    def teardown(self) -> None:
        if TRACE:
            print("-- end of example", Counter(self._samples_statuses()))
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    def _samples_statuses(self) -> list[str]:
        if not hasattr(self, "dataset"):
            return []
        return list(Sample.objects.filter(dataset=self.dataset).values_list("status", flat=True))

    # -- set-up ---------------------------------------------------------------------------

    @initialize()
    def open_dataset(self) -> None:
        created = self.api.post(
            reverse("api_datasets"),
            {"name": f"life-{self.token}", "kind": "image_question", "preset": "mmooc"},
            format="json",
        )
        assert created.status_code == 201, created.content
        self.dataset = Dataset.objects.get(pk=created.json()["id"])
        self.reviewers = []
        self.clients = []
        for i in range(REVIEWERS):
            user = UserFactory.create(
                role=roles.ANNOTATOR, username=f"rev{i}x{self.token}", member_of=self.dataset
            )
            client = APIClient()
            client.force_authenticate(user)
            self.reviewers.append(user)
            self.clients.append(client)
        put = self.api.put(
            reverse("api_review_settings", args=[self.dataset.pk]),
            {
                "overlap": K,
                "blind": True,
                "show_judge_hints": False,
                "lease_seconds": 900,
                # Gold items are marked but never served, so that claims are deterministic.
                "gold_rate": 0,
            },
            format="json",
        )
        assert put.status_code == 200, put.content
        opened = self.api.post(reverse("api_review_queue", args=[self.dataset.pk]))
        assert opened.status_code == 200, opened.content
        self.judge = fake_judge(
            self.good_server.base_url, name=f"oracle{self.token}", timeout_s=JUDGE_TIMEOUT_S
        )
        self.hanging_judge = fake_judge(
            self.hanging_server.base_url,
            name=f"stall{self.token}",
            timeout_s=JUDGE_TIMEOUT_S,
            max_attempts=2,
        )
        self.secrets = {self.judge.name, self.hanging_judge.name}

    # -- helpers ----------------------------------------------------------------------------

    def _samples(self, dataset: Dataset | None = None) -> list[Sample]:
        return list(Sample.objects.filter(dataset=dataset or self.dataset).order_by("pk"))

    def _sample(self, index: int, statuses: tuple[str, ...] = ()) -> Sample | None:
        samples = [s for s in self._samples() if not statuses or s.status in statuses]
        return samples[index % len(samples)] if samples else None

    def _upload(self, dataset: Dataset, fmt: str, name: str, data: bytes, file: str = "") -> Any:
        with on_commit_run():
            reply = self.api.post(
                reverse("api_dataset_imports", args=[dataset.pk]),
                {
                    "format": fmt,
                    "file": SimpleUploadedFile(name, data),
                    "dataset_file": file,
                },
                format="multipart",
            )
        assert reply.status_code == 202, reply.content
        job = self.api.get(reverse("api_import_job", args=[reply.json()["id"]])).json()
        assert job["finished"], job
        return job

    def _import_source(self) -> Any:
        lines = "".join(json.dumps(row) + "\n" for row in self.source.values())
        job = self._upload(self.dataset, "mmooc", "rows.jsonl", lines.encode())
        assert job["status"] == "succeeded", job
        return job

    def _pk_of(self, external_id: str) -> int | None:
        return (
            Sample.objects.filter(dataset=self.dataset, external_id=external_id)
            .values_list("pk", flat=True)
            .first()
        )

    def _allow(self, source: str, sample: int | str, *fields: str) -> None:
        self.allowed |= {(source, sample, name) for name in fields}

    # -- rules: the source --------------------------------------------------------------------

    @rule(count=st.integers(1, 2), send=st.booleans())
    def import_new_rows(self, count: int, send: bool = False) -> None:
        for _ in range(count):
            self.next_row += 1
            row = record(self.next_row)
            self.source[row["question_id"]] = row
            self.custom_expected[row["question_id"]] = {k: row[k] for k in CUSTOM_KEYS}
        job = self._import_source()
        assert job["imported"] == count and job["rejected"] == 0, job
        if send:
            self.send_to_review()

    @precondition(lambda self: self.source)
    @rule()
    def reimport_unchanged(self) -> None:
        job = self._import_source()
        assert (job["imported"], job["updated"]) == (0, 0), job

    @precondition(lambda self: self.source)
    @rule(which=st.integers(0, 50), key=st.sampled_from(sorted(SOURCE_FIELDS)), n=st.integers())
    def reimport_changed_label(self, which: int, key: str, n: int) -> None:
        external_id = sorted(self.source)[which % len(self.source)]
        row = self.source[external_id]
        if key == "category":
            row[key] = SCENARIOS[(SCENARIOS.index(row[key]) + 1 + n % 5) % len(SCENARIOS)]
        else:
            row[key] = f"{row[key].split(' #')[0]} #{n}"
        pk = self._pk_of(external_id)
        if pk is not None:
            self._allow(ChangeSource.IMPORT, pk, *SOURCE_FIELDS[key])
        self._import_source()

    @precondition(lambda self: self.source)
    @rule(which=st.integers(0, 50), n=st.integers(0, 1000))
    def reimport_changed_custom_field(self, which: int, n: int) -> None:
        external_id = sorted(self.source)[which % len(self.source)]
        self.source[external_id]["subset"] = f"subset-{n}"
        self._custom_changed(external_id, "subset")
        job = self._import_source()
        assert job["rejected"] == 0, job

    @precondition(lambda self: any("meta" in row for row in self.source.values()))
    @rule(which=st.integers(0, 50))
    def reimport_dropped_key(self, which: int) -> None:
        keyed = sorted(e for e, row in self.source.items() if "meta" in row)
        external_id = keyed[which % len(keyed)]
        del self.source[external_id]["meta"]
        self._custom_changed(external_id, "meta")
        self._import_source()

    def _custom_changed(self, external_id: str, key: str) -> None:
        pk = self._pk_of(external_id)
        removed = (
            pk is not None and Sample.objects.filter(pk=pk, status=SampleStatus.REMOVED).exists()
        )
        if not removed:
            row = self.source[external_id]
            self.custom_expected[external_id] = {k: row[k] for k in CUSTOM_KEYS if k in row}
        else:
            self.custom_dirty.setdefault(external_id, set()).add(key)

    # -- rules: review --------------------------------------------------------------------

    @rule()
    def send_to_review(self) -> None:
        reply = self.api.post(
            reverse("api_dataset_send_to_review", args=[self.dataset.pk]), {}, format="json"
        )
        assert reply.status_code == 200, reply.content

    @rule(
        turns=st.lists(
            st.tuples(
                st.integers(0, REVIEWERS - 1),
                st.sampled_from(["accept", "accept", "correct", "reject", "skip"]),
                st.sampled_from(SCENARIOS),
            ),
            min_size=1,
            max_size=REVIEWERS,
        )
    )
    def reviewers_take_turns(self, turns: list[tuple[int, str, str]]) -> None:
        """Each reviewer in turn claims the next sample and accepts it untouched, corrects
        it, rejects it or skips it."""
        for reviewer, action, scenario in turns:
            self._review_next(reviewer, action, scenario)

    def _review_next(self, reviewer: int, action: str, scenario: str) -> None:
        client = self.clients[reviewer]
        mine, others = self._assigned_claimable(self.reviewers[reviewer])
        claim = client.post(reverse("api_review_claim", args=[self.dataset.pk]), {}, format="json")
        if reviewer in self.away:
            assert claim.status_code in (403, 404), claim.content
            return
        if claim.status_code == 204:
            assert not mine, f"nothing served, but {sorted(mine)} are assigned to them"
            _event("review: nothing to claim")
            return
        assert claim.status_code == 200, claim.content
        sample_id = claim.json()["sample"]["id"]
        if mine:
            assert sample_id in mine, f"served {sample_id} before their assigned {sorted(mine)}"
            _event("review: an assigned sample served first")
        assert sample_id not in others, f"served {sample_id}, reserved for its assignees"
        if action == "skip":
            reply = client.post(
                reverse("api_review_skip", args=[sample_id]), {"reason": "unsure"}, format="json"
            )
            assert reply.status_code == 204, reply.content
            return
        body: dict[str, Any] = {
            "client_uuid": str(uuid.uuid4()),
            "sample": sample_id,
            "decision": "reject" if action == "reject" else "accept",
        }
        if action == "reject":
            body["reject_reason"] = "invalid"
        if action == "correct":
            body["values"] = {"scenario": scenario}
        self._allow(ChangeSource.REVIEW, sample_id, "scenario")
        with on_commit_run():
            reply = client.post(reverse("api_reviews"), body, format="json")
        assert reply.status_code == 201, reply.content
        _event(f"review: {action}, sample {reply.json()['settled_status'] or 'in review'}")

    @rule(
        which=st.integers(0, 50),
        decision=st.sampled_from(["accept", "reject"]),
        scenario=st.one_of(st.none(), st.sampled_from(SCENARIOS)),
        form=st.booleans(),
    )
    def adjudicate(self, which: int, decision: str, scenario: str | None, form: bool) -> None:
        sample = self._sample(which, (SampleStatus.NEEDS_ADJUDICATION,)) or self._sample(
            which, tuple(s for s in SampleStatus.values if s != SampleStatus.REMOVED)
        )
        if sample is None:
            return
        _event(f"adjudicate a sample {sample.status}")
        values = {} if scenario is None or decision == "reject" else {"scenario": scenario}
        self._allow(ChangeSource.ADJUDICATION, sample.pk, *values)
        if form:
            # The page's form, posted with only the fields the lead changed (a partial post).
            page = Client()
            page.force_login(self.lead)
            posted = {"decision": decision, "note": "decided", "revision": sample.revision}
            if decision == "reject":
                posted["reject_reason"] = "invalid"
            posted |= {f"value_{k}": v for k, v in values.items()}
            with on_commit_run():
                page_reply = page.post(reverse("review:adjudicate", args=[sample.pk]), posted)
            errors = re.findall(
                r'<ul class="errorlist[^>]*>.*?</ul>', page_reply.content.decode(), re.S
            )
            assert page_reply.status_code == 302, (page_reply.status_code, errors)
            return
        body: dict[str, Any] = {"decision": decision, "note": "decided", "values": values}
        if decision == "reject":
            body["reject_reason"] = "invalid"
        with on_commit_run():
            reply = self.api.post(
                reverse("api_review_adjudication", args=[sample.pk]), body, format="json"
            )
        assert reply.status_code == 200, reply.content

    @rule(which=st.integers(0, 50))
    def mark_gold(self, which: int) -> None:
        sample = self._sample(which)
        if sample is None:
            return
        reply = self.api.post(reverse("api_review_gold", args=[sample.pk]), {}, format="json")
        if sample.status == SampleStatus.VERIFIED:
            assert reply.status_code in (200, 201), reply.content
            _event("gold: marked")
        else:
            assert reply.status_code == 409, reply.content

    @rule(which=st.integers(0, 50))
    def take_down(self, which: int) -> None:
        sample = self._sample(which)
        if sample is not None:
            self._bulk({"action": "take_down", "ids": [sample.pk], "reason": "takedown request"})

    @rule(which=st.integers(0, 50))
    def restore(self, which: int) -> None:
        sample = self._sample(which)
        if sample is not None:
            self._bulk({"action": "restore", "ids": [sample.pk]})

    def _bulk(self, body: dict[str, Any], status: int = 200) -> None:
        with on_commit_run():
            reply = self.api.post(
                reverse("api_dataset_samples_bulk", args=[self.dataset.pk]), body, format="json"
            )
        assert reply.status_code == status, reply.content

    def _assigned_claimable(self, user: Any) -> tuple[set[int], set[int]]:
        """The samples with a claimable slot that are assigned to the user (open), and those
        reserved for others only."""
        claimable = Slot.objects.filter(
            dataset=self.dataset, done=False, gold=False, lease_expires_at__lt=timezone.now()
        )
        open_ = Assignment.objects.filter(dataset=self.dataset, open=True)
        mine = set(
            claimable.filter(
                sample_id__in=open_.filter(reviewer=user).values("sample_id")
            ).values_list("sample_id", flat=True)
        )
        others = set(
            claimable.filter(sample_id__in=open_.exclude(reviewer=user).values("sample_id"))
            .exclude(sample_id__in=open_.filter(reviewer=user).values("sample_id"))
            .values_list("sample_id", flat=True)
        )
        return mine, others

    @rule(
        which=st.integers(0, 50),
        who=st.sets(st.integers(0, REVIEWERS - 1), min_size=1, max_size=2),
    )
    def assign(self, which: int, who: set[int]) -> None:
        """The lead assigns a sample to one or two reviewers (refused for one who lost the
        annotator role)."""
        sample = self._sample(which)
        if sample is None:
            return
        names = [self.reviewers[i].username for i in sorted(who)]
        refused = bool(who & self.away)
        self._bulk(
            {"action": "assign", "ids": [sample.pk], "assignees": names},
            status=409 if refused else 200,  # not an annotator (now): a conflict
        )
        _event("assign: refused" if refused else f"assign: to {len(who)}")

    @rule(which=st.integers(0, 50))
    def unassign(self, which: int) -> None:
        sample = self._sample(which)
        if sample is not None:
            self._bulk({"action": "unassign", "ids": [sample.pk]})

    @rule(who=st.integers(0, REVIEWERS - 1))
    def annotator_role_toggled(self, who: int) -> None:
        """A reviewer loses the annotator role in the dataset (staying an auditor), or gets it
        back; at most one is away at a time, so that k reviews stay possible."""
        if who in self.away:
            roles_now = {roles.ANNOTATOR}
            self.away.discard(who)
        elif not self.away:
            roles_now = {roles.AUDITOR}
            self.away.add(who)
        else:
            return
        dataset_member_set_roles(dataset=self.dataset, user=self.reviewers[who], roles=roles_now)
        _event(f"role: annotator {'back' if roles_now == {roles.ANNOTATOR} else 'lost'}")

    @rule(which=st.integers(0, 50), n=st.integers(0, 1000))
    def lead_edits(self, which: int, n: int) -> None:
        sample = self._sample(which)
        if sample is None:
            return
        self._allow(ChangeSource.EDIT, sample.pk, "explanation")
        reply = self.api.patch(
            reverse("api_sample", args=[sample.pk]),
            {"changes": {"explanation": f"Edited by the lead ({n})."}, "reason": "typo"},
            format="json",
        )
        assert reply.status_code == 200, reply.content

    # -- rules: judges --------------------------------------------------------------------

    def _start_job(self, task: str, judges: list[str]) -> JudgeJob:
        with on_commit_run():
            reply = self.api.post(
                reverse("api_judge_jobs", args=[self.dataset.pk]),
                {"task": task, "judges": judges},
                format="json",
            )
        assert reply.status_code in (201, 202), reply.content
        return JudgeJob.objects.get(pk=reply.json()["id"])

    @precondition(lambda self: self.source)
    @rule(with_rule_judge=st.booleans())
    def judge_job_finishes(self, with_rule_judge: bool) -> None:
        names = [self.judge.name] + (["rule"] if with_rule_judge else [])
        rule_judge()
        job = self._start_job("answerability", names)
        assert job.status == JudgeJobStatus.SUCCEEDED, (job.status, job.message)
        self.answerability_jobs.append(job.pk)
        flags = Sample.objects.filter(dataset=self.dataset).values_list(
            "judges_disagree", flat=True
        )
        _event(f"judge job: finished, flags {sorted(set(map(str, flags)))}")

    @precondition(lambda self: self.source)
    @rule(at_step=st.integers(1, 4), go=st.integers(0, 2))
    def judge_job_cancelled_while_its_endpoint_hangs(self, at_step: int, go: int) -> None:
        if go:  # the dearest rule: one draw in three runs it
            return
        stream = JudgeRunner.stream
        cancelled: dict[str, float | int] = {}
        api = self.api

        def cancelling(runner: JudgeRunner, *args: Any, **kwargs: Any) -> Iterator[Any]:
            inner = stream(runner, *args, **kwargs)
            try:
                for step, batch in enumerate(inner, start=1):
                    if step == at_step and not cancelled:
                        # The lead's cancel arrives while this batch of outcomes is in flight.
                        job = JudgeJob.objects.filter(dataset=self.dataset).latest("pk")
                        last = Verdict.objects.filter(job=job).aggregate(m=Max("id"))["m"] or 0
                        reply = api.post(reverse("api_judge_job_cancel", args=[job.pk]))
                        assert reply.status_code == 200, reply.content
                        cancelled.update(job=job.pk, last=last, at=time.monotonic())
                    yield batch
            finally:
                inner.close()

        JudgeRunner.stream = cancelling  # type: ignore[method-assign,assignment]
        try:
            job = self._start_job("answerability", [self.hanging_judge.name])
        finally:
            JudgeRunner.stream = stream  # type: ignore[method-assign]
        if not cancelled:
            _event("judge job: ended before its cancel")
            return
        _event("judge job: cancelled while hanging")
        job.refresh_from_db()
        assert job.status == JudgeJobStatus.CANCELLED, (job.status, job.message)
        self.cancelled.append((int(cancelled["job"]), int(cancelled["last"])))
        late = [
            r
            for r in self.hanging_server.chat_records()
            if r.received_at > float(cancelled["at"]) + JUDGE_TIMEOUT_S
        ]
        assert not late, f"{len(late)} calls started more than the timeout after the cancel"

    @precondition(lambda self: self.source)
    @rule()
    def responses_scored_by_the_rule_judge(self) -> None:
        lines = "".join(
            json.dumps({"id": external_id, "model": "m1", "response": f"The answer is A ({n})."})
            + "\n"
            for n, external_id in enumerate(sorted(self.source))
        )
        with on_commit_run():
            reply = self.api.post(
                reverse("api_response_import", args=[self.dataset.pk]),
                {"file": SimpleUploadedFile("r.jsonl", lines.encode()), "format": "jsonl"},
                format="multipart",
            )
        assert reply.status_code == 202, reply.content
        self.responses_imported = True
        rule_judge()
        job = self._start_job("scoring", ["rule"])
        assert job.status in (JudgeJobStatus.SUCCEEDED, JudgeJobStatus.FAILED), job.status

    # -- rules: releases --------------------------------------------------------------------

    @precondition(lambda self: self.source)
    @rule(fmt=st.sampled_from(RELEASES), go=st.integers(0, 1))
    def snapshot_round_trip(self, fmt: str, go: int) -> None:
        if go:
            return
        verified = Sample.objects.filter(dataset=self.dataset, status=SampleStatus.VERIFIED)
        if not verified.exists():
            return
        self.snapshots += 1
        with on_commit_run():
            reply = self.api.post(
                reverse("api_dataset_snapshots", args=[self.dataset.pk]),
                {"name": f"v{self.snapshots}", "format": fmt},
                format="json",
            )
        assert reply.status_code == 202, reply.content
        snapshot_id = reply.json()["id"]
        link = self.api.get(reverse("api_snapshot_download", args=[snapshot_id]))
        assert link.status_code == 200, link.content
        download = self.api.get(link.json()["url"])
        assert download.status_code == 200
        data = b"".join(download.streaming_content)  # type: ignore[attr-defined]
        target = self._round_trip_into_new_dataset(fmt, data)
        _event(f"release round trip: {fmt}")
        expected = {s.external_id: s for s in verified}
        back = {s.external_id: s for s in self._samples(target)}
        assert set(back) == set(expected)
        for external_id, sample in expected.items():
            mine = back[external_id]
            assert _labels(mine) == _labels(sample), external_id
            assert _media(mine) == _media(sample), external_id
            assert _licences(mine) == _licences(sample), external_id
            assert mine.extra == sample.extra, external_id
        self._blind_check(target)

    def _round_trip_into_new_dataset(self, fmt: str, data: bytes) -> Dataset:
        created = self.api.post(
            reverse("api_datasets"),
            {
                "name": f"back-{self.token}-{self.snapshots}",
                "kind": "image_question",
                "preset": "mmooc",
            },
            format="json",
        )
        assert created.status_code == 201, created.content
        target = Dataset.objects.get(pk=created.json()["id"])
        viewer = UserFactory.create(role=roles.ANNOTATOR, member_of=target)
        self.target_viewer = viewer
        self.api.put(
            reverse("api_review_settings", args=[target.pk]),
            {"overlap": K, "blind": True, "show_judge_hints": False, "lease_seconds": 900},
            format="json",
        )
        name = {"jsonl": "release.jsonl", "parquet": "release.parquet", "tsv": "release.tsv"}
        if fmt in name:
            job = self._upload(target, IMPORT_FORMAT[fmt], name[fmt], data)
            assert job["status"] == "succeeded", job
            return target
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            files = [n for n in archive.namelist() if n.endswith(".parquet")]
        for file in files:
            job = self._upload(target, IMPORT_FORMAT[fmt], "release.zip", data, file=file)
            assert job["status"] == "succeeded", job
        return target

    def _blind_check(self, dataset: Dataset) -> None:
        """An annotator of a blind dataset sees no judge vote, no reviewer and no review
        summary in the sample list or any sample's detail."""
        client = APIClient()
        client.force_authenticate(self.target_viewer)
        hidden = self.secrets | {r.username for r in self.reviewers}
        for sample in self._samples(dataset):
            text = client.get(reverse("api_sample", args=[sample.pk])).content.decode()
            assert not any(word in text for word in hidden), text
            assert "judge_votes" not in text and "review_summary" not in text, text

    # -- invariants ------------------------------------------------------------------------

    @invariant()
    def every_change_is_in_the_history(self) -> None:
        """A sample's fields change only by the step's edits or its source, and each change
        is in its history with the old and the new value."""
        if not hasattr(self, "dataset"):
            return
        allowed, self.allowed = self.allowed, set()
        self.steps += 1
        for sample in self._samples():
            now = _state(sample)
            revisions = list(
                SampleRevision.objects.filter(sample=sample)
                .order_by("number")
                .values("number", "source", "before", "after")
            )
            assert [r["number"] for r in revisions] == list(range(1, sample.revision + 1))
            before = self.seen.get(sample.pk)
            if before is None:  # new: its first revision holds every field as created
                first = revisions[0]
                before = {**first["after"], "media": now["media"], "revision": 1}
                assert first["before"] == {}
            for name in (*LABEL_FIELDS, "status", "media"):
                touching = [
                    r for r in revisions if r["number"] > before["revision"] and name in r["after"]
                ]
                old, new = _norm(before[name]), _norm(now[name])
                if old != new:
                    assert touching, f"{sample.external_id}: {name} changed with no history"
                if touching:
                    assert touching[0]["before"][name] == old, (sample.external_id, name)
                    assert touching[-1]["after"][name] == new, (sample.external_id, name)
                if name == "status":
                    continue
                for r in touching:
                    key = (r["source"], sample.pk, name)
                    assert key in allowed or (r["source"], "*", name) in allowed, (
                        f"{sample.external_id}: {name} changed by {r['source']} in a step "
                        f"that allowed only {sorted(allowed)}"
                    )
            self.seen[sample.pk] = now

    @invariant()
    def custom_fields_follow_the_source(self) -> None:
        if not hasattr(self, "dataset"):
            return
        for sample in self._samples():
            expected = self.custom_expected.get(sample.external_id)
            if expected is None:
                continue
            dirty = self.custom_dirty.get(sample.external_id, set())
            held = {k: sample.extra[k] for k in CUSTOM_KEYS if k in sample.extra and k not in dirty}
            assert held == {k: v for k, v in expected.items() if k not in dirty}, (
                sample.external_id,
                sample.extra,
            )

    @invariant()
    def no_sample_is_stranded_nor_over_reviewed(self) -> None:
        """Every sample awaiting review can be claimed by a reviewer who has not reviewed it
        in its round, and no round holds more than k reviews."""
        if not hasattr(self, "dataset"):
            return
        for sample in self._samples():
            rounds = Review.objects.filter(sample=sample).values_list("round", flat=True)
            per_round: dict[int, int] = {}
            for r in rounds:
                per_round[r] = per_round.get(r, 0) + 1
            assert all(n <= K for n in per_round.values()), (sample.external_id, per_round)
            if sample.status not in (SampleStatus.PENDING_REVIEW, SampleStatus.IN_REVIEW):
                continue
            latest = (
                Slot.objects.filter(sample=sample, gold=False).aggregate(m=Max("round"))["m"] or 0
            )
            done = set(
                Review.objects.filter(sample=sample, round=latest).values_list(
                    "reviewer_id", flat=True
                )
            )
            claimable = False
            for reviewer, client in zip(self.reviewers, self.clients, strict=True):
                if reviewer.pk in done:
                    continue
                with transaction.atomic():
                    reply = client.post(
                        reverse("api_review_claim", args=[self.dataset.pk]),
                        {"sample": sample.pk},
                        format="json",
                    )
                    transaction.set_rollback(True)
                if reply.status_code == 200 and reply.json()["sample"]["id"] == sample.pk:
                    claimable = True
                    break
            assert claimable, (
                f"{sample.external_id} ({sample.status}) is stranded: no reviewer who has not "
                f"reviewed it can claim it; slots "
                f"{list(Slot.objects.filter(sample=sample).values('round', 'done', 'reviewer'))}"
            )

    @invariant()
    def assigned_samples_are_reserved_while_an_assignee_can_take_them(self) -> None:
        """An assignment is open exactly while its assignee is an annotator of the dataset,
        holds no slot of the sample's latest round and has not skipped it; an open slot is
        reserved exactly while its sample has an open assignment."""
        if not hasattr(self, "dataset"):
            return
        away = {self.reviewers[i].pk for i in self.away}
        for assignment in Assignment.objects.filter(dataset=self.dataset):
            slots = Slot.objects.filter(sample_id=assignment.sample_id, gold=False)
            latest = slots.aggregate(m=Max("round"))["m"]
            holds = slots.filter(round=latest, reviewer_id=assignment.reviewer_id).exists()
            skipped = Skip.objects.filter(
                sample_id=assignment.sample_id, reviewer_id=assignment.reviewer_id
            ).exists()
            expected = assignment.reviewer_id not in away and not holds and not skipped
            assert assignment.open == expected, (assignment, holds, skipped)
        open_ = Assignment.objects.filter(dataset=self.dataset, open=True)
        reserved = set(open_.values_list("sample_id", flat=True))
        for slot in Slot.objects.filter(dataset=self.dataset, done=False, gold=False):
            assert slot.reserved == (slot.sample_id in reserved), (slot, slot.reserved)

    @invariant()
    def no_verdict_after_a_cancel(self) -> None:
        for job_id, last in self.cancelled:
            late = Verdict.objects.filter(job_id=job_id, id__gt=last).count()
            assert not late, f"{late} verdicts of job {job_id} were stored after its cancel"

    def _latest_answerability_votes(self) -> list[tuple[int, int, str, str]]:
        """(sample, judge, label, error kind) of every judge's latest answerability verdict
        on each sample of the dataset."""
        return list(
            Verdict.objects.filter(
                task="answerability", sample__dataset=self.dataset, response__isnull=True
            )
            .order_by("sample_id", "judge_id", "repeat", "-id")
            .distinct("sample_id", "judge_id", "repeat")
            .values_list("sample_id", "judge_id", "label", "error_kind")
        )

    @invariant()
    def judges_agree_lists_only_samples_judges_voted_on(self) -> None:
        if not hasattr(self, "dataset"):
            return
        url = reverse("api_dataset_samples", args=[self.dataset.pk])
        agree = self.api.get(url, {"judges_disagree": "false", "limit": "500"})
        assert agree.status_code == 200, agree.content
        votes = self._latest_answerability_votes()
        voted = {s for s, _j, label, error in votes if not error and label not in ("", ABSTAIN)}
        for row in agree.json()["results"]:
            assert row["id"] in voted, f"“Judges: agree” matches {row['external_id']}, unvoted"

    @invariant()
    def the_queue_serves_by_the_latest_flags(self) -> None:
        """Every open slot is served in the order of its sample's latest judge flag and
        priority, not of a copy made when the queue was opened."""
        if not hasattr(self, "dataset"):
            return
        flags = {s.pk: (bool(s.judges_disagree), s.priority) for s in self._samples()}
        for slot in Slot.objects.filter(dataset=self.dataset, done=False, gold=False):
            assert (slot.judges_disagree, slot.priority) == flags[slot.sample_id], (
                f"slot of sample {slot.sample_id} is ordered by "
                f"{(slot.judges_disagree, slot.priority)}, its sample by {flags[slot.sample_id]}"
            )

    @invariant()
    def judge_flags_are_the_consensus_of_the_latest_verdicts(self) -> None:
        """For every sample each judge of the dataset has a verdict on, the stored flag is
        what the consensus of the latest verdicts gives now."""
        if not hasattr(self, "dataset") or not self.answerability_jobs:
            return
        votes = self._latest_answerability_votes()
        judges = {j for _s, j, _l, _e in votes}
        by_sample: dict[int, set[int]] = {}
        for s, j, _l, _e in votes:
            by_sample.setdefault(s, set()).add(j)
        covered = {s for s, seen in by_sample.items() if seen == judges}
        live = [s for s in self._samples() if s.pk in covered]
        stored = {s.pk: s.judges_disagree for s in live if s.status != SampleStatus.REMOVED}
        with transaction.atomic():
            judge_job_apply_consensus(job=JudgeJob.objects.get(pk=self.answerability_jobs[-1]))
            fresh = dict(Sample.objects.filter(pk__in=stored).values_list("pk", "judges_disagree"))
            transaction.set_rollback(True)
        assert stored == fresh, f"stored flags {stored}, the latest verdicts give {fresh}"

    @invariant()
    def a_blind_dataset_hides_votes_and_reviewers(self) -> None:
        """What a reviewer reads of the samples names no judge, no other reviewer and no
        review summary, and never says whether the judges agreed."""
        if not hasattr(self, "dataset"):
            return
        me = self.steps % REVIEWERS
        client = self.clients[me]
        hidden = self.secrets | {r.username for i, r in enumerate(self.reviewers) if i != me}
        url = reverse("api_dataset_samples", args=[self.dataset.pk])
        listed = client.get(url, {"limit": "500"})
        assert listed.status_code == 200, listed.content
        pages = [listed.content.decode()]
        for row in listed.json()["results"]:
            assert row["judges_disagree"] is None, row
            detail = client.get(reverse("api_sample", args=[row["id"]]))
            assert detail.json()["judges_disagree"] is None
            pages.append(detail.content.decode())
        for text in pages:
            leaked = [word for word in hidden if word in text]
            assert not leaked, f"a blind reviewer reads {leaked}"
            assert "judge_votes" not in text and "review_summary" not in text

    @invariant()
    def the_leaderboard_counts_what_it_says(self) -> None:
        if not getattr(self, "responses_imported", False):
            return
        board = self.api.get(reverse("api_leaderboard", args=[self.dataset.pk]))
        assert board.status_code == 200, board.content
        scored = Verdict.objects.filter(
            task="mmooc_scoring", response__dataset=self.dataset, error_kind=""
        )
        scored = scored.exclude(sample__status__in=(SampleStatus.REJECTED, SampleStatus.REMOVED))
        for row in board.json()["models"]:
            expected = ModelResponse.objects.filter(
                pk__in=scored.values("response_id"), model_name=row["model"]
            ).count()
            overall = row["ensemble"]["overall"]["n"]
            assert overall == expected, (row["model"], overall, expected)
            groups = row["ensemble"]["groups"]
            assert sum(cell["n"] for cell in groups.values()) == overall, groups


def _state(sample: Sample) -> dict[str, Any]:
    return {
        **{name: getattr(sample, name) for name in LABEL_FIELDS},
        "status": sample.status,
        "media": _media(sample),
        "revision": sample.revision,
    }


def _labels(sample: Sample) -> dict[str, Any]:
    return {name: _norm(getattr(sample, name)) for name in LABEL_FIELDS}


def _media(sample: Sample) -> list[str]:
    return list(
        SampleMedia.objects.filter(sample=sample)
        .order_by("role", "position")
        .values_list("asset__sha256", flat=True)
    )


def _licences(sample: Sample) -> list[str]:
    return list(
        MediaAsset.objects.filter(sample_links__sample=sample)
        .order_by("sample_links__role", "sample_links__position")
        .values_list("licence", flat=True)
    )


@pytest.fixture
def life(settings: Any, fake_openai: Any) -> Iterator[type[SampleLife]]:
    """The machine with its two fake endpoints (one that answers, one that hangs)."""
    settings.JUDGE_JOB_LANES = 1
    with (
        fake_openai() as good,
        fake_openai(fault_rates={"hang": 1.0}, hang_s=3 * JUDGE_TIMEOUT_S) as hanging,
    ):
        SampleLife.good_server, SampleLife.hanging_server = good, hanging
        yield SampleLife


def test_the_sample_life_keeps_its_invariants(life: type[SampleLife]) -> None:
    """Whatever the order of imports, reviews, adjudications, takedowns, judge jobs and
    releases, every invariant holds after every step (examples: the Hypothesis profile)."""
    run_state_machine_as_test(
        life,
        settings=hypothesis_settings(
            hypothesis_settings.default,
            stateful_step_count=20,
            # No explanation phase: tracing every line of every step would double the time.
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        ),
    )


# -- regression tests: sequences the machine found, replayed as fixed steps -------------------


def replay(machine_class: type[SampleLife], *steps: Callable[[SampleLife], None]) -> None:
    """Run the steps on a fresh machine, checking every invariant after each."""
    machine = machine_class()
    try:
        machine.open_dataset()
        check(machine)
        for step in steps:
            step(machine)
            check(machine)
    finally:
        machine.teardown()


def check(machine: SampleLife) -> None:
    machine.every_change_is_in_the_history()
    machine.custom_fields_follow_the_source()
    machine.no_sample_is_stranded_nor_over_reviewed()
    machine.no_verdict_after_a_cancel()
    machine.judges_agree_lists_only_samples_judges_voted_on()
    machine.the_queue_serves_by_the_latest_flags()
    machine.judge_flags_are_the_consensus_of_the_latest_verdicts()
    machine.a_blind_dataset_hides_votes_and_reviewers()
    machine.the_leaderboard_counts_what_it_says()


def test_defect_3_judges_agree_never_matches_an_unvoted_sample(life: type[SampleLife]) -> None:
    """Shrunk from the machine on the code before the fix of defect 3 (restore three times,
    import one row): a sample no judge voted on is not listed under "Judges: agree"."""
    replay(
        life,
        lambda m: m.restore(0),
        lambda m: m.restore(0),
        lambda m: m.restore(0),
        lambda m: m.import_new_rows(1),
    )


def test_a_whole_life_in_fixed_steps(life: type[SampleLife]) -> None:
    """Every rule at least once, in an order that reaches every state: imported, in review,
    verified, corrected, rejected, adjudicated, gold, taken down and restored, judged,
    cancelled, scored and released in every format."""
    accept = [(0, "accept", "math"), (1, "accept", "math")]
    replay(
        life,
        lambda m: m.import_new_rows(3, send=True),
        lambda m: m.reviewers_take_turns([*accept, (2, "accept", "math")]),
        lambda m: m.reviewers_take_turns([(2, "correct", "math"), (0, "accept", "math")]),
        lambda m: m.reviewers_take_turns([(1, "reject", "math"), (2, "reject", "math")]),
        lambda m: m.reviewers_take_turns([(0, "skip", "math"), (1, "correct", "math")]),
        lambda m: m.adjudicate(0, "accept", "logical_reasoning", False),
        lambda m: m.reviewers_take_turns([(0, "correct", "math"), (2, "reject", "math")]),
        lambda m: m.adjudicate(0, "accept", None, True),
        lambda m: m.mark_gold(0),
        lambda m: m.judge_job_finishes(True),
        lambda m: m.responses_scored_by_the_rule_judge(),
        lambda m: m.take_down(1),
        lambda m: m.restore(1),
        lambda m: m.reimport_unchanged(),
        lambda m: m.reimport_changed_label(0, "reasoning", 7),
        lambda m: m.reimport_changed_label(1, "category", 1),
        lambda m: m.reimport_changed_custom_field(2, 5),
        lambda m: m.reimport_dropped_key(0),
        lambda m: m.lead_edits(2, 3),
        *[lambda m, fmt=fmt: m.snapshot_round_trip(fmt, 0) for fmt in RELEASES],
        lambda m: m.judge_job_cancelled_while_its_endpoint_hangs(1, 0),
    )


def test_a_sample_a_reimport_sends_back_to_review_is_not_stranded(life: type[SampleLife]) -> None:
    """Shrunk from the machine on the code before the fix of defect 2: a verified sample
    whose explanation the source changed is pending review again, and a reviewer can claim
    it (before, no slot was opened: every claim answered 204)."""
    replay(
        life,
        lambda m: m.import_new_rows(1, send=True),
        lambda m: m.reviewers_take_turns([(0, "accept", "math"), (1, "accept", "math")]),
        lambda m: m.reimport_changed_label(0, "reasoning", 1),
    )


def test_defect_3_the_queue_follows_a_judge_job_that_ran_after_it_opened(
    life: type[SampleLife],
) -> None:
    """Shrunk from the machine on the code before the fix of defect 3: the judges disagree
    on samples already in the open queue, and their slots are served first at once (before,
    the slots kept the flags copied when the queue was opened)."""
    replay(
        life,
        lambda m: m.import_new_rows(2, send=True),
        lambda m: m.judge_job_finishes(False),
    )


def test_defect_1_no_verdict_is_stored_after_a_cancel(life: type[SampleLife]) -> None:
    """Shrunk from the machine on the code before the fix of defect 1: a cancel that arrives
    while every call hangs stops the job: no verdict is stored after it, no call starts more
    than the judge's timeout after it (before, the batch in flight was saved after the
    cancel)."""
    replay(
        life,
        lambda m: m.import_new_rows(2),
        lambda m: m.judge_job_cancelled_while_its_endpoint_hangs(1, 0),
    )


def test_a_question_changed_by_the_source_may_change_its_options(
    life: type[SampleLife],
) -> None:
    """Shrunk from the machine: a re-import that changes an MMOOC question whose options are
    written in its text changes the options read from it, with the question (the machine's
    model of the source was wrong, not the site)."""
    replay(
        life,
        lambda m: m.import_new_rows(1, send=False),
        lambda m: m.reimport_changed_label(0, "question", 0),
    )


def test_an_adjudicated_sample_of_a_queue_never_opened_is_not_stranded(
    life: type[SampleLife],
) -> None:
    """Shrunk from the machine after the merges: a lead accepts an imported sample that was
    never sent to review, the source then changes its category, and the sample awaits review
    with no slot in a dataset whose queue was never opened (now the re-import opens its
    slots)."""
    replay(
        life,
        lambda m: m.import_new_rows(1, send=False),
        lambda m: m.adjudicate(0, "accept", None, False),
        lambda m: m.reimport_changed_label(0, "category", 0),
    )
