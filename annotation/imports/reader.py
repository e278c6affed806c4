"""Reading an import's rows, checked, in chunks: in a second process for large sources.

Parsing, the row checks (shapes, taxonomy) and the full decode of every embedded media file
cost more per row than storing the row does. For a large source they run in a forked reader
process that hands checked chunks to the importing process through a pipe, so that
reading chunk n + 1 overlaps storing chunk n and both cores work; the database writes stay in
the one importing process, in source order. The reader only reads: it never touches the
database or the storage, and it stops when the importing process goes away.

What the reader found is advice the importing process takes as given: the problems of each
row, and for each embedded media file its hash and the asset fields (or the reason it cannot
be used). Media given by path (a folder, a zip, S3) are read and decoded by the importing
process, which owns the source.

A file already stored as an asset is not decoded: the importing process uses the stored
asset's fields for it whatever the reader found, so decoding it again only costs (a re-import
of unchanged rows decoded every image). The reader asks which of a chunk's files are stored
(``stored``) once the chunk is read; in a forked reader the question goes back through a
second pipe to a thread of the importing process, which looks the hashes up on a connection of
its own, so that the answer never waits for the chunk being stored.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import pickle
import queue
import signal
import threading
from collections.abc import Callable, Collection, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connections
from django.db.models import JSONField
from django.utils.translation import gettext as _

from annotation.formats.records import ParsedSample, RowError
from annotation.formats.validate import TaxonomyView, is_trimodal, validate_sample
from annotation.imports.checks import shape_problems
from annotation.media_checks import MediaError, sha256_hex
from annotation.models import DatasetKind, Sample
from annotation.services.duplicates import import_finds_duplicates, import_question_key
from annotation.services.media import MediaInspection
from annotation.services.samples import LABEL_FIELDS, sample_values_json
from core.bulk import JsonText

# The sample's JSON fields (the label values among them are in Encoded.values as well).
_JSON = [f.attname for f in Sample._meta.concrete_fields if isinstance(f, JSONField)]
# Sources with fewer rows are read in the importing process (a fork costs more than it saves).
PARALLEL_MIN_ROWS = 2_000

logger = logging.getLogger(__name__)

# Which of these sha256 hashes are stored as assets already (their files need no decoding).
Stored = Callable[[list[str]], Collection[str]]


@dataclass
class Inspected:
    """An embedded media file, decoded as ``role``: the asset fields, or why they cannot be."""

    role: str
    fields: dict[str, Any] | None
    problem: str = ""


@dataclass
class Chunk:
    """Rows of the source in order, with the problems found per row and the decoded media."""

    items: list[ParsedSample | RowError] = field(default_factory=list)
    # Per item (None for a RowError): the shape, kind and taxonomy problems of the row.
    problems: list[list[str] | None] = field(default_factory=list)
    # sha256 -> what decoding the file found, for the files embedded in these rows.
    media: dict[str, Inspected] = field(default_factory=dict)
    # Per item (None for a row with problems): its JSON texts, encoded here once.
    encoded: list[Encoded | None] = field(default_factory=list)


@dataclass
class Encoded:
    """A row's JSON texts: its label values as ``sample_values_json`` encodes them (for the
    content hash and the tables that keep the values) and the sample's JSON fields."""

    values: str
    fields: dict[str, JsonText]
    # The key near-duplicates share (annotation.duplicates.text_key), found here with the
    # rest of the reading.
    question_key: int | None = None

    @classmethod
    def of(cls, parsed: ParsedSample) -> Encoded:
        values = sample_values_json({name: getattr(parsed, name) for name in LABEL_FIELDS})
        return cls(
            values,
            {name: _json_text(getattr(parsed, name)) for name in _JSON},
            import_question_key(parsed.question, parsed.speech_utterance),
        )


# Most rows leave most JSON fields empty (no generator models, predicate nor extra): their
# text is known without encoding.
_EMPTY_JSON: dict[type, JsonText] = {list: JsonText("[]"), dict: JsonText("{}")}


def _json_text(value: Any) -> JsonText:
    if not value:
        empty = _EMPTY_JSON.get(type(value))
        if empty is not None:
            return empty
    return JsonText(json.dumps(value))


@dataclass(frozen=True)
class RowChecker:
    """The checks of a parsed row that need neither the database nor other rows."""

    trimodal_dataset: bool
    taxonomy: TaxonomyView

    @classmethod
    def for_dataset(cls, kind: str, taxonomy: TaxonomyView) -> RowChecker:
        return cls(kind == DatasetKind.TRIMODAL, taxonomy)

    def problems(self, parsed: ParsedSample) -> list[str]:
        problems = shape_problems(parsed)
        if problems:
            return problems
        trimodal = is_trimodal(parsed)
        if trimodal != self.trimodal_dataset:
            problems.append(
                _("this row is a tri-modal scenario, but the dataset holds image-question samples")
                if trimodal
                else _(
                    "this row is an image-question sample, "
                    "but the dataset holds tri-modal scenarios"
                )
            )
        return problems + validate_sample(parsed, self.taxonomy)


def _inspect(inspection: MediaInspection, role: str, data: bytes) -> Inspected:
    try:
        return Inspected(role, inspection.inspect(role, data))
    except MediaError as exc:
        return Inspected(role, None, exc.message)


def checked_chunks(
    rows: Iterable[ParsedSample | RowError],
    checker: RowChecker,
    size: int,
    *,
    skip_media: int,
    stored: Stored | None = None,
) -> Iterator[Chunk]:
    """The rows in chunks of ``size``, checked; media of the first ``skip_media`` rows (those
    an earlier attempt stored) are hashed but not decoded again, nor are the files ``stored``
    names as stored already. A chunk's files are decoded once the chunk is read, and its
    images get their perceptual hashes together."""
    inspection = MediaInspection(perceptual_hash=import_finds_duplicates())
    chunk = Chunk()
    # sha256 -> (role, bytes): the chunk's embedded files to decode unless stored.
    pending: dict[str, tuple[str, bytes]] = {}

    def decoded(chunk: Chunk) -> Chunk:
        known: Collection[str] = ()
        if pending and stored is not None:
            try:
                known = stored(list(pending))
            except Exception:  # advice only: without it every file is decoded
                logger.warning("the stored media of an import chunk could not be looked up")
        for sha, (role, data) in pending.items():
            if sha not in known:
                chunk.media[sha] = _inspect(inspection, role, data)
        pending.clear()
        inspection.hash_pending()
        return chunk

    for seen, item in enumerate(rows, 1):
        chunk.items.append(item)
        if isinstance(item, RowError):
            chunk.problems.append(None)
            chunk.encoded.append(None)
        else:
            problems = checker.problems(item)
            chunk.problems.append(problems)
            chunk.encoded.append(None if problems or item.problems else Encoded.of(item))
            if seen > skip_media:
                for ref in item.media:
                    if ref.data is not None and ref.problem is None:
                        pending.setdefault(sha256_hex(ref.data), (ref.role, ref.data))
        if len(chunk.items) == size:
            yield decoded(chunk)
            chunk = Chunk()
    if chunk.items:
        yield decoded(chunk)


def _send(out: int, kind: str, payload: object) -> None:
    """A message, pickled behind its length; a full pipe blocks until it is read."""
    data = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
    with memoryview(len(data).to_bytes(8, "little") + data) as view:
        sent = 0
        while sent < len(view):
            sent += os.write(out, view[sent:])


def _produce(
    out: int,
    answers: int | None,
    rows: Callable[[], Iterable[ParsedSample | RowError]],
    args: tuple[Any, ...],
) -> None:
    """The reader process: each chunk, then ("end", None) or ("error", the exception). A full
    pipe blocks it (so it stays at most a chunk or two ahead); a closed one (the importing
    process ended) ends it. With ``answers``, it asks ("ask", hashes) which files are stored
    and reads the answer from that pipe."""
    stored: Stored | None = None
    if answers is not None:
        handle = os.fdopen(answers, "rb")

        def ask(hashes: list[str]) -> Collection[str]:
            _send(out, "ask", hashes)
            kind, known = _receive(handle)
            if kind != "stored":
                raise BrokenPipeError
            result: Collection[str] = known
            return result

        stored = ask
    try:
        for chunk in checked_chunks(rows(), *args[:2], skip_media=args[2], stored=stored):
            _send(out, "chunk", chunk)
    except BrokenPipeError:
        return
    except BaseException as exc:
        try:
            pickle.dumps(exc)
        except Exception:
            exc = RuntimeError(repr(exc))
        _send(out, "error", exc)
    else:
        _send(out, "end", None)


def _receive(handle: Any) -> tuple[str, Any]:
    size = handle.read(8)
    if len(size) < 8:
        raise RuntimeError("the import reader process ended unexpectedly")
    data = handle.read(int.from_bytes(size, "little"))
    # A chunk is tens of thousands of new objects, none in a cycle: without the collector,
    # which unpickling them would otherwise run again and again over the whole heap (0.29 ->
    # 0.08 CPU-s per 10,000 rows, measured apart).
    collecting = gc.isenabled()
    gc.disable()
    try:
        message: tuple[str, Any] = pickle.loads(data)  # noqa: S301 (written by this process's fork)
    finally:
        if collecting:
            gc.enable()
    return message


def _answer_and_pass(
    handle: Any, answers: int, stored: Stored, out: queue.Queue[tuple[str, Any]]
) -> None:
    """The importing process's thread between it and the reader: answers the reader's
    questions at once (on a database connection of this thread's own, closed at its end) and
    hands every other message on, in order; a failure is handed on as an error."""
    try:
        while True:
            kind, payload = _receive(handle)
            if kind == "ask":
                try:
                    known = set(stored(payload))
                except Exception:  # advice only: without it every file is decoded
                    logger.warning("the stored media of an import chunk could not be looked up")
                    known = set()
                _send(answers, "stored", known)
                continue
            out.put((kind, payload))
            if kind != "chunk":
                return
    except BaseException as exc:
        out.put(("error", exc))
    finally:
        connections.close_all()


def read_checked(
    rows: Callable[[], Iterable[ParsedSample | RowError]],
    checker: RowChecker,
    size: int,
    *,
    skip_media: int = 0,
    parallel: bool,
    stored: Stored | None = None,
) -> Generator[Chunk, None, None]:
    """The checked chunks of ``rows()``; read by a forked process when ``parallel``.

    ``stored`` names which files are stored as assets already (they are not decoded); in
    parallel it is called from a thread of its own. A problem with the whole source is raised
    after the chunks before it, as when reading in-process. Closing the iterator stops the
    reader; so does the end of this process. (A plain fork, not multiprocessing: a Celery pool
    process may not start children.)
    """
    if not parallel:
        yield from checked_chunks(rows(), checker, size, skip_media=skip_media, stored=stored)
        return
    read_end, write_end = os.pipe()
    ask_read, ask_write = os.pipe() if stored is not None else (None, None)
    pid = os.fork()
    if pid == 0:  # the reader: never returns into the caller's code
        status = 0
        try:
            os.close(read_end)
            if ask_write is not None:
                os.close(ask_write)
            # What the fork inherited (Django, the models) stays as long as the reader
            # does: out of the collector's reach, its collections walk only the rows.
            gc.freeze()
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            _produce(write_end, ask_read, rows, (checker, size, skip_media))
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    if ask_read is not None:
        os.close(ask_read)
    handle = os.fdopen(read_end, "rb")
    messages: queue.Queue[tuple[str, Any]] = queue.Queue()
    relay: threading.Thread | None = None
    if stored is not None and ask_write is not None:
        # Bounded to one chunk waiting, so that the reader stays a chunk or two ahead.
        messages = queue.Queue(maxsize=1)
        relay = threading.Thread(
            target=_answer_and_pass,
            args=(handle, ask_write, stored, messages),
            name="import-reader-relay",
            daemon=True,
        )
        relay.start()
    try:
        while True:
            kind, payload = messages.get() if relay is not None else _receive(handle)
            if kind == "chunk":
                yield payload
            elif kind == "error":
                raise payload
            else:
                return
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if relay is not None:
            # The killed reader ends the thread's read; take what it still hands on.
            while relay.is_alive():
                with contextlib.suppress(queue.Empty):
                    messages.get(timeout=0.05)
            relay.join()
        handle.close()
        if ask_write is not None:
            os.close(ask_write)
