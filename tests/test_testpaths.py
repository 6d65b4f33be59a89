"""Every folder of tests is collected by the README's test command (pytest.ini's testpaths).

The routers app's 88 tests were left out of testpaths for a session: CI passed without running them.
"""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_tests_folder_is_in_testpaths() -> None:
    ini = configparser.ConfigParser()
    ini.read(ROOT / "pytest.ini")
    paths = set(ini["pytest"]["testpaths"].split())
    found = [*ROOT.glob("*/tests/test_*.py"), *ROOT.glob("*/*/tests/test_*.py"), *ROOT.glob("tests/test_*.py")]
    folders = {p.relative_to(ROOT).parts[0] for p in found} - {".venv"}
    assert "routers" in folders and "tests" in folders
    assert folders - paths == set(), f"test folders pytest never collects: {sorted(folders - paths)}"
