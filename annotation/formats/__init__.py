"""Django-free readers and checks for imported benchmark samples and model responses.

Each reader streams its input and yields `ParsedSample`/`ParsedResponse` records or
`RowError`s; `validate.validate_sample` checks a sample against a dataset's taxonomy.
"""

from annotation.formats.records import (
    FormatError,
    MediaRef,
    ParsedResponse,
    ParsedSample,
    RowError,
)

__all__ = ["FormatError", "MediaRef", "ParsedResponse", "ParsedSample", "RowError"]
