"""The TCP forwarder the several-hosts test reaches the machine's services through: bytes pass
both ways, to a TCP or a Unix socket target, and a client that goes away ends the target's
connection too (a killed host's database sessions end, as on a real network)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.netns import Forwarder
from tests.support.processes import wait_until


@contextmanager
def echo_server(family: int, address: str | tuple[str, int]) -> Iterator[list[bytes]]:
    """A server that answers each chunk with it upper-cased, and records what each
    connection received once it ended."""
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen()
    ended: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                got = b""
                while data := conn.recv(65536):
                    got += data
                    conn.sendall(data.upper())
                ended.append(got)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield ended
    finally:
        listener.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_bytes_pass_both_ways_and_a_client_that_goes_away_ends_the_target_connection() -> None:
    port = _free_port()
    with (
        echo_server(socket.AF_INET, ("127.0.0.1", port)) as ended,
        Forwarder("127.0.0.1") as forwarder,
    ):
        listening = forwarder.forward(("127.0.0.1", port))
        with socket.create_connection(("127.0.0.1", listening), timeout=5) as client:
            client.sendall(b"hello")
            assert client.recv(100) == b"HELLO"
            client.sendall(b"again")
            assert client.recv(100) == b"AGAIN"
        # The client is gone: the target's connection ends, with everything it was sent.
        wait_until(lambda: bool(ended), timeout=10, what="the target's connection to end")
        assert ended == [b"helloagain"]


def test_a_unix_socket_target_is_reached_over_tcp(tmp_path: Path) -> None:
    path = str(tmp_path / ".s.PGSQL.5432")
    with echo_server(socket.AF_UNIX, path), Forwarder("127.0.0.1") as forwarder:
        listening = forwarder.forward(path)
        with socket.create_connection(("127.0.0.1", listening), timeout=5) as client:
            client.sendall(b"select 1")
            assert client.recv(100) == b"SELECT 1"
