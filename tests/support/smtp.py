"""A real SMTP server for tests (aiosmtpd) on loopback: it receives what the site sends
through Django's SMTP backend and keeps each message, parsed."""

from __future__ import annotations

import email
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from email.policy import default
from typing import Any

from tests.support.processes import free_port, wait_until


class Mailbox:
    """The messages the server received, in order."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.messages: list[EmailMessage] = []
        self._lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=default)
        with self._lock:
            self.messages.append(message)
        return "250 Message accepted"

    def to(self, address: str, *, timeout: float = 10) -> EmailMessage:
        """The first message to ``address`` (waiting for it to arrive)."""

        def found() -> EmailMessage | None:
            with self._lock:
                return next((m for m in self.messages if address in str(m["To"])), None)

        wait_until(lambda: found() is not None, timeout=timeout, what=f"a mail to {address}")
        message = found()
        assert message is not None
        return message


def body_text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def first_link(message: EmailMessage, pattern: str = r"https?://\S+") -> str:
    found = re.search(pattern, body_text(message))
    assert found, body_text(message)
    return found.group(0)


@contextmanager
def smtp_server() -> Iterator[Mailbox]:
    from aiosmtpd.controller import Controller

    mailbox = Mailbox("127.0.0.1", free_port())
    controller = Controller(mailbox, hostname=mailbox.host, port=mailbox.port)
    controller.start()
    try:
        yield mailbox
    finally:
        controller.stop()
