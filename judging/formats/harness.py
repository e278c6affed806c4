"""Readers of the evaluation harnesses' outputs, as the harnesses write them (pure: no Django).

- **lmms-eval** (followed: 0.7.3, ``lmms_eval/evaluator.py`` and
  ``lmms_eval/loggers/evaluation_tracker.py``): ``--output_path`` holds one folder per model,
  named after the checkpoint (``model_name_sanitized``), with ``<date_id>_results.json``
  (``config.model``, ``config.model_args``, ``results``, ``configs``, ``versions``,
  ``n-samples``, …) beside one ``<date_id>_samples_<task>.jsonl`` per task, whose rows carry
  ``doc_id``, ``target``, ``filtered_resps`` (``resps`` only where it differs), ``doc_hash``,
  ``input`` and the task's metric fields. Releases before the tracker dropped them also
  wrote ``doc`` and ``arguments``. The model is the checkpoint named in ``model_args``
  (lmms-eval's own rule: the first of ``peft=``, ``delta=``, ``pretrained=``, ``model=``, …),
  not the model class in ``config.model``.
- **VLMEvalKit** (followed: its ``vlmeval`` package 0.2rc1 as shipped on PyPI by
  ``nvidia-vlmeval`` 26.3 and ``ms-vlmeval`` 0.0.20; ``run.py``, ``inference.py``,
  ``smp/file.py``): ``outputs/<model>/T<date>_G<commit>/<model>_<dataset>.xlsx`` (pandas'
  ``to_excel(index=False, engine="xlsxwriter")``, sheet ``Sheet1``: the dataset's columns
  without ``image``, plus ``prediction``; ``.tsv`` and ``.csv`` with ``PRED_FORMAT``), matched
  by ``index``; evaluated files ``<model>_<dataset>_<judge>.xlsx`` (``res``, ``log``, ``hit``)
  or ``…_<judge>_result.xlsx`` (multiple choice: ``hit``, ``log``), with the aggregate
  ``…_score.csv`` / ``…_acc.csv``.

Responses are kept exactly as written. The harness's per-sample metrics become the verdicts
of a judge named after the harness, the task and the metric.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from annotation.formats.records import (
    FormatError,
    NotThisFormat,
    RowError,
    as_text,
    hostile_problem,
    is_missing,
    json_safe,
    message,
)
from annotation.formats.spec import Field, FormatSpec
from annotation.formats.textio import iter_json_objects, open_text, read_json_document

LMMS_EVAL = "lmms_eval"
VLMEVALKIT = "vlmevalkit"

LMMS_EVAL_SAMPLES = FormatSpec(
    code=LMMS_EVAL,
    title="lmms-eval (--log_samples)",
    direction="in",
    carries="responses and verdicts",
    layout=(
        "A folder or zip as lmms-eval 0.7 writes it with --output_path and --log_samples: "
        "<model_name_sanitized>/<date_id>_results.json beside "
        "<date_id>_samples_<task>.jsonl (one per task, one JSON object a line); several "
        "models' folders in one zip are several models. A single samples file needs the "
        "model's name."
    ),
    fields=(
        Field(
            "doc_id",
            "The item's position in the task's split (from 0): matched to the dataset's "
            "samples in the order the lead confirms (their import order, or the external id)",
            required=True,
        ),
        Field(
            "filtered_resps",
            "The model's response after the task's filters: kept exactly as the response "
            "(a list, for several requests, is kept as JSON text)",
            required=True,
        ),
        Field("resps", "The raw response, written only where it differs; kept in extra"),
        Field("target", "The task's reference for the item, shown beside the sample's"),
        Field("doc_hash", "sha256 of the document; kept in extra"),
        Field("input", "The prompt sent; kept in extra"),
        Field(
            "doc",
            "Older releases: the document without its media; its question_id, id, index or "
            "sample_id, when present, matches the sample by external id instead of doc_id",
        ),
        Field("arguments", "Older releases: the request's arguments; kept in extra"),
        Field(
            "<metric>",
            "Each metric of the task's metric_list: a number (0/1, true/false), or an object "
            "with score, or answer_score and reasoning_score; each becomes a verdict of the "
            "judge 'lmms-eval <task> <metric>' (other values are kept in extra only)",
        ),
    ),
    other_fields_title="<date_id>_results.json",
    other_fields=(
        Field(
            "config.model_args",
            "Names the checkpoint (pretrained=, model=, model_name=, …): the model's name",
        ),
        Field("config.model", "The model class, the name only when model_args names none"),
        Field("configs.<task>.metric_list", "The metrics whose fields become verdicts"),
        Field(
            "configs.<task>.test_split",
            "The split doc_id counts in; samples of that split when the dataset has it",
        ),
        Field("n-samples.<task>.effective", "Rows expected; a shorter file is reported"),
        Field("results, versions, lmms_eval_version", "Kept in each response's extra"),
    ),
    example="lmms_eval/Qwen__Qwen2.5-VL-7B-Instruct",
)

VLMEVALKIT_PREDICTIONS = FormatSpec(
    code=VLMEVALKIT,
    title="VLMEvalKit (predictions and evaluated files)",
    direction="in",
    carries="responses and verdicts",
    layout=(
        "outputs/<model>/T<date>_G<commit>/<model>_<dataset>.xlsx as VLMEvalKit's run.py "
        "writes it (sheet Sheet1: the dataset's columns without image, plus prediction), or "
        ".tsv / .csv (PRED_FORMAT); a zip or folder of several models' outputs. Evaluated "
        "files <model>_<dataset>_<judge>.xlsx (res, log, hit) or "
        "<model>_<dataset>_<judge>_result.xlsx (hit, log) beside them become verdicts; the "
        "aggregate _score.csv / _acc.csv is checked against them. The model comes from the "
        "folder above T<date>…, else the folder holding the file, else the name given."
    ),
    fields=(
        Field("index", "The sample's external id (VLMEvalKit's row index)", required=True),
        Field(
            "prediction",
            "The model's response, kept exactly (required in a prediction file)",
            required=True,
        ),
        Field(
            "question, answer, category, …",
            "The dataset's own columns; answer is shown beside the sample's reference, the "
            "others are kept in extra",
        ),
    ),
    other_fields_title="Evaluated files",
    other_fields=(
        Field(
            "hit",
            "1 when the judge found the prediction right, else 0: the verdict of the judge "
            "'VLMEvalKit <dataset> <judge>'",
            required=True,
            allowed=("0", "1"),
        ),
        Field("res", "What the judge extracted; the verdict's rationale with log"),
        Field("log", "The judge's log; the verdict's rationale"),
    ),
    example="vlmevalkit/outputs",
)

# The keys of a samples row that are not the task's metrics.
_LMMS_KNOWN = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "doc_hash",
    "input",
    "token_counts",
    "input_media",
    "prompt_hash",
    "target_hash",
    "filter",
    "metrics",
}
_DOC_ID_FIELDS = ("question_id", "id", "index", "sample_id")
# lmms-eval's GeneralConfigTracker._get_model_name, in its order (peft before pretrained).
MODEL_ARG_PREFIXES = (
    "peft=",
    "delta=",
    "pretrained=",
    "model=",
    "model_version=",
    "model_name=",
    "model_id=",
    "path=",
    "engine=",
)
_SAMPLES_FILE = re.compile(r"^(?P<date>.+?)_samples_(?P<task>.+)\.jsonl$")
_RESULTS_FILE = re.compile(r"^(?P<date>.+?)_results\.json$")
_RUN_FOLDER = re.compile(r"^T\d{8}(?:_G\w+)?$")
_AGGREGATE = re.compile(r"_(score|acc)\.csv$", re.IGNORECASE)
TABLE_SUFFIXES = (".xlsx", ".tsv", ".csv")


@dataclass(frozen=True)
class HarnessScore:
    """A per-sample metric as a verdict: a 0/1 answer score, with a reasoning score (0-1 in
    quarters) when the metric gives one."""

    answer: int
    reasoning: float | None = None
    rationale: str = ""


@dataclass
class HarnessRow:
    """One row of a harness file: one model's response to one item, with its scores."""

    row: int
    key: str
    # True when ``key`` is lmms-eval's doc_id (a position), False when it is an external id.
    by_position: bool
    model: str
    response: str | None  # None: the row brings verdicts only (an evaluated file)
    target: str
    extra: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, HarnessScore] = field(default_factory=dict)


@dataclass
class HarnessFile:
    """One file of an upload as a harness wrote it, read lazily by ``rows()``."""

    name: str
    path: str
    harness: str
    model: str
    task: str
    kind: str  # "samples" (lmms-eval), "predictions" or "evaluated" (VLMEvalKit)
    judge: str = ""  # an evaluated file's judge, as the file name gives it
    metrics: tuple[str, ...] = ()
    split: str = ""
    expected_rows: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # Filled by the plan: whether this file's responses are stored (an evaluated file beside
    # its prediction file brings only verdicts).
    responses: bool = True

    def judge_name(self, metric: str = "") -> str:
        if self.harness == LMMS_EVAL:
            return f"lmms-eval {self.task} {metric}"[:100]
        return f"VLMEvalKit {self.task} {self.judge}"[:100]

    def rows(self) -> Iterator[HarnessRow | RowError]:
        if self.harness == LMMS_EVAL:
            return _lmms_rows(self)
        return _table_rows(self)


@dataclass
class HarnessPlan:
    """What an upload holds: its harness files, and the aggregate files checked after."""

    harness: str
    files: list[HarnessFile]
    aggregates: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def positional(self) -> bool:
        return self.harness == LMMS_EVAL


# --- detection -------------------------------------------------------------------------


def _first_object(path: str) -> dict[str, Any] | None:
    try:
        for _row, record in iter_json_objects(path):
            return record if isinstance(record, dict) else None
    except FormatError:
        return None
    return None


def is_lmms_eval_row(record: dict[str, Any]) -> bool:
    return "doc_id" in record and ("filtered_resps" in record or "resps" in record)


def is_lmms_eval_results(document: Any) -> bool:
    return isinstance(document, dict) and "results" in document and "configs" in document


def detect_format(files: Iterable[tuple[str, str]]) -> str | None:
    """The response format an upload's files are in, from their names and shape: lmms_eval,
    vlmevalkit, logicvista or jsonl; None when none fits."""
    listed = list(files)
    names = [PurePosixPath(name).name for name, _path in listed]
    if any(_SAMPLES_FILE.match(n) or _RESULTS_FILE.match(n) for n in names):
        return LMMS_EVAL
    for name, path in listed:
        lower = name.lower()
        if lower.endswith(TABLE_SUFFIXES) and not _AGGREGATE.search(lower):
            try:
                columns = table_columns(path)
            except FormatError:
                continue
            if "index" in columns and ("prediction" in columns or "hit" in columns):
                return VLMEVALKIT
    for name, path in listed:
        if name.lower().endswith("-answers.json"):
            return "logicvista"
        if name.lower().endswith((".jsonl", ".json")):
            record = _first_object(path)
            if record is not None and is_lmms_eval_row(record):
                return LMMS_EVAL
            if record is not None and (
                {"response", "answer", "prediction", "output"} & set(record)
            ):
                return "jsonl"
    return None


FORMAT_NAMES = {
    LMMS_EVAL: "lmms-eval",
    VLMEVALKIT: "VLMEvalKit",
    "logicvista": "LogicVista",
    "jsonl": "JSON lines",
}


# --- lmms-eval -------------------------------------------------------------------------


def model_from_model_args(model_args: object) -> str:
    """The checkpoint a ``model_args`` string (or dict) names, as lmms-eval finds it."""
    if isinstance(model_args, dict):
        for prefix in MODEL_ARG_PREFIXES:
            value = model_args.get(prefix[:-1])
            if value:
                return str(value)
        return ""
    text = str(model_args or "")
    for prefix in MODEL_ARG_PREFIXES:
        if prefix in text:
            return text.split(prefix, 1)[1].split(",")[0].strip()
    return ""


def _results_model(document: dict[str, Any]) -> str:
    config = document.get("config") or {}
    if not isinstance(config, dict):
        config = {}
    return (
        model_from_model_args(config.get("model_args"))
        or as_text(document.get("model_name"))
        or as_text(config.get("model"))
    )


def _metric_names(document: dict[str, Any] | None, task: str) -> tuple[str, ...]:
    if not document:
        return ()
    config = (document.get("configs") or {}).get(task) or {}
    listed = config.get("metric_list") if isinstance(config, dict) else None
    if not isinstance(listed, list):
        return ()
    return tuple(str(m["metric"]) for m in listed if isinstance(m, dict) and m.get("metric"))


def _plan_lmms_eval(files: list[tuple[str, str]], model: str) -> HarnessPlan:
    results: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    samples: list[tuple[str, str, str, str, str]] = []
    for name, path in files:
        posix = PurePosixPath(name)
        folder = str(posix.parent)
        found = _RESULTS_FILE.match(posix.name)
        if found:
            document = read_json_document(path)
            if not is_lmms_eval_results(document):
                raise NotThisFormat(
                    message(
                        "{name} is not lmms-eval's results file (it has no results and configs)",
                        name=name,
                    )
                )
            results[(folder, found.group("date"))] = (name, document)
            continue
        found = _SAMPLES_FILE.match(posix.name)
        if found:
            samples.append((name, path, folder, found.group("date"), found.group("task")))
        elif name.lower().endswith(".jsonl") and len(files) == 1:
            samples.append((name, path, folder, "", ""))
    if not samples:
        raise NotThisFormat(
            message(
                "no lmms-eval samples file (<date_id>_samples_<task>.jsonl) was found: run "
                "lmms-eval with --log_samples and upload its output folder"
            )
        )
    plan = HarnessPlan(LMMS_EVAL, [])
    for name, path, folder, date, task in samples:
        first = _first_object(path)
        if first is None or not is_lmms_eval_row(first):
            found_keys = ", ".join(list(first or {})[:8]) or "-"
            raise NotThisFormat(
                message(
                    "{name} is not an lmms-eval samples file: its first row has no doc_id and "
                    "filtered_resps (it has: {found})",
                    name=name,
                    found=found_keys,
                )
            )
        result = results.get((folder, date))
        document = result[1] if result else None
        row_model = model or (_results_model(document) if document else "")
        if not row_model and folder not in ("", "."):
            row_model = PurePosixPath(folder).name
        if not row_model:
            raise FormatError(
                message(
                    "{name}: the model is unknown; upload it with the _results.json lmms-eval "
                    "wrote beside it, or give the model's name",
                    name=name,
                )
            )
        task = task or as_text(first.get("task")) or PurePosixPath(name).stem
        config = ((document or {}).get("configs") or {}).get(task) or {}
        n_samples = ((document or {}).get("n-samples") or {}).get(task) or {}
        metrics = _metric_names(document, task) or tuple(
            key for key in first if key not in _LMMS_KNOWN
        )
        plan.files.append(
            HarnessFile(
                name=name,
                path=path,
                harness=LMMS_EVAL,
                model=row_model,
                task=task,
                kind="samples",
                metrics=metrics,
                split=as_text(config.get("test_split")) if isinstance(config, dict) else "",
                expected_rows=(
                    int(n_samples["effective"])
                    if isinstance(n_samples, dict) and isinstance(n_samples.get("effective"), int)
                    else None
                ),
                meta={
                    key: json_safe(value)
                    for key, value in {
                        "lmms_eval_version": (document or {}).get("lmms_eval_version"),
                        "task_version": ((document or {}).get("versions") or {}).get(task),
                        "results_file": result[0] if result else None,
                    }.items()
                    if value is not None
                },
            )
        )
    return plan


def harness_score(value: object) -> HarnessScore | None:
    """A per-sample metric value as a verdict, or None when it is not one: a 0/1 number or a
    boolean, or an object with a 0/1 ``score``, or ``answer_score`` with ``reasoning_score``
    (0-1 in quarters)."""
    if isinstance(value, dict):
        if "answer_score" in value:
            answer = harness_score(value.get("answer_score"))
            reasoning = value.get("reasoning_score")
            if answer is None:
                return None
            if isinstance(reasoning, int | float) and not isinstance(reasoning, bool):
                if float(reasoning) in (0.0, 0.25, 0.5, 0.75, 1.0):
                    reason = as_text(value.get("reason") or value.get("rationale"))
                    return HarnessScore(answer.answer, float(reasoning), reason)
                return None
            return answer
        for key in ("score", "hit", "acc", "correct"):
            if key in value:
                return harness_score(value[key])
        return None
    if isinstance(value, bool):
        return HarnessScore(int(value))
    if isinstance(value, int | float) and not is_missing(value) and float(value) in (0.0, 1.0):
        return HarnessScore(int(value))
    if isinstance(value, str) and value.strip() in {"0", "1", "0.0", "1.0"}:
        return HarnessScore(int(float(value)))
    return None


def _response_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _lmms_rows(file: HarnessFile) -> Iterator[HarnessRow | RowError]:
    consumed = {"doc_id", "filtered_resps", "doc"}
    for row, record in iter_json_objects(file.path):
        if isinstance(record, RowError):
            yield record
            continue
        doc_id = record.get("doc_id")
        if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
            yield RowError(
                row,
                as_text(doc_id),
                message("line {row}: doc_id is not a position (a whole number from 0)", row=row),
            )
            continue
        key, by_position = str(doc_id), True
        doc = record.get("doc")
        if isinstance(doc, dict):
            for name in _DOC_ID_FIELDS:
                if not is_missing(doc.get(name)):
                    key, by_position = as_text(doc[name]), False
                    break
        if "filtered_resps" in record:
            response = _response_text(record["filtered_resps"])
        else:
            response = _response_text(record.get("resps"))
        scores: dict[str, HarnessScore] = {}
        for metric in file.metrics:
            if metric in record:
                score = harness_score(record[metric])
                if score is not None:
                    scores[file.judge_name(metric)] = score
        extra = {k: json_safe(v) for k, v in record.items() if k not in consumed}
        extra.update(harness="lmms-eval", task=file.task, **file.meta)
        yield HarnessRow(
            row=row,
            key=key,
            by_position=by_position,
            model=file.model,
            response=response,
            target=as_text(record.get("target")),
            extra=extra,
            scores=scores,
        )


# --- VLMEvalKit ------------------------------------------------------------------------


def _raise_csv_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def _cell(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def iter_table(path: str) -> Iterator[tuple[int, dict[str, object]]]:
    """The rows of an xlsx (its first sheet, read with openpyxl), tsv or csv file as dicts by
    header, numbered from 2 (the header is row 1), as a spreadsheet numbers them."""
    lower = path.lower()
    if lower.endswith(".xlsx"):
        # openpyxl only when a spreadsheet is read, not in every process importing this.
        from openpyxl import load_workbook

        try:
            book = load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException, …
            raise FormatError(
                message("the file is not a readable xlsx workbook ({detail})", detail=exc)
            ) from exc
        try:
            sheet = book["Sheet1"] if "Sheet1" in book.sheetnames else book.worksheets[0]
            rows = sheet.iter_rows(values_only=True)
            header = next(rows, None)
            if header is None:
                return
            names = [as_text(h) for h in header]
            for number, values in enumerate(rows, start=2):
                if all(v is None for v in values):
                    continue
                yield number, {n: _cell(v) for n, v in zip(names, values, strict=False) if n}
        finally:
            book.close()
        return
    _raise_csv_limit()
    delimiter = "\t" if lower.endswith(".tsv") else ","
    with open_text(path) as handle:
        reader = csv.reader(handle, delimiter=delimiter, quotechar='"')
        try:
            header = next(reader, None)
            if header is None:
                return
            for values in reader:
                if not any(values):
                    continue
                yield reader.line_num, dict(zip(header, values, strict=False))
        except UnicodeDecodeError as exc:
            raise FormatError(message("the file is not UTF-8 text")) from exc
        except csv.Error as exc:
            raise FormatError(
                message("line {row}: {detail}", row=reader.line_num, detail=exc)
            ) from exc


def table_columns(path: str) -> list[str]:
    """The header of a table file (empty for an empty file)."""
    lower = path.lower()
    if lower.endswith(".xlsx"):
        from openpyxl import load_workbook

        try:
            book = load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:
            raise FormatError(
                message("the file is not a readable xlsx workbook ({detail})", detail=exc)
            ) from exc
        try:
            sheet = book["Sheet1"] if "Sheet1" in book.sheetnames else book.worksheets[0]
            header = next(sheet.iter_rows(values_only=True, max_row=1), None)
            return [as_text(h) for h in header or () if not is_missing(h)]
        finally:
            book.close()
    _raise_csv_limit()
    with open_text(path) as handle:
        try:
            header = next(csv.reader(handle, delimiter="\t" if lower.endswith(".tsv") else ","), [])
        except (UnicodeDecodeError, csv.Error) as exc:
            raise FormatError(message("the file is not UTF-8 text")) from exc
    return [h for h in header if h]


def count_table_rows(path: str) -> int:
    return sum(1 for _ in iter_table(path))


def _vlmevalkit_model(name: str, given: str) -> str:
    """The model of a VLMEvalKit output file: the folder above its T<date>_G<commit> run
    folder, else the folder holding it when the file's name starts with it, else ``given``."""
    parts = PurePosixPath(name).parts
    stem = PurePosixPath(name).stem
    for i in range(len(parts) - 2, 0, -1):
        if _RUN_FOLDER.match(parts[i]):
            return parts[i - 1]
    if len(parts) >= 2 and stem.startswith(parts[-2] + "_"):
        return parts[-2]
    return given


def _plan_vlmevalkit(files: list[tuple[str, str]], model: str) -> HarnessPlan:
    plan = HarnessPlan(VLMEVALKIT, [])
    tables = []
    for name, path in files:
        lower = name.lower()
        if not lower.endswith(TABLE_SUFFIXES):
            continue
        if _AGGREGATE.search(lower):
            plan.aggregates.append((name, path))
            continue
        tables.append((name, path, table_columns(path)))
    if not tables:
        raise NotThisFormat(
            message(
                "no VLMEvalKit prediction file (<model>_<dataset>.xlsx, .tsv or .csv) was found"
            )
        )
    predictions: dict[tuple[str, str], HarnessFile] = {}
    evaluated = []
    for name, path, columns in tables:
        if "index" not in columns:
            raise NotThisFormat(
                message(
                    "{name}: VLMEvalKit's files have an index column; this one has: {found}",
                    name=name,
                    found=", ".join(columns[:12]) or "-",
                )
            )
        row_model = _vlmevalkit_model(name, model)
        stem = PurePosixPath(name).stem
        if not row_model:
            raise FormatError(
                message(
                    "{name}: the model is unknown; upload the outputs/<model>/… folder "
                    "VLMEvalKit wrote, or give the model's name",
                    name=name,
                )
            )
        rest = stem[len(row_model) + 1 :] if stem.startswith(row_model + "_") else stem
        if "hit" in columns:
            evaluated.append((name, path, columns, row_model, rest))
            continue
        if "prediction" not in columns:
            raise FormatError(
                message(
                    "{name}: a VLMEvalKit prediction file has a prediction column; this one "
                    "has: {found}",
                    name=name,
                    found=", ".join(columns[:12]) or "-",
                )
            )
        file = HarnessFile(name, path, VLMEVALKIT, row_model, rest, "predictions")
        predictions[(row_model, rest)] = file
        plan.files.append(file)
    for name, path, columns, row_model, rest in evaluated:
        dataset, judge = rest, "judge"
        for (m, known), _file in predictions.items():
            if m == row_model and rest.startswith(known + "_"):
                dataset, judge = known, rest[len(known) + 1 :]
                break
        else:
            if "_" in rest:
                dataset, judge = rest.rsplit("_", 1)
        if judge.endswith("_result"):
            judge = judge[: -len("_result")]
        file = HarnessFile(name, path, VLMEVALKIT, row_model, dataset, "evaluated", judge=judge)
        file.responses = (row_model, dataset) not in predictions and "prediction" in columns
        plan.files.append(file)
    return plan


def _table_rows(file: HarnessFile) -> Iterator[HarnessRow | RowError]:
    consumed = {"index", "prediction", "hit", "res", "log"}
    for row, record in iter_table(file.path):
        problem = hostile_problem(record)
        if problem is not None:
            yield RowError(
                row,
                as_text(record.get("index")),
                message("row {row}: {problem}", row=row, problem=problem),
            )
            continue
        key = as_text(record.get("index"))
        if not key:
            yield RowError(row, "", message("row {row}: the row has no index", row=row))
            continue
        scores: dict[str, HarnessScore] = {}
        if file.kind == "evaluated":
            score = harness_score(record.get("hit"))
            if score is None:
                yield RowError(
                    row,
                    key,
                    message(
                        "row {row}: hit is {value!r}, not 0 or 1", row=row, value=record.get("hit")
                    ),
                )
                continue
            rationale = "\n".join(
                part for part in (as_text(record.get("res")), as_text(record.get("log"))) if part
            )
            scores[file.judge_name()] = HarnessScore(score.answer, None, rationale)
        response: str | None = None
        if file.responses:
            value = record.get("prediction")
            response = "" if is_missing(value) else str(value)
        extra = {k: json_safe(v) for k, v in record.items() if k not in consumed}
        extra.update(harness="VLMEvalKit", dataset=file.task)
        yield HarnessRow(
            row=row,
            key=key,
            by_position=False,
            model=file.model,
            response=response,
            target=as_text(record.get("answer")),
            extra=extra,
            scores=scores,
        )


def aggregate_overall(path: str) -> tuple[int, int] | None:
    """(items, hits) of the Overall line of a VLMEvalKit _score.csv / _acc.csv, when it has
    one with tot and hit columns."""
    try:
        for _row, record in iter_table(path):
            label = next(iter(record.values()), "")
            if as_text(label).lower() == "overall" and "tot" in record and "hit" in record:
                return int(float(str(record["tot"]))), int(float(str(record["hit"])))
    except (FormatError, ValueError):
        return None
    return None


# --- planning --------------------------------------------------------------------------


def harness_plan(files: list[tuple[str, str]], harness: str, *, model: str = "") -> HarnessPlan:
    """Read the layout of an upload's files (names, headers, results files; no rows), so that
    a file of the wrong shape fails the import before any row is stored."""
    detected = detect_format(files)
    if detected is not None and detected != harness:
        raise NotThisFormat(
            message(
                "the upload is {found} output, not {expected}'s: choose {found} (or let the "
                "site detect the format)",
                found=FORMAT_NAMES.get(detected, detected),
                expected=FORMAT_NAMES.get(harness, harness),
            )
        )
    if harness == LMMS_EVAL:
        return _plan_lmms_eval(files, model)
    return _plan_vlmevalkit(files, model)
