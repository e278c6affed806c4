"""Real concurrency in tests: run a function in many threads at once, each with its own
database connection, and collect what they raised."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection


def run_threads(count: int, target: Callable[[int], None]) -> list[BaseException]:
    """Start `count` threads together (a barrier), run `target(index)` in each, and return the
    exceptions they raised; each thread closes its own connection at the end."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def run(index: int) -> None:
        try:
            barrier.wait()
            target(index)
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    return errors


@dataclass
class LeaseLedger:
    """Who holds each lease while the threads work; a lease handed to a second holder before
    the first let it go is kept in ``doubled``."""

    held: dict[int, int] = field(default_factory=dict)
    doubled: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, lease_id: int, holder: int) -> None:
        with self.lock:
            if lease_id in self.held:
                self.doubled.append(lease_id)
            self.held[lease_id] = holder

    def release(self, lease_id: int) -> None:
        with self.lock:
            self.held.pop(lease_id, None)
