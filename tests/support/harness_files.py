"""Output files written the way the evaluation harnesses write them, for tests and examples.

Each builder repeats, step by step, what the harness's own code does, with the lines it
follows named (the harnesses are too heavy to install here; their sources were read from
the packages on PyPI):

- lmms-eval 0.7.3: ``evaluator._process_document_results`` builds each logged sample;
  ``evaluator.simple_evaluate`` and ``evaluate`` build the results dict;
  ``loggers.evaluation_tracker.EvaluationTracker.save_results_aggregated`` and
  ``save_results_samples`` write ``<output_path>/<model_name_sanitized>/<date_id>_results.json``
  and ``<date_id>_samples_<task>.jsonl``.
- VLMEvalKit (``vlmeval`` 0.2rc1 in nvidia-vlmeval 26.3): ``run.py`` makes
  ``<work_dir>/<model>/T<date>_G<commit>/``; ``inference.infer_data_job`` drops ``image``,
  adds ``prediction`` and dumps ``<model>_<dataset>.xlsx`` through ``smp.file.dump``
  (``to_excel(index=False, engine="xlsxwriter")``, ``to_csv(..., quoting=QUOTE_ALL)``);
  ``dataset.image_vqa.LogicVista.evaluate`` writes ``<model>_<dataset>_<judge>.xlsx`` (res,
  log, hit) and its ``_score.csv`` (``utils.logicvista.evaluate_logicvista``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _hash_string(text: str) -> str:  # lmms_eval.utils.hash_string
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _handle_non_serializable(o: Any) -> Any:  # lmms_eval.utils.handle_non_serializable
    if isinstance(o, set):
        return list(o)
    return str(o)


def _sanitize_list(sub: Any) -> Any:  # lmms_eval.utils.sanitize_list
    if isinstance(sub, list):
        return [_sanitize_list(item) for item in sub]
    if isinstance(sub, tuple):
        return tuple(_sanitize_list(item) for item in sub)
    return str(sub)


def sanitize_model_name(model_name: str) -> str:  # lmms_eval.utils.sanitize_model_name
    parts = model_name.split("/")
    last_two = "/".join(parts[-2:]) if len(parts) > 1 else parts[-1]
    return re.sub(r"[\"<>:/\|\\?\*\[\]]+", "__", last_two)


@dataclass
class LmmsDoc:
    """One document of a task, the model's reply to it and the metrics process_results gave."""

    doc: dict[str, Any]
    target: str
    reply: str
    metrics: dict[str, Any]
    # The raw reply before the filters, when a filter (or reasoning tags) changed it.
    raw_reply: str | None = None


@dataclass
class LmmsTask:
    name: str
    docs: list[LmmsDoc]
    metric_list: list[dict[str, Any]]
    test_split: str = "test"
    prompt: str = "{question}\nAnswer with the option's letter or a short phrase."
    gen_kwargs: dict[str, Any] = field(
        default_factory=lambda: {"max_new_tokens": 1024, "temperature": 0, "until": ["\n\n"]}
    )


def write_lmms_eval_log(
    output_path: Path,
    *,
    model: str,
    model_args: str,
    tasks: list[LmmsTask],
    datetime_str: str = "20261201_101530",
    older_layout: bool = False,
) -> Path:
    """Write what ``lmms-eval --model MODEL --model_args ARGS --tasks … --log_samples
    --output_path OUTPUT`` writes; returns the model's folder. With ``older_layout`` the rows
    keep ``doc`` and ``arguments`` and have no ``input`` (releases before 0.3)."""
    samples: dict[str, list[dict[str, Any]]] = {}
    for task in tasks:
        logged = []
        for doc_id, item in enumerate(task.docs):
            ctx = task.prompt.format(**item.doc)
            # Instance.args of generate_until: (ctx, gen_kwargs, doc_to_visual, doc_id, task,
            # split); the function doc_to_visual is filtered out.
            arguments = [ctx, task.gen_kwargs, doc_id, task.name, task.test_split]
            raw = item.raw_reply if item.raw_reply is not None else item.reply
            sample: dict[str, Any] = {
                "doc_id": doc_id,
                "doc": dict(item.doc),
                "target": item.target,
                "arguments": arguments,
                "resps": [[raw]],
                "filtered_resps": [item.reply],
                "token_counts": [None],
                "doc_hash": _hash_string(
                    json.dumps(
                        item.doc, indent=2, default=_handle_non_serializable, ensure_ascii=False
                    )
                ),
            }
            sample.update(item.metrics)
            logged.append(sample)
        samples[task.name] = logged
    results: dict[str, Any] = {
        "results": {
            t.name: {"alias": t.name, **{f"{m['metric']},none": 0.0 for m in t.metric_list}}
            for t in tasks
        },
        "group_subtasks": {t.name: [] for t in reversed(tasks)},
        "configs": {
            t.name: {
                "task": t.name,
                "dataset_path": "local/mmooc",
                "test_split": t.test_split,
                "output_type": "generate_until",
                "generation_kwargs": t.gen_kwargs,
                "metric_list": t.metric_list,
                "repeats": 1,
                "should_decontaminate": False,
                "metadata": {"version": 0.0},
            }
            for t in sorted(tasks, key=lambda t: t.name)
        },
        "versions": {t.name: 0.0 for t in tasks},
        "n-shot": {t.name: 0 for t in tasks},
        "higher_is_better": {
            t.name: {m["metric"]: m.get("higher_is_better", True) for m in t.metric_list}
            for t in tasks
        },
        "n-samples": {t.name: {"original": len(t.docs), "effective": len(t.docs)} for t in tasks},
    }
    results["config"] = {
        "model": model,
        "model_args": model_args,
        "model_backend": f"lmms_eval.models.chat.{model}.{model} (chat)",
        "batch_size": "1",
        "batch_sizes": [],
        "device": None,
        "use_cache": None,
        "limit": None,
        "offset": 0,
        "bootstrap_iters": 100000,
        "process_docs_parallel": 4,
        "gen_kwargs": "",
        "random_seed": 0,
        "numpy_seed": 1234,
        "torch_seed": 1234,
        "fewshot_seed": 1234,
    }
    results["git_hash"] = None
    results["git_branch"] = None
    results["lmms_eval_version"] = "0.7.3"
    results["date"] = datetime_str
    # GeneralConfigTracker._get_model_name
    model_name = ""
    for prefix in ("peft=", "delta=", "pretrained=", "model=", "model_version=", "model_name="):
        if prefix in model_args:
            model_name = model_args.split(prefix)[1].split(",")[0]
            break
    # save_results_aggregated
    task_hashes = {
        name: _hash_string(
            "".join(f"sample_{index}" + s["doc_hash"] for index, s in enumerate(rows))
        )
        for name, rows in samples.items()
    }
    results["task_hashes"] = task_hashes
    start = time.perf_counter()
    results.update(
        {
            "model_source": model,
            "model_name": model_name,
            "model_name_sanitized": sanitize_model_name(model_name),
            "system_instruction": None,
            "system_instruction_sha": None,
            "fewshot_as_multiturn": False,
            "chat_template": None,
            "chat_template_sha": None,
            "start_time": start,
            "end_time": start + 12.5,
            "total_evaluation_time_seconds": "12.5",
        }
    )
    folder = output_path / sanitize_model_name(model_name)
    folder.mkdir(parents=True, exist_ok=True)
    date_id = datetime_str.replace(":", "-")
    (folder / f"{date_id}_results.json").write_text(
        json.dumps(results, indent=2, default=_handle_non_serializable, ensure_ascii=False),
        encoding="utf-8",
    )
    # save_results_samples, once per task of results["configs"]
    for task_name in results["configs"]:
        path = folder / f"{date_id}_samples_{task_name}.jsonl"
        for sample in samples[task_name]:
            if not older_layout:
                sample["input"] = sample["arguments"][0]
            sample["resps"] = _sanitize_list(sample["resps"])
            sample["filtered_resps"] = _sanitize_list(sample["filtered_resps"])
            if isinstance(sample["resps"], list) and len(sample["resps"]) == 1:
                sample["resps"] = sample["resps"][0]
            if isinstance(sample["filtered_resps"], list) and len(sample["filtered_resps"]) == 1:
                sample["filtered_resps"] = sample["filtered_resps"][0]
            if sample["resps"] == sample["filtered_resps"] or (
                isinstance(sample["resps"], list)
                and len(sample["resps"]) == 1
                and sample["resps"][0] == sample["filtered_resps"]
            ):
                sample.pop("resps")
            sample["target"] = str(sample["target"])
            if not older_layout:
                sample.pop("arguments")
                sample.pop("doc")
            with open(path, "a", encoding="utf-8") as out:
                out.write(
                    json.dumps(sample, default=_handle_non_serializable, ensure_ascii=False) + "\n"
                )
    return folder


def vlmevalkit_run_folder(work_dir: Path, model: str, date: str = "20261201") -> Path:
    """``run.py``: ``pred_root = osp.join(work_dir, model_name, f"T{date}_G{commit_id}")``."""
    folder = work_dir / model / f"T{date}_Gab12cd34"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _dump(rows: list[dict[str, Any]], path: Path) -> None:
    """``vlmeval.smp.file.dump`` of a DataFrame to .xlsx, .tsv or .csv."""
    import pandas as pd

    data = pd.DataFrame(rows)
    if path.suffix == ".xlsx":
        data.to_excel(path, index=False, engine="xlsxwriter")
    elif path.suffix == ".tsv":
        data.to_csv(path, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    else:
        data.to_csv(path, index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)


def write_vlmevalkit_predictions(
    folder: Path,
    *,
    model: str,
    dataset: str,
    rows: list[dict[str, Any]],
    predictions: dict[Any, str],
    suffix: str = ".xlsx",
) -> Path:
    """``infer_data_job``: the dataset's rows without ``image``, ``prediction`` added (as
    ``str``), dumped as ``<model>_<dataset>.xlsx`` (or .tsv / .csv with PRED_FORMAT)."""
    data = []
    for row in rows:
        out = {k: v for k, v in row.items() if k != "image"}
        out["prediction"] = str(predictions[row["index"]])
        data.append(out)
    path = folder / f"{model}_{dataset}{suffix}"
    _dump(data, path)
    return path


def write_vlmevalkit_evaluated(
    prediction_file: Path,
    *,
    judge: str,
    outcomes: dict[Any, tuple[str, int]],
) -> tuple[Path, Path]:
    """``LogicVista.evaluate``: the prediction file's rows plus ``res``, ``log`` and ``hit``
    as ``<model>_<dataset>_<judge>.xlsx``, and ``evaluate_logicvista``'s ``_score.csv``."""
    import pandas as pd

    data = pd.read_excel(prediction_file)
    data["res"] = [outcomes[i][0] for i in data["index"]]
    data["log"] = [
        "Succeed" if outcomes[i][0] else "All 5 retries failed.\n" for i in data["index"]
    ]
    data["hit"] = [outcomes[i][1] for i in data["index"]]
    storage = prediction_file.with_name(f"{prediction_file.stem}_{judge}.xlsx")
    data.to_excel(storage, index=False, engine="xlsxwriter")
    hits = int(data["hit"].sum())
    score = pd.DataFrame(
        {
            "Task&Skill": ["Overall"],
            "tot": [len(data)],
            "hit": [hits],
            "acc": [hits / len(data) * 100],
        }
    )
    score_path = storage.with_name(storage.stem + "_score.csv")
    score.to_csv(score_path, index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    return storage, score_path
