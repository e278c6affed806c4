"""The fields of a verdict line (verdicts made elsewhere, as JSON lines). Pure: no Django."""

from __future__ import annotations

from annotation.formats.spec import Field, FormatSpec

VERDICTS_JSONL = FormatSpec(
    code="verdicts",
    title="Verdicts made elsewhere: JSON lines",
    direction="in",
    carries="verdicts",
    layout="One verdict a line; a zip of several files is several files.",
    fields=(
        Field(
            "sample_id",
            "The sample's external id",
            required=True,
            aliases=("id", "question_id"),
        ),
        Field("judge", "The judge's name (a new name makes an external judge)", required=True),
        Field(
            "task",
            "What is judged (answerability by default; scoring is the dataset's scoring task)",
            allowed=("answerability", "scoring", "mmooc_scoring", "mcbench_safety"),
        ),
        Field(
            "label",
            "answerability: answerable or unanswerable; safety: safe or unsafe",
            aliases=("answerable",),
            allowed=("answerable", "unanswerable", "safe", "unsafe"),
        ),
        Field("category", "answerability: the category the judge named"),
        Field("answer_score", "mmooc_scoring: 0 or 1", allowed=("0", "1")),
        Field(
            "reasoning_score",
            "mmooc_scoring: 0 to 1 in quarters",
            allowed=("0", "0.25", "0.5", "0.75", "1"),
        ),
        Field("rationale", "The judge's reason", aliases=("reason",)),
        Field(
            "model",
            "Scoring: the evaluated model whose response is judged (import it first)",
            aliases=("model_name",),
        ),
        Field("prompt_version", "The prompt version (default external)"),
        Field("repeat", "The vote's number, from 0 (default 0)"),
    ),
    example="verdicts/verdicts.jsonl",
)
