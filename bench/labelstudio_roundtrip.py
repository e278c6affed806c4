"""Label Studio in and out, against a real Label Studio (1.23) on this machine.

Run Label Studio in its own virtualenv (never the project's), e.g.::

    uv venv /work/ls-venv && uv pip install --python /work/ls-venv/bin/python label-studio==1.23.2
    LABEL_STUDIO_BASE_DATA_DIR=/tmp/lsdata SENTRY_DSN= LATEST_VERSION_CHECK=false \\
        /work/ls-venv/bin/label-studio init p --username lead@example.org --password pw123456 \\
        --user-token <40 hex> --no-browser
    (enable legacy tokens for the organisation and make two annotators, see ``README`` of
    ``docs/formats/examples/labelstudio``) then ``label-studio start p --port 8093``.

Then::

    python bench/labelstudio_roundtrip.py export --url http://127.0.0.1:8093 \\
        --lead TOKEN --annotators TOKEN1,TOKEN2 --out export.json
    python bench/labelstudio_roundtrip.py import-release --url … --lead TOKEN \\
        --release labelstudio.json --config label_config.xml

``export`` makes a project, imports four MMOOC-like tasks, has each annotator annotate them
and a model predict them, and writes the project's JSON export (annotators' e-mails and full
predictions); ``import-release`` makes a project with this site's label config, imports this
site's release into it and prints what Label Studio stored. Each step's requests are
bounded (timeouts) and go to the given local URL only. The tests run both when
``LABEL_STUDIO_URL`` is set (``tests/annotation/test_labelstudio_live.py``).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import time
from pathlib import Path
from typing import Any

import httpx

CONFIG = """<View>
  <Image name="image" value="$image"/>
  <Header value="$question"/>
  <Text name="reference" value="$reference_answer"/>
  <Choices name="answerability_group" toName="image" choice="single" showInLine="true">
    <Choice value="ooc"/>
    <Choice value="shifted_ic"/>
  </Choices>
  <Choices name="category_code" toName="image" choice="single" showInLine="true">
    <Choice value="VFP"/>
    <Choice value="MA"/>
    <Choice value="MP"/>
    <Choice value="PA"/>
  </Choices>
  <TextArea name="explanation" toName="image" maxSubmissions="1" editable="true"/>
</View>
"""


def _png(rgb: tuple[int, int, int]) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), rgb).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def tasks() -> list[dict[str, Any]]:
    """Four MMOOC-like items: out-of-context (refuse) and shifted in-context ones."""
    return [
        {
            "data": {
                "question_id": f"ls-{i}",
                "image": _png((40 + 50 * i, 90, 160 - 30 * i)),
                "question": f"What colour is the car behind house number {i}?",
                "reference_answer": "I can't answer" if i % 2 == 0 else "Red",
                "reasoning": "No car is visible." if i % 2 == 0 else "The car is red.",
            }
        }
        for i in range(4)
    ]


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60, trust_env=False)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Token {token}"}


def export(url: str, lead: str, annotators: list[str], out: Path) -> list[dict[str, Any]]:
    """Make a project, annotate and predict it, and write its JSON export to ``out``."""
    with _client(url) as client:
        project = client.post(
            "/api/projects/",
            headers=_auth(lead),
            json={"title": f"mmooc-{int(time.time())}", "label_config": CONFIG},
        )
        project.raise_for_status()
        pid = project.json()["id"]
        client.post(
            f"/api/projects/{pid}/import", headers=_auth(lead), json=tasks()
        ).raise_for_status()
        listed = client.get(f"/api/tasks/?project={pid}", headers=_auth(lead)).json()
        task_rows = listed["tasks"] if isinstance(listed, dict) else listed
        for task in sorted(task_rows, key=lambda t: t["id"]):
            ooc = task["data"]["reference_answer"] == "I can't answer"
            for n, token in enumerate(annotators):
                # The second annotator disagrees on the last item (out of context, for them).
                disagrees = n == 1 and task["data"]["question_id"] == "ls-3"
                group = "ooc" if ooc or disagrees else "shifted_ic"
                result = [
                    {
                        "from_name": "answerability_group",
                        "to_name": "image",
                        "type": "choices",
                        "value": {"choices": [group]},
                    },
                    {
                        "from_name": "category_code",
                        "to_name": "image",
                        "type": "choices",
                        "value": {"choices": ["VFP" if ooc or disagrees else "MP"]},
                    },
                ]
                client.post(
                    f"/api/tasks/{task['id']}/annotations/",
                    headers=_auth(token),
                    json={"result": result, "lead_time": 20.0 + n},
                ).raise_for_status()
            client.post(
                "/api/predictions/",
                headers=_auth(lead),
                json={
                    "task": task["id"],
                    "model_version": "gpt-4o-prelabel",
                    "score": 0.8,
                    "result": [
                        {
                            "from_name": "answerability_group",
                            "to_name": "image",
                            "type": "choices",
                            "value": {"choices": ["ooc" if ooc else "shifted_ic"]},
                        }
                    ],
                },
            ).raise_for_status()
        created = client.post(
            f"/api/projects/{pid}/exports/",
            headers=_auth(lead),
            json={
                "serialization_options": {
                    "annotations__completed_by": {"only_id": False},
                    "predictions": {"only_id": False},
                    "drafts": {"only_id": True},
                }
            },
        )
        created.raise_for_status()
        export_id = created.json()["id"]
        download = client.get(
            f"/api/projects/{pid}/exports/{export_id}/download?exportType=JSON",
            headers=_auth(lead),
        )
        download.raise_for_status()
        out.write_bytes(download.content)
        data: list[dict[str, Any]] = json.loads(download.content)
        return data


def import_release(url: str, lead: str, release: Path, config: Path) -> dict[str, Any]:
    """Import this site's Label Studio release into a new project; what Label Studio stored."""
    with _client(url) as client:
        project = client.post(
            "/api/projects/",
            headers=_auth(lead),
            json={"title": f"release-{int(time.time())}", "label_config": config.read_text()},
        )
        project.raise_for_status()
        pid = project.json()["id"]
        imported = client.post(
            f"/api/projects/{pid}/import",
            headers={**_auth(lead), "Content-Type": "application/json"},
            content=release.read_bytes(),
        )
        imported.raise_for_status()
        stored = client.get(f"/api/projects/{pid}/export?exportType=JSON", headers=_auth(lead))
        stored.raise_for_status()
        return {"import": imported.json(), "tasks": json.loads(stored.content), "project": pid}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("export")
    one.add_argument("--url", required=True)
    one.add_argument("--lead", required=True)
    one.add_argument("--annotators", required=True, help="two tokens, comma-separated")
    one.add_argument("--out", type=Path, required=True)
    two = sub.add_parser("import-release")
    two.add_argument("--url", required=True)
    two.add_argument("--lead", required=True)
    two.add_argument("--release", type=Path, required=True)
    two.add_argument("--config", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "export":
        data = export(args.url, args.lead, args.annotators.split(","), args.out)
        print(json.dumps({"tasks": len(data), "out": str(args.out)}))
    else:
        result = import_release(args.url, args.lead, args.release, args.config)
        print(
            json.dumps(
                {
                    "project": result["project"],
                    "task_count": result["import"].get("task_count"),
                    "annotation_count": result["import"].get("annotation_count"),
                    "stored_tasks": len(result["tasks"]),
                }
            )
        )


if __name__ == "__main__":
    main()
