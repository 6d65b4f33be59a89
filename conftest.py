"""Suite-wide: every browser test also fails on a Content-Security-Policy violation.

Each page a browser test opens reports ``securitypolicyviolation`` events to its console; the test
fails if there was any (an inline script or handler, an eval, a source the policy does not list).
A test's own ``page.wait_for_function("expression")`` is eval'd in the page and counts too: write
``page.wait_for_function("() => expression")``, which is not.
"""

from __future__ import annotations

import asyncio
import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Subprocesses the tests start (`python -c "import evaluation.metrics ..."`, workers, scripts) find the project
# by this variable, not by the working directory they inherit: a CI run's second path once saw them fail
# with "No module named 'evaluation'" in one pytest-xdist process.
_ROOT = str(Path(__file__).resolve().parent)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)

# The browser tests' Chromium: one per test process, launched at the first test that asks for it (the
# ``chromium`` fixture) and closed at the end of the session. Starting Playwright's driver and Chromium
# takes 2-4 s on the CI machine, once a test before; each test now opens a context of its own (own cookies,
# storage and viewport) and the fixture closes whatever contexts the test left open.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


class _Chromium:
    """Playwright's sync API marks its event loop as running in this thread between calls; asyncio (and
    Django, which keeps a database connection of its own per context while a loop runs) would see it in every
    later test of the process. So the loop is marked running only inside a browser test."""

    def __init__(self) -> None:
        from playwright import sync_api  # a missing Playwright must fail, not skip

        self._manager = sync_api.sync_playwright()
        self._playwright = self._manager.start()
        self._loop = self._manager._loop  # noqa: SLF001 - the loop the sync API runs its calls on
        self.browser = self._launch()
        self.detach()

    def _launch(self) -> Any:  # noqa: ANN401
        return self._playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)

    def attach(self) -> Any:  # noqa: ANN401
        asyncio._set_running_loop(self._loop)  # noqa: SLF001
        if not self.browser.is_connected():  # crashed in an earlier test: a new one, not a cascade of failures
            self.browser = self._launch()
        return self.browser

    def detach(self) -> None:
        asyncio._set_running_loop(None)  # noqa: SLF001

    def close(self) -> None:
        self.attach()
        self.browser.close()
        self._playwright.stop()
        self.detach()


@pytest.fixture(scope="session")
def _chromium_process() -> Iterator[_Chromium]:
    chromium = _Chromium()
    yield chromium
    chromium.close()


@pytest.fixture
def chromium(_chromium_process: _Chromium, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The process's Chromium (a playwright Browser) for one test: open pages with ``new_context()`` or
    ``new_page()``; what the test leaves open is closed after it."""
    from django.db import connections

    # While the loop is marked running, Django's ORM refuses to run unless told that this thread is not async.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    browser = _chromium_process.attach()
    try:
        yield browser
    finally:
        for context in list(browser.contexts):
            context.close()
        # ORM calls made while the loop ran got connections of their own (Django keeps them per context while
        # a loop runs): close them here, or PostgreSQL could not drop the test database at the end.
        connections.close_all()
        _chromium_process.detach()


def _shuffled(items: list[pytest.Item], seed: int) -> list[pytest.Item]:
    """The files in a random order, and the tests of each file in a random order (a module's fixtures are still
    built once): the same for one seed, so every pytest-xdist process collects the same order."""
    rng = random.Random(seed)
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = list(modules.values())
    rng.shuffle(order)
    for tests in order:
        rng.shuffle(tests)
    return [item for tests in order for item in tests]


def pytest_configure(config: pytest.Config) -> None:
    """The controlling process of a pytest-xdist run fixes the run's id before it starts the processes, so that it
    can drop the run's template database at the end (config/test_databases.py)."""
    if not hasattr(config, "workerinput") and getattr(config.option, "testrunuid", "") is None:
        config.option.testrunuid = uuid.uuid4().hex


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = getattr(session.config.option, "testrunuid", None)
    if hasattr(session.config, "workerinput") or not run or getattr(session.config.option, "numprocesses", None) in (
            None, 0):
        return
    from pytest_django.plugin import blocking_manager_key

    from config import test_databases

    with session.config.stash[blocking_manager_key].unblock():
        test_databases.template_drop(run)


@pytest.fixture(scope="session")
def django_db_setup(request: pytest.FixtureRequest, django_test_environment: None, django_db_blocker: Any,
                    django_db_use_migrations: bool, django_db_keepdb: bool, django_db_createdb: bool,
                    django_db_modify_db_settings: None) -> Iterator[None]:
    """pytest-django's test database setup, but on PostgreSQL under pytest-xdist each process's database is a copy
    of one migrated for the whole run (config/test_databases.py): the migrations once per run, not per process."""
    from config import test_databases

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") if hasattr(request.config, "workerinput") else None
    verbosity = request.config.option.verbose
    if not test_databases.applies(use_migrations=django_db_use_migrations,
                                  keepdb=django_db_keepdb and not django_db_createdb, run=run):
        from pytest_django import fixtures

        yield from fixtures.django_db_setup.__wrapped__(  # type: ignore[attr-defined]
            request, django_test_environment, django_db_blocker, django_db_use_migrations, django_db_keepdb,
            django_db_createdb, django_db_modify_db_settings)
        return
    with django_db_blocker.unblock():
        old_name = test_databases.setup(run=str(run), verbosity=verbosity)
    yield
    with django_db_blocker.unblock():
        test_databases.teardown(old_name, verbosity=verbosity)


def _weight(item: pytest.Item) -> int:
    """How early a test's file goes: files with a long test (``slow``), then those that start workers, then those
    that drive Chromium, then the rest."""
    for rank, mark in enumerate(("slow", "worker", "browser")):
        if item.get_closest_marker(mark) is not None:
            return rank
    return 3


def _long_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The files with the longest tests first, each file's tests together and in their order: pytest-xdist hands
    out the files in this order (--dist loadfile, pytest.ini), so the long ones start while the short ones fill the
    other processes, instead of one process running a minute-long file alone at the end. Files of the same weight
    keep the files' order."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = sorted(modules.values(), key=lambda tests: min(_weight(t) for t in tests))
    return [item for tests in order for item in tests]


def pytest_report_header(config: pytest.Config) -> str | None:  # noqa: ARG001
    seed = os.environ.get("TEST_ORDER_SEED")
    return f"tests in a random order: TEST_ORDER_SEED={seed} repeats it" if seed else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With TEST_ORDER_SEED set, the tests run in an order drawn from it (a test that passes only after another,
    or only alone, shows up); unset (CI), the files with long tests first (``_long_first``).

    .ci/run's first path (CI_FIRST_PATH=1: SQLite, the embedded broker) runs what can depend on them
    (``_depends_on_the_embedded_default``); its second path (CI_SECOND_PATH=1: PostgreSQL and Redis) runs the rest
    too, but skips what the first already ran exactly as it would run here: tests marked ``same_on_every_path``."""
    seed = os.environ.get("TEST_ORDER_SEED")
    if seed:
        items[:] = _shuffled(items, int(seed))
    else:
        items[:] = _long_first(items)
    if os.environ.get("CI_FIRST_PATH") == "1":  # the rest is deselected here (run by the second path), not skipped
        elsewhere = [item for item in items if not _depends_on_the_embedded_default(item)]
        items[:] = [item for item in items if _depends_on_the_embedded_default(item)]
        config.hook.pytest_deselected(items=elsewhere)
    if os.environ.get("CI_SECOND_PATH") == "1":
        once = pytest.mark.skip(reason="same on every path: run by .ci/run's first path (SQLite, embedded broker)")
        for item in items:
            if item.get_closest_marker("same_on_every_path") is not None:
                item.add_marker(once)


def _depends_on_the_embedded_default(item: pytest.Item) -> bool:
    """What .ci/run's first path (SQLite and the embedded broker, as on a fresh machine) runs: tests of the embedded
    default itself (``same_on_every_path``), tests with real workers (the broker, and a database file shared between
    processes), tests that commit (``django_db(transaction=True)``: SQLite's locking differs from PostgreSQL's)
    other than the browser tests, and tests marked ``every_path`` (limits, query counts, the whole demo crawled).
    The rest reads and writes through the ORM inside one transaction, or touches no database: the second path
    runs all of it, on the production database. ``./scripts/test`` alone (no CI_FIRST_PATH) runs everything."""
    if any(item.get_closest_marker(m) is not None for m in ("same_on_every_path", "worker", "every_path")):
        return True
    if item.get_closest_marker("browser") is not None:
        return False
    marker = item.get_closest_marker("django_db")
    committed = marker is not None and bool(marker.kwargs.get("transaction"))
    return committed or "transactional_db" in getattr(item, "fixturenames", ())


CSP_MARK = "CSP violation:"
REPORT = ("document.addEventListener('securitypolicyviolation', e => console.error("
          f"'{CSP_MARK} ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' in ' + e.documentURI"
          " + ' ' + (e.sample || '')));")


@pytest.fixture(autouse=True)
def _no_csp_violations(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202
    if request.node.get_closest_marker("browser") is None:
        yield
        return
    from playwright.sync_api import Browser, BrowserContext

    seen: list[str] = []

    def watched(real):  # noqa: ANN001, ANN202
        def new_page(self, *args, **kwargs):  # noqa: ANN001, ANN202
            page = real(self, *args, **kwargs)
            page.add_init_script(REPORT)
            page.on("console", lambda m: seen.append(m.text) if CSP_MARK in m.text else None)
            return page
        return new_page

    for cls in (Browser, BrowserContext):
        monkeypatch.setattr(cls, "new_page", watched(cls.new_page))
    yield
    assert not seen, ("Content-Security-Policy violations (for 'blocked eval' from the test itself: "
                      "wait_for_function('() => ...')):\n" + "\n".join(seen))
