from trace_review.tests.helpers import _empty_cache, people, world  # noqa: F401 - fixtures
