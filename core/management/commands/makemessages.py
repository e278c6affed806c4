"""Django's makemessages, also collecting the templates of ``message(...)`` calls.

The Django-free parsers (annotation/formats, media_checks, archives) write user-facing
messages as ``message("line {row}: …", row=row)`` and translate them through a hook, so their
templates must be extracted as well.
"""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [*makemessages.Command.xgettext_options, "--keyword=message"]
