"""Label Studio's JSON export, in and out (pure: no Django).

Followed: Label Studio 1.23.2, read from its package (``data_export/serializers.py``,
``data_export/api.py``, ``data_export/mixins.py`` for the export; ``tasks/serializers.py``,
``data_import/serializers.py`` for the import) and checked against a running instance: the
export is a JSON list of tasks ``{id, data, annotations, predictions, drafts, meta, …}``;
an annotation is ``{id, completed_by, result, was_cancelled, ground_truth, lead_time,
created_at, …}`` where ``completed_by`` is the user's id, or ``{id, email, first_name,
last_name}`` in an export made with ``annotations__completed_by: {only_id: false}``;
``predictions`` are ids, or ``{id, result, model_version, score, …}`` with ``predictions:
{only_id: false}``. A result item is ``{from_name, to_name, type, value}``; choices carry
``value.choices`` (a list), text areas ``value.text`` (a list).

A task becomes a sample by a mapping the lead confirms: which data key is the image, the
question, the reference answer, the external id, and which control (``from_name``) gives each
label field. Completed annotations (not cancelled) become reviews, predictions a judge's
verdicts (``annotation.extensions``' ports; review and judging plug in).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import posixpath
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from annotation.formats.records import (
    LABEL_FIELDS,
    FormatError,
    MediaRef,
    NotThisFormat,
    ParsedSample,
    RowError,
    as_text,
    decode_base64,
    hostile_problem,
    is_missing,
    json_safe,
    message,
    shown,
)
from annotation.formats.spec import Field, FormatSpec
from annotation.formats.textio import Source, read_json_document
from core.limits import TooDeep

# The sample fields a mapping may fill from a task's data, and those a choices or text
# control may give (the label fields a review can change).
DATA_FIELDS = ("external_id", "image", "question", "reference_answer", "explanation", "split")
REQUIRED_DATA_FIELDS = ("question", "reference_answer")
LABEL_CONTROL_FIELDS = (
    "answerability_group",
    "category_code",
    "question_format",
    "scenario",
    "reference_answer",
    "explanation",
)
# The sample fields a task's data gives under their own names when no mapping names them
# (this site's release writes every one): text fields and lists of text.
OWN_TEXT_FIELDS = tuple(
    name
    for name in LABEL_FIELDS
    if name not in {"question", "options", "reference_answer", "explanation", "split"}
    and name not in ("generator_models", "predicate")
)
OWN_LIST_FIELDS = ("generator_models", "predicate")
# Data keys of this site's release besides the fields: the images after the first (data:
# URIs), each medium's licence ({role, position, licence}), the custom fields (any JSON), and
# the options as display text (derived from ``options``, not read back).
MORE_IMAGES = "more_images"
MEDIA_NOTES = "media"
EXTRA = "extra"
OPTIONS_TEXT = "options_text"
# The choice that marks an annotation as a rejection of the sample (this site's export).
REVIEW_CONTROL = "review"
REJECT = "reject"
ACCEPT = "accept"

LABEL_STUDIO_IMPORT = FormatSpec(
    code="labelstudio",
    title="Label Studio JSON export (import)",
    direction="in",
    carries="samples, reviews and verdicts",
    layout=(
        "The JSON file Label Studio 1.23 exports (a list of tasks), alone or in a zip with the "
        "media it names (/data/upload/<project>/<file> is read as upload/<project>/<file>; "
        "data: URIs are read inline). Export with annotations__completed_by and predictions "
        "not as ids only to bring annotators' e-mails and predictions."
    ),
    fields=(
        Field("id", "The task's id: the external id unless the mapping names a data key"),
        Field(
            "data.<key>",
            "Mapped by the lead to the image, question, reference answer (both required), "
            "external id, explanation and split; this site's own release, given no mapping, "
            "is read by its own",
            required=True,
        ),
        Field(
            "data.<sample field>",
            "A data key named like a sample field the mapping does not name fills it "
            "(answerability_group, category_code, question_format, scenario, pipeline, "
            "source_dataset, generator_models, …; source_dataset is 'Label Studio' without one)",
        ),
        Field("data.source_url", "Where the sample's media come from"),
        Field("data.more_images", "Images after the first, as data: URIs or paths"),
        Field("data.media", "Each medium's licence: [{role, position, licence}]"),
        Field(
            "data.extra",
            "An object of custom fields (any JSON, nested kept); any other data key the "
            "mapping does not name is a custom field too",
        ),
        Field(
            "annotations[].result[]",
            "from_name is the control, value.choices or value.text its value: mapped to label "
            "fields (answerability_group, category_code, question_format, scenario, "
            "reference_answer, explanation)",
        ),
        Field(
            "annotations[].completed_by",
            "The annotator: a user id, or {email, …}; matched by e-mail or created inactive",
        ),
        Field(
            "annotations[].was_cancelled",
            "A skipped task: not a review",
            allowed=("true", "false"),
        ),
        Field("annotations[].lead_time", "Seconds spent: the review's time"),
        Field(
            "predictions[]",
            "{model_version, score, result}: the answerability choice becomes a verdict of the "
            "judge 'Label Studio <model_version>'",
        ),
    ),
    example="labelstudio/export.json",
)

LABEL_STUDIO_EXPORT = FormatSpec(
    code="labelstudio",
    title="Release: Label Studio JSON (export)",
    direction="out",
    carries="release",
    layout=(
        "labelstudio.json, a list of tasks Label Studio 1.23 imports (POST "
        "/api/projects/{id}/import), with label_config.xml for the project and manifest.json. "
        "Images are data: URIs, so the file stands alone; a task's data carries everything of "
        "the sample, so the release imports back unchanged (format labelstudio; an import given "
        "no mapping reads it by the release's own). Image-question datasets only (a tri-modal "
        "dataset is refused): tri-modal ones are released as JSON lines, Parquet or Hugging "
        "Face."
    ),
    fields=(
        Field("data.external_id", "The sample's external id", required=True),
        Field("data.image", "The sample's first image as a data: URI"),
        Field("data.question", "The question", required=True),
        Field("data.options", "The options as text (A. …)"),
        Field(
            "data.<label field>",
            "The verified values of every label field under its own name: reference_answer, "
            "explanation, answerability_group, category_code, question_format, scenario, split, "
            "pipeline, source_dataset, generator_models, …",
        ),
        Field("data.source_url", "Where the sample's media come from"),
        Field("data.more_images", "The sample's further images, as data: URIs"),
        Field("data.media", "Each medium's licence: [{role, position, licence}]"),
        Field("data.extra", "The custom fields, as imported (types and nesting kept)"),
        Field(
            "annotations[0].result",
            "The verified labels: a choices item per label field with a value, a textarea "
            "item for reference_answer and explanation, and review: accept",
        ),
        Field("meta", "status, revision and content_hash of the release"),
    ),
    example="labelstudio/release.json",
)


@dataclass(frozen=True)
class LsAnnotation:
    task_id: str
    id: str
    user_id: str
    email: str
    name: str
    result: list[dict[str, Any]]
    cancelled: bool
    seconds: float


@dataclass(frozen=True)
class LsPrediction:
    task_id: str
    model_version: str
    score: float | None
    result: list[dict[str, Any]]


@dataclass
class LsTask:
    row: int
    id: str
    data: dict[str, Any]
    annotations: list[LsAnnotation] = field(default_factory=list)
    predictions: list[LsPrediction] = field(default_factory=list)
    # Predictions exported as ids only (nothing to import).
    prediction_ids: int = 0
    # Annotations that name no annotator (left out).
    unattributed: int = 0
    # Why the task cannot be stored (hostile_problem): its row is rejected, nothing of it read.
    problem: str | None = None
    # Whether the task has an id of its own (Label Studio's); this site's release has none.
    has_id: bool = True


@dataclass(frozen=True)
class LsMapping:
    """Which data key fills each sample field, and which control gives each label field."""

    data: dict[str, str]  # sample field -> data key
    controls: dict[str, str]  # label field -> from_name

    def as_options(self) -> dict[str, str]:
        return {"mapping": json.dumps({"data": self.data, "controls": self.controls})}

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> LsMapping:
        raw = options.get("mapping") or "{}"
        try:
            loaded = json.loads(raw) if isinstance(raw, str) else dict(raw)
        except ValueError as exc:
            raise FormatError(message("the Label Studio mapping is not valid")) from exc
        return cls(
            {str(k): str(v) for k, v in (loaded.get("data") or {}).items() if v},
            {str(k): str(v) for k, v in (loaded.get("controls") or {}).items() if v},
        )

    def missing(self) -> list[str]:
        """The required sample fields the mapping leaves empty."""
        return [name for name in REQUIRED_DATA_FIELDS if not self.data.get(name)]


def _text(value: object) -> str:
    return "" if is_missing(value) else as_text(value)


def _user(value: object) -> tuple[str, str, str]:
    """(id, e-mail, name) of an annotation's completed_by."""
    if isinstance(value, dict):
        name = " ".join(
            part for part in (_text(value.get("first_name")), _text(value.get("last_name"))) if part
        )
        return _text(value.get("id")), _text(value.get("email")).lower(), name
    return _text(value), "", ""


def read_tasks(source: Source) -> list[LsTask]:
    """The tasks of a Label Studio JSON export; NotThisFormat for any other JSON."""
    return tasks_from_document(read_json_document(source))


def tasks_from_document(document: Any) -> list[LsTask]:
    """The tasks of an export's parsed JSON."""
    if isinstance(document, dict) and isinstance(document.get("tasks"), list):
        document = document["tasks"]
    if not isinstance(document, list) or not all(isinstance(t, dict | TooDeep) for t in document):
        raise NotThisFormat(message("a Label Studio export is a JSON list of tasks"))
    if document and not any("data" in t for t in document[:20]):
        raise NotThisFormat(
            message("its tasks have no data object; a Label Studio task is {{id, data, …}}")
        )
    tasks = []
    for row, raw in enumerate(document, start=1):
        problem = hostile_problem(raw)
        if problem is not None:
            task_id = shown(_text(raw.get("id"))) if isinstance(raw, dict) else ""
            tasks.append(LsTask(row, task_id or str(row), {}, problem=problem))
            continue
        task_id = _text(raw.get("id")) or str(row)
        data = raw.get("data") if isinstance(raw.get("data"), dict) else {}
        task = LsTask(row, task_id, dict(data), has_id=bool(_text(raw.get("id"))))
        for item in raw.get("annotations") or []:
            # An annotation that names no annotator is no person's review: this site's own
            # release carries its verified labels so, and they are the task's data already.
            if not isinstance(item, dict) or item.get("completed_by") in (None, ""):
                task.unattributed += int(isinstance(item, dict))
                continue
            user_id, email, name = _user(item.get("completed_by"))
            task.annotations.append(
                LsAnnotation(
                    task_id=task_id,
                    id=_text(item.get("id")) or _text(item.get("unique_id")),
                    user_id=user_id,
                    email=email,
                    name=name,
                    result=[r for r in item.get("result") or [] if isinstance(r, dict)],
                    cancelled=bool(item.get("was_cancelled")),
                    seconds=float(item.get("lead_time") or 0.0),
                )
            )
        for item in raw.get("predictions") or []:
            if isinstance(item, dict):
                score = item.get("score")
                task.predictions.append(
                    LsPrediction(
                        task_id=task_id,
                        model_version=_text(item.get("model_version")) or "prediction",
                        score=float(score) if isinstance(score, int | float) else None,
                        result=[r for r in item.get("result") or [] if isinstance(r, dict)],
                    )
                )
            else:
                task.prediction_ids += 1
        tasks.append(task)
    return tasks


def result_values(result: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Each control's value in an annotation's or prediction's result (first choice, or the
    text joined by line breaks)."""
    values: dict[str, str] = {}
    for item in result:
        name = _text(item.get("from_name"))
        raw = item.get("value")
        value: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if not name:
            continue
        choices = value.get("choices")
        if isinstance(choices, list) and choices:
            values[name] = _text(choices[0])
            continue
        text = value.get("text")
        if isinstance(text, list):
            values[name] = "\n".join(_text(t) for t in text)
        elif isinstance(text, str):
            values[name] = text
    return values


def labels(result: Iterable[dict[str, Any]], mapping: LsMapping) -> dict[str, str]:
    """The label fields an annotation gives, by the mapping's controls."""
    values = result_values(result)
    return {
        name: values[control]
        for name, control in mapping.controls.items()
        if control in values and name in LABEL_CONTROL_FIELDS
    }


def is_rejection(result: Iterable[dict[str, Any]]) -> bool:
    return result_values(result).get(REVIEW_CONTROL) == REJECT


@dataclass
class MappingGuess:
    data_keys: list[str]
    controls: list[str]
    guess: LsMapping
    annotators: list[str]
    annotations: int
    cancelled: int
    predictions: int
    prediction_ids: int
    model_versions: list[str]


_DATA_NAMES = {
    "external_id": ("external_id", "question_id", "id", "index", "uid"),
    "image": ("image", "img", "image_url", "picture"),
    "question": ("question", "text", "prompt", "query"),
    "reference_answer": ("reference_answer", "answer", "reference", "label"),
    "explanation": ("explanation", "reasoning", "rationale"),
    "split": ("split",),
}


def mapping_guess(tasks: list[LsTask]) -> MappingGuess:
    """What the export holds and a first mapping for the lead to confirm or change: data keys
    and controls named like the sample's fields."""
    keys: Counter[str] = Counter()
    controls: Counter[str] = Counter()
    annotators: set[str] = set()
    counts = Counter[str]()
    versions: set[str] = set()
    for task in tasks:
        keys.update(task.data)
        counts["prediction_ids"] += task.prediction_ids
        for annotation in task.annotations:
            controls.update(result_values(annotation.result))
            annotators.add(annotation.email or f"#{annotation.user_id}")
            counts["cancelled" if annotation.cancelled else "annotations"] += 1
        for prediction in task.predictions:
            controls.update(result_values(prediction.result))
            versions.add(prediction.model_version)
            counts["predictions"] += 1
    data_keys = [k for k, _n in keys.most_common()]
    guess_data = {}
    for name, candidates in _DATA_NAMES.items():
        found = next((c for c in candidates if c in keys), "")
        if found:
            guess_data[name] = found
    control_names = sorted(controls)
    guess_controls = {name: name for name in LABEL_CONTROL_FIELDS if name in controls}
    return MappingGuess(
        data_keys=data_keys,
        controls=[c for c in control_names if c != REVIEW_CONTROL],
        guess=LsMapping(guess_data, guess_controls),
        annotators=sorted(annotators),
        annotations=counts["annotations"],
        cancelled=counts["cancelled"],
        predictions=counts["predictions"],
        prediction_ids=counts["prediction_ids"],
        model_versions=sorted(versions),
    )


def media_path(url: str) -> str:
    """The path inside an upload of the file a task's image URL names: Label Studio's own
    ``/data/upload/<project>/<file>`` is ``upload/<project>/<file>`` (its media folder),
    ``/data/local-files/?d=<path>`` is ``<path>``, any other URL its file name."""
    parts = urlsplit(url)
    if parts.path.startswith("/data/local-files"):
        found = parse_qs(parts.query).get("d")
        if found:
            return found[0].lstrip("/")
    if parts.path.startswith("/data/"):
        return parts.path[len("/data/") :]
    return posixpath.basename(parts.path)


def _image(value: object, position: int) -> MediaRef | None:
    text = _text(value)
    if not text:
        return None
    if text.startswith("data:"):
        try:
            return MediaRef("image", position, data=decode_base64(text))
        except ValueError:
            return MediaRef("image", position, problem=message("the image is not valid base64"))
    return MediaRef("image", position, path=media_path(text))


def _media(data: Mapping[str, Any], image_key: str) -> list[MediaRef]:
    """The task's image (the mapped key), the further images of this site's release
    (``more_images``), each with its licence from ``media`` when the task names one."""
    refs = [_image(data.get(image_key), 0)] if image_key else []
    more = data.get(MORE_IMAGES)
    if isinstance(more, list):
        refs += [_image(value, n) for n, value in enumerate(more, start=1)]
    found = [ref for ref in refs if ref is not None]
    notes = data.get(MEDIA_NOTES)
    licences = {
        (_text(note.get("role")), note.get("position")): _text(note.get("licence"))
        for note in (notes if isinstance(notes, list) else [])
        if isinstance(note, dict)
    }
    return [
        dataclasses.replace(ref, licence=licences.get((ref.role, ref.position), ""))
        for ref in found
    ]


def _options(value: object) -> list[dict[str, str]]:
    parsed: list[dict[str, str]] = []
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                parsed.append({"label": _text(item.get("label")), "text": _text(item.get("text"))})
            else:
                parsed.append({"label": chr(ord("A") + index), "text": _text(item)})
    return parsed


def sample_from_task(task: LsTask, mapping: LsMapping) -> ParsedSample | RowError:
    """A task as a sample: its mapped data, then the sample fields it carries in data under
    the field's own name, the further images, media licences and custom fields (``extra``)
    of this site's release; a required field left empty rejects it. Any other data key is a
    custom field."""
    if task.problem is not None:
        return RowError(
            task.row, task.id, message("task {id}: {problem}", id=task.id, problem=task.problem)
        )
    data = task.data
    external = _text(data.get(mapping.data.get("external_id", ""))) or task.id
    values = {name: _text(data.get(key)) for name, key in mapping.data.items()}
    missing = [name for name in REQUIRED_DATA_FIELDS if not values.get(name)]
    if missing:
        return RowError(
            task.row,
            external,
            message(
                "task {id}: the mapping leaves {fields} empty",
                id=task.id,
                fields=", ".join(missing),
            ),
        )
    used = set(mapping.data.values())
    own: dict[str, Any] = {
        name: _text(data[name]) for name in OWN_TEXT_FIELDS if name in data and name not in used
    }
    lists: dict[str, Any] = {
        name: [_text(item) for item in data[name]]
        for name in OWN_LIST_FIELDS
        if isinstance(data.get(name), list) and name not in used
    }
    parsed_options = _options(data.get("options"))
    custom = data.get(EXTRA) if EXTRA not in used else None
    used |= {"options", *own, *lists, MORE_IMAGES, MEDIA_NOTES, "source_url"}
    if isinstance(custom, dict):
        used.add(EXTRA)
    if isinstance(data.get("options"), list):
        used.add(OPTIONS_TEXT)  # the options as display text: derived, not read back
    extra = {k: json_safe(v) for k, v in data.items() if k not in used and k != "image"}
    if isinstance(custom, dict):
        extra.update({str(k): json_safe(v) for k, v in custom.items()})
    if task.has_id:
        extra["labelstudio_task"] = task.id
    return ParsedSample(
        row=task.row,
        external_id=external,
        question=values.get("question", ""),
        question_format=own.pop("question_format", "") or ("mcq" if parsed_options else ""),
        options=parsed_options,
        reference_answer=values.get("reference_answer", ""),
        explanation=values.get("explanation", ""),
        split=values.get("split", ""),
        source_dataset=own.pop("source_dataset", "Label Studio"),
        source_url=_text(data.get("source_url")),
        media=_media(data, mapping.data.get("image", "")),
        extra=extra,
        **own,
        **lists,
    )


def iter_labelstudio(source: Source, mapping: LsMapping) -> Iterator[ParsedSample | RowError]:
    """The samples of a Label Studio export by ``mapping`` (``mapping_for``: the release's
    own when none is given and the export is this site's release); FormatError when the
    mapping leaves a required field empty (before any row)."""
    yield from _samples(read_tasks(source), mapping)


def iter_labelstudio_tasks(document: Any, mapping: LsMapping) -> Iterator[ParsedSample | RowError]:
    """The samples of an export's parsed JSON (see ``iter_labelstudio``)."""
    yield from _samples(tasks_from_document(document), mapping)


def _samples(tasks: list[LsTask], given: LsMapping) -> Iterator[ParsedSample | RowError]:
    mapping = mapping_for(tasks, given)
    _check(mapping)
    for task in tasks:
        yield sample_from_task(task, mapping)


def _check(mapping: LsMapping) -> None:
    missing = mapping.missing()
    if missing:
        raise FormatError(
            message(
                "the Label Studio mapping leaves {fields} empty: say which data key holds it",
                fields=", ".join(missing),
            )
        )


# --- export ----------------------------------------------------------------------------

CHOICE_FIELDS = ("answerability_group", "category_code", "question_format", "scenario")
TEXT_FIELDS = ("reference_answer", "explanation")


def _data_uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def export_task(
    *,
    external_id: str,
    fields: Mapping[str, Any],
    image: tuple[str, bytes] | None,
    meta: Mapping[str, Any],
    more_images: Iterable[tuple[str, bytes]] = (),
    media: Iterable[Mapping[str, Any]] = (),
    source_url: str = "",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One release sample as a Label Studio task: its data (every label field under its own
    name, the first image as ``image``, any further ones in ``more_images``, each medium's
    licence in ``media``, the custom fields in ``extra``), and one annotation whose result
    holds the verified labels. A task's data is any JSON, so nothing of the sample is left
    out; ``sample_from_task`` reads it all back."""
    options = fields.get("options") or []
    data: dict[str, Any] = {
        "external_id": external_id,
        "question": fields.get("question", ""),
        "options": [{"label": o.get("label", ""), "text": o.get("text", "")} for o in options],
        "options_text": "\n".join(f"{o.get('label', '')}. {o.get('text', '')}" for o in options),
    }
    if image is not None:
        data["image"] = _data_uri(*image)
    extra_images = [_data_uri(*item) for item in more_images]
    if extra_images:
        data[MORE_IMAGES] = extra_images
    for name in (*TEXT_FIELDS, *CHOICE_FIELDS, "split"):
        data[name] = fields.get(name) or ""
    for name in OWN_TEXT_FIELDS:
        if name not in data:
            data[name] = fields.get(name) or ""
    for name in OWN_LIST_FIELDS:
        data[name] = [str(item) for item in fields.get(name) or []]
    data["source_url"] = source_url
    data[MEDIA_NOTES] = [
        {
            "role": str(item.get("role", "")),
            "position": int(item.get("position", 0)),
            "licence": str(item.get("licence", "")),
        }
        for item in media
    ]
    data[EXTRA] = dict(extra or {})
    result: list[dict[str, Any]] = [
        {
            "from_name": REVIEW_CONTROL,
            "to_name": "question",
            "type": "choices",
            "value": {"choices": [ACCEPT]},
        }
    ]
    for name in CHOICE_FIELDS:
        if fields.get(name):
            result.append(
                {
                    "from_name": name,
                    "to_name": "question",
                    "type": "choices",
                    "value": {"choices": [fields[name]]},
                }
            )
    for name in TEXT_FIELDS:
        if fields.get(name):
            result.append(
                {
                    "from_name": name,
                    "to_name": "question",
                    "type": "textarea",
                    "value": {"text": [fields[name]]},
                }
            )
    return {
        "data": data,
        "annotations": [{"result": result, "was_cancelled": False, "ground_truth": True}],
        "meta": dict(meta),
    }


def label_config(choices: Mapping[str, Iterable[str]]) -> str:
    """The labelling interface of a project that imports this site's export: the image,
    question and options, a choice per label field (its taxonomy's terms), text areas for
    the reference answer and explanation, and accept/reject."""
    lines = [
        "<View>",
        '  <Image name="image" value="$image"/>',
        '  <Text name="question" value="$question"/>',
        '  <Text name="options_text" value="$options_text"/>',
        f'  <Choices name="{REVIEW_CONTROL}" toName="question" choice="single" required="true">',
        f'    <Choice value="{ACCEPT}"/>',
        f'    <Choice value="{REJECT}"/>',
        "  </Choices>",
    ]
    for name in CHOICE_FIELDS:
        values = sorted({v for v in choices.get(name, ()) if v})
        if not values:
            continue
        lines.append(f'  <Choices name="{name}" toName="question" choice="single">')
        lines += [f'    <Choice value="{_xml(v)}"/>' for v in values]
        lines.append("  </Choices>")
    for name in TEXT_FIELDS:
        lines.append(
            f'  <TextArea name="{name}" toName="question" maxSubmissions="1" editable="true"/>'
        )
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def _xml(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


# Data keys every task of this site's release holds (``export_task``), whatever the sample.
RELEASE_DATA_KEYS = frozenset(
    {"external_id", "question", "options_text", "reference_answer", MEDIA_NOTES, EXTRA}
)


def is_release(tasks: Iterable[LsTask]) -> bool:
    """Whether the tasks are this site's Label Studio release (or Label Studio's export of a
    project that imported it, which keeps the tasks' data): every readable task holds the
    data keys the release writes, and there is at least one."""
    readable = [task for task in tasks if task.problem is None]
    return bool(readable) and all(task.data.keys() >= RELEASE_DATA_KEYS for task in readable)


def mapping_for(tasks: list[LsTask], given: LsMapping) -> LsMapping:
    """The mapping to read the tasks by: the one given, or, when none is given (no data key
    and no control named), the release's own mapping for this site's release."""
    if not given.data and not given.controls and is_release(tasks):
        return release_mapping()
    return given


def release_mapping() -> LsMapping:
    """The mapping of this site's own Label Studio export."""
    return LsMapping(
        {
            "external_id": "external_id",
            "image": "image",
            "question": "question",
            "reference_answer": "reference_answer",
            "explanation": "explanation",
            "split": "split",
        },
        {name: name for name in (*CHOICE_FIELDS, *TEXT_FIELDS)},
    )
