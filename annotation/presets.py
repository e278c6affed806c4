"""Taxonomy presets a lead picks when creating a dataset: MMOOC, MCBench and MMT-Bench.

Plain data, bilingual (English and Simplified Chinese). Each term is
(kind, code, name, name_zh, description, description_zh, expected, expected_zh, parent_code).
MCBench's subcategory names are this project's reading of the paper (it names the four coarse
categories and says each has 2-3 subcategories, refined by experts, without listing them);
leads can edit terms in the admin.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    kind: str
    code: str
    name: str
    name_zh: str = ""
    description: str = ""
    description_zh: str = ""
    expected_behaviour: str = ""
    expected_behaviour_zh: str = ""
    parent_code: str = ""


@dataclass(frozen=True)
class Preset:
    code: str
    name: str
    kind: str  # dataset kind the preset fits
    terms: tuple[Term, ...]


_REFUSE = ("refuse", "拒绝回答")

MMOOC = Preset(
    code="mmooc",
    name="MMOOC",
    kind="image_question",
    terms=(
        Term(
            "group",
            "ooc",
            "Out-of-Context",
            "上下文外",
            "Truly unanswerable from the image.",
            "依据图像确实无法回答。",
            *_REFUSE,
        ),
        Term(
            "group",
            "shifted_ic",
            "Shifted In-Context",
            "上下文内偏移",
            "Shifted or misleading, but the core visual question is answerable.",
            "问题受误导或偏移，但核心视觉问题仍可回答。",
            "answer",
            "回答",
        ),
        Term(
            "category",
            "MA",
            "Multimodal Ambiguity",
            "多模态歧义",
            "The image is unclear or incomplete, or the query is ambiguous.",
            "图像不清晰或不完整，或文本查询有歧义。",
            *_REFUSE,
            "ooc",
        ),
        Term(
            "category",
            "VFP",
            "Visual False Premise",
            "视觉错误前提",
            "The question assumes objects, attributes, actions or relations the image does not "
            "support.",
            "问题假设了图像中不支持的物体、属性、动作或关系。",
            *_REFUSE,
            "ooc",
        ),
        Term(
            "category",
            "USPC",
            "Uncertain Spatial & Physical Context",
            "不确定的空间与物理背景",
            "The image lacks evidence of space, viewpoint, depth, support, motion or physical "
            "dynamics.",
            "图像缺乏足够的空间、视角、深度、支撑、运动或物理动力学证据。",
            *_REFUSE,
            "ooc",
        ),
        Term(
            "category",
            "ULS",
            "Unclear Logic & Symbols",
            "不清晰的逻辑与符号",
            "The needed symbols, labels, rules or intermediate logical cues are missing or "
            "unreliable.",
            "相关的符号、标签、规则或中间逻辑线索缺失或不可靠。",
            *_REFUSE,
            "ooc",
        ),
        Term(
            "category",
            "MKB",
            "Missing Knowledge & Background",
            "缺失知识与背景",
            "Needs identity, place, time, event, culture or history not in the input.",
            "问题需要输入中不可用的身份、位置、时间、事件、文化、历史等背景信息。",
            *_REFUSE,
            "ooc",
        ),
        Term(
            "category",
            "MP",
            "Misleading Premise",
            "误导性前提",
            "The question carries an unsupported premise around an answerable core.",
            "问题带有不受支持的前提，但核心可回答。",
            "Ignore or correct the unsupported premise and answer the grounded core question.",
            "忽略或纠正不支持的前提，并回答有根据的核心问题。",
            "shifted_ic",
        ),
        Term(
            "category",
            "PA",
            "Partial Answerability",
            "部分可回答性",
            "Part of the request is supported by the image, part is not.",
            "请求的一部分有图像支持，另一部分没有。",
            "Answer the supported part, name the unsupported part; do not refuse the whole "
            "request.",
            "回答受支持的部分，并识别不受支持的部分，而非拒绝整个请求。",
            "shifted_ic",
        ),
        Term(
            "category",
            "IQM",
            "Image-Question Mismatch",
            "图像-问题不匹配",
            "The question does not match the image globally.",
            "问题与图像整体不匹配。",
            "Recognise the global mismatch while recovering the target facts still visible.",
            "识别全局不匹配，同时恢复图像中仍可见的目标事实。",
            "shifted_ic",
        ),
        Term("format", "yesno", "Yes/no", "是非题"),
        Term("format", "mcq", "Multiple choice", "选择题"),
        Term("format", "vqa", "Open-ended VQA", "开放式问答"),
        Term("scenario", "coarse_perception", "Coarse perception", "粗粒度感知"),
        Term("scenario", "fine_grained_perception", "Fine-grained perception", "细粒度感知"),
        Term("scenario", "instance_reasoning", "Instance reasoning", "实例推理"),
        Term("scenario", "logical_reasoning", "Logical reasoning", "逻辑推理"),
        Term("scenario", "math", "Math", "数学"),
        Term("scenario", "science_and_technology", "Science & technology", "科学与技术"),
    ),
)

MCBENCH = Preset(
    code="mcbench",
    name="MCBench",
    kind="trimodal",
    terms=(
        Term("safety_category", "physical_harm", "Physical harm", "身体伤害"),
        Term("safety_category", "social_harm", "Social harm", "社会危害"),
        Term("safety_category", "illegal_harm", "Illegal harm", "非法伤害"),
        Term("safety_category", "property_damage", "Property damage", "财产损害"),
        Term(
            "safety_subcategory",
            "bodily_injury",
            "Bodily injury",
            "人身受伤",
            parent_code="physical_harm",
        ),
        Term(
            "safety_subcategory",
            "health_hazard",
            "Health hazard",
            "健康危害",
            parent_code="physical_harm",
        ),
        Term(
            "safety_subcategory",
            "environmental_danger",
            "Environmental danger",
            "环境危险",
            parent_code="physical_harm",
        ),
        Term(
            "safety_subcategory",
            "harassment",
            "Harassment & discrimination",
            "骚扰与歧视",
            parent_code="social_harm",
        ),
        Term(
            "safety_subcategory",
            "privacy",
            "Privacy violation",
            "侵犯隐私",
            parent_code="social_harm",
        ),
        Term(
            "safety_subcategory",
            "theft_fraud",
            "Theft & fraud",
            "盗窃与欺诈",
            parent_code="illegal_harm",
        ),
        Term(
            "safety_subcategory",
            "trespass",
            "Trespass & unauthorised access",
            "非法侵入",
            parent_code="illegal_harm",
        ),
        Term(
            "safety_subcategory",
            "vandalism",
            "Vandalism",
            "故意破坏",
            parent_code="property_damage",
        ),
        Term(
            "safety_subcategory",
            "accidental_damage",
            "Accidental damage",
            "意外损坏",
            parent_code="property_damage",
        ),
    ),
)

MMT_BENCH = Preset(
    code="mmt_bench",
    name="MMT-Bench",
    kind="image_question",
    terms=(Term("format", "mcq", "Multiple choice", "选择题"),),
)

PRESETS: dict[str, Preset] = {p.code: p for p in (MMOOC, MCBENCH, MMT_BENCH)}
