"""Admin pages of the judging app; the API key itself is never a field, only its variable."""

from __future__ import annotations

from django.contrib import admin

from judging.forms import JudgeAdminForm
from judging.models import (
    Judge,
    JudgeCheck,
    JudgeJob,
    JudgeJobChunk,
    JudgeJobJudge,
    LeaderboardCell,
    LeaderboardChange,
    LeaderboardComputation,
    LeaderboardVersion,
    ModelResponse,
    Verdict,
)


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin[Judge]):
    form = JudgeAdminForm
    list_display = ["name", "kind", "model", "base_url", "max_concurrency", "family", "enabled"]
    list_filter = ["kind", "enabled", "family"]
    search_fields = ["name", "model"]


class JudgeJobJudgeInline(admin.TabularInline[JudgeJobJudge, JudgeJob]):
    model = JudgeJobJudge
    extra = 0
    readonly_fields = ["judge", "prompt_version"]


@admin.register(JudgeJob)
class JudgeJobAdmin(admin.ModelAdmin[JudgeJob]):
    list_display = ["id", "dataset", "task", "status", "total", "created_at", "finished_at"]
    list_filter = ["task", "status"]
    readonly_fields = ["total", "preexisting", "started_at", "finished_at", "rate_limit_scope"]
    inlines = [JudgeJobJudgeInline]


@admin.register(ModelResponse)
class ModelResponseAdmin(admin.ModelAdmin[ModelResponse]):
    list_display = ["model_name", "sample", "dataset", "updated_at"]
    list_filter = ["model_name"]
    raw_id_fields = ["sample"]
    list_select_related = ["sample", "dataset"]


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin[Verdict]):
    list_display = ["judge", "task", "sample", "response", "label", "answer_score", "error_kind"]
    list_filter = ["task", "judge", "source", "error_kind"]
    raw_id_fields = ["sample", "response", "job"]
    list_select_related = ["judge", "sample", "response"]


from judging.audit import admin as audit_admin  # noqa: E402,F401


@admin.register(JudgeJobJudge)
class JudgeJobJudgeAdmin(admin.ModelAdmin[JudgeJobJudge]):
    list_display = ["job", "judge", "prompt_version"]
    list_select_related = ["job", "judge"]


@admin.register(JudgeJobChunk)
class JudgeJobChunkAdmin(admin.ModelAdmin[JudgeJobChunk]):
    list_display = ["job", "judge", "index", "status"]
    list_filter = ["status"]
    list_select_related = ["job", "judge"]


@admin.register(JudgeCheck)
class JudgeCheckAdmin(admin.ModelAdmin[JudgeCheck]):
    list_display = ["judge", "status", "ok", "latency_ms", "error_kind", "created_at"]
    list_filter = ["status", "ok", "error_kind"]
    readonly_fields = ["reply", "error", "latency_ms", "finished_at"]
    list_select_related = ["judge"]


class _KeptByWorkers:
    """Rows the leaderboard's worker keeps (judging.leaderboard_store): shown, never edited."""

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(LeaderboardComputation)
class LeaderboardComputationAdmin(_KeptByWorkers, admin.ModelAdmin[LeaderboardComputation]):
    list_display = ["dataset", "status", "computed_at"]
    list_filter = ["status"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset"]


@admin.register(LeaderboardCell)
class LeaderboardCellAdmin(_KeptByWorkers, admin.ModelAdmin[LeaderboardCell]):
    list_display = ["id", "dataset", "prompt_version"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset"]


@admin.register(LeaderboardVersion)
class LeaderboardVersionAdmin(_KeptByWorkers, admin.ModelAdmin[LeaderboardVersion]):
    list_display = ["dataset", "prompt_version", "left_out_responses"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset"]


@admin.register(LeaderboardChange)
class LeaderboardChangeAdmin(_KeptByWorkers, admin.ModelAdmin[LeaderboardChange]):
    list_display = ["id", "dataset", "xact"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset"]
