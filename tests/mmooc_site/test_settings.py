"""The settings read the environment and make no folders; the processes make what they use."""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection

from tests.support.processes import run_python

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import os, sys
from pathlib import Path
var = Path(os.environ["VAR_DIR"])
import django
from django.conf import settings
settings.INSTALLED_APPS  # reads the settings module
assert not var.exists(), "importing the settings made " + str(sorted(var.rglob("*")))
django.setup()
from mmooc_site.celery import app
with app.connection_for_write() as connection:
    connection.default_channel
assert (var / "broker" / "queue").is_dir() and (var / "broker" / "control").is_dir()
print("ok")
"""


def test_importing_the_settings_makes_no_folder_start_up_and_the_broker_make_theirs(
    tmp_path: Path,
) -> None:
    var = tmp_path / "var"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "DEBUG": "1",
        "VAR_DIR": str(var),
        "CELERY_BROKER_URL": "filesystem://localhost//",
        "REDIS_URL": "",
    }
    result = run_python(CODE, env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok")


@pytest.mark.django_db
def test_migrate_makes_the_database_cache_table(settings: Any) -> None:
    """Without Redis the cache is a database table, which ``migrate`` makes (core 0001)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "test_site_cache",
        }
    }
    assert "test_site_cache" not in connection.introspection.table_names()
    migration = import_module("core.migrations.0001_cache_table")
    migration.make_cache_table(None, SimpleNamespace(connection=connection))
    assert "test_site_cache" in connection.introspection.table_names()


@pytest.mark.parametrize(
    "url", ["", "sqlite:///var/db.sqlite3", "mysql://root@127.0.0.1/test", "postgres-ish://x"]
)
def test_the_settings_refuse_any_database_but_postgresql(url: str) -> None:
    """PostgreSQL is the only database: without DATABASE_URL, or with another kind, the site
    does not start and says why in one sentence."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "DEBUG": "1",
        "DATABASE_URL": url,
    }
    result = run_python("import django; django.setup()", env, timeout=60)
    assert result.returncode != 0
    assert "DATABASE_URL must name a PostgreSQL database" in result.stderr


def test_a_unix_socket_folder_is_given_as_the_urls_encoded_host() -> None:
    """postgres://user@%2Fpath%2Fto%2Fsockets:5432/name connects through that folder."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "DEBUG": "1",
        "DATABASE_URL": "postgres://postgres@%2Fvar%2Frun%2Fpostgresql:5433/site",
    }
    code = (
        "import django; django.setup(); from django.conf import settings as s;"
        "d = s.DATABASES['default']; print(d['HOST'], d['PORT'], d['NAME'], d['ENGINE'])"
    )
    result = run_python(code, env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "/var/run/postgresql",
        "5433",
        "site",
        "django.db.backends.postgresql",
    ]


def _variables_read(module: Path) -> list[str]:
    """The names of the variables a settings module reads (``env.<kind>("NAME", ...)``)."""
    import ast

    names = []
    for node in ast.walk(ast.parse(module.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "env"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append(node.args[0].value)
    return names


def test_each_variable_is_read_once_in_the_settings_package_and_listed_in_the_readme() -> None:
    package = ROOT / "mmooc_site" / "settings"
    read = [name for module in sorted(package.glob("*.py")) for name in _variables_read(module)]
    assert len(read) > 60  # the walk finds the reads (a rename of `env` would hide them)
    assert sorted(name for name in set(read) if read.count(name) > 1) == []
    readme = (ROOT / "README.md").read_text()
    assert sorted(name for name in set(read) if f"`{name}`" not in readme) == []
