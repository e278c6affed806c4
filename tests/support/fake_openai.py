"""A local fake of the OpenAI chat-completions API, with scripted latency and faults.

Runs on asyncio streams with a minimal HTTP/1.1 parser (keep-alive, Content-Length bodies)
in a background thread, so hundreds of slow requests overlap instead of queueing:

    with FakeOpenAI(latency=0.2, fault_rates={"error_500": 0.1}, seed=1) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)

or from a shell: ``python -m tests.support.fake_openai --port 8765 --latency 0.2``.

Faults, chosen per request by the ``X-Fake-Fault`` header, else the queue filled by
``queue_faults()``, else at random by ``fault_rates`` (seeded):
``error_500``, ``rate_limit[:seconds]`` (429 with Retry-After), ``hang`` (no reply until
``hang_s`` passes, then the connection closes), ``malformed`` (a reply whose content is not
JSON), ``truncated`` (Content-Length larger than the body sent, then close), ``bad_request``
(400), ``invalid_body`` (a 200 whose body is not JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Collection, Mapping
from typing import Any

from tests.support.fake_openai_protocol import (
    FAULT_KINDS,
    REASONS,
    RequestRecord,
    Responder,
    default_responder,
    error_body,
    hash_prompt,
    prompt_text,
)

__all__ = ["FakeOpenAI", "hash_prompt"]


class FakeOpenAI:
    """The fake server; use as a context manager or call start() and stop()."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        fault_rates: Mapping[str, float] | None = None,
        seed: int = 0,
        responder: Responder = default_responder,
        retry_after: float = 1.0,
        hang_s: float = 30.0,
        model: str = "fake-judge",
        known_models: Collection[str] | None = None,
        probe_fault: str | None = None,
    ) -> None:
        unknown = set(fault_rates or {}) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")
        self.host = host
        self.port = port
        self.latency = latency
        self.fault_rates = dict(fault_rates or {})
        self.responder = responder
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.model = model
        # None serves any model; else others get OpenAI's 404 "model_not_found".
        self.known_models = None if known_models is None else set(known_models)
        # Judges' test calls (probes) get this fault, never the queued or random ones.
        self.probe_fault = probe_fault
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        self._faults: deque[str] = deque()
        self._records: list[RequestRecord] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client (ends in /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def host_port(self) -> str:
        """The server as JUDGE_ALLOWED_HOSTS lists it: it runs on loopback, which judges may
        call only when allowed explicitly."""
        return f"{self.host}:{self.port}"

    @property
    def allowed(self) -> frozenset[str]:
        """The allowed set for a client made outside Django (make_client, EndpointSpec)."""
        return frozenset({self.host_port})

    def start(self) -> FakeOpenAI:
        """Serve from a daemon thread; return once the port is bound."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def _run(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(self._bind())
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _bind(self) -> asyncio.Server:
        server = await asyncio.start_server(self._handle, self.host, self.port, backlog=2048)
        self.port = server.sockets[0].getsockname()[1]
        return server

    def stop(self) -> None:
        """Close the server, cancel pending (hanging) replies, join the thread."""
        if self._loop is None or self._thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        future.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = None

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        current = asyncio.current_task()
        tasks = [task for task in asyncio.all_tasks() if task is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- control and inspection --------------------------------------------------------
    def queue_faults(self, *faults: str) -> None:
        """Faults for the next requests, one each, in order ("ok" means no fault)."""
        for fault in faults:
            if fault != "ok" and fault.split(":")[0] not in FAULT_KINDS:
                raise ValueError(f"unknown fault {fault!r}")
        with self._lock:
            self._faults.extend(faults)

    @property
    def records(self) -> list[RequestRecord]:
        """A snapshot of every request received so far."""
        with self._lock:
            return list(self._records)

    def chat_records(self) -> list[RequestRecord]:
        """Snapshot of the chat-completions requests only (judges' test calls left out)."""
        return [r for r in self.records if r.path.endswith("/chat/completions") and not r.probe]

    def probe_records(self) -> list[RequestRecord]:
        """Snapshot of the judges' test calls."""
        return [r for r in self.records if r.probe]

    def success_counts(self) -> Counter[str]:
        """Successful (200, valid JSON body) replies per prompt hash."""
        return Counter(
            r.prompt_hash
            for r in self.chat_records()
            if r.status == 200 and r.fault not in {"truncated", "invalid_body"} and r.prompt_hash
        )

    def fault_counts(self) -> dict[str, int]:
        """Chat requests per fault kind ("ok" for none): a benchmark's count of what it faced."""
        counts = Counter((r.fault or "ok").partition(":")[0] for r in self.chat_records())
        return dict(counts)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RequestRecord]:
        """Block until `count` chat requests have arrived (a condition, not a sleep)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            records = self.chat_records()
            if len(records) >= count:
                return records
            time.sleep(0.005)
        raise TimeoutError(f"only {len(self.chat_records())} of {count} requests arrived")

    # -- HTTP --------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request_line = await reader.readline()
                if not request_line.strip():
                    break
                method, target, _ = request_line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                keep_alive = await self._dispatch(
                    method, target.split("?")[0], headers, body, writer, reader
                )
                if not keep_alive or headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels handlers; ending quietly keeps asyncio from logging each one.
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        *,
        extra_headers: Mapping[str, str] | None = None,
        declared_length: int | None = None,
    ) -> None:
        reason = REASONS.get(status, "Internal Server Error" if status >= 500 else "Error")
        lines = [
            f"HTTP/1.1 {status} {reason}",
            "Content-Type: application/json",
            f"Content-Length: {declared_length if declared_length is not None else len(payload)}",
        ]
        lines += [f"{name}: {value}" for name, value in (extra_headers or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()

    def _next_fault(self, headers: Mapping[str, str]) -> str | None:
        if "x-fake-fault" in headers:
            fault = headers["x-fake-fault"]
            return None if fault == "ok" else fault
        with self._lock:
            if self._faults:
                fault = self._faults.popleft()
                return None if fault == "ok" else fault
            roll = self._rng.random()
        for kind, rate in self.fault_rates.items():
            if roll < rate:
                return kind
            roll -= rate
        return None

    def _record(self, record: RequestRecord) -> None:
        with self._lock:
            record.index = len(self._records)
            self._records.append(record)

    async def _dispatch(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader | None = None,
    ) -> bool:
        record = RequestRecord(0, method, path, time.monotonic(), None, None, None)
        peer = writer.get_extra_info("peername")
        record.client = str(peer[0]) if peer else ""
        if method == "GET" and path.rstrip("/").endswith("/fake/stats"):
            self._record(record)
            stats = {
                "max_in_flight": dict(self.max_in_flight),
                "requests": len(self._records),
                "faults": self.fault_counts(),
            }
            await self._reply(record, writer, 200, stats)
            return True
        if method == "GET" and path.rstrip("/").endswith("/models"):
            self._record(record)
            payload = {"object": "list", "data": [{"id": self.model, "object": "model"}]}
            await self._reply(record, writer, 200, payload)
            return True
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            self._record(record)
            await self._reply(record, writer, 404, error_body("not found", "not_found"))
            return True
        try:
            request = json.loads(body)
        except json.JSONDecodeError:
            self._record(record)
            await self._reply(
                record, writer, 400, error_body("body is not JSON", "invalid_request")
            )
            return True
        record.body = request
        record.prompt_hash = hash_prompt(request)
        record.probe = headers.get("x-judge-probe") == "1"
        record.fault = self.probe_fault if record.probe else self._next_fault(headers)
        self._record(record)
        # Concurrent requests per model: lets a benchmark prove a judge's cap held.
        model = str(request.get("model", ""))
        if self.known_models is not None and model not in self.known_models:
            error = error_body(f"The model `{model}` does not exist", "invalid_request_error")
            error["error"]["code"] = "model_not_found"
            await self._reply(record, writer, 404, error)
            return True
        self._in_flight[model] += 1
        self.max_in_flight[model] = max(self.max_in_flight[model], self._in_flight[model])
        try:
            latency = float(headers.get("x-fake-latency", self.latency))
            if latency > 0:
                await asyncio.sleep(latency)
            return await self._answer(record, request, writer, reader)
        finally:
            self._in_flight[model] -= 1

    async def _answer(
        self,
        record: RequestRecord,
        request: dict[str, Any],
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader | None = None,
    ) -> bool:
        kind, _, argument = (record.fault or "").partition(":")
        if kind == "error_500":
            await self._reply(record, writer, 500, error_body("fake server error", "server_error"))
        elif kind == "rate_limit":
            wait = float(argument) if argument else self.retry_after
            await self._reply(
                record,
                writer,
                429,
                error_body("rate limited", "rate_limit_exceeded"),
                {"Retry-After": f"{wait:g}"},
            )
        elif kind == "bad_request":
            await self._reply(
                record, writer, 400, error_body("fake bad request", "invalid_request")
            )
        elif kind == "hang":
            # Until hang_s passes or the client gives up (closes): a request abandoned by its
            # client no longer counts as in flight.
            deadline = time.monotonic() + (float(argument) if argument else self.hang_s)
            while time.monotonic() < deadline and not (reader and reader.at_eof()):
                await asyncio.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
            return False
        elif kind == "truncated":
            payload = json.dumps(self._completion(request, record)).encode()
            record.status = 200
            record.responded_at = time.monotonic()
            await self._send(
                writer, 200, payload[: len(payload) // 2], declared_length=len(payload)
            )
            return False
        elif kind == "invalid_body":
            await self._reply_raw(record, writer, 200, b'{"id": "chatcmpl-broken", "choices": [')
        else:
            completion = self._completion(request, record, malformed=kind == "malformed")
            await self._reply(record, writer, 200, completion)
        return True

    async def _reply(
        self,
        record: RequestRecord,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Mapping[str, Any],
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        await self._reply_raw(record, writer, status, json.dumps(payload).encode(), extra_headers)

    async def _reply_raw(
        self,
        record: RequestRecord,
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        # Recorded before the reply goes out: a client that has read the reply must find it
        # counted (success_counts, responded_at), not race the lines after the send.
        record.status = status
        record.responded_at = time.monotonic()
        await self._send(writer, status, payload, extra_headers=extra_headers)

    def _completion(
        self, request: dict[str, Any], record: RequestRecord, *, malformed: bool = False
    ) -> dict[str, Any]:
        digest = record.prompt_hash or ""
        content = (
            "Sure! I think the response deserves a good score."
            if malformed
            else self.responder(request, digest)
        )
        prompt_tokens = len(prompt_text(request).split())
        return {
            "id": f"chatcmpl-{record.index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(content.split()),
                "total_tokens": prompt_tokens + len(content.split()),
            },
        }


def main(argv: list[str] | None = None) -> None:
    """Serve in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--hang-s", type=float, default=30.0)
    parser.add_argument(
        "--fault-rate", action="append", default=[], metavar="KIND=RATE", help="e.g. error_500=0.1"
    )
    args = parser.parse_args(argv)
    rates = {
        kind: float(rate) for kind, _, rate in (item.partition("=") for item in args.fault_rate)
    }
    server = FakeOpenAI(
        host=args.host,
        port=args.port,
        latency=args.latency,
        fault_rates=rates,
        seed=args.seed,
        retry_after=args.retry_after,
        hang_s=args.hang_s,
    )
    with server:
        print(f"fake OpenAI server at {server.base_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
