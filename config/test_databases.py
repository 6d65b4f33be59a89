"""PostgreSQL test databases for a pytest-xdist run: migrated once, copied for each process.

Each pytest-xdist process needs a test database of its own. Migrating one costs 15-20 s of CPU (Django renders the
project's state for each of the ~80 migrations) and up to 90 s of wall time on a busy 2-core machine, once per
process. Here the first process to get there migrates a template database for the whole run, under a file lock, and
every process (the first too) gets its own database as a copy of it (``CREATE DATABASE ... TEMPLATE``, a file copy
on the server), as Django's own parallel test runner does with ``clone_test_db``. The migrations still run on
PostgreSQL once per run, so they are still tested there.

The template is named after the run (pytest-xdist's ``testrunuid``, which the controlling process fixes at
configure time: conftest.py) and dropped by that process at the end (``template_drop``): a later run never reads an
older run's schema; a run that was killed leaves its template behind, unused. Used by ``conftest.py``'s
``django_db_setup`` for PostgreSQL under pytest-xdist with migrations; everything else keeps pytest-django's own setup.
"""

from __future__ import annotations

import fcntl
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connections

ALIAS = "default"


def applies(*, use_migrations: bool, keepdb: bool, run: str | None) -> bool:
    """Whether the template is used: PostgreSQL, one database, migrations, a pytest-xdist process, no --reuse-db."""
    return (run is not None and use_migrations and not keepdb and list(settings.DATABASES) == [ALIAS]
            and connections[ALIAS].vendor == "postgresql")


def template_name(test_name: str, run: str) -> str:
    """``test_test_gw2`` (a process's test database) or ``test_test`` (the controller's) -> the run's template."""
    base = re.sub(r"_gw\d+$", "", test_name)
    return f"{base}_tpl_{run[:16]}"[:63]


@contextmanager
def _lock(name: str) -> Iterator[None]:
    with open(Path(tempfile.gettempdir()) / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _exists(cursor: Any, name: str) -> bool:  # noqa: ANN401
    cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    return cursor.fetchone() is not None


def setup(*, run: str, verbosity: int) -> str:
    """Make this process's test database as a copy of the run's template (migrating the template first if no
    process has yet); point the connection at it. Returns the name to give back to ``teardown``."""
    connection = connections[ALIAS]
    creation = connection.creation
    test_name = creation._get_test_db_name()  # noqa: SLF001
    template = template_name(test_name, run)
    quote = connection.ops.quote_name
    old_name = connection.settings_dict["NAME"]
    with _lock(template):
        with connection._nodb_cursor() as cursor:  # noqa: SLF001
            missing = not _exists(cursor, template)
        if missing:
            test_settings = connection.settings_dict["TEST"]
            own_name = test_settings.get("NAME")
            test_settings["NAME"] = template
            try:
                creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False)
            finally:
                test_settings["NAME"] = own_name
                connection.close()  # a template with a session on it cannot be copied
                settings.DATABASES[ALIAS]["NAME"] = connection.settings_dict["NAME"] = old_name
        with connection._nodb_cursor() as cursor:  # noqa: SLF001
            cursor.execute(f"DROP DATABASE IF EXISTS {quote(test_name)}")
            cursor.execute(f"CREATE DATABASE {quote(test_name)} TEMPLATE {quote(template)}")
    connection.close()
    settings.DATABASES[ALIAS]["NAME"] = connection.settings_dict["NAME"] = test_name
    connection.ensure_connection()
    return old_name


def teardown(old_name: str, *, verbosity: int) -> None:
    connections[ALIAS].creation.destroy_test_db(old_name, verbosity)


def template_drop(run: str) -> None:
    """The controller's end of the run: the run's template goes (if a process made one)."""
    if list(settings.DATABASES) != [ALIAS] or connections[ALIAS].vendor != "postgresql":
        return
    connection = connections[ALIAS]
    template = template_name(connection.creation._get_test_db_name(), run)  # noqa: SLF001
    with _lock(template), connection._nodb_cursor() as cursor:  # noqa: SLF001
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(template)}")
    connection.close()
