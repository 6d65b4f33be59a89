"""Judges: the offline (deterministic, default) judge and an OpenAI-compatible one.

No Django import: the evaluation app backs ``VerdictCache`` with a table in
``evaluation/judge_cache.py``.
"""

from .base import PROMPT_VERSIONS, Judge, JudgeBudgetExceeded, JudgeError, load_prompt
from .cache import InMemoryVerdictCache, VerdictCache, input_hash
from .offline import OfflineJudge

__all__ = [
    "PROMPT_VERSIONS", "InMemoryVerdictCache", "Judge", "JudgeBudgetExceeded", "JudgeError", "OfflineJudge",
    "VerdictCache", "input_hash", "load_prompt",
]


def __getattr__(name: str) -> object:
    # The openai package is imported only by those who ask for the remote judge.
    if name == "OpenAIJudge":
        from .openai_judge import OpenAIJudge

        return OpenAIJudge
    raise AttributeError(name)
