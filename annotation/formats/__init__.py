"""Django-free readers and checks for imported benchmark samples.

Each reader streams its input and yields `ParsedSample` records or
`RowError`s; `validate.validate_sample` checks a sample against a dataset's taxonomy.
"""

from annotation.formats.records import (
    FormatError,
    MediaRef,
    ParsedSample,
    RowError,
)

__all__ = ["FormatError", "MediaRef", "ParsedSample", "RowError"]
