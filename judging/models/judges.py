"""Judges, the model responses they score, judge jobs with their chunks, and verdicts.

A judge's API key is never stored: a judge names the environment variable that holds it.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset, JobStatus, Sample
from core.fields import created_by_field
from core.jobs import RecoverableJob


class JudgeKind(models.TextChoices):
    OPENAI = "openai", _("OpenAI-compatible endpoint")
    RULE = "rule", _("Built-in rule judge (offline)")
    EXTERNAL = "external", _("External (imported verdicts only)")


class Judge(models.Model):
    """A judge model: an OpenAI-compatible endpoint, the rule judge, or an external source."""

    name = models.CharField(_("name"), max_length=100, unique=True)
    kind = models.CharField(
        _("kind"), max_length=16, choices=JudgeKind.choices, default=JudgeKind.OPENAI
    )
    base_url = models.URLField(_("base URL"), max_length=500, blank=True, default="")
    model = models.CharField(_("model"), max_length=200, blank=True, default="")
    api_key_env = models.CharField(
        _("API key environment variable"),
        max_length=100,
        blank=True,
        default="",
        help_text=_("The name of the environment variable that holds the key; never the key."),
    )
    temperature = models.FloatField(_("temperature"), default=0.0)
    timeout_s = models.FloatField(_("timeout (seconds)"), default=60.0)
    max_concurrency = models.PositiveIntegerField(_("maximum concurrent calls"), default=8)
    requests_per_minute = models.PositiveIntegerField(
        _("requests per minute"), null=True, blank=True
    )
    max_tokens = models.PositiveIntegerField(_("maximum output tokens"), default=512)
    text_only = models.BooleanField(
        _("text only"), default=False, help_text=_("Send media descriptions instead of media.")
    )
    family = models.CharField(_("model family"), max_length=100, blank=True, default="")
    prompt_version = models.CharField(_("prompt version"), max_length=20, default="v1")
    max_attempts = models.PositiveSmallIntegerField(_("attempts per item"), default=5)
    backoff_base_s = models.FloatField(_("first backoff (seconds)"), default=0.5)
    backoff_max_s = models.FloatField(_("longest backoff (seconds)"), default=30.0)
    retry_after_max_s = models.FloatField(_("longest Retry-After honoured (seconds)"), default=300)
    enabled = models.BooleanField(_("enabled"), default=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("judge")
        verbose_name_plural = _("judges")
        constraints = [
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1), name="judge_concurrency_positive"
            ),
            models.CheckConstraint(
                condition=Q(temperature__gte=0, temperature__lte=2), name="judge_temperature_range"
            ),
            models.CheckConstraint(condition=Q(timeout_s__gt=0), name="judge_timeout_positive"),
            models.CheckConstraint(
                condition=Q(max_attempts__gte=1), name="judge_attempts_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def built_in(self) -> bool:
        """The rule judge ships with the site: it can be disabled, never deleted."""
        return self.kind == JudgeKind.RULE


class ModelResponse(models.Model):
    """An evaluated model's response to one sample."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    model_name = models.CharField(_("model"), max_length=200)
    response = models.TextField(_("response"), blank=True, default="")
    extra = models.JSONField(_("extra"), default=dict, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["dataset_id", "model_name", "sample_id"]
        verbose_name = _("model response")
        verbose_name_plural = _("model responses")
        constraints = [
            models.UniqueConstraint(fields=["sample", "model_name"], name="uniq_response_per_model")
        ]
        indexes = [
            models.Index(fields=["dataset", "model_name"], name="response_dataset_model_idx")
        ]

    def __str__(self) -> str:
        return f"{self.model_name} on {self.sample_id}"


class JudgeTask(models.TextChoices):
    ANSWERABILITY = "answerability", _("Answerability consensus")
    MMOOC_SCORING = "mmooc_scoring", _("Response scoring (MMOOC)")
    MCBENCH_SAFETY = "mcbench_safety", _("Response safety (MCBench)")


SCORING_TASKS = (JudgeTask.MMOOC_SCORING, JudgeTask.MCBENCH_SAFETY)


class JudgeJobStatus(models.TextChoices):
    """JobStatus, plus the end of a job some (not all) of whose calls failed."""

    QUEUED = JobStatus.QUEUED.value, JobStatus.QUEUED.label
    RUNNING = JobStatus.RUNNING.value, JobStatus.RUNNING.label
    SUCCEEDED = JobStatus.SUCCEEDED.value, JobStatus.SUCCEEDED.label
    WITH_ERRORS = "with_errors", _("Finished with errors")
    FAILED = JobStatus.FAILED.value, JobStatus.FAILED.label
    CANCELLED = JobStatus.CANCELLED.value, JobStatus.CANCELLED.label


JUDGE_JOB_ENDED = (
    JudgeJobStatus.SUCCEEDED,
    JudgeJobStatus.WITH_ERRORS,
    JudgeJobStatus.FAILED,
    JudgeJobStatus.CANCELLED,
)
JUDGE_JOB_RETRYABLE = (JudgeJobStatus.FAILED, JudgeJobStatus.CANCELLED, JudgeJobStatus.WITH_ERRORS)


class JudgeJob(RecoverableJob):
    """One run of judges over a dataset's samples or responses, done in chunks by workers."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    task = models.CharField(_("task"), max_length=32, choices=JudgeTask.choices)
    judges: models.ManyToManyField[Judge, JudgeJobJudge] = models.ManyToManyField(
        Judge, through="JudgeJobJudge", related_name="jobs", verbose_name=_("judges")
    )
    repeats = models.PositiveSmallIntegerField(_("votes per item"), default=1)
    model_names = models.JSONField(_("evaluated models"), default=list, blank=True)
    chunk_size = models.PositiveIntegerField(_("items per chunk"), default=50)
    status = models.CharField(
        _("status"), max_length=20, choices=JudgeJobStatus.choices, default=JobStatus.QUEUED
    )
    total = models.PositiveIntegerField(_("verdicts wanted"), default=0)
    preexisting = models.PositiveIntegerField(_("verdicts already present"), default=0)
    cancel_requested = models.BooleanField(_("cancel requested"), default=False)
    rate_limit_scope = models.CharField(_("rate limit scope"), max_length=20, blank=True)
    message = models.TextField(_("message"), blank=True, default="")
    created_by = created_by_field()
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("judge job")
        verbose_name_plural = _("judge jobs")
        constraints = [
            models.CheckConstraint(condition=Q(repeats__gte=1), name="judge_job_repeats_positive")
        ]

    def __str__(self) -> str:
        return f"{self.task} job {self.pk} on {self.dataset_id}"

    @property
    def is_finished(self) -> bool:
        return self.status in JUDGE_JOB_ENDED


class JudgeJobJudge(models.Model):
    """A judge taking part in a job, with the prompt version it ran with."""

    job = models.ForeignKey(JudgeJob, on_delete=models.CASCADE, related_name="job_judges")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="+")
    prompt_version = models.CharField(_("prompt version"), max_length=20)

    class Meta:
        ordering = ["job", "judge__name"]
        constraints = [models.UniqueConstraint(fields=["job", "judge"], name="uniq_job_judge")]

    def __str__(self) -> str:
        return f"{self.judge_id} in job {self.job_id}"


class ChunkStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


CHUNK_FINISHED = (ChunkStatus.DONE, ChunkStatus.FAILED, ChunkStatus.CANCELLED)


class JudgeJobChunk(RecoverableJob):
    """A slice of a job's items: one Celery task, safe to run twice.

    A lane (no judge) runs every judge of the job over its items, each judge's calls in a
    sliding window; a chunk with a judge runs that judge only (the rule judge's batches).
    """

    job = models.ForeignKey(JudgeJob, on_delete=models.CASCADE, related_name="chunks")
    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, related_name="+", null=True, blank=True
    )
    index = models.PositiveIntegerField()
    # Sample ids (answerability) or model-response ids (scoring).
    item_ids = models.JSONField(default=list)
    status = models.CharField(
        max_length=16, choices=ChunkStatus.choices, default=ChunkStatus.QUEUED
    )
    message = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index", "judge_id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "judge", "index"], name="uniq_job_chunk")
        ]
        verbose_name = _("judge job chunk")
        verbose_name_plural = _("judge job chunks")

    def __str__(self) -> str:
        return f"job {self.job_id} judge {self.judge_id} chunk {self.index}"


class VerdictSource(models.TextChoices):
    RUN = "run", _("Run here")
    IMPORT = "import", _("Imported")


class Verdict(models.Model):
    """One judge's vote on one item: a label or scores, or the error that prevented it.

    At most one verdict exists per (judge, item, task, prompt version, repeat), where the item
    is a model response for scoring tasks and a sample for answerability.
    """

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="verdicts")
    task = models.CharField(_("task"), max_length=32, choices=JudgeTask.choices)
    prompt_version = models.CharField(_("prompt version"), max_length=20)
    repeat = models.PositiveSmallIntegerField(_("repeat"), default=0)
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    response = models.ForeignKey(
        ModelResponse, on_delete=models.CASCADE, null=True, blank=True, related_name="verdicts"
    )
    job = models.ForeignKey(
        JudgeJob, on_delete=models.SET_NULL, null=True, blank=True, related_name="verdicts"
    )
    source = models.CharField(
        _("source"), max_length=10, choices=VerdictSource.choices, default=VerdictSource.RUN
    )
    # "answerable" | "unanswerable" | "safe" | "unsafe"; empty for scores and errors.
    label = models.CharField(_("label"), max_length=20, blank=True, default="")
    category = models.CharField(_("category"), max_length=100, blank=True, default="")
    answer_score = models.PositiveSmallIntegerField(_("answer score"), null=True, blank=True)
    reasoning_score = models.FloatField(_("reasoning score"), null=True, blank=True)
    rationale = models.TextField(_("rationale"), blank=True, default="")
    raw = models.JSONField(_("raw response"), null=True, blank=True)
    latency_ms = models.FloatField(_("latency (ms)"), null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(_("prompt tokens"), null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(_("completion tokens"), null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=1)
    error_kind = models.CharField(_("error kind"), max_length=40, blank=True, default="")
    error = models.TextField(_("error"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("verdict")
        verbose_name_plural = _("verdicts")
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "sample", "task", "prompt_version", "repeat"],
                condition=Q(response__isnull=True),
                name="uniq_verdict_per_sample",
            ),
            models.UniqueConstraint(
                fields=["judge", "response", "task", "prompt_version", "repeat"],
                condition=Q(response__isnull=False),
                name="uniq_verdict_per_response",
            ),
            models.CheckConstraint(
                condition=Q(answer_score__isnull=True) | Q(answer_score__in=[0, 1]),
                name="verdict_answer_score_valid",
            ),
            models.CheckConstraint(
                condition=Q(reasoning_score__isnull=True)
                | Q(reasoning_score__in=[0.0, 0.25, 0.5, 0.75, 1.0]),
                name="verdict_reasoning_score_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["job", "error_kind"], name="verdict_job_idx"),
            models.Index(fields=["sample", "task"], name="verdict_sample_task_idx"),
            # The sample list's verdict and score filters (judging.selectors).
            models.Index(
                fields=["label", "sample"], name="verdict_label_idx", condition=~Q(label="")
            ),
            models.Index(
                fields=["answer_score", "reasoning_score", "sample"],
                name="verdict_score_idx",
                condition=Q(reasoning_score__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge_id} {self.task} {self.response_id or self.sample_id}#{self.repeat}"

    @property
    def overall(self) -> float | None:
        """MMOOC's per-item score: the mean of the answer and reasoning scores."""
        if self.answer_score is None or self.reasoning_score is None:
            return None
        return (self.answer_score + self.reasoning_score) / 2
