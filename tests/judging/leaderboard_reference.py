"""The leaderboard as the site computed it before it kept aggregates (judging.selectors at
6f1d18b): every verdict read in the request and averaged in Python. Kept as the reference the
kept aggregates' leaderboard must equal (tests/judging/test_leaderboard_store.py) and as the
"before" of bench/bench_scale.py --only leaderboard."""

from __future__ import annotations

from annotation.models import Dataset, DatasetKind, SampleStatus
from annotation.selectors import taxonomy_view
from judging.leaderboard import UNGROUPED, ScoreRow, build_leaderboard, verdict_score
from judging.models import JudgeTask, Verdict
from judging.selectors import Leaderboard

# The statuses of samples whose responses no score counts.
LEFT_OUT_STATUSES = (SampleStatus.REJECTED, SampleStatus.REMOVED)


def direct_leaderboard(*, dataset: Dataset, prompt_version: str | None = None) -> Leaderboard:
    """The leaderboard computed in the request over every verdict, as the site did before it
    kept aggregates (issue 30): the reference the kept aggregates must equal.

    Every judge's verdicts count, whichever prompt version made them, unless
    ``prompt_version`` names one; a response's score is first averaged over a judge's
    repeated votes. Items with no answerability group (or no safety side) form the group
    ``UNGROUPED``, shown only when there are any: never counted as shifted in-context,
    out-of-context or unsafe on a guess. An image-question dataset shows the answerability
    groups its taxonomy has (a LogicVista one, none: its items are all "ungrouped").
    """
    if dataset.kind == DatasetKind.TRIMODAL:
        task, groups = JudgeTask.MCBENCH_SAFETY, ["unsafe", "safe"]
    else:
        known = taxonomy_view(dataset).groups
        task = JudgeTask.MMOOC_SCORING
        groups = [group for group in ("shifted_ic", "ooc") if group in known]
    rows = (
        Verdict.objects.filter(task=task, response__dataset=dataset, error_kind="")
        .order_by()
        .values_list(
            "prompt_version",
            "judge__name",
            "response__model_name",
            "response_id",
            "sample__answerability_group",
            "sample__category_code",
            "sample__question_format",
            "sample__scenario",
            "sample__safety_label",
            "sample__safety_category",
            "sample__safety_subcategory",
            "answer_score",
            "reasoning_score",
            "label",
            "sample__status",
        )
    )
    scored: list[ScoreRow] = []
    versions: set[str] = set()
    left_out: set[int] = set()
    for (
        version,
        judge,
        model,
        response_id,
        group,
        category,
        question_format,
        scenario,
        safety_label,
        safety_category,
        safety_subcategory,
        answer,
        reasoning,
        label,
        status,
    ) in rows:
        versions.add(version)
        if prompt_version is not None and version != prompt_version:
            continue
        # A rejected or taken-down sample is not in the benchmark: its responses never count.
        if status in LEFT_OUT_STATUSES:
            left_out.add(response_id)
            continue
        safety = task == JudgeTask.MCBENCH_SAFETY
        found = verdict_score(safety=safety, answer=answer, reasoning=reasoning, label=label)
        if found is None:
            continue
        scored.append(
            ScoreRow(
                model,
                judge,
                response_id,
                (safety_label if safety else group) or UNGROUPED,
                safety_category if safety else category,
                "" if safety else question_format,
                safety_subcategory if safety else scenario,
                found.score,
                found.answer,
                found.reasoning,
            )
        )
    if any(row.group == UNGROUPED for row in scored):
        groups.append(UNGROUPED)
    judges = sorted({row.judge for row in scored})
    return Leaderboard(
        task,
        groups,
        judges,
        build_leaderboard(scored, groups),
        prompt_versions=sorted(versions),
        prompt_version=prompt_version,
        left_out_responses=len(left_out),
    )
