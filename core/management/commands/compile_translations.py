"""python manage.py compile_translations: build .mo files from the .po catalogues.

Django's compilemessages needs GNU gettext installed; polib does the same in pure Python, so the
set-up works on a machine with nothing but Python.
"""

from pathlib import Path
from typing import Any

import polib
from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Compile every locale/*/LC_MESSAGES/*.po into its .mo (pure Python)."

    def handle(self, *args: Any, **options: Any) -> None:
        count = 0
        for folder in settings.LOCALE_PATHS:
            for po_path in Path(folder).glob("*/LC_MESSAGES/*.po"):
                polib.pofile(str(po_path)).save_as_mofile(str(po_path.with_suffix(".mo")))
                count += 1
        self.stdout.write(f"Compiled {count} catalogue(s).")
