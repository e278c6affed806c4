"""The field lists of the sample readers and of the release writers, for the format reference.

Built from the readers' own constants where they have them (the tri-modal aliases, the
site's record fields, the label fields); a test holds every list to what its reader reads
(``tests/judging/formats/test_reference.py``). Pure: no Django.
"""

from __future__ import annotations

import dataclasses

from annotation.formats import trimodal
from annotation.formats.mmooc import IC_CODES, OOC_CODES, OPTION_COLUMNS, QUESTION_FORMATS
from annotation.formats.records import LABEL_FIELDS, ParsedSample
from annotation.formats.spec import Field, FormatSpec
from annotation.formats.validate import PIPELINES, SAFETY_LABELS

MMOOC_SAMPLES = FormatSpec(
    code="mmooc",
    title="MMOOC records (Parquet or JSON lines)",
    direction="in",
    carries="samples",
    layout=(
        "data/ooc.parquet and data/ic.parquet as the benchmark releases them, or the same "
        "records as JSON lines; a zip or folder may hold the images the records name."
    ),
    fields=(
        Field("question_id", "The sample's external id", required=True, aliases=("id",)),
        Field("image", "Base64 text, bytes, a Hugging Face Image struct, or a path"),
        Field("question", "The question", required=True),
        Field("answer", "The reference answer (an option letter for mcq)"),
        Field("reasoning", "The reference explanation", aliases=("explanation",)),
        Field(
            "question_type",
            "The question format",
            allowed=tuple(sorted(set(QUESTION_FORMATS.values()))),
        ),
        Field(
            "ooc_type",
            "The out-of-context or shifted in-context type, by name or code",
            aliases=("ic_type", "shift_type"),
            allowed=tuple(sorted({*OOC_CODES.values(), *IC_CODES.values()})),
        ),
        Field("category", "The visual scenario"),
        Field(
            "pipeline",
            "How the sample was made",
            aliases=("source",),
            allowed=tuple(sorted(PIPELINES)),
        ),
        Field("source_dataset", "The dataset it was drawn from"),
        Field("generator_models", "Models that generated it (a list)", aliases=("generator",)),
        Field("options", "A list or object of options; or the columns A-F", aliases=OPTION_COLUMNS),
        Field("answerability_group", "ooc or shifted_ic when the type does not say"),
        Field("split", "The split"),
        Field(
            "licence",
            "The image's licence",
            aliases=("license", "image_licence", "image_license"),
        ),
        Field("source_url", "Where the image comes from"),
        Field(
            "review",
            "This site's release: the review summary, read and not stored",
            aliases=("status", "revision", "content_hash"),
        ),
    ),
    example="samples/mmooc.jsonl",
    notes=("Other fields are kept in the sample's extra.",),
)

VLMEVALKIT_SAMPLES = FormatSpec(
    code="vlmevalkit",
    title="VLMEvalKit / MMT-Bench (TSV)",
    direction="in",
    carries="samples",
    layout="One TSV: one row per question, a header row; images as base64.",
    fields=(
        Field("index", "The sample's external id", required=True),
        Field("question", "The question", required=True),
        Field(
            "image",
            "Base64 (a JSON list for several images; a short value reuses the image of the "
            "row with that index); image or image_path is required",
            aliases=("image_path",),
        ),
        Field("A, B, C, …", "The options, one column per letter", aliases=("<letter>",)),
        Field("answer", "The answer letter"),
        Field("category", "The category"),
        Field("l2-category", "The scenario"),
        Field("split", "The split"),
        Field("question_format", "This site's export: the question format (mcq when absent)"),
        Field("explanation", "This site's export: the explanation", aliases=("reasoning",)),
        Field("answerability_group", "This site's export"),
        Field("pipeline", "This site's export"),
        Field("source_dataset", "This site's export"),
        Field("generator_models", "This site's export (a JSON list)"),
        Field(
            "licence",
            "The image's licence",
            aliases=("license", "image_licence", "image_license"),
        ),
        Field("source_url", "Where the image comes from"),
    ),
    example="samples/vlmevalkit.tsv",
    notes=("Other columns are kept in the sample's extra.",),
)

_TRIMODAL_DESCRIPTIONS = {
    "id": ("The scenario's external id", True),
    "image": ("The image file's path in the zip or folder", False),
    "audio": ("The audio file's path", False),
    "image_description": ("T_I, the image description", False),
    "audio_description": ("T_A, the audio description", False),
    "speech": ("S, the speech utterance", False),
    "label": ("R, safe or unsafe", False),
    "category": ("The safety category", False),
    "subcategory": ("The safety subcategory", False),
    "predicate": ("L, a list of conditions or 'IF a AND b THEN UNSAFE'", False),
    "pair_id": ("The external id of its minimally different pair", False),
    "source_url": ("Where the media come from", False),
    "licence": ("The licence of every media file", False),
    "image_licence": ("The image's own licence (over licence)", False),
    "audio_licence": ("The audio's own licence (over licence)", False),
    "split": ("The split", False),
}

TRIMODAL_SAMPLES = FormatSpec(
    code="trimodal",
    title="Tri-modal scenarios, MCBench (JSON lines)",
    direction="in",
    carries="samples",
    layout="JSON lines in a zip or folder with the image and audio files they name.",
    fields=tuple(
        Field(
            name,
            _TRIMODAL_DESCRIPTIONS[name][0],
            required=_TRIMODAL_DESCRIPTIONS[name][1],
            aliases=names[1:],
            allowed=tuple(sorted(SAFETY_LABELS)) if name == "label" else (),
        )
        for name, names in trimodal.ALIASES.items()
    ),
    example="samples/trimodal",
)

LOGICVISTA_SAMPLES = FormatSpec(
    code="logicvista",
    title="LogicVista (JSON and an images folder)",
    direction="in",
    carries="samples",
    layout="dataset.json, an object of items keyed by id, beside images/<imagename>.",
    fields=(
        Field("<key>", "The item's id: the sample's external id", required=True),
        Field("question", "The question (its options are read from the text)", required=True),
        Field("imagename", "The image's file name under images/"),
        Field("answer", "The answer letter(s)"),
        Field("reasoning", "The explanation"),
        Field("skill", "A list; its first entry is the category"),
        Field("sourcelink", "Where the item comes from"),
    ),
    example="samples/logicvista",
    notes=("Other fields are kept in the sample's extra.",),
)

_RECORD_FIELDS = tuple(
    f.name for f in dataclasses.fields(ParsedSample) if f.name not in ("row", "problems")
)

SITE_JSONL_SAMPLES = FormatSpec(
    code="jsonl",
    title="This site's own export (JSON lines)",
    direction="in",
    carries="samples",
    layout="One sample a line, as the jsonl release writes it (media as base64).",
    fields=(
        *(
            Field(
                name,
                "The sample's external id" if name == "external_id" else f"The sample's {name}",
                required=name == "external_id",
            )
            for name in _RECORD_FIELDS
        ),
        Field(
            "gold", "true to make the sample a gold item once verified", allowed=("true", "false")
        ),
    ),
    example="samples/site.jsonl",
)

SAMPLE_FORMATS = (
    MMOOC_SAMPLES,
    VLMEVALKIT_SAMPLES,
    TRIMODAL_SAMPLES,
    LOGICVISTA_SAMPLES,
    SITE_JSONL_SAMPLES,
)

_RELEASE_FIELDS = (
    Field("external_id", "The sample's external id", required=True),
    *(Field(name, f"The verified {name}") for name in LABEL_FIELDS),
    Field("media", "The sample's media (role, position, file or bytes, licence)"),
    Field("licence", "The licence every media file shares (empty when they differ)"),
    Field("image_licence", "The images' licence (Parquet, TSV, MMOOC layout)"),
    Field("audio_licence", "The audio's licence (Parquet)"),
    Field("extra", "The sample's custom fields as imported"),
    Field("review", "The review summary: reviewers, decisions, adjudication"),
    Field("status", "verified, or the status the filter chose"),
)

RELEASE_FORMATS = (
    FormatSpec(
        code="jsonl",
        title="Release: JSON lines (a zip with media/)",
        direction="out",
        carries="release",
        layout="release.jsonl, media/<sha256>.<ext>, manifest.json",
        fields=_RELEASE_FIELDS,
    ),
    FormatSpec(
        code="parquet",
        title="Release: Parquet",
        direction="out",
        carries="release",
        layout="One Parquet file with the media's bytes inline, and manifest.json",
        fields=_RELEASE_FIELDS,
    ),
    FormatSpec(
        code="tsv",
        title="Release: VLMEvalKit TSV",
        direction="out",
        carries="release",
        layout="One TSV readable by VLMEvalKit and by the vlmevalkit import above",
        fields=VLMEVALKIT_SAMPLES.fields,
    ),
    FormatSpec(
        code="hf",
        title="Release: Hugging Face folder",
        direction="out",
        carries="release",
        layout="data/<split>.parquet with Image/Audio columns, README.md (dataset card)",
        fields=_RELEASE_FIELDS,
    ),
    FormatSpec(
        code="mmooc",
        title="Release: MMOOC layout",
        direction="out",
        carries="release",
        layout="data/ooc.parquet and data/ic.parquet, readable by the mmooc import above",
        fields=MMOOC_SAMPLES.fields,
    ),
)
