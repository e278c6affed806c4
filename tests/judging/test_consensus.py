"""Tests for judging.consensus: when all judges agree with a sample's answerability."""

from __future__ import annotations

from judging.consensus import (
    ABSTAIN,
    ANSWERABLE,
    UNANSWERABLE,
    Vote,
    consensus,
    judge_label,
    sample_answerability,
)


def test_all_judges_agreeing_with_the_sample_is_consensus() -> None:
    """Three judges voting like the sample's own label agree; the votes are summarised."""
    votes = [Vote(j, UNANSWERABLE, "VFP") for j in ("gpt-4o", "o1", "o3")]
    result = consensus(UNANSWERABLE, votes, ["gpt-4o", "o1", "o3"])
    assert result.agree
    assert result.votes[0] == {"judge": "gpt-4o", "label": UNANSWERABLE, "category": "VFP"}


def test_one_dissenting_or_missing_judge_breaks_consensus() -> None:
    """A single different label, or a judge with no vote (an error), flags the sample."""
    judges = ["a", "b", "c"]
    dissent = [Vote("a", ANSWERABLE), Vote("b", ANSWERABLE), Vote("c", UNANSWERABLE)]
    assert not consensus(ANSWERABLE, dissent, judges).agree
    missing = [Vote("a", ANSWERABLE), Vote("b", ANSWERABLE), Vote("c", None)]
    result = consensus(ANSWERABLE, missing, judges)
    assert not result.agree
    assert result.votes[2]["label"] is None


def test_repeated_votes_count_by_strict_majority() -> None:
    """Two of three repeats decide a judge's label; a tie gives no clear vote."""
    assert judge_label([Vote("a", ANSWERABLE), Vote("a", UNANSWERABLE), Vote("a", ANSWERABLE)])[
        0
    ] == (ANSWERABLE)
    assert judge_label([Vote("a", ANSWERABLE), Vote("a", UNANSWERABLE)]) == (None, None)


def test_a_samples_label_comes_from_its_group_or_refusal_reference() -> None:
    """Out-of-context means unanswerable; a refusal reference decides only (inferred) when the
    sample has no group of its own."""
    assert sample_answerability("ooc", "B").label == UNANSWERABLE
    assert sample_answerability("", "i can't answer").label == UNANSWERABLE
    assert sample_answerability("", "i can't answer").inferred
    assert sample_answerability("shifted_ic", "B").label == ANSWERABLE
    assert sample_answerability("shifted_ic", "I don't know how to swim").label == ANSWERABLE
    assert not sample_answerability("shifted_ic", "I don't know how to swim").inferred


def test_an_abstention_is_neither_a_vote_nor_agreement() -> None:
    """An abstaining judge is left out: the others decide; with every judge abstaining the
    sample is undecided (neither agreed nor flagged), and an error still flags it."""
    judges = ["rule", "llm"]
    with_llm = consensus(ANSWERABLE, [Vote("rule", ABSTAIN), Vote("llm", ANSWERABLE)], judges)
    assert with_llm.agree and not with_llm.disagree
    assert with_llm.votes[0] == {"judge": "rule", "label": ABSTAIN, "category": None}
    dissent = consensus(ANSWERABLE, [Vote("rule", ABSTAIN), Vote("llm", UNANSWERABLE)], judges)
    assert dissent.disagree and not dissent.agree
    alone = consensus(UNANSWERABLE, [Vote("rule", ABSTAIN)], ["rule"])
    assert alone.undecided and not alone.agree and not alone.disagree
    errored = consensus(ANSWERABLE, [Vote("rule", ABSTAIN), Vote("llm", None)], judges)
    assert errored.disagree


def test_a_judges_abstaining_repeats_do_not_outvote_its_real_votes() -> None:
    """Over repeats, abstentions are not counted: one real vote among abstentions decides."""
    assert judge_label([Vote("a", ABSTAIN), Vote("a", ABSTAIN)]) == (ABSTAIN, None)
    assert judge_label([Vote("a", ABSTAIN), Vote("a", ABSTAIN), Vote("a", ANSWERABLE)])[0] == (
        ANSWERABLE
    )
