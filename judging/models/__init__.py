"""The judging app's models: judges and their verdicts (``judges``), audits (``audit``)."""

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
from judging.models.computations import AuditComputation, ComputationKind
from judging.models.judges import (
    CHUNK_FINISHED,
    SCORING_TASKS,
    ChunkStatus,
    Judge,
    JudgeJob,
    JudgeJobChunk,
    JudgeJobJudge,
    JudgeKind,
    JudgeTask,
    ModelResponse,
    Verdict,
    VerdictSource,
)

__all__ = [
    "CHUNK_FINISHED",
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
    "JudgeJob",
    "JudgeJobChunk",
    "JudgeJobJudge",
    "JudgeKind",
    "JudgeTask",
    "ModelResponse",
    "SafetyVerdict",
    "Verdict",
    "VerdictSource",
]
