"""A lane of a judge job: its items judged by every endpoint judge of the job at once.

Each judge gets a sliding window of calls (``judging.calls.execution.Window``): as soon as one call
ends, the next (item, judge) pair starts, so a slow or hung call holds only its own slot until
its timeout. Outcomes are saved in small batches as they end (each batch beats the lane's
heartbeat, which also notices a cancel), so a lane whose worker dies is taken over by the sweep
and judges only what is still missing: verdicts are unique per (judge, item, task, prompt
version, repeat) and inserted with ON CONFLICT DO NOTHING.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import closing
from typing import Any

from django.conf import settings
from django.db import transaction

from core.jobs import Heartbeat
from judging.calls.execution import JudgeRunner, Window
from judging.models import JudgeJob, JudgeJobChunk, JudgeJobJudge, JudgeKind, JudgeTask
from judging.services.chunks import (
    SharedStoreUnavailable,
    _calls,
    _categories,
    _config_errors,
    _load_items,
    _save,
    _spec,
    _store_failed,
    _Todo,
    _todo,
    _verdict_fields,
)

# How often a lane saves what has ended (and beats its heartbeat).
SAVE_EVERY_S = 0.25


def lane_slots(max_concurrency: int, index: int) -> int:
    """Lane `index`'s share of a judge's concurrency: the shares of JUDGE_JOB_LANES lanes add
    up to the cap, so lanes never wait on each other for a slot (the cap across every process
    is still held in Redis, for lanes of other jobs and larger jobs' extra lanes)."""
    lanes = max(1, int(settings.JUDGE_JOB_LANES))
    share, rest = divmod(max_concurrency, lanes)
    return max(1, share + (1 if index % lanes < rest else 0))


def lane_run(chunk: JudgeJobChunk, job: JudgeJob, heartbeat: Heartbeat) -> int:
    """Judge the lane's items still lacking a verdict; returns how many pairs were judged."""
    job_judges = [
        jj for jj in job.job_judges.select_related("judge") if jj.judge.kind != JudgeKind.RULE
    ]
    todos = {jj.pk: _todo(chunk.item_ids, jj.judge_id, job, jj.prompt_version) for jj in job_judges}
    ids = {t.item_id for todo in todos.values() for t in todo}
    if not ids:
        return 0
    media = any(not jj.judge.text_only for jj in job_judges)
    items = _load_items(job, job_judges[0].judge, ids, media=media)
    categories = _categories(job.dataset_id) if job.task == JudgeTask.ANSWERABILITY else []
    judged = 0
    windows: list[Window] = []
    lanes: list[tuple[JudgeJobJudge, dict[Any, _Todo]]] = []
    for jj in job_judges:
        todo = [t for t in todos[jj.pk] if t.item_id in items]  # items deleted since planning
        if not todo:
            continue
        try:
            spec = _spec(jj.judge)
        except ValueError as exc:
            _save(job, jj.judge, jj.prompt_version, todo, _config_errors(todo, exc), items)
            judged += len(todo)
            continue
        calls = _calls(job, jj.judge, todo, items, categories)
        windows.append(
            Window(spec, calls, job.task, lane_slots(jj.judge.max_concurrency, chunk.index))
        )
        lanes.append((jj, {(t.item_id, t.repeat): t for t in todo}))
    store_failures = 0
    runner = JudgeRunner.for_process(settings.REDIS_URL)
    with closing(runner.stream(windows, step_s=SAVE_EVERY_S, idle=True)) as batches:
        for batch in batches:
            # Every step, whether or not a call ended: a cancel stops the lane (and closing
            # the stream cancels its calls) within a step, even while every call hangs.
            heartbeat.beat()
            if not batch:
                continue
            ended: dict[int, list[tuple[_Todo, dict[str, Any]]]] = defaultdict(list)
            for index, key, outcome in batch:
                fields = _verdict_fields(job.task, outcome)
                if _store_failed(fields):
                    store_failures += 1
                else:
                    ended[index].append((lanes[index][1][key], fields))
            with transaction.atomic():
                for index, rows in ended.items():
                    jj = lanes[index][0]
                    todo = [t for t, _f in rows]
                    _save(job, jj.judge, jj.prompt_version, todo, [f for _t, f in rows], items)
                    judged += len(rows)
    if store_failures:
        raise SharedStoreUnavailable(
            f"{store_failures} calls could not reach the rate-limit store (Redis)"
        )
    return judged
