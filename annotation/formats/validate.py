"""Checks of a parsed sample against a dataset's taxonomy, and the answer/option helpers
that the readers share (option extraction from question text, answer-letter normalisation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotation.formats.records import ParsedSample, message

OOC_GROUP = "ooc"
SHIFTED_IC_GROUP = "shifted_ic"
PIPELINES = frozenset({"mllm_generated", "human_designed", "auto_shuffle"})
SAFETY_LABELS = frozenset({"safe", "unsafe"})

# A reference answer of an out-of-context sample may say that it cannot be answered.
REFUSAL_PHRASES = (
    "i can't answer",
    "i cannot answer",
    "i can not answer",
    "can't answer",
    "cannot answer",
    "cannot be answered",
    "can't be answered",
    "none of the above",
    "n/a",
    "na",
    "not applicable",
    "cannot be determined",
    "can't be determined",
    "can not be determined",
    "cannot determine",
    "cannot tell",
    "can't tell",
    "cannot say",
    "unanswerable",
    "not answerable",
    "unknown",
    "insufficient information",
    "not enough information",
    "无法回答",
    "无法确定",
    "无法判断",
    "不能确定",
)

# Option markers, tried in this order: "(A) foo (B) bar", "A. foo\nB. bar", inline "A) foo".
_OPTION_MARKERS = (
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"(?m)^[ \t]*([A-Z])[.):][ \t]+"),
    re.compile(r"(?:^|(?<=\s))([A-Z])\)[ \t]+"),
)
_ANSWER_SEPARATORS = re.compile(r"\s*(?:,|;|/|&|\+|\band\b)\s*|\s+", re.IGNORECASE)


@dataclass
class TaxonomyView:
    """The codes a dataset allows; an empty set or dict leaves that field unconstrained."""

    groups: set[str] = field(default_factory=set)
    categories: dict[str, str] = field(default_factory=dict)  # code -> group code
    formats: set[str] = field(default_factory=set)
    scenarios: set[str] = field(default_factory=set)
    safety_categories: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of_terms(cls, terms: Iterable[tuple[str, str, str]]) -> TaxonomyView:
        """The view of taxonomy terms given as (kind, code, parent code)."""
        view = cls()
        for kind, code, parent in terms:
            if kind == "group":
                view.groups.add(code)
            elif kind == "category":
                view.categories[code] = parent
            elif kind == "format":
                view.formats.add(code)
            elif kind == "scenario":
                view.scenarios.add(code)
            elif kind == "safety_category":
                view.safety_categories.setdefault(code, set())
            elif kind == "safety_subcategory":
                view.safety_categories.setdefault(parent, set()).add(code)
        return view


def extract_options(question: str) -> list[dict[str, str]]:
    """Options written into a question's text, labelled A, B, C, … in order.

    The last run starting at "A" wins, so "Select from (A), (B), (C). (A) foo (B) bar …"
    yields the real options. Fewer than two options means none were found.
    """
    for pattern in _OPTION_MARKERS:
        options = _options_from_markers(question, pattern)
        if len(options) >= 2:
            return options
    return []


def _options_from_markers(text: str, pattern: re.Pattern[str]) -> list[dict[str, str]]:
    markers = list(pattern.finditer(text))
    starts = [i for i, m in enumerate(markers) if m.group(1) == "A"]
    for start in reversed(starts):
        run = [markers[start]]
        for marker in markers[start + 1 :]:
            if ord(marker.group(1)) == ord(run[-1].group(1)) + 1:
                run.append(marker)
        if len(run) < 2:
            continue
        options = []
        for index, marker in enumerate(run):
            end = run[index + 1].start() if index + 1 < len(run) else len(text)
            option_text = text[marker.end() : end].strip().rstrip(",;").strip()
            options.append({"label": marker.group(1), "text": option_text})
        return options
    return []


def answer_letters(answer: str) -> list[str] | None:
    """The option letters of an answer such as "A", "(b)", "A, C" or "A and C", else None."""
    cleaned = re.sub(r"[().]", " ", answer).strip()
    if not cleaned:
        return None
    parts = [part for part in _ANSWER_SEPARATORS.split(cleaned) if part]
    if not parts or not all(len(part) == 1 and part.isalpha() for part in parts):
        return None
    return [part.upper() for part in parts]


def normalise_choice_answer(answer: str) -> str:
    """A multiple-choice answer with its letters written as "A" or "A, C"; other text kept."""
    letters = answer_letters(answer)
    return ", ".join(letters) if letters else answer.strip()


def is_refusal(answer: str) -> bool:
    """Whether a reference answer says the question cannot be answered."""
    text = answer.strip().lower().replace("’", "'").rstrip(".!。 ")
    if not text:
        return False
    return any(text == phrase or text.startswith(phrase + " ") for phrase in REFUSAL_PHRASES) or (
        any(phrase in text for phrase in REFUSAL_PHRASES if len(phrase) > 8)
    )


def is_trimodal(sample: ParsedSample) -> bool:
    """Whether a sample is a tri-modal safety scenario rather than an image question."""
    if sample.question_format:
        return False
    return bool(
        sample.safety_label
        or sample.speech_utterance
        or sample.audio_description
        or any(media.role == "audio" for media in sample.media)
    )


def _known(values: Iterable[str]) -> str:
    return ", ".join(sorted(values))


def validate_sample(sample: ParsedSample, tax: TaxonomyView) -> list[str]:
    """Readable problems with a sample; an empty list means it may be imported."""
    problems: list[str] = []
    if not sample.external_id.strip():
        problems.append(message("the sample has no id"))
    if is_trimodal(sample):
        problems.extend(_check_trimodal(sample, tax))
    else:
        problems.extend(_check_image_question(sample, tax))
    if sample.pipeline and sample.pipeline not in PIPELINES:
        problems.append(
            message(
                "unknown pipeline '{pipeline}' (known: {known})",
                pipeline=sample.pipeline,
                known=_known(PIPELINES),
            )
        )
    return problems


def _check_image_question(sample: ParsedSample, tax: TaxonomyView) -> list[str]:
    problems: list[str] = []
    if not sample.question.strip():
        problems.append(message("the question is empty"))
    if not any(media.role == "image" for media in sample.media):
        problems.append(message("the sample has no image"))
    problems.extend(_check_taxonomy(sample, tax))
    problems.extend(_check_answer(sample))
    return problems


def taxonomy_problems(sample: ParsedSample, tax: TaxonomyView) -> list[str]:
    """The problems of ``validate_sample`` that name a code the dataset's taxonomy lacks (or
    a category of another group)."""
    if is_trimodal(sample):
        return _check_safety_taxonomy(sample, tax)
    return _check_taxonomy(sample, tax)


def _check_taxonomy(sample: ParsedSample, tax: TaxonomyView) -> list[str]:
    problems: list[str] = []
    code, group = sample.category_code, sample.answerability_group
    if group and tax.groups and group not in tax.groups:
        problems.append(
            message(
                "unknown answerability group '{group}' (known: {known})",
                group=group,
                known=_known(tax.groups),
            )
        )
    if code and tax.categories:
        if code not in tax.categories:
            problems.append(
                message(
                    "unknown category code '{code}' (known: {known})",
                    code=code,
                    known=_known(tax.categories),
                )
            )
        elif group and tax.categories[code] and tax.categories[code] != group:
            problems.append(
                message(
                    "the category '{code}' belongs to the group '{expected}', "
                    "but the sample is in the group '{group}'",
                    code=code,
                    expected=tax.categories[code],
                    group=group,
                )
            )
    if sample.question_format and tax.formats and sample.question_format not in tax.formats:
        problems.append(
            message(
                "unknown question format '{format}' (known: {known})",
                format=sample.question_format,
                known=_known(tax.formats),
            )
        )
    if sample.scenario and tax.scenarios and sample.scenario not in tax.scenarios:
        problems.append(
            message(
                "unknown scenario '{scenario}' (known: {known})",
                scenario=sample.scenario,
                known=_known(tax.scenarios),
            )
        )
    return problems


def _check_answer(sample: ParsedSample) -> list[str]:
    answer = sample.reference_answer.strip()
    if not answer:
        return [message("the reference answer is empty")]
    refusal_allowed = sample.answerability_group == OOC_GROUP
    if refusal_allowed and is_refusal(answer):
        return []
    if sample.question_format == "yesno":
        if answer.lower().rstrip(".") not in {"yes", "no"}:
            return [message("the answer '{answer}' is not yes or no", answer=answer)]
        return []
    if sample.question_format != "mcq":
        return []
    letters = answer_letters(answer)
    if letters is None:
        return [message("the answer '{answer}' is not an option letter", answer=answer)]
    labels = [option.get("label", "") for option in sample.options]
    problems: list[str] = []
    if len(set(labels)) != len(labels):
        problems.append(message("the options have repeated labels"))
    # Without options in the text (they are drawn in the image), only the letter form is checked.
    if labels:
        problems.extend(
            message(
                "the answer '{answer}' is not one of the options {labels}",
                answer=letter,
                labels=", ".join(labels),
            )
            for letter in letters
            if letter not in labels
        )
    return problems


def _check_trimodal(sample: ParsedSample, tax: TaxonomyView) -> list[str]:
    problems: list[str] = []
    label = sample.safety_label
    if not label:
        problems.append(message("the safety label is missing (expected 'safe' or 'unsafe')"))
    elif label not in SAFETY_LABELS:
        problems.append(
            message("the safety label '{label}' is not 'safe' or 'unsafe'", label=label)
        )
    if not sample.speech_utterance.strip():
        problems.append(message("the speech utterance is empty"))
    problems.extend(_check_safety_taxonomy(sample, tax))
    return problems


def _check_safety_taxonomy(sample: ParsedSample, tax: TaxonomyView) -> list[str]:
    problems: list[str] = []
    category, subcategory = sample.safety_category, sample.safety_subcategory
    if category and tax.safety_categories:
        if category not in tax.safety_categories:
            problems.append(
                message(
                    "unknown safety category '{category}' (known: {known})",
                    category=category,
                    known=_known(tax.safety_categories),
                )
            )
        elif (
            subcategory
            and tax.safety_categories[category]
            and subcategory not in tax.safety_categories[category]
        ):
            problems.append(
                message(
                    "unknown subcategory '{subcategory}' of '{category}' (known: {known})",
                    subcategory=subcategory,
                    category=category,
                    known=_known(tax.safety_categories[category]),
                )
            )
    return problems
