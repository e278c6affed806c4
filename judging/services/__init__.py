"""Writes and business rules of the judging app: ``from judging import services``."""

from judging.services.jobs import (
    job_task_for,
    judge_job_apply_consensus,
    judge_job_end,
    judge_job_finish_if_done,
    judge_job_plan,
    judge_job_start,
)
from judging.services.judges import (
    EDITABLE_FIELDS as JUDGE_FIELDS,
)
from judging.services.judges import (
    ENV_NAME,
    ENV_NAME_MESSAGE,
    judge_allowed_hosts,
    judge_api_key,
    judge_create,
    judge_delete,
    judge_get_or_create_external,
    judge_key_prefix,
    judge_problems,
    judge_set_enabled,
    judge_update,
    judge_validate,
)
from judging.services.recovery import judge_job_cancel, judge_job_retry, judge_jobs_sweep
from judging.services.responses import RESPONSE_FORMATS, ImportSummary, response_import
from judging.services.runs import judge_chunk_fail, judge_chunk_run
from judging.services.verdicts import verdict_import

__all__ = [
    "ENV_NAME",
    "ENV_NAME_MESSAGE",
    "JUDGE_FIELDS",
    "RESPONSE_FORMATS",
    "ImportSummary",
    "job_task_for",
    "judge_allowed_hosts",
    "judge_api_key",
    "judge_chunk_fail",
    "judge_chunk_run",
    "judge_create",
    "judge_delete",
    "judge_get_or_create_external",
    "judge_job_apply_consensus",
    "judge_job_cancel",
    "judge_job_end",
    "judge_job_finish_if_done",
    "judge_job_plan",
    "judge_job_retry",
    "judge_job_start",
    "judge_jobs_sweep",
    "judge_key_prefix",
    "judge_problems",
    "judge_set_enabled",
    "judge_update",
    "judge_validate",
    "response_import",
    "verdict_import",
]
