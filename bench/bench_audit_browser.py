"""Benchmark: what an auditor feels in the browser, from the rating's Enter to the next audit
item's image decoded and on screen, over N items, on the production shape.

The server is the README's production shape, as ``bench/bench_review_browser.py`` runs it:
gunicorn (``--preload -w 2 -k gthread --threads 4``), PostgreSQL, DEBUG off, static files
collected and served by WhiteNoise. Its database is built from the LogicVista items in
``../shared/data/logicvista`` (real text images of about 875 x 230 pixels), one evaluated
model's response per item scored by three judges, an audit set of every item (rated once) and
one auditor.

Headless Chromium (Playwright) logs in, opens the first item, and per item waits until the
page has the next item reserved and loaded (``data-ahead="ready"``: an auditor takes seconds
per item, the prefetch well under one), presses the two score keys and Enter, and reads the
page's own measure (``performance.measure("audit-next")``, ``static/js/page-ahead.js``: from
the keydown event's timestamp to the task after the frame that shows the new image, decoded).
It then waits for the background rating and lease before the next item. Two phases on fresh
audit sets: ``ahead`` (the page as shipped) and ``page_load`` (the reservation endpoint
refused by the browser, so every item opens by a full page load, as before the preloading).
The first ``--warmup`` items of each are not counted.

Run: .venv/bin/python bench/bench_audit_browser.py [--items 50] [--warmup 3]
     [--pg postgres://postgres@127.0.0.1:5432] [--db bench_audit_browser]
Prints the figures, and one JSON object on the last line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_review_browser import (  # noqa: E402
    LOGICVISTA,
    _base_env,
    _free_port,
    _manage,
    _summary,
    serving,
)
from bench.support import make_database  # noqa: E402

USERNAME, PASSWORD = "bench-auditor", "bench-auditor-pw-1"
DATASET = "LogicVista (audit browser bench)"
PHASES = ("ahead", "page_load")
# The rating saved and the next item the auditor's lease (its time shown), the one after
# reserved or refused.
_SETTLED = (
    "() => document.documentElement.dataset.ahead !== 'loading'"
    " && document.getElementById('lease-note').textContent.trim() !== ''"
)


def build(env: dict[str, str], items: int) -> dict[str, int]:
    """Migrate, import ``items`` LogicVista items with a scored response each, draw one audit
    set per phase and add the auditor; the audit sets' ids by phase."""
    _manage(env, "migrate", "--noinput", "-v", "0")
    _manage(env, "compile_translations")
    script = f"""
import json
from pathlib import Path
from django.contrib.auth.models import Group, User
from annotation import services
from annotation.models import SampleStatus
from core import roles
from judging.audit import services as audit_services
from judging.models import Judge, ModelResponse, Verdict

items = json.loads(Path({str(LOGICVISTA / "dataset.json")!r}).read_text())
dataset = services.dataset_create(name={DATASET!r}, kind="image_question")
usable = [(key, item) for key, item in items.items() if item.get("question") and item.get("answer")]
judges = [
    Judge.objects.create(name=f"bench-judge-{{i}}", kind="openai", family=f"f{{i}}",
                         base_url="http://127.0.0.1:9/v1", model="bench")
    for i in range(3)
]
for n, (key, item) in enumerate(usable[:{items}]):
    image = Path({str(LOGICVISTA / "images")!r}, item["imagename"]).read_bytes()
    sample = services.sample_create(
        dataset=dataset,
        external_id=key,
        question=item["question"],
        reference_answer=item["answer"],
        explanation=item.get("reasoning", ""),
        source_dataset="LogicVista",
        status=SampleStatus.PENDING_REVIEW,
        media=[("image", services.media_asset_store(data=image, kind="image"))],
    )
    response = ModelResponse.objects.create(
        dataset=dataset, sample=sample, model_name="bench-model",
        response=f"The answer is {{item['answer']}} because of the picture.",
    )
    for j, judge in enumerate(judges):
        Verdict.objects.create(
            judge=judge, task="mmooc_scoring", prompt_version="v1", sample=sample,
            response=response, answer_score=(n + j) % 2, reasoning_score=0.5,
        )
user = User.objects.create_user(username={USERNAME!r}, password={PASSWORD!r})
user.groups.add(Group.objects.get(name=roles.AUDITOR))
services.dataset_add_member(dataset=dataset, user=user)
sets = {{}}
for seed, phase in enumerate({list(PHASES)!r}):
    sets[phase] = audit_services.audit_set_draw(
        dataset=dataset, name=phase, task="scoring", size={items}, seed=seed, floor=0,
        double_rating_fraction=0,
    ).pk
print("sets", json.dumps(sets))
"""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"the build failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    sets: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1].split(maxsplit=1)[1])
    return sets


def rate_in_browser(
    base: str, audit_set_id: int, items: int, warmup: int, *, ahead: bool
) -> dict[str, Any]:
    """One auditor rating ``warmup + items`` items by keyboard; the page's measures."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM_ARGS

    times: list[float] = []
    page_loads = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        if not ahead:
            page.route("**/audits/*/ahead/", lambda route: route.abort())
        page.goto(f"{base}/login/")
        page.fill("input[name=username]", USERNAME)
        page.fill("input[name=password]", PASSWORD)
        page.click("form [type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        page.goto(f"{base}/audits/{audit_set_id}/")
        page.click("#start-rating")
        page.wait_for_url("**/audit-items/*/rate/")
        page.evaluate("() => { window.benchMarker = 1; }")
        for step in range(warmup + items):
            state = "ready" if ahead else "none"  # none: the reservation was refused
            page.wait_for_function(
                f"() => document.documentElement.dataset.ahead === '{state}'", timeout=30000
            )
            before = page.evaluate("() => Number(document.documentElement.dataset.shown || 0)")
            page.keyboard.press("1")
            page.keyboard.press("w")
            if ahead:
                page.keyboard.press("Enter")
            else:
                before = 0  # the next page counts from nothing
                with page.expect_navigation():
                    page.keyboard.press("Enter")
            page.wait_for_function(
                f"() => Number(document.documentElement.dataset.shown || 0) > {before}"
            )
            if not page.evaluate("() => window.benchMarker === 1"):
                page_loads += 1
                page.evaluate("() => { window.benchMarker = 1; }")
            shown = float(page.evaluate("() => document.documentElement.dataset.nextMs"))
            if step >= warmup:
                times.append(shown / 1000)
            page.wait_for_function(_SETTLED, timeout=30000)
        browser.close()
    return {**_summary(times), "page_loads": page_loads}


def production(args: argparse.Namespace) -> dict[str, Any]:
    """gunicorn + PostgreSQL as the README's production section runs them; both phases."""
    var = Path(tempfile.mkdtemp(prefix="bench-audit-browser-"))
    env = {
        **_base_env(var),
        "DATABASE_URL": f"{args.pg}/{args.db}",
        "SECRET_KEY": "bench-only-" + "z" * 40,
        "DEBUG": "0",
        # Plain HTTP on loopback, no TLS proxy in front.
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "CONN_MAX_AGE": "600",
    }
    make_database(f"{args.pg}/postgres", args.db)
    port = _free_port()
    command = [
        *(sys.executable, "-m", "gunicorn", "mmooc_site.wsgi", "--preload"),
        *("-w", "2", "-k", "gthread", "--threads", "4", "--log-level", "error"),
        *("-b", f"127.0.0.1:{port}", "--no-control-socket"),
    ]
    # The items measured, the warm-up, and the one reserved after the last counted.
    size = args.items + args.warmup + 1
    try:
        sets = build(env, size)
        _manage(env, "collectstatic", "--noinput", "-v", "0")
        result: dict[str, Any] = {}
        with serving(command, env, port):
            for phase in PHASES:
                result[phase] = rate_in_browser(
                    f"http://127.0.0.1:{port}",
                    sets[phase],
                    args.items,
                    args.warmup,
                    ahead=phase == "ahead",
                )
    finally:
        shutil.rmtree(var, ignore_errors=True)
    return {**result, "server": "gunicorn 2 workers x 4 threads (gthread), PostgreSQL"}


def measure(
    *,
    items: int = 50,
    warmup: int = 3,
    pg: str = "postgres://postgres@127.0.0.1:5432",
    db: str = "bench_audit_browser",
) -> dict[str, Any]:
    """The ``ahead`` and ``page_load`` figures, each ``{"p50_ms", "p95_ms", "n", ...}``."""
    return production(argparse.Namespace(items=items, warmup=warmup, pg=pg, db=db))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="bench_audit_browser")
    args = parser.parse_args()
    result = measure(items=args.items, warmup=args.warmup, pg=args.pg, db=args.db)
    for phase in PHASES:
        figures = result[phase]
        print(
            f"{phase}: Enter to the next audit image on screen p50 {figures['p50_ms']} ms, "
            f"p95 {figures['p95_ms']} ms, max {figures['max_ms']} ms over {figures['n']} items, "
            f"{figures['page_loads']} page loads ({result['server']})"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
