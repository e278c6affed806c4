"""The open-loop phase of ``bench_review.py``: many reviewers, each on its own Poisson clock.

Unlike the closed loop (each reviewer sends its next claim as soon as its submit returns, so a
slow server slows the load down), an open loop offers a fixed rate whatever the server does:
every reviewer starts a claim + submit loop at the times of its own Poisson process, drawn in
advance. A loop that cannot start on time (the client's threads are all busy, or the
reviewer's previous loop still runs) waits, and its claim latency is counted from the time it
was due, not from when it was sent, so a stalled server shows in the figures instead of
hiding behind a slower client (no coordinated omission). The submit follows its claim at
once; its latency runs from the claim's answer.

Each loop opens its own keep-alive connection for its two requests and closes it after: with
a loop every 10 s per reviewer, gunicorn (keep-alive 2 s) would close an idle one anyway.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bench.support import percentiles


@dataclass
class _Tally:
    claim: list[float] = field(default_factory=list)
    submit: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    loops: int = 0
    empty: int = 0
    last_done: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def schedule(reviewers: int, mean_gap: float, seconds: float, seed: int) -> list[tuple[float, int]]:
    """(offset in seconds, reviewer) of every loop start, in time order: each reviewer's
    starts are a Poisson process of mean gap ``mean_gap``, the first at a random phase."""
    rng = random.Random(seed)
    starts: list[tuple[float, int]] = []
    for reviewer in range(reviewers):
        at = rng.expovariate(1 / mean_gap)
        while at < seconds:
            starts.append((at, reviewer))
            at += rng.expovariate(1 / mean_gap)
    starts.sort()
    return starts


def _post(conn: http.client.HTTPConnection, path: str, headers: dict[str, str], body: Any) -> Any:
    conn.request("POST", path, body=json.dumps(body), headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def open_loop_phase(
    port: int,
    claim_path: str,
    submit_path: str,
    tokens: list[str],
    *,
    mean_gap: float = 10.0,
    seconds: float = 60.0,
    warmup: float = 10.0,
    threads: int = 128,
    seed: int = 16,
) -> dict[str, Any]:
    """Run the open loop for ``warmup + seconds``; figures count the loops due after the
    warm-up. One reviewer per token."""
    tally = _Tally()
    busy = [threading.Lock() for _ in tokens]
    starts = schedule(len(tokens), mean_gap, warmup + seconds, seed)

    def loop(due: float, reviewer: int, counted: bool) -> None:
        headers = {
            "Content-Type": "application/json",
            "Host": "127.0.0.1",
            "Authorization": f"Token {tokens[reviewer]}",
        }
        with busy[reviewer]:  # one loop at a time per reviewer, as a person works
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                code, raw = _post(conn, claim_path, headers, {})
                claimed = time.perf_counter()
                if code == 204:
                    with tally.lock:
                        tally.empty += 1
                    return
                if code != 200:
                    raise RuntimeError(f"claim {code}: {raw[:200]!r}")
                sample = json.loads(raw)["sample"]["id"]
                body = {
                    "client_uuid": str(uuid.uuid4()),
                    "sample": sample,
                    "decision": "accept",
                    "seconds_spent": 3,
                }
                code, raw = _post(conn, submit_path, headers, body)
                submitted = time.perf_counter()
                if code != 201:
                    raise RuntimeError(f"submit {code}: {raw[:200]!r}")
            except (OSError, http.client.HTTPException, RuntimeError, ValueError) as exc:
                if counted:
                    with tally.lock:
                        tally.errors.append(str(exc)[:300])
                return
            finally:
                conn.close()
        if counted:
            with tally.lock:
                tally.claim.append(claimed - due)
                tally.submit.append(submitted - claimed)
                tally.loops += 1
                tally.last_done = max(tally.last_done, submitted)

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for offset, reviewer in starts:
            due = began + offset
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)  # the schedule's own clock: the next loop is due then
            pool.submit(loop, due, reviewer, offset >= warmup)
    elapsed = time.perf_counter() - began
    offered = sum(1 for offset, _r in starts if offset >= warmup)
    # Achieved: the loops due after the warm-up over the time it took to finish them (a
    # server that falls behind finishes them late, so its rate falls under the offered one).
    span = max(tally.last_done - (began + warmup), seconds)
    return {
        "reviewers": len(tokens),
        "offered_per_s": round(offered / seconds, 1),
        "rate": round(tally.loops / span, 1),
        "loops": tally.loops,
        "seconds": seconds,
        "warmup_seconds": warmup,
        "wall_seconds": round(elapsed, 1),
        "claim": percentiles(tally.claim),
        "submit": percentiles(tally.submit),
        "errors": len(tally.errors),
        "error_samples": tally.errors[:5],
        "nothing_left": tally.empty,
    }
