"""The example file of every format in the reference (``docs/formats/examples/``), made here.

``python -m tests.support.format_examples docs/formats/examples`` writes them again (Label
Studio's export is kept as a real instance wrote it; see bench/labelstudio_roundtrip.py).
The examples share one small MMOOC dataset (``samples/mmooc.jsonl``: external ids 0-3), so
that the response and verdict examples import into it; ``tests/mmooc_site/
judging/formats/test_reference.py`` imports each one.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from annotation.formats.jsonl import write_jsonl
from annotation.formats.labelstudio import export_task
from tests.annotation.imports_support import (
    build_logicvista,
    build_trimodal,
    build_vlmevalkit,
    mmooc_record,
    write_lines,
    yes_no_sample,
)
from tests.support.harness_files import (
    LmmsDoc,
    LmmsTask,
    vlmevalkit_run_folder,
    write_lmms_eval_log,
    write_vlmevalkit_evaluated,
    write_vlmevalkit_predictions,
)

IDS = ["0", "1", "2", "3"]
CHECKPOINT = "Qwen/Qwen2.5-VL-7B-Instruct"


def mmooc_examples() -> list[dict[str, Any]]:
    """Four MMOOC records: two out of context (refuse), two shifted in context."""
    records = []
    for n, external in enumerate(IDS):
        ooc = n % 2 == 0
        records.append(
            mmooc_record(
                n + 1,
                question_id=external,
                answer="C" if ooc else "A",
                ooc_type="visual_false_premises" if ooc else "misleading_premise",
                question=f"What is written on sign {n}? (A) Stop (B) Go (C) none of the above",
            )
        )
    return records


def write_examples(root: Path) -> None:
    samples = root / "samples"
    records = mmooc_examples()
    write_lines(samples / "mmooc.jsonl", records)
    tsv = build_vlmevalkit(samples / "vlmevalkit-folder")
    shutil.move(str(tsv.folder / "mmt.tsv"), str(samples / "vlmevalkit.tsv"))
    shutil.rmtree(tsv.folder)
    build_trimodal(samples / "trimodal")
    build_logicvista(samples / "logicvista")
    samples.mkdir(parents=True, exist_ok=True)
    with open(samples / "site.jsonl", "w", encoding="utf-8") as handle:
        write_jsonl([yes_no_sample(n, f"own-{n}") for n in (1, 2)], handle)

    responses = root / "responses"
    write_lines(
        responses / "responses.jsonl",
        [
            {
                "id": external,
                "model": "GPT-4o",
                "response": f"  The answer is {'C' if n % 2 == 0 else 'A'}.\n",
            }
            for n, external in enumerate(IDS)
        ],
    )
    (responses / "GPT4-answers.json").write_text(
        json.dumps({external: {"answer": "(C)", "reasoning": "cannot tell"} for external in IDS}),
        encoding="utf-8",
    )

    lmms = root / "lmms_eval"
    if lmms.exists():
        shutil.rmtree(lmms)
    docs = []
    for n, record in enumerate(records):
        right = n != 3
        docs.append(
            LmmsDoc(
                doc={"question_id": record["question_id"], "question": record["question"]},
                target=record["answer"],
                reply=record["answer"] if right else "B",
                metrics={
                    "mmooc_score": {
                        "question_id": record["question_id"],
                        "answer_score": int(right),
                        "reasoning_score": 0.75 if right else 0.0,
                    },
                    "exact_match": float(right),
                },
            )
        )
    write_lmms_eval_log(
        lmms,
        model="qwen2_5_vl",
        model_args=f"pretrained={CHECKPOINT},max_pixels=12845056",
        tasks=[
            LmmsTask(
                name="mmooc",
                docs=docs,
                metric_list=[
                    {
                        "metric": "mmooc_score",
                        "aggregation": "mmooc_aggregate",
                        "higher_is_better": True,
                    },
                    {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True},
                ],
            )
        ],
    )

    vlm = root / "vlmevalkit" / "outputs"
    if vlm.exists():
        shutil.rmtree(vlm)
    folder = vlmevalkit_run_folder(vlm, "InternVL3-8B")
    rows = [
        {
            "index": int(r["question_id"]),
            "question": r["question"],
            "A": "Stop",
            "B": "Go",
            "C": "none of the above",
            "answer": r["answer"],
            "category": r["category"],
            "image": r["image"],
        }
        for r in records
    ]
    prediction = write_vlmevalkit_predictions(
        folder,
        model="InternVL3-8B",
        dataset="MMOOC",
        rows=rows,
        predictions={int(e): ("C" if i % 2 == 0 else "The answer is A") for i, e in enumerate(IDS)},
    )
    write_vlmevalkit_evaluated(
        prediction,
        judge="gpt4o-mini",
        outcomes={int(e): (("C", 1) if i % 2 == 0 else ("A", 1)) for i, e in enumerate(IDS)},
    )

    verdicts = root / "verdicts"
    write_lines(
        verdicts / "verdicts.jsonl",
        [
            {
                "sample_id": external,
                "judge": "o3",
                "task": "answerability",
                "label": "unanswerable" if n % 2 == 0 else "answerable",
                "rationale": "checked by hand",
            }
            for n, external in enumerate(IDS)
        ],
    )

    labelstudio = root / "labelstudio"
    labelstudio.mkdir(parents=True, exist_ok=True)
    tasks = [
        export_task(
            external_id=r["question_id"],
            fields={
                "question": r["question"],
                "options": [
                    {"label": "A", "text": "Stop"},
                    {"label": "B", "text": "Go"},
                    {"label": "C", "text": "none of the above"},
                ],
                "reference_answer": r["answer"],
                "explanation": r["reasoning"],
                "answerability_group": "ooc" if n % 2 == 0 else "shifted_ic",
                "category_code": "VFP" if n % 2 == 0 else "MP",
                "question_format": "mcq",
                "scenario": r["category"],
            },
            image=("image/png", base64.b64decode(r["image"])),
            meta={"status": "verified", "revision": 2, "content_hash": ""},
        )
        for n, r in enumerate(records)
    ]
    (labelstudio / "release.json").write_text(json.dumps(tasks, indent=1), encoding="utf-8")


if __name__ == "__main__":
    write_examples(Path(sys.argv[1]))
