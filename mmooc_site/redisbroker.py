"""kombu's Redis transport, with its channel's close made safe when Redis drops mid-task.

The bug (kombu 5.7.0 with celery 5.7.0 and redis-py 8.1.0, the newest releases on PyPI on
2026-12-02; reproduced by ``tests/mmooc_site/test_redisbroker.py``): a worker holding an
unacknowledged message while its consumer waits on ``BRPOP`` for more (a task running, a
free pool process) loses Redis. Celery's consumer then collects the connection
(``Connection.collect``): closing the channel first reads the pending ``BRPOP`` reply, which
raises a connection error *before* the channel is marked closed, so the close stops there;
``collect`` drops the transport's client (``Transport.client = None``) all the same. The
consumer next closes the connection (``Connection.release``), which closes the same channel
again; this time it gets to restoring its unacknowledged message, needs a new connection pool
for it, and builds the pool's parameters from the transport's client, now None:
``AttributeError: 'NoneType' object has no attribute 'hostname'`` in
``Channel._connparams``. That is no connection error, so Celery's ``ignore_errors`` lets it
through and the worker stops ("Unrecoverable error"), after its running tasks end. The same
class of bug was reported upstream before (celery/kombu#582, #970: a restore or queue delete
through a transport whose client was dropped); it is not fixed in any release.

Two overrides, each the narrowest that holds:

- ``Channel.close`` treats a connection error while reading the pending ``BRPOP`` reply like
  no reply (the read already dropped the broken connection), so the first close runs to the
  end while the transport still has its client: the restore is tried then (and fails cleanly
  with a connection error if Redis is still away; the message stays in Redis's unacked hash,
  restored after ``visibility_timeout``, and the job sweep does not wait for that).
- ``Channel._connparams`` raises a connection error, not AttributeError, when the transport's
  client is gone: any later path into a closed transport (a restore, a queue delete) is then
  the recoverable error Celery expects.

``mmooc_site.celery`` maps ``redis://`` and ``rediss://`` to this transport. Drop it once an
upstream release passes the reproduction test with kombu's own transport.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import Empty
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def close(self) -> None:
        self._closing = True
        channel: Any = self  # (kombu's stubs name few of the channel's attributes)
        if channel._in_poll:
            try:
                channel._brpop_read()
            except Empty:
                pass
            except channel.connection_errors:  # the read dropped the connection and _in_poll
                pass
        super().close()

    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection was closed")
        parent: Any = super()
        return parent._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
