"""The import formats a lead can choose: their readers, file types and dataset kinds."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.formats.jsonl import iter_jsonl
from annotation.formats.labelstudio import LsMapping, iter_labelstudio
from annotation.formats.logicvista import iter_logicvista
from annotation.formats.mmooc import iter_mmooc
from annotation.formats.records import FormatError, ParsedSample, RowError
from annotation.formats.textio import Source
from annotation.formats.trimodal import iter_trimodal
from annotation.formats.vlmevalkit import iter_vlmevalkit
from annotation.models import DatasetKind

Reader = Callable[[Source, Mapping[str, Any]], Iterator[ParsedSample | RowError]]


@dataclass(frozen=True)
class ImportFormat:
    code: str
    label: Promise
    # File name endings of the dataset file, looked for inside a zip, a folder or an S3 prefix.
    suffixes: tuple[str, ...]
    dataset_kind: str
    read: Reader
    # How rows are counted for progress: "lines" (JSON lines), "tsv", "parquet_or_lines", "json".
    counting: str
    # The site's own exports carry either kind of sample; other formats fix the kind.
    any_kind: bool = False
    # The taxonomy preset of a dataset that an import in this format creates.
    default_preset: str = ""
    # Run once the rows are stored (``after(job=…, path=…) -> notes``): Label Studio's
    # annotations and predictions go to review and judging.
    after: Callable[..., list[str]] | None = None
    # Offered only where its own page sets the options it needs (the Label Studio mapping).
    on_import_form: bool = True


def _mmooc(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    return iter_mmooc(source, default_group=str(options.get("default_group", "")))


def _vlmevalkit(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    return iter_vlmevalkit(source)


def _trimodal(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    return iter_trimodal(source)


def _logicvista(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    return iter_logicvista(
        source,
        image_dir=str(options.get("image_dir") or "images"),
        licence=str(options.get("licence", "")),
    )


def _jsonl(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    return iter_jsonl(source)


def _labelstudio(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    return iter_labelstudio(source, LsMapping.from_options(options))


def _labelstudio_after(**kwargs: Any) -> list[str]:
    from annotation.imports.labelstudio import labelstudio_after_import

    return labelstudio_after_import(**kwargs)


def _release(source: Source, options: Mapping[str, Any]) -> Iterator[ParsedSample | RowError]:
    if not isinstance(source, str | os.PathLike):
        raise FormatError(gettext("a Parquet file must be read from a file, not a stream"))
    # pyarrow only when a Parquet file is read, not in every process importing the formats.
    import pyarrow as pa

    from annotation.snapshots.exports.parquet import iter_release_parquet

    try:
        yield from iter_release_parquet(source)
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise FormatError(
            gettext("the file is not a Parquet export of this site (%(detail)s)") % {"detail": exc}
        ) from exc


FORMATS: dict[str, ImportFormat] = {
    f.code: f
    for f in (
        ImportFormat(
            "mmooc",
            _("MMOOC (Parquet or JSON lines)"),
            (".parquet", ".jsonl"),
            DatasetKind.IMAGE_QUESTION,
            _mmooc,
            "parquet_or_lines",
            default_preset="mmooc",
        ),
        ImportFormat(
            "vlmevalkit",
            _("VLMEvalKit / MMT-Bench (TSV)"),
            (".tsv",),
            DatasetKind.IMAGE_QUESTION,
            _vlmevalkit,
            "tsv",
            default_preset="mmt_bench",
        ),
        ImportFormat(
            "trimodal",
            _("Tri-modal scenarios, MCBench (JSON lines)"),
            (".jsonl",),
            DatasetKind.TRIMODAL,
            _trimodal,
            "lines",
            default_preset="mcbench",
        ),
        ImportFormat(
            "logicvista",
            _("LogicVista (JSON and an images folder)"),
            (".json",),
            DatasetKind.IMAGE_QUESTION,
            _logicvista,
            "json",
        ),
        ImportFormat(
            "jsonl",
            _("This site's own export (JSON lines)"),
            (".jsonl",),
            DatasetKind.IMAGE_QUESTION,
            _jsonl,
            "lines",
            any_kind=True,
        ),
        ImportFormat(
            "labelstudio",
            _("Label Studio JSON export"),
            (".json",),
            DatasetKind.IMAGE_QUESTION,
            _labelstudio,
            "json",
            after=_labelstudio_after,
            on_import_form=False,
        ),
        ImportFormat(
            "release",
            _("This site's own export (Parquet, or a Hugging Face folder's Parquet file)"),
            (".parquet",),
            DatasetKind.IMAGE_QUESTION,
            _release,
            "parquet_or_lines",
            any_kind=True,
        ),
    )
}


def format_choices() -> list[tuple[str, Promise]]:
    return [(code, f.label) for code, f in FORMATS.items() if f.on_import_form]
