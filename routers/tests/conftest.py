from __future__ import annotations

import pytest
from django.core.cache import cache

from routers.tests import helpers


@pytest.fixture
def benchmark(tmp_path):  # noqa: ANN201
    """The hand-built pool (routers.tests.helpers), with an empty cache (the baselines are cached by pool)."""
    cache.clear()
    return helpers.make_pool(tmp_path)
