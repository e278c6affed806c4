"""A webhook receiver on loopback for tests: it verifies every request's signature with the
standardwebhooks library (as a real receiver does), answers as told per request (500, a hang
longer than the sender waits, 200), and handles each webhook-id once (the dedupe a receiver
of Standard Webhooks does), counting every request it got."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Receiver:
    secrets: list[str]
    # What to do with the n-th request (from 1): "500", "hang" or "block"; else 200.
    script: dict[int, str] = field(default_factory=dict)
    hang_seconds: float = 3.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    handled: Counter[str] = field(default_factory=Counter)
    seen: Counter[str] = field(default_factory=Counter)
    bad_signatures: int = 0
    duplicates: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    blocked: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    def verified_with(self, secret: str, index: int) -> bool:
        """Whether request ``index`` verifies with ``secret`` alone."""
        item = self.requests[index]
        try:
            Webhook(secret).verify(item["body"], item["headers"])
        except WebhookVerificationError:
            return False
        return True


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
            headers = {k.lower(): v for k, v in self.headers.items()}
            with receiver.lock:
                receiver.requests.append({"body": body, "headers": headers, "at": time.time()})
                number = len(receiver.requests)
                message_id = headers.get("webhook-id", "")
                receiver.seen[message_id] += 1
            verified = False
            for secret in receiver.secrets:
                try:
                    Webhook(secret).verify(body, headers)
                    verified = True
                    break
                except WebhookVerificationError:
                    continue
            if not verified:
                with receiver.lock:
                    receiver.bad_signatures += 1
                self._answer(400, "bad signature")
                return
            action = receiver.script.get(number, "")
            if action == "500":
                self._answer(500, "try later")
                return
            if action == "hang":
                time.sleep(receiver.hang_seconds)
            if action == "block":
                receiver.blocked.set()
                receiver.release.wait(60)
            with receiver.lock:
                # Dedupe by webhook-id: a repeat is answered 200 and not handled again.
                first = receiver.handled[message_id] == 0
                if first:
                    receiver.handled[message_id] += 1
                else:
                    receiver.duplicates += 1
            payload = json.loads(body)
            self._answer(
                200, json.dumps({"ok": True, "duplicate": not first, "type": payload["type"]})
            )

        def _answer(self, code: int, text: str) -> None:
            data = text.encode()
            try:
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


@contextmanager
def webhook_receiver(secrets: list[str], **kwargs: Any) -> Iterator[Receiver]:
    receiver = Receiver(secrets=secrets, **kwargs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()
