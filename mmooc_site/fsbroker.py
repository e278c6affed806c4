"""kombu's filesystem transport with atomic message writes.

Upstream writes a message file in place, so a worker can read it while it is still empty and
drop it (celery/kombu#1551). Here each message is written under a hidden temporary name that the
reader's filter never matches, then renamed into place, which is atomic on POSIX.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.transport import filesystem
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The settings make no folders; the transport makes those it is configured with.
        for folder in (self.data_folder_in, self.data_folder_out, self.control_folder):
            os.makedirs(folder, exist_ok=True)
        if self.store_processed:
            os.makedirs(self.processed_folder, exist_ok=True)

    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        temporary = os.path.join(self.data_folder_out, f".{name}.tmp")
        with open(temporary, "wb") as handle:
            handle.write(dumps(payload).encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, final)


class Transport(filesystem.Transport):
    Channel = Channel
