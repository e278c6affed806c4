"""Every script under bench/ runs as its docstring says, at a tiny size, so that none breaks
unseen: each in a subprocess from the repository root, with its documented command line plus
flags that make it small, on databases of this run's own; it exits 0 and prints the figures it
promises (one JSON object on its last line, with the keys below).

A new bench/*.py script needs a tiny entry in ``BENCHES``, or a place among ``NOT_BENCHES``
(modules the benches import, or a script that needs a server the suite does not start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import ROOT, free_port

# Modules of the benches that are not benches themselves, and why each has no tiny run.
NOT_BENCHES = {
    "floor_site.py": "the floor site's settings (bench_review.py serves them)",
    "floor_urls.py": "the floor site's views (bench_review.py, profile_review.py --floor)",
    "open_loop.py": "bench_review.py's open-loop phase",
    "review_db.py": "bench_review.py's database helpers",
    "statements_floor.py": "the statements floor's views (bench_review.py, profile_review.py)",
    "support.py": "what the benches share",
    "labelstudio_roundtrip.py": (
        "needs a running Label Studio; tests/annotation/test_labelstudio_live.py runs it "
        "when LABEL_STUDIO_URL is set"
    ),
}

# What the test settings put into this process's environment: the benches load the real
# settings and pick their own values (workers not eager, throttles as in production).
_TEST_SETTINGS_ENV = {
    "DJANGO_SETTINGS_MODULE",
    "PREPARE_STATEMENTS",
    "SECRET_KEY",
    "CELERY_TASK_ALWAYS_EAGER",
    "CELERY_QUEUE",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "REQUIRE_LEAD_2FA",
    "API_THROTTLE_ANON",
    "API_THROTTLE_USER",
    "CACHE_KEY_PREFIX",
    "VAR_DIR",
}


@dataclass(frozen=True)
class Tiny:
    """A bench's tiny run: its arguments (``{pg}``, ``{db}``, ``{redis}`` and ``{port}``
    filled in), whether DATABASE_URL names a database of its own, and the keys its last line
    has."""

    args: tuple[str, ...]
    keys: frozenset[str]
    database_url: bool = False
    marks: tuple[Any, ...] = ()
    timeout: float = 300
    env: dict[str, str] = field(default_factory=dict)


PG, REDIS = pytest.mark.postgres, pytest.mark.redis

BENCHES = {
    "bench_agreement.py": Tiny(
        ("--replicates", "20", "--slow-replicates", "2"), frozenset({"items", "raters"})
    ),
    "bench_audit_stats.py": Tiny(
        ("--replicates", "20", "--population", "500", "--audit", "100"),
        frozenset({"items", "seconds", "total_seconds"}),
    ),
    "bench_audit_preview.py": Tiny(
        ("--samples", "200", "--models", "2", "--gets", "2", "--statistics"),
        frozenset({"frame_strata_s", "preview_get_median_s", "preview_queries", "statistics_s"}),
        database_url=True,
        marks=(PG,),
    ),
    "bench_data_manager.py": Tiny(
        ("--samples", "60", "--gets", "1", "--db", "{db}", "--var", "var/{db}"),
        frozenset({"pages", "measured", "slowest", "over_goal"}),
        marks=(PG,),
        timeout=600,
    ),
    "bench_export.py": Tiny(
        ("--samples", "30"), frozenset({"samples", "jsonl", "parquet"}), True, (PG,)
    ),
    "bench_harness_import.py": Tiny(
        ("--samples", "30"),
        frozenset({"lmms_eval", "vlmevalkit", "responses", "verdicts"}),
        True,
        (PG,),
    ),
    "bench_import.py": Tiny(
        ("--rows", "40", "--encode-sample", "5", "--duplicates", "alternate"),
        frozenset({"full", "half", "rows_per_s", "duplicates"}),
        True,
        (PG,),
    ),
    "bench_response_import.py": Tiny(
        ("--samples", "50", "--models", "2"),
        frozenset({"lines", "request_s", "worker_s", "status"}),
        True,
        (PG,),
    ),
    "bench_send_to_review.py": Tiny(("--samples", "100"), frozenset({"runs"}), True, (PG,)),
    "bench_scale.py": Tiny(
        (
            *("--sizes", "60,120", "--gets", "1", "--loops", "3", "--import-rows", "20"),
            *("--db-prefix", "{db}", "--var", "var/{db}"),
        ),
        frozenset({"sizes", "ratios"}),
        database_url=True,
        marks=(PG,),
        timeout=900,
    ),
    "bench_claim_scale.py": Tiny(
        (
            *("--sizes", "60", "--histories", "0,10", "--claims", "3", "--loops", "2"),
            *("--assigned", "5", "--kept-up", "10", "--db-prefix", "{db}"),
        ),
        frozenset({"sizes"}),
        database_url=True,
        marks=(PG,),
    ),
    "bench_reviewer_quality.py": Tiny(
        ("--samples", "100", "--reviewers", "4", "--db", "{pg}/{db}"),
        frozenset({"seconds", "compute_seconds", "page_ms", "api_ms"}),
        marks=(PG,),
    ),
    "bench_throttle.py": Tiny(
        ("--redis", "{redis}", "--calls", "20", "--rounds", "1"),
        frozenset({"drf", "site", "calls"}),
        marks=(REDIS,),
    ),
    "profile_review.py": Tiny(
        ("--loops", "5", "--samples", "20", "--reviewers", "2"),
        frozenset({"claim_queries", "submit_queries", "calls_per_loop", "cpu_ms_per_loop"}),
        database_url=True,
        marks=(PG, REDIS),
    ),
    "bench_judging.py": Tiny(
        ("--items", "20", "--judges", "2", "--latency", "0.01", "--concurrency", "2"),
        frozenset({"verdicts_per_s", "errors", "mix_errors", "mix_requests"}),
        database_url=True,
        marks=(PG, REDIS),
        env={"REDIS_URL": "{redis}"},
    ),
    "bench_memory.py": Tiny(
        (
            *("--pg", "{pg}", "--db", "{db}", "--redis", "{redis}", "--port", "{port}"),
            *("--samples", "50", "--seconds", "1", "--reviewers", "2", "--import-rows", "10"),
            *("--web-workers", "1", "--threads", "2", "--worker-concurrency", "1"),
        ),
        frozenset({"web_pss_mb_at_rest", "production_pss_mb", "supervised_pss_mb"}),
        marks=(PG, REDIS),
    ),
    # Label Studio is not installed here (nor in CI): this site's side alone, said so.
    "bench_labelstudio.py": Tiny(
        (
            *("--ours-only", "--rows", "30", "--rounds", "1", "--port", "{port}"),
            *("--pg", "{pg}", "--db", "{db}", "--redis", "{redis}"),
            *("--web-workers", "1", "--threads", "2", "--worker-concurrency", "1"),
        ),
        frozenset({"ours_only", "label_studio", "rounds", "medians", "ahead"}),
        marks=(PG, REDIS),
        timeout=900,
    ),
    "bench_review.py": Tiny(
        (
            *("--pg", "{pg}", "--db", "{db}", "--port", "{port}", "--samples", "200"),
            *("--reviewers", "2", "--seconds", "1", "--rounds", "1"),
            *("--workers", "1", "--threads", "2", "--phases", "bare,floor,statements,site,open"),
            *("--open-reviewers", "5", "--open-seconds", "2", "--open-warmup", "1"),
        ),
        frozenset({"ratio_site_to_floor", "invariants", "over_reviewed_samples"}),
        marks=(PG, REDIS),
        env={"REDIS_URL": "{redis}"},
    ),
    "bench_review_browser.py": Tiny(
        ("--samples", "3", "--warmup", "1", "--pg", "{pg}", "--db", "{db}"),
        frozenset({"browser", "browser_embedded"}),
        marks=(PG, pytest.mark.browser, pytest.mark.shared_data),
    ),
    "bench_audit_browser.py": Tiny(
        ("--items", "3", "--warmup", "1", "--pg", "{pg}", "--db", "{db}"),
        frozenset({"ahead", "page_load", "server"}),
        marks=(PG, pytest.mark.browser, pytest.mark.shared_data),
    ),
}


def test_every_bench_script_has_a_tiny_run() -> None:
    """Each bench/*.py is either run below at a tiny size or named as a bench's module."""
    scripts = {path.name for path in (ROOT / "bench").glob("*.py")} - {"__init__.py"}
    assert scripts - BENCHES.keys() - NOT_BENCHES.keys() == set()
    assert (BENCHES.keys() | NOT_BENCHES.keys()) - scripts == set()


def _environment(script: str, tiny: Tiny) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of the bench's tiny run, on databases named after
    this run's own (DATABASE_URL's name, which pytest-xdist makes one per worker)."""
    base, _, name = os.environ["DATABASE_URL"].rpartition("/")
    db = f"{name}_{Path(script).stem}"[:63]
    values = {"pg": base, "db": db, "redis": os.environ["REDIS_URL"], "port": str(free_port())}
    env = {key: value for key, value in os.environ.items() if key not in _TEST_SETTINGS_ENV}
    env.pop("DATABASE_URL")
    if tiny.database_url:
        env["DATABASE_URL"] = f"{base}/{db}"
    env |= {key: value.format(**values) for key, value in tiny.env.items()}
    argv = [sys.executable, f"bench/{script}", *(arg.format(**values) for arg in tiny.args)]
    return argv, env


@pytest.mark.parametrize(
    "script", [pytest.param(name, marks=tiny.marks, id=name) for name, tiny in BENCHES.items()]
)
def test_the_bench_runs_at_a_tiny_size(script: str) -> None:
    """The bench exits 0 and its last line is a JSON object with the figures it promises."""
    tiny = BENCHES[script]
    argv, env = _environment(script, tiny)
    done = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=tiny.timeout
    )
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict)
    assert tiny.keys - result.keys() == set(), result
    _check(script, result)


def _check(script: str, result: dict[str, Any]) -> None:
    """What the figures of a few benches must say even at a tiny size."""
    if script == "bench_harness_import.py":
        assert result["responses"] == 60 and result["verdicts"] == 30 * 2 + 30
        assert result["lmms_eval"]["rows"] == 30 and result["vlmevalkit"]["rows"] == 60
    if script == "bench_throttle.py":
        assert result["site"]["round_trips_per_call"] == 1.0
        assert result["drf"]["round_trips_per_call"] == 2.0
        assert result["calls"] == 20 and result["site"]["us_per_call"] > 0
    if script == "bench_review.py":
        assert result["over_reviewed_samples"] == 0 and result["reviewed_twice"] == 0
    if script == "bench_judging.py":
        assert result["errors"] == 0 and result["mix_errors"] == 0
    if script == "bench_review_browser.py":
        assert result["browser"]["n"] == 3 and result["browser_embedded"]["n"] == 3
    if script == "bench_audit_browser.py":
        # Preloaded, no item opens by a page load; refused the reservation, every one does.
        assert result["ahead"]["n"] == result["page_load"]["n"] == 3
        assert result["ahead"]["page_loads"] == 0 and result["page_load"]["page_loads"] == 4
    if script == "bench_data_manager.py":
        pages = result["pages"]
        assert result["measured"] == len(pages) > 100 and pages["gold"]["p50_ms"] > 0
    if script == "bench_export.py":
        assert result["jsonl"]["samples"] == result["parquet"]["samples"] == 30
    if script == "bench_claim_scale.py":
        (size,) = result["sizes"]
        for history in ("reviews_0", "reviews_10", "kept_10"):
            assert size[history]["loop"]["loops"] == 2 and size[history]["claim"]["p50_ms"] > 0
    if script == "bench_labelstudio.py":
        # Our side measured, Label Studio's not pretended: no figure of it, no verdict.
        assert result["ours_only"] is True and result["label_studio"] is None
        (measured,) = result["rounds"]
        assert "label_studio" not in measured and measured["ours"]["import"]["imported"] == 30
        medians = result["medians"]
        assert medians["ours_import_seconds"] > 0 and medians["ours_production_pss_mb"] > 0
        assert medians["ours_supervised_pss_mb"] > 0 and "ls_pss_mb_at_rest" not in medians
        assert result["ahead"] == {"import": None, "memory_at_rest": None}
    if script == "bench_import.py":
        assert result["full"][0]["imported"] == 40 and result["half"]["imported"] == 20
        # Detection off, then on (IMPORT_FIND_DUPLICATES): only the second hashes and keys.
        off, on = result["full"]
        assert (off["images_hashed"], off["questions_keyed"]) == (0, 0)
        assert (on["images_hashed"], on["questions_keyed"]) == (40, 40)
        assert set(result["duplicates"]) == {"off", "on"}


@PG
def test_bench_scale_measures_the_leaderboard_alone() -> None:
    """``bench_scale.py --only leaderboard`` builds its own dataset and reports the
    recomputation, the page, the API and (``--direct``) the computation over every verdict."""
    tiny = Tiny(
        (
            *("--sizes", "60", "--gets", "1", "--only", "leaderboard", "--direct"),
            *("--db-prefix", "{db}", "--var", "var/{db}"),
        ),
        frozenset({"sizes"}),
        database_url=True,
    )
    argv, env = _environment("bench_scale.py", tiny)
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    (size,) = json.loads(done.stdout.strip().splitlines()[-1])["sizes"]
    assert size["size"] == 60 and len(size["recompute_s"]) == 2
    assert size["leaderboard"]["p50_ms"] > 0 and size["direct_selector_s"] >= 0
    assert size["leaderboard"]["queries"] <= 12 and size["api_leaderboard"]["queries"] <= 8


@PG
def test_bench_scale_measures_the_sample_list_alone() -> None:
    """``bench_scale.py --only sample_list`` builds its own dataset and reports the page
    (unfiltered, each sort both ways, a middle page by cursor and by number, the last page) and
    the API (first page, deep by cursor and by offset), with their query counts."""
    tiny = Tiny(
        (
            *("--sizes", "120", "--gets", "1", "--only", "sample_list"),
            *("--db-prefix", "{db}", "--var", "var/{db}"),
        ),
        frozenset({"sizes"}),
        database_url=True,
    )
    argv, env = _environment("bench_scale.py", tiny)
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    (size,) = json.loads(done.stdout.strip().splitlines()[-1])["sizes"]
    assert size["size"] == 120
    names = {"sample_list", "sample_list_middle", "sample_list_middle_by_number"}
    names |= {"sample_list_last_page", "sample_list_sort_desc_updated", "sample_list_sort_status"}
    names |= {"api_sample_list", "api_sample_list_deep", "api_sample_list_deep_offset"}
    for name in names:
        assert size[name]["p50_ms"] > 0 and size[name]["queries"] > 0, name
    # The page's queries do not depend on where the page is.
    assert size["sample_list_middle"]["queries"] == size["sample_list"]["queries"]
    assert size["api_sample_list_deep"]["queries"] == size["api_sample_list"]["queries"]


@PG
def test_bench_scale_measures_the_jobs_alone() -> None:
    """``bench_scale.py --only jobs`` builds its dataset by SQL copy and reports the import,
    the unchanged re-import, both snapshots of every sample (with their CPU seconds) and the
    whole queue's sync, each with its process's peak memory."""
    tiny = Tiny(
        (
            *("--sizes", "90", "--only", "jobs", "--seed-rows", "30", "--import-rows", "20"),
            *("--full-sync", "--db-prefix", "{db}", "--var", "var/{db}"),
        ),
        frozenset({"sizes"}),
        database_url=True,
    )
    argv, env = _environment("bench_scale.py", tiny)
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    (size,) = json.loads(done.stdout.strip().splitlines()[-1])["sizes"]
    jobs = size["jobs"]
    assert size["samples"] == 90
    assert (jobs["import"]["imported"], jobs["reimport"]["unchanged"]) == (20, 20)
    # Every sample of the dataset, whatever its status, is in both snapshots.
    assert jobs["snapshot-jsonl"]["entries"] == jobs["snapshot-parquet"]["entries"] == 110
    # Each build's CPU, its own and its database backend's, beside its wall time.
    for kind in ("snapshot-jsonl", "snapshot-parquet"):
        assert jobs[kind]["cpu_s"] > 0 and jobs[kind]["backend_cpu_s"] >= 0, jobs[kind]
        assert jobs[kind]["samples_per_s"] > 0
    # The bench opened every slot already; the new rows are imported, not sent to review.
    assert jobs["queue-sync"]["slots_created"] == 0
    assert all(job["peak_rss_mb"] > 0 for job in jobs.values())


def test_bench_labelstudio_stops_without_label_studio() -> None:
    """Without --ours-only, a Label Studio that is not there stops the bench before it
    measures anything: its side is never left out silently."""
    argv = [sys.executable, "bench/bench_labelstudio.py", "--ls", "/nonexistent/label-studio"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Label Studio not found at /nonexistent/label-studio" in done.stderr
    assert done.stdout == ""
