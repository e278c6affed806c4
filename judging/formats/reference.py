"""The reference of every format, in and out, made from the readers' and writers' own field
lists (``annotation.formats.spec``): ``docs/formats.md`` (``manage.py format_reference``)
and the site's page ``/formats/``. A test regenerates the file and fails when it differs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotation.formats.labelstudio import LABEL_STUDIO_EXPORT, LABEL_STUDIO_IMPORT
from annotation.formats.spec import Field, FormatSpec
from annotation.formats.specs import RELEASE_FORMATS, SAMPLE_FORMATS
from judging.formats.harness import LMMS_EVAL_SAMPLES, VLMEVALKIT_PREDICTIONS
from judging.formats.responses import LOGICVISTA_ANSWERS, RESPONSES_JSONL
from judging.formats.verdicts import VERDICTS_JSONL

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "formats" / "examples"
REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    where: str
    formats: tuple[FormatSpec, ...]


SECTIONS = (
    Section(
        "samples",
        "Samples (import)",
        "A dataset's page, Import samples; POST /api/datasets/{id}/imports/; import_samples.",
        SAMPLE_FORMATS,
    ),
    Section(
        "responses",
        "Model responses (import)",
        "A dataset's judging page, Upload model responses or verdicts (the format is detected "
        "from the files); POST /api/datasets/{id}/responses/import/; import_responses.",
        (RESPONSES_JSONL, LOGICVISTA_ANSWERS, LMMS_EVAL_SAMPLES, VLMEVALKIT_PREDICTIONS),
    ),
    Section(
        "verdicts",
        "Verdicts (import)",
        "The judging page's upload; POST /api/datasets/{id}/verdicts/import/; import_verdicts.",
        (VERDICTS_JSONL,),
    ),
    Section(
        "labelstudio",
        "Label Studio (import and export)",
        "Import: a dataset's Label Studio page (the lead confirms the mapping). Export: a "
        "release snapshot in the labelstudio format.",
        (LABEL_STUDIO_IMPORT, LABEL_STUDIO_EXPORT),
    ),
    Section(
        "releases",
        "Releases (export)",
        "A dataset's Snapshots page; POST /api/datasets/{id}/snapshots/; export_snapshot.",
        RELEASE_FORMATS,
    ),
)


def all_formats() -> list[FormatSpec]:
    return [spec for section in SECTIONS for spec in section.formats]


def example_paths() -> dict[str, Path]:
    """Every example file (or folder) the reference names, by its name under examples/."""
    return {spec.example: EXAMPLES / spec.example for spec in all_formats() if spec.example}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(fields: tuple[Field, ...]) -> list[str]:
    lines = [
        "| field | required | also accepted | allowed values | meaning |",
        "|---|---|---|---|---|",
    ]
    for item in fields:
        lines.append(
            "| "
            + " | ".join(
                [
                    f"`{_cell(item.name)}`",
                    "yes" if item.required else "",
                    ", ".join(f"`{_cell(a)}`" for a in item.aliases),
                    ", ".join(f"`{_cell(v)}`" for v in item.allowed),
                    _cell(item.description),
                ]
            )
            + " |"
        )
    return lines


def render_markdown() -> str:
    """The whole reference as Markdown."""
    out = [
        "# Formats",
        "",
        "Every file the site reads or writes, with its fields. Generated from the readers' "
        "and writers' own field lists by `python manage.py format_reference`; do not edit by "
        "hand (a test fails when this file and the code disagree). Each format's example file "
        "is under `docs/formats/examples/`, and the tests import it.",
        "",
    ]
    for section in SECTIONS:
        out += [f"## {section.title}", "", section.where, ""]
        for spec in section.formats:
            direction = "import" if spec.direction == "in" else "export"
            out += [
                f"### {spec.title}",
                "",
                f"Format code `{spec.code}` ({direction}; carries {spec.carries}). {spec.layout}",
                "",
                *_table(spec.fields),
                "",
            ]
            if spec.other_fields:
                out += [f"{spec.other_fields_title}:", "", *_table(spec.other_fields), ""]
            out += [*spec.notes, *([""] if spec.notes else [])]
            if spec.example:
                out += [f"Example: `docs/formats/examples/{spec.example}`", ""]
    return "\n".join(out).rstrip() + "\n"
