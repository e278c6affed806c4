"""Benchmark: the API's per-user rate limit per call, DRF's own throttle against the site's.

Both run in this process on the cache of ``--redis`` (Django's ``RedisCache``, as in
production) for one user under a rate they never reach, ``--calls`` times each, alternating
in ``--rounds`` rounds; printed per throttle: microseconds of wall time and Python function
calls per call (``cProfile``), and redis-py round trips per call. DRF's keeps the user's
history of the period (one timestamp per call, so its pickle grows with the calls made);
the site's counts a fixed window (``core/throttling.py``).

Run: .venv/bin/python bench/bench_throttle.py [--redis redis://127.0.0.1:6379/0]
     [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup(redis_url: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")
    os.environ.setdefault("SECRET_KEY", "bench-only-" + "x" * 40)
    # The settings need a PostgreSQL URL to load; the bench never connects to it.
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_throttle")
    os.environ["REDIS_URL"] = redis_url
    os.environ["CACHE_KEY_PREFIX"] = f"bench-throttle-{uuid.uuid4().hex[:8]}"
    os.environ["API_THROTTLE_USER"] = "1000000/hour"
    import django

    django.setup()


def measure(calls: int, rounds: int) -> dict[str, Any]:
    """Per throttle: µs and Python calls per API call, round trips per call (median round)."""
    import redis.connection
    from rest_framework.throttling import UserRateThrottle as DRFThrottle

    from core.throttling import UserRateThrottle as SiteThrottle

    sent = [0]
    original = redis.connection.Connection.send_packed_command

    def counting(self: Any, command: Any, check_health: bool = True) -> None:
        sent[0] += 1
        original(self, command, check_health)  # type: ignore[no-untyped-call]

    redis.connection.Connection.send_packed_command = counting  # type: ignore[method-assign]
    results: dict[str, dict[str, list[float]]] = {"drf": {}, "site": {}}
    try:
        for round_ in range(rounds):
            for name, throttle_class in (("drf", DRFThrottle), ("site", SiteThrottle)):
                user = SimpleNamespace(is_authenticated=True, pk=f"bench-{round_}-{name}")
                request = SimpleNamespace(user=user)
                warm = SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk="warm"))
                throttle_class().allow_request(warm, None)  # type: ignore[arg-type]
                sent[0] = 0  # (the connection's set-up commands were sent by the warm-up)
                started = time.perf_counter()
                for _ in range(calls):
                    assert throttle_class().allow_request(request, None)  # type: ignore[arg-type]
                elapsed = time.perf_counter() - started
                trips = sent[0]
                profile = cProfile.Profile()
                profile.enable()
                for _ in range(min(calls, 200)):
                    throttle_class().allow_request(request, None)  # type: ignore[arg-type]
                profile.disable()
                functions = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
                row = results[name]
                row.setdefault("us_per_call", []).append(elapsed / calls * 1e6)
                row.setdefault("round_trips_per_call", []).append(trips / calls)
                row.setdefault("python_calls_per_call", []).append(functions / min(calls, 200))
    finally:
        redis.connection.Connection.send_packed_command = original  # type: ignore[method-assign]
        _forget()
    return {
        name: {key: round(sorted(values)[len(values) // 2], 2) for key, values in row.items()}
        for name, row in results.items()
    } | {"calls": calls, "rounds": rounds}


def _forget() -> None:
    """Delete the keys this run made (their prefix is its own)."""
    from django.core.cache import caches

    cache: Any = caches["default"]
    client = cache._cache.get_client(write=True)
    names = list(client.scan_iter(match=f"{os.environ['CACHE_KEY_PREFIX']}:*"))
    if names:
        client.delete(*names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    _setup(args.redis)
    print(json.dumps(measure(args.calls, args.rounds)))


if __name__ == "__main__":
    main()
