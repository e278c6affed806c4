"""Parse and validate what an LLM judge returned.

Judges are asked for JSON only but often wrap it in code fences or prose; the parser accepts
that, then validates every field strictly so a bad verdict never reaches the database.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

TASKS = ("answerability", "mmooc_scoring", "mcbench_safety")
REASONING_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


class MalformedOutput(ValueError):
    """The judge's output could not be read as a valid verdict; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ScoringOutput:
    """A judge's MMOOC score."""

    answer_score: int
    reasoning_score: float
    reason: str


@dataclass(frozen=True)
class AnswerabilityOutput:
    """A judge's answerability label."""

    answerable: bool
    category: str | None
    reason: str


@dataclass(frozen=True)
class SafetyOutput:
    """A judge's MCBench safety label."""

    label: str
    reason: str


JudgeOutput = ScoringOutput | AnswerabilityOutput | SafetyOutput

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _first_balanced_object(text: str) -> str | None:
    """The first {...} whose braces balance, ignoring braces inside JSON strings."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_string = False
        escaped = False
        for index in range(start, len(text)):
            char = text[index]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start : index + 1]
        start = text.find("{", start + 1)
    return None


def extract_json_object(text: str | None) -> dict[str, Any]:
    """Return the JSON object in a judge's output: strict first, then fences, then prose."""
    if text is None or not text.strip():
        raise MalformedOutput("empty output")
    candidates = [text.strip()]
    candidates += [match.strip() for match in _FENCE.findall(text)]
    balanced = _first_balanced_object(text)
    if balanced:
        candidates.append(balanced)
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise MalformedOutput(f"no JSON object found in output: {text[:120]!r}")


def _require(data: dict[str, Any], key: str) -> Any:
    if key not in data:
        raise MalformedOutput(f"missing field {key!r} (got {sorted(data)})")
    return data[key]


def _number(value: Any, field_name: str) -> float:
    if isinstance(value, bool):
        raise MalformedOutput(f"{field_name} must be a number, got a boolean")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise MalformedOutput(f"{field_name} must be a number, got {value!r}")


def _reason(data: dict[str, Any]) -> str:
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise MalformedOutput(f"reason must be a string, got {type(reason).__name__}")
    return reason


def _validate_scoring(data: dict[str, Any]) -> ScoringOutput:
    answer = _number(_require(data, "answer_score"), "answer_score")
    if answer not in (0.0, 1.0):
        raise MalformedOutput(f"answer_score must be 0 or 1, got {answer:g}")
    reasoning = _number(_require(data, "reasoning_score"), "reasoning_score")
    if reasoning not in REASONING_SCORES:
        raise MalformedOutput(
            f"reasoning_score must be one of 0, .25, .5, .75, 1; got {reasoning:g}"
        )
    reason = _require(data, "reason")
    if not isinstance(reason, str):
        raise MalformedOutput(f"reason must be a string, got {type(reason).__name__}")
    return ScoringOutput(int(answer), reasoning, reason)


def _validate_answerability(data: dict[str, Any]) -> AnswerabilityOutput:
    raw = _require(data, "answerable")
    if isinstance(raw, bool):
        answerable = raw
    elif isinstance(raw, str) and raw.strip().lower() in {"answerable", "true", "yes"}:
        answerable = True
    elif isinstance(raw, str) and raw.strip().lower() in {"unanswerable", "false", "no"}:
        answerable = False
    else:
        raise MalformedOutput(
            f"answerable must be a boolean or answerable/unanswerable, got {raw!r}"
        )
    category = data.get("category")
    if category is not None and not isinstance(category, str):
        raise MalformedOutput(f"category must be a string or null, got {category!r}")
    return AnswerabilityOutput(answerable, category or None, _reason(data))


def _validate_safety(data: dict[str, Any]) -> SafetyOutput:
    label = _require(data, "label")
    if not isinstance(label, str) or label.strip().lower() not in {"safe", "unsafe"}:
        raise MalformedOutput(f"label must be 'safe' or 'unsafe', got {label!r}")
    return SafetyOutput(label.strip().lower(), _reason(data))


def parse_judge_output(text: str | None, task: str) -> JudgeOutput:
    """Parse and validate a judge's output for `task`; raise MalformedOutput otherwise."""
    data = extract_json_object(text)
    if task == "mmooc_scoring":
        return _validate_scoring(data)
    if task == "answerability":
        return _validate_answerability(data)
    if task == "mcbench_safety":
        return _validate_safety(data)
    raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
