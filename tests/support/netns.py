"""Hosts on this machine, for tests of the site spread over several machines: Linux network
namespaces joined by a bridge, each with an address and a hostname of its own, and TCP
forwarders that bring the machine's loopback-only services (PostgreSQL, Redis, SeaweedFS) to
the bridge.

Each process a host runs starts in a mount namespace of its own (``ip netns exec`` makes one)
in which the other hosts' folders, and any other folder the test names, are covered by an
empty read-only tmpfs: a host reads and writes only its own folder, as on separate disks.

Why forwarders rather than servers listening on the bridge: the suite's PostgreSQL is the
test database pytest-django made (on whatever server DATABASE_URL names, ``dev.py test``'s
embedded one listening on a Unix socket only), and the test reads the rows the hosts wrote
through its own connection. A forwarder in the test process reaches the same servers without
reconfiguring them (no ``listen_addresses`` change and restart, no iptables DNAT with
``route_localnet``), and goes away with the test.

Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), ``ip`` (iproute2) and ``unshare``
(util-linux); ``netns_problem()`` says what is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import random
import shlex
import shutil
import signal
import subprocess
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO

_IP = "ip"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_IP, *args], capture_output=True, text=True, check=check, timeout=30)


def netns_problem() -> str | None:
    """Why this machine cannot make network namespaces for a test, or None when it can."""
    for tool in ("ip", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"the {tool} command is missing (iproute2, util-linux)"
    probe = f"mhprobe{os.getpid()}"
    try:
        made = _ip("netns", "add", probe, check=False)
        if made.returncode != 0:
            return (
                "cannot create a network namespace (root or CAP_NET_ADMIN is needed): "
                f"{made.stderr.strip()}"
            )
        inside = subprocess.run(
            [_IP, "netns", "exec", probe, "unshare", "--uts", "--", "true"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        if inside.returncode != 0:
            return f"cannot run a process in a network namespace: {inside.stderr.strip()}"
    finally:
        _ip("netns", "del", probe, check=False)
    return None


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.0.0.0/8 that no interface or route of the machine uses."""
    taken = _ip("-4", "-o", "addr", "show").stdout + _ip("-4", "route", "show").stdout
    for _ in range(100):
        subnet = ipaddress.IPv4Network(
            f"10.{random.randint(64, 254)}.{random.randint(0, 255)}.0/24"
        )
        if f"{'.'.join(str(subnet.network_address).split('.')[:3])}." not in taken:
            return subnet
    raise RuntimeError("no free 10.x.y.0/24 subnet for the test hosts")


class Host:
    """One host: a network namespace with its address, hostname and folder."""

    def __init__(self, name: str, namespace: str, address: str, root: Path) -> None:
        self.name, self.namespace, self.address, self.root = name, namespace, address, root
        self.hidden: list[Path] = []

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` as this host runs it: in its network namespace, with its own hostname,
        and the hidden folders covered by an empty read-only tmpfs."""
        covers = "".join(
            f"mount -t tmpfs -o ro,size=16k,mode=0555 hidden {shlex.quote(str(path))} && "
            for path in self.hidden
            if path.is_dir()
        )
        script = f'hostname {shlex.quote(self.name)} && {covers}exec "$@"'
        return [
            *(_IP, "netns", "exec", self.namespace),
            *("unshare", "--uts", "--", "sh", "-c", script, "sh", *argv),
        ]

    def popen(
        self, argv: Sequence[str], *, env: dict[str, str], cwd: Path, log: IO[bytes]
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` on this host (``ip``, ``unshare`` and ``sh`` exec into it, so the
        process's pid is the program's)."""
        return subprocess.Popen(
            self.command(argv), cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT
        )

    def run(self, argv: Sequence[str], *, env: dict[str, str] | None = None) -> str:
        """Run ``argv`` on this host to its end; its output (failing when it fails)."""
        done = subprocess.run(
            self.command(argv), capture_output=True, text=True, env=env, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def pids(self) -> list[int]:
        """Every process in this host's network namespace."""
        listed = _ip("netns", "pids", self.namespace, check=False).stdout
        return [int(pid) for pid in listed.split()]

    def crash(self) -> list[int]:
        """SIGKILL every process of the host at once, as a power cut or the OOM killer
        would end them; returns their pids."""
        pids = self.pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return pids


class Network:
    """Hosts on one bridge; the machine itself is the bridge's first address (``gateway``).
    Names are unique to the instance, so runs side by side on one machine never meet."""

    def __init__(self, names: Sequence[str], root: Path) -> None:
        self.token = uuid.uuid4().hex[:5]
        self.subnet = _free_subnet()
        addresses = list(self.subnet.hosts())
        self.gateway = str(addresses[0])
        self.bridge = f"mh{self.token}br"
        self.hosts = {
            name: Host(name, f"mh{self.token}-{name}", str(addresses[10 + n]), root / name)
            for n, name in enumerate(names)
        }
        self._made: list[str] = []

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def create(self) -> None:
        prefix = self.subnet.prefixlen
        _ip("link", "add", self.bridge, "type", "bridge")
        self._made.append("bridge")
        _ip("addr", "add", f"{self.gateway}/{prefix}", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for n, host in enumerate(self.hosts.values()):
            outside, inside = f"mh{self.token}v{n}", f"mh{self.token}v{n}p"
            _ip("netns", "add", host.namespace)
            self._made.append(host.namespace)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", host.namespace)
            _ip("link", "set", outside, "master", self.bridge)
            _ip("link", "set", outside, "up")
            _ip("-n", host.namespace, "addr", "add", f"{host.address}/{prefix}", "dev", inside)
            _ip("-n", host.namespace, "link", "set", inside, "up")
            _ip("-n", host.namespace, "link", "set", "lo", "up")
            host.root.mkdir(parents=True, exist_ok=True)

    def destroy(self) -> None:
        """Kill what still runs on the hosts, remove the namespaces (their veth pairs go with
        them) and the bridge."""
        for host in self.hosts.values():
            if host.namespace in self._made:
                host.crash()
                _ip("netns", "del", host.namespace, check=False)
        if "bridge" in self._made:
            _ip("link", "del", self.bridge, check=False)
        self._made.clear()

    def __enter__(self) -> Network:
        try:
            self.create()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


Target = tuple[str, int] | str  # a TCP (host, port) or a Unix socket's path


class Forwarder:
    """TCP forwarders listening on one address (the bridge's), each passing its connections
    on to a target on this machine; an asyncio loop in a thread of the test process."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._loop = asyncio.new_event_loop()
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def forward(self, target: Target) -> int:
        """Listen on a free port of the address for ``target``; returns the port."""
        future = asyncio.run_coroutine_threadsafe(self._listen(target), self._loop)
        server = future.result(timeout=10)
        self._servers.append(server)
        return int(server.sockets[0].getsockname()[1])

    async def _listen(self, target: Target) -> asyncio.Server:
        async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            if isinstance(target, str):
                return await asyncio.open_unix_connection(target)
            return await asyncio.open_connection(*target)

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await connect()
            except OSError:
                writer.close()
                return
            # Held here until it ends: asyncio keeps only weak references to tasks.
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)
            try:
                await asyncio.gather(
                    _pipe(reader, up_writer, writer), _pipe(up_reader, writer, up_writer)
                )
            except asyncio.CancelledError:
                pass  # close(): a connection still open ends quietly
            finally:
                for end in (writer, up_writer):
                    end.close()
                self._tasks.discard(task)

        return await asyncio.start_server(handle, self.host, 0)

    def close(self) -> None:
        async def stop() -> None:
            for server in self._servers:
                server.close()
            # Connections still open (a client's pool) end here; a cancelled one may have
            # started another task meanwhile, hence the rounds.
            for _ in range(5):
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                if not tasks:
                    break
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> Forwarder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _pipe(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, source_writer: asyncio.StreamWriter
) -> None:
    """Copy one direction to its end: a clean end half-closes the other side; a reset (a
    killed process) closes both, so the service sees the connection go as it would."""
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except (OSError, RuntimeError):
        sink.close()
        source_writer.close()
