"""How a job tells that a service every job shares is away, rather than the job being wrong.

Such a failure says nothing about the job: it waits for the service (``core.jobs.job_wait``)
without using up an attempt, and goes on by itself once the service is back.
"""

from __future__ import annotations

import sys

from django.utils.translation import gettext as _


def storage_unreachable(error: BaseException) -> bool:
    """Whether ``error`` (or an error it was raised from) is the media storage (S3) out of
    reach: no connection, a connection cut or timed out, or a 5xx answer (the store itself
    failing). Checked without importing botocore: an error of botocore's means it is loaded."""
    exceptions = sys.modules.get("botocore.exceptions")
    if exceptions is None:
        return False
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, exceptions.ConnectionError | exceptions.HTTPClientError):
            return True
        if isinstance(current, exceptions.ClientError):
            status = current.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if int(status or 0) >= 500:
                return True
        current = current.__cause__ or current.__context__
    return False


def storage_down_message() -> str:
    return _(
        "Waiting for the media storage, which cannot be reached right now: the job goes on "
        "by itself once it is back."
    )
