import pytest

from evaluation.judge_cache import DatabaseVerdictCache
from evaluation.judges import VerdictCache
from evaluation.models import JudgeVerdict


@pytest.mark.django_db
def test_database_cache_round_trip_and_first_verdict_wins() -> None:
    cache = DatabaseVerdictCache()
    assert isinstance(cache, VerdictCache)
    cache.set_many("openai:m", "answer_equivalence.v1",
                   {f"h{i}": {"equivalent": i % 2 == 0} for i in range(1200)})
    cache.set_many("openai:m", "answer_equivalence.v1", {"h0": {"equivalent": False}})
    assert JudgeVerdict.objects.count() == 1200
    got = cache.get_many("openai:m", "answer_equivalence.v1", [f"h{i}" for i in range(1300)])
    assert len(got) == 1200 and got["h0"] == {"equivalent": True} and got["h1"] == {"equivalent": False}
    assert cache.get_many("openai:m", "answer_equivalence.v2", ["h0"]) == {}
    assert cache.get_many("other", "answer_equivalence.v1", ["h0"]) == {}
