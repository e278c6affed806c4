"""The judging app's models: judges and their verdicts (``judges``), audits (``audit``), the
leaderboard's kept aggregates (``leaderboard``)."""

from judging.models.audit import (
    REASONING_QUARTERS,
    AllocationMethod,
    AuditItem,
    AuditLease,
    AuditRating,
    AuditSet,
    AuditTask,
    SafetyVerdict,
)
from judging.models.checks import JudgeCheck
from judging.models.computations import AuditComputation, ComputationKind
from judging.models.judges import (
    CHUNK_FINISHED,
    JUDGE_JOB_ENDED,
    JUDGE_JOB_RETRYABLE,
    SCORING_TASKS,
    ChunkStatus,
    Judge,
    JudgeJob,
    JudgeJobChunk,
    JudgeJobJudge,
    JudgeJobStatus,
    JudgeKind,
    JudgeTask,
    ModelResponse,
    Verdict,
    VerdictSource,
)
from judging.models.leaderboard import (
    LeaderboardCell,
    LeaderboardChange,
    LeaderboardComputation,
    LeaderboardVersion,
)

__all__ = [
    "CHUNK_FINISHED",
    "JUDGE_JOB_ENDED",
    "JUDGE_JOB_RETRYABLE",
    "REASONING_QUARTERS",
    "SCORING_TASKS",
    "AllocationMethod",
    "AuditComputation",
    "AuditItem",
    "AuditLease",
    "AuditRating",
    "AuditSet",
    "AuditTask",
    "ChunkStatus",
    "ComputationKind",
    "Judge",
    "JudgeCheck",
    "JudgeJob",
    "JudgeJobChunk",
    "JudgeJobJudge",
    "JudgeJobStatus",
    "JudgeKind",
    "JudgeTask",
    "LeaderboardCell",
    "LeaderboardChange",
    "LeaderboardComputation",
    "LeaderboardVersion",
    "ModelResponse",
    "SafetyVerdict",
    "Verdict",
    "VerdictSource",
]
