"""Tests for judging.extraction: letters, yes/no and refusals from messy model output."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from judging.extraction import (
    clean_response,
    extract_choice,
    extract_yes_no,
    is_refusal,
    is_refusal_reference,
    parse_options,
)

TRUE_FALSE = (
    "Two bars cost £1.50. Select from A, B and C. (A) True (B)False (C)Insufficient Information"
)
FIVE = (
    "How much? Select from A, B, C, D and E. "
    "(A) 70,000 (B) 100,000 (C) 160,000 (D) 190,000 (E) 220,000"
)

LOGICVISTA = Path("/work/shared/data/logicvista")


@pytest.mark.parametrize(
    ("response", "letters", "method"),
    [
        ("B", ("B",), "bare"),
        (" b ", ("B",), "bare"),
        ("(B)", ("B",), "bare"),
        ("B.", ("B",), "bare"),
        ("A, C", ("A", "C"), "bare"),
        ("A and C", ("A", "C"), "bare"),
        ("A A", ("A",), "bare"),
        ("B) False", ("B",), "leading"),
        ("(B) False", ("B",), "leading"),
        ("C Insufficient Information", ("C",), "leading"),
        ("Answer: B", ("B",), "phrase"),
        ("the answer is b.", ("B",), "phrase"),
        ("The answer is (B] False.", ("B",), "phrase"),
        ("Let me think. The correct answer is (A) True because it adds up.", ("A",), "phrase"),
        ("The answers are B and C.", ("B", "C"), "phrase"),
        ("答案是B", ("B",), "phrase"),
        ("经过分析，答案：C", ("C",), "phrase"),
        ("False.", ("B",), "option_text"),
        ("The statement is false.", ("B",), "option_text"),
        ("insufficient information", ("C",), "option_text"),
        ("yes", ("A",), "truth_word"),
    ],
)
def test_extract_choice_reads_common_answer_shapes(
    response: str, letters: tuple[str, ...], method: str
) -> None:
    """Bare, bracketed, phrased, Chinese, lowercase and option-text answers yield the letter."""
    result = extract_choice(response, question=TRUE_FALSE)
    assert result.letters == letters
    assert result.method == method
    assert result.refused is False


def test_chat_template_before_the_letter_is_ignored() -> None:
    """Only the text after the last assistant marker counts, not few-shot "answer: C" lines."""
    response = (
        "A chat between a curious human and an AI. USER: question: what is 1 + 9? "
        "A) 4 B) 123 C) 10 D) 3\nanswer: C\n\nquestion: " + TRUE_FALSE + "\nanswer:  ASSISTANT: A"
    )
    assert extract_choice(response, question=TRUE_FALSE).letters == ("A",)
    im_start = "<|im_start|> system\nAnswer.<|im_start|> user\nanswer: C<|im_start|> assistant\nB"
    assert extract_choice(im_start, question=TRUE_FALSE).letters == ("B",)
    assert clean_response("[INST] pick one [/INST] D</s>") == "D"


def test_leading_article_a_is_not_option_a() -> None:
    """ "A cube can be made…" starts with the article, not with option A."""
    question = "Which 3D shape can be made from the net?"
    assert extract_choice("A cube can be made from the net.", question=question).letters == ()
    assert extract_choice("A (the cube)", question=question).letters == ("A",)


def test_numeric_option_text_is_matched_with_thousands_separators() -> None:
    """A reply that repeats an option's text, with or without commas, picks that option."""
    assert extract_choice("190,000", question=FIVE).letters == ("D",)
    assert extract_choice("It is 190000.", question=FIVE).letters == ("D",)


def test_letters_outside_the_options_are_rejected() -> None:
    """A letter that is not one of the options ("E" when only A-D exist) is not an answer."""
    question = "Pick. Select from A, B, C and D. (A) 1 (B) 2 (C) 3 (D) 4"
    result = extract_choice("E", question=question)
    assert result.letters == ()
    assert result.method == "none"


def test_listing_all_options_is_not_an_answer_nor_a_refusal() -> None:
    """Echoing the option list (which contains "Insufficient Information") is neither."""
    result = extract_choice("1. True\n\n2. False\n3. Insufficient information", question=TRUE_FALSE)
    assert result.letters == ()
    assert result.refused is False
    listed = extract_choice(
        "(A) True, (B) False, (C) Insufficient Information", question=TRUE_FALSE
    )
    assert listed.letters == ()
    assert extract_choice("(A) (B) (C) (D) (E)", question=FIVE).letters == ()


def test_echoed_question_is_stripped_before_extraction() -> None:
    """A model that echoes the question (with its "( a ) true" list) is judged on the rest."""
    echoed = (
        "based on the image, two bars cost £1. 50. select from a, b and c. ( a ) true ( b ) false "
        "( c ) insufficient information. answer : no"
    )
    assert extract_choice(echoed, question=TRUE_FALSE).letters == ("B",)


@pytest.mark.parametrize(
    "response",
    [
        "I'm sorry, but I cannot see the image you provided.",
        "It is not possible to tell from the picture.",
        "The answer cannot be determined from the information given.",
        "I can't answer that.",
        "抱歉，我无法确定图中的内容。",
        "信息不足，无法回答。",
        "",
        "   \u200b  ",
    ],
)
def test_refusals_without_a_letter_are_refusals(response: str) -> None:
    """English and Chinese refusal patterns, and empty output, count as refusing."""
    result = extract_choice(response, question=TRUE_FALSE)
    assert result.letters == ()
    assert result.refused is True
    assert is_refusal(response)


def test_a_letter_wins_over_refusal_wording() -> None:
    """A reply that picks "(C) Insufficient Information" chose C; it did not refuse."""
    result = extract_choice("The answer is (C) Insufficient Information.", question=TRUE_FALSE)
    assert result.letters == ("C",)
    assert result.refused is False


def test_ordinary_answers_are_not_refusals() -> None:
    """Plain answers do not match the refusal patterns."""
    assert not is_refusal("The bar costs £1.50, so the statement is true.")
    assert not is_refusal("图中有两只猫。")


@pytest.mark.parametrize(
    ("response", "value"),
    [
        ("Yes", True),
        ("no.", False),
        ("Yes, the cat is on the mat.", True),
        ("No, there is no cat.", False),
        ("After looking closely, the answer is yes.", True),
        ("是", True),
        ("是的，图中有猫。", True),
        ("不是", False),
        ("否", False),
        ("对", True),
        ("不对，图中没有猫。", False),
        ("答案是否", False),
    ],
)
def test_extract_yes_no(response: str, value: bool) -> None:
    """English and Chinese yes/no answers, bare or phrased, are read; negations first."""
    result = extract_yes_no(response)
    assert result.value is value
    assert result.refused is False


def test_yes_no_refusal_and_nothing() -> None:
    """A refusal is flagged as such; prose without yes/no gives no value and no refusal."""
    assert extract_yes_no("I cannot tell from this image.").refused is True
    assert extract_yes_no("").refused is True
    nothing = extract_yes_no("The picture shows a kitchen.")
    assert (nothing.value, nothing.refused) == (None, False)


def test_parse_options_reads_ordered_lists_only() -> None:
    """Options must run A, B, C in order; a lone "(C)" in prose is not an option list."""
    assert parse_options(TRUE_FALSE) == {"A": "True", "B": "False", "C": "Insufficient Information"}
    assert parse_options("Look at (C) in the figure.") == {}


def test_refusal_references() -> None:
    """MMOOC refusal strings mark an unanswerable sample; real answers do not."""
    for reference in ("i can't answer", "None of the above", "n/a", "无法回答"):
        assert is_refusal_reference(reference)
    for reference in ("A", "yes", "a red car"):
        assert not is_refusal_reference(reference)


@pytest.mark.shared_data
def test_every_logicvista_answer_is_processed_and_most_yield_a_letter() -> None:
    """All 3,381 answers of 21 models are processed; most yield a letter.

    Measured: 2,047 of 3,381 (60.5%) yield a letter, 54 are refusals and 1,280 give nothing;
    the "nothing" ones are mostly models that never answer with a letter (matcha "<",
    deplot "T", VILT "yes"/"triangle" on figure questions). The thresholds sit a little
    below the measurement so that a regression in any strategy fails the test.
    """
    dataset = json.loads((LOGICVISTA / "dataset.json").read_text())
    totals: Counter[str] = Counter()
    per_model: dict[str, float] = {}
    for path in sorted((LOGICVISTA / "answers").glob("*-answers.json")):
        answers = json.loads(path.read_text())
        letters = 0
        for question_id, answer in answers.items():
            result = extract_choice(answer["answer"], question=dataset[question_id]["question"])
            totals["answers"] += 1
            letters += bool(result.letters)
            totals["letter" if result.letters else "refusal" if result.refused else "none"] += 1
        per_model[path.name.removesuffix("-answers.json")] = letters / len(answers)
    assert totals["answers"] == 3381
    assert totals["letter"] / totals["answers"] >= 0.58
    # Models that do answer with a letter, possibly wrapped in templates or prose.
    for model in ("GPT4", "LLAVA13B", "LLAVANEXT-13B-vicuna", "LLAVANEXT-34B-NH", "BLIP2"):
        assert per_model[model] >= 0.90, model
    for model in ("instructBLIP-flan-t5-xl", "instructBLIP-flan-t5-xxl", "otter9B", "LLAVA7B"):
        assert per_model[model] >= 0.80, model
