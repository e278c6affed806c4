"""Rule-based extraction of option letters, yes/no answers and refusals from model output.

These rules run before any LLM judge: they are cheap, deterministic and explainable, and the
LLM is only needed where they find nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

DEFAULT_LETTERS = "ABCDE"

# Markers after which the model's own turn begins. Some runners return the whole prompt
# (system text, few-shot examples with their own "answer: C") followed by the reply, so only
# the text after the last marker is the answer.
_TURN_MARKERS = re.compile(
    r"(?:ASSISTANT:|<\|im_start\|>\s*assistant|<\|assistant\|>|\[/INST\]|### Assistant:"
    r"|<start_of_turn>model|<\|start_header_id\|>assistant<\|end_header_id\|>)",
    re.IGNORECASE,
)
_END_TOKENS = re.compile(r"(?:<\|im_end\|>|</s>|<\|eot_id\|>|<end_of_turn>|<\|endoftext\|>)")
_INVISIBLE = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff]")

# "(A) True (B)False", "(A) A, (B) B", "A) 4 B) 123".
_OPTION_MARK = re.compile(r"(?:^|(?<=\s)|(?<=[.?:,]))\(?([A-H])\)\s*")

ENGLISH_REFUSAL_PATTERNS: tuple[str, ...] = (
    r"\bi\s+(?:cannot|can\s*not|can'?t|can’t|am\s+unable|am\s+not\s+able|'m\s+unable)\b",
    r"\bi(?:'m|’m|\s+am)\s+sorry\b",
    r"\bsorry,?\s+but\b",
    r"\bi\s+apologi[sz]e\b",
    r"\bunable\s+to\s+(?:determine|tell|answer|see|view|identify|provide|say|know|confirm)",
    r"\b(?:not\s+|im)possible\s+to\s+(?:tell|determine|say|know|answer|confirm)",
    r"\binsufficient\s+(?:information|data|evidence|context)\b",
    r"\bnot\s+enough\s+(?:information|data|evidence|context)\b",
    r"\b(?:insufficient|not\s+sufficient)\s+to\s+(?:answer|determine|tell)",
    r"\b(?:cannot|can\s*not|can'?t|can’t)\s+be\s+(?:determined|answered|known|inferred|told)",
    r"\b(?:cannot|can\s*not|can'?t|can’t)\s+(?:determine|tell|answer|say|see|know)\b",
    r"\bthere\s+is\s+no\s+way\s+to\b",
    r"\bunanswerable\b",
    r"\bi\s+do(?:n'?t|n’t|\s+not)\s+know\b",
    r"\bnot\s+(?:clear|visible|shown|provided)\s+(?:from|in)\s+the\s+(?:image|picture|photo)",
)
CHINESE_REFUSAL_PATTERNS: tuple[str, ...] = (
    "无法确定",
    "信息不足",
    "无法",
    "不能",
    "抱歉",
    "对不起",
    "不确定",
    "无从",
    "没有足够",
    "看不出",
    "难以判断",
)
# Reference answers in MMOOC that mark a sample as unanswerable.
REFUSAL_REFERENCES: frozenset[str] = frozenset(
    {
        "i can't answer",
        "i cannot answer",
        "i can’t answer",
        "none of the above",
        "n/a",
        "na",
        "unanswerable",
        "cannot be determined",
        "cannot determine",
        "not answerable",
        "insufficient information",
        "unknown",
        "无法回答",
        "无法确定",
    }
)

_REFUSAL_RE = re.compile("|".join(ENGLISH_REFUSAL_PATTERNS), re.IGNORECASE)
_ZH_REFUSAL_RE = re.compile("|".join(CHINESE_REFUSAL_PATTERNS))


@dataclass(frozen=True)
class Extraction:
    """Letters chosen by a response; `refused` only when no letter was found."""

    letters: tuple[str, ...]
    refused: bool
    method: str

    @property
    def letter(self) -> str | None:
        """The single chosen letter, or None when none or several were chosen."""
        return self.letters[0] if len(self.letters) == 1 else None


@dataclass(frozen=True)
class YesNo:
    """A yes/no verdict read from a response; `value` is None when neither was found."""

    value: bool | None
    refused: bool
    method: str


def clean_response(text: str | None) -> str:
    """Return the model's own reply: after the last chat-template marker, without end tokens."""
    if not text:
        return ""
    text = _INVISIBLE.sub("", text)
    parts = _TURN_MARKERS.split(text)
    reply = parts[-1]
    return _END_TOKENS.sub("", reply).strip()


def parse_options(question: str) -> dict[str, str]:
    """Read "(A) foo (B) bar" style options out of a question text, in order."""
    marks = list(_OPTION_MARK.finditer(question))
    options: dict[str, str] = {}
    expected = "A"
    chosen: list[re.Match[str]] = []
    # Options must run A, B, C… in order; a stray "(C)" in the prose must not start a list.
    for mark in marks:
        if mark.group(1) == expected:
            chosen.append(mark)
            expected = chr(ord(expected) + 1)
    for index, mark in enumerate(chosen):
        end = chosen[index + 1].start() if index + 1 < len(chosen) else len(question)
        options[mark.group(1)] = question[mark.end() : end].strip(" ,;\n\t")
    return options if len(options) >= 2 else {}


def is_refusal(text: str | None) -> bool:
    """True for an empty reply or one matching an English or Chinese refusal pattern."""
    reply = clean_response(text)
    if not reply:
        return True
    return bool(_REFUSAL_RE.search(reply) or _ZH_REFUSAL_RE.search(reply))


def is_refusal_reference(answer: str | None) -> bool:
    """True when a reference answer is itself a refusal string (an unanswerable sample)."""
    if answer is None:
        return True
    normalised = answer.strip().strip(".!").lower()
    return normalised in REFUSAL_REFERENCES or (bool(normalised) and is_refusal(normalised))


def normalise_text(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse spaces: for loose text matching."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text.lower())
    text = re.sub(r"[^\w\s.]|(?<!\d)\.|\.(?!\d)", " ", text)
    words = [w for w in text.split() if w not in {"a", "an", "the"}]
    return " ".join(words)


def _strip_echo(reply: str, question: str | None) -> str:
    """Drop an echoed copy of the question so its option list is not read as the answer."""
    if not question:
        return reply
    tokens = re.findall(r"\w+", question.lower())
    if len(tokens) < 4:
        return reply
    pattern = r"\W*".join(re.escape(token) for token in tokens)
    match = re.search(pattern, reply, re.IGNORECASE)
    return reply[match.end() :].strip(" \t\n.,;:") if match else reply


def _letter_class(letters: str) -> str:
    return "[" + letters + letters.lower() + "]"


def _dedupe(found: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(letter.upper() for letter in found))


def _match_bare(reply: str, letters: str) -> tuple[str, ...]:
    cls = _letter_class(letters)
    one = rf"\(?\s*({cls})\s*\)?"
    joiner = r"\s*(?:,|and|&|/|、|和|\s)\s*"
    full = re.fullmatch(rf"(?:option\s+)?{one}(?:{joiner}{one})*\s*[.:)\]]?", reply, re.I)
    if not full:
        return ()
    found = _dedupe(re.findall(cls, re.sub(r"(?i)option|and", " ", reply)))
    return () if _lists_options(reply) else found


def _lists_options(reply: str) -> bool:
    """True when the reply repeats three or more option markers: "(A) … (B) … (C) …"."""
    return len(set(re.findall(r"\(\s*([A-Ha-h])\s*\)", reply))) >= 3


def _match_leading(reply: str, letters: str) -> tuple[str, ...]:
    # Upper case only unless bracketed: a leading lowercase "a" is usually an article.
    upper = "[" + letters + "]"
    both = _letter_class(letters)
    if _lists_options(reply):
        return ()
    match = re.match(rf"\(\s*({both})\s*[)\]]|({upper})(?:[).:\]]|\s|$)|({both})[).\]]", reply)
    if not match:
        return ()
    if match.group(2) == "A" and re.match(r"A\s+[a-z]", reply):
        # "A cube can be made…": the article, not option A.
        return ()
    return _dedupe([next(group for group in match.groups() if group)])


_PHRASES = (
    r"(?:correct|final|right|best)?\s*(?:answer|option|choice)s?\s*(?:is|are|would\s+be|"
    r"should\s+be|will\s+be|:|：|-)\s*(?:option\s+|choice\s+)?[:：]?\s*\(?\s*"
)


def _match_phrase(reply: str, letters: str) -> tuple[str, ...]:
    cls = _letter_class(letters)
    found: list[str] = []
    pattern = rf"{_PHRASES}({cls})(?![\w'’])(?:\s*[)\]]?\s*(?:,|and|&)\s*\(?({cls})(?![\w'’]))*"
    matches = list(re.finditer(pattern, reply, re.IGNORECASE))
    if matches:
        # The last statement wins: models often restate or correct themselves.
        last = matches[-1]
        found = [group for group in last.groups() if group]
        extra = re.findall(
            rf"(?:,|and|&)\s*\(?({cls})(?![\w'’])", reply[last.start(1) : last.end()]
        )
        found.extend(extra)
    zh = re.findall(rf"(?:答案|选项|选择|应选|选)\s*(?:是|为|：|:)?\s*[（(]?\s*({cls})", reply)
    if zh and not found:
        found = [zh[-1]]
    return _dedupe(found)


def _match_named(reply: str, letters: str) -> tuple[str, ...]:
    # "set B", "figure C": upper case only, since "figure a" is usually prose.
    upper = "[" + letters + "]"
    found = _dedupe(
        re.findall(
            rf"\b(?:option|choice|figure|set|shape|letter|box|image)\s+\(?({upper})\b", reply
        )
    )
    return found if len(found) == 1 else ()


def _refuses_beyond_options(reply: str, options: Mapping[str, str]) -> bool:
    """Refusal patterns outside the option texts: "(C) Insufficient information" is a choice."""
    residual = reply
    for text in options.values():
        if text.strip():
            residual = re.sub(re.escape(text.strip()), " ", residual, flags=re.IGNORECASE)
    residual = residual.strip()
    return bool(residual) and is_refusal(residual)


def _match_parenthesised(reply: str, letters: str) -> tuple[str, ...]:
    cls = _letter_class(letters)
    found = _dedupe(re.findall(rf"\(\s*({cls})\s*[)\]]", reply))
    # Several distinct letters usually means the reply lists the options back.
    return found if len(found) == 1 else ()


def _match_option_text(reply: str, options: Mapping[str, str]) -> tuple[str, ...]:
    norm_reply = normalise_text(reply)
    if not norm_reply:
        return ()
    norm_options = {letter: normalise_text(text) for letter, text in options.items()}
    exact = [letter for letter, text in norm_options.items() if text and text == norm_reply]
    if len(exact) == 1:
        return (exact[0],)
    contained = [
        letter
        for letter, text in norm_options.items()
        if len(text) >= 3 and re.search(rf"(?<![\w.]){re.escape(text)}(?![\w]|\.\d)", norm_reply)
    ]
    if len(contained) > 1:
        # "insufficient information" must beat a bare "information" option it contains.
        longest = max(contained, key=lambda letter: len(norm_options[letter]))
        others = [c for c in contained if c != longest]
        if all(norm_options[c] in norm_options[longest] for c in others):
            contained = [longest]
    return (contained[0],) if len(contained) == 1 else ()


def _match_truth_word(reply: str, options: Mapping[str, str]) -> tuple[str, ...]:
    """Map a bare yes/no onto True/False options (the common LogicVista format)."""
    answer = extract_yes_no(reply)
    if answer.value is None or answer.method not in {"bare", "leading", "phrase"}:
        return ()
    wanted = "true" if answer.value else "false"
    hits = [letter for letter, text in options.items() if normalise_text(text) == wanted]
    return (hits[0],) if len(hits) == 1 else ()


def extract_choice(
    response: str | None,
    *,
    options: Mapping[str, str] | None = None,
    question: str | None = None,
    letters: str | None = None,
) -> Extraction:
    """Extract the option letter(s) a response chose.

    `options` maps letters to option texts; when absent they are read from `question`.
    Only letters that exist as options (or `letters`, default A-E) are accepted.
    """
    if options is None and question:
        options = parse_options(question)
    options = options or {}
    valid = letters or ("".join(sorted(options)) if options else DEFAULT_LETTERS)
    cleaned = clean_response(response)
    if not cleaned:
        return Extraction((), True, "empty")
    reply = _strip_echo(cleaned, question)
    if not reply:
        # Echoing the question back is a failure to answer, not a refusal.
        return Extraction((), False, "echo_only")
    steps: tuple[tuple[str, Callable[[], tuple[str, ...]]], ...] = (
        ("bare", lambda: _match_bare(reply, valid)),
        ("leading", lambda: _match_leading(reply, valid)),
        ("phrase", lambda: _match_phrase(reply, valid)),
        ("option_text", lambda: _match_option_text(reply, options) if options else ()),
        ("parenthesised", lambda: _match_parenthesised(reply, valid)),
        ("named", lambda: _match_named(reply, valid)),
        ("truth_word", lambda: _match_truth_word(reply, options) if options else ()),
    )
    for method, step in steps:
        found = step()
        if found:
            return Extraction(found, False, method)
    if _refuses_beyond_options(reply, options):
        return Extraction((), True, "refusal_pattern")
    return Extraction((), False, "none")


_YES_WORDS = r"yes|yeah|yep|true|correct|right"
_NO_WORDS = r"no|nope|false|incorrect|wrong"


def extract_yes_no(response: str | None) -> YesNo:
    """Extract a yes/no answer (English or Chinese 是/否/对/不对) from a response."""
    reply = clean_response(response)
    if not reply:
        return YesNo(None, True, "empty")
    lowered = reply.lower().strip()
    bare = re.fullmatch(rf"\W*({_YES_WORDS}|{_NO_WORDS})\W*", lowered)
    if bare:
        return YesNo(bool(re.fullmatch(_YES_WORDS, bare.group(1))), False, "bare")
    leading = re.match(rf"\W*({_YES_WORDS}|{_NO_WORDS})\b", lowered)
    if leading and leading.group(1) not in {"right", "correct", "wrong"}:
        return YesNo(bool(re.fullmatch(_YES_WORDS, leading.group(1))), False, "leading")
    phrase = re.findall(rf"answer\s*(?:is|:)\s*[\"'“]?({_YES_WORDS}|{_NO_WORDS})\b", lowered)
    if phrase:
        return YesNo(bool(re.fullmatch(_YES_WORDS, phrase[-1])), False, "phrase")
    # Negated forms first: "不是" and "不对" contain "是" and "对".
    zh = re.match(r"\W*(不是|不对|不正确|错误|否|是的|是|对的|对|正确)", reply)
    if zh:
        return YesNo(zh.group(1) in {"是的", "是", "对的", "对", "正确"}, False, "chinese")
    zh_phrase = re.findall(r"答案\s*(?:是|为|：|:)\s*(不是|不对|否|是|对)", reply)
    if zh_phrase:
        return YesNo(zh_phrase[-1] in {"是", "对"}, False, "chinese")
    if is_refusal(reply):
        return YesNo(None, True, "refusal_pattern")
    return YesNo(None, False, "none")
