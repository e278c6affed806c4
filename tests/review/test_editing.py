"""What a reviewer may change and the checks of their values (review.editing)."""

from __future__ import annotations

from review import editing

TAXONOMY = editing.Taxonomy(
    groups={"ooc", "shifted_ic"},
    categories={"VFP": "ooc", "MP": "shifted_ic"},
    scenarios={"math"},
)


def test_check_values_names_each_taxonomy_problem() -> None:
    """Unknown codes and a category outside its group are reported per edited field."""
    problems = editing.check_values(
        "image_question",
        {"category_code": "MP", "scenario": "nope"},
        current={"answerability_group": "ooc", "category_code": "VFP", "scenario": "math"},
        taxonomy=TAXONOMY,
    )
    assert [(p.field, p.code) for p in problems] == [
        ("category_code", "category_not_in_group"),
        ("scenario", "unknown_scenario"),
    ]
    assert (
        editing.check_values(
            "image_question",
            {"answerability_group": "ooc", "category_code": "VFP"},
            current={},
            taxonomy=TAXONOMY,
        )
        == []
    )


def test_a_value_outside_the_taxonomy_that_nobody_edited_is_not_a_problem() -> None:
    """Only edits are checked: a stored category that is not a term stays acceptable while
    the reviewer corrects another field; editing the group checks the category it keeps."""
    current = {"answerability_group": "ooc", "category_code": "legacy", "scenario": "odd"}
    assert (
        editing.check_values(
            "image_question", {"explanation": "fixed"}, current=current, taxonomy=TAXONOMY
        )
        == []
    )
    mismatch = editing.check_values(
        "image_question",
        {"answerability_group": "shifted_ic"},
        current={**current, "category_code": "VFP"},
        taxonomy=TAXONOMY,
    )
    assert [p.code for p in mismatch] == ["category_not_in_group"]


def test_a_dataset_without_terms_takes_any_text() -> None:
    """With no terms for a field, any value is accepted (free text)."""
    problems = editing.check_values(
        "image_question",
        {"category_code": "inductive", "scenario": "spatial", "answerability_group": "x"},
        current={},
        taxonomy=editing.Taxonomy(),
    )
    assert problems == []


def test_check_values_of_trimodal_labels_and_predicates() -> None:
    """A tri-modal label is safe or unsafe; an unsafe scenario cannot lose all its
    conditions; safety categories and subcategories follow the taxonomy."""
    taxonomy = editing.Taxonomy(safety_categories={"physical_harm": {"fire"}, "social": set()})
    unsafe = {"safety_label": "unsafe", "predicate": ["a"], "safety_category": "physical_harm"}
    problems = editing.check_values(
        "trimodal", {"safety_label": "maybe"}, current=unsafe, taxonomy=taxonomy
    )
    assert [p.code for p in problems] == ["unknown_safety_label"]
    problems = editing.check_values(
        "trimodal", {"predicate": []}, current=unsafe, taxonomy=taxonomy
    )
    assert [p.code for p in problems] == ["empty_predicate"]
    problems = editing.check_values(
        "trimodal",
        {"safety_category": "nope", "safety_subcategory": "fire"},
        current=unsafe,
        taxonomy=taxonomy,
    )
    assert [p.code for p in problems] == ["unknown_safety_category"]
    problems = editing.check_values(
        "trimodal", {"safety_subcategory": "theft"}, current=unsafe, taxonomy=taxonomy
    )
    assert [p.code for p in problems] == ["unknown_safety_subcategory"]


def test_changing_the_label_of_a_scenario_without_a_predicate_needs_no_predicate() -> None:
    """A safe scenario with no conditions may become unsafe (or stay without conditions)."""
    current = {"safety_label": "safe", "predicate": []}
    for proposed in ({"safety_label": "unsafe"}, {"safety_label": "unsafe", "predicate": []}):
        changes = editing.edits("trimodal", current, proposed)
        assert changes == {"safety_label": "unsafe"}
        assert (
            editing.check_values("trimodal", changes, current=current, taxonomy=editing.Taxonomy())
            == []
        )


def test_edits_are_the_fields_that_differ_from_the_sample() -> None:
    """A field sent as the sample holds it (spaces aside) is no edit; a changed one is."""
    current = {"category_code": "deductive", "scenario": "", "explanation": "why "}
    proposed = {"category_code": "deductive", "scenario": "", "explanation": "why"}
    assert editing.edits("image_question", current, proposed) == {}
    assert editing.edits("image_question", current, {"scenario": "x"}) == {"scenario": "x"}
    assert editing.edits("trimodal", {"predicate": ["a"]}, {"predicate": [" a", ""]}) == {}


def test_normalise_values_keeps_only_reviewable_fields_and_cleans_conditions() -> None:
    """Other fields are dropped, text is stripped, empty conditions disappear."""
    clean = editing.normalise_values(
        "trimodal", {"predicate": [" a ", "", "b"], "question": "x", "safety_label": " safe "}
    )
    assert clean == {"predicate": ["a", "b"], "safety_label": "safe"}
