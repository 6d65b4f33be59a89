"""A judge that asks any OpenAI-compatible chat-completions server (OpenAI, vLLM, a gateway).

Each question is one request with the versioned prompt as the system message and the
question's payload as JSON in the user message; the answer must be a JSON object of a fixed
shape. Requests run on a bounded thread pool; a timeout, a connection error, a 5xx/429 or a
malformed answer is retried with exponential backoff; after the last retry the batch fails
with a JudgeError. Verdicts go through an optional VerdictCache, so a question already
answered is never sent again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import orjson

from evaluation.metrics.questions import (
    AnswerQuestion,
    KeyStepQuestion,
    StepScoreQuestion,
    ToolCallQuestion,
)

from .base import PROMPT_VERSIONS, JudgeError, load_prompt
from .cache import VerdictCache, input_hash


class MalformedVerdict(ValueError):
    """The server answered, but not with the JSON shape the prompt asks for."""


def _bool_field(data: dict[str, Any], key: str) -> bool:
    v = data.get(key)
    if type(v) is not bool:
        raise MalformedVerdict(f"'{key}' must be true or false, got {v!r}")
    return v


def _check_answer(data: dict[str, Any], q: Any) -> dict[str, Any]:
    return {"equivalent": _bool_field(data, "equivalent")}


def _check_valid(data: dict[str, Any], q: Any) -> dict[str, Any]:
    return {"valid": _bool_field(data, "valid")}


def _check_matched(data: dict[str, Any], q: KeyStepQuestion) -> dict[str, Any]:
    v = data.get("matched")
    m = len(q.sample.key_steps)
    if type(v) is not list or len(v) != m or any(type(x) is not bool for x in v):
        raise MalformedVerdict(f"'matched' must be a list of {m} booleans, got {v!r}")
    return {"matched": v}


def _check_scores(data: dict[str, Any], q: StepScoreQuestion) -> dict[str, Any]:
    v = data.get("scores")
    m = len(q.steps)
    if (type(v) is not list or len(v) != m
            or any(type(x) is bool or x not in (0, 0.5, 1) for x in v)):
        raise MalformedVerdict(f"'scores' must be a list of {m} values in 0, 0.5, 1, got {v!r}")
    return {"scores": [float(x) for x in v]}


_RETRIABLE_STATUS = frozenset({408, 409, 429})


class OpenAIJudge:
    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_concurrency: int = 4,
        max_retries: int = 3,
        backoff: float = 0.5,
        cache: VerdictCache | None = None,
        name: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.model = model
        self.name = name or f"openai:{model}"
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache = cache
        self._sleep = sleep
        # Retries are ours (they also cover malformed answers), so the client makes none.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=0
        )
        self._prompts = {kind: load_prompt(kind) for kind in PROMPT_VERSIONS}

    # ------------------------------------------------------------- four kinds
    def answer_equivalence(self, questions: Sequence[AnswerQuestion]) -> list[bool]:
        got = self._ask("answer_equivalence", questions, _check_answer)
        return [v["equivalent"] for v in got]

    def key_step_matching(self, questions: Sequence[KeyStepQuestion]) -> list[tuple[bool, ...]]:
        got = self._ask("key_step_matching", questions, _check_matched)
        return [tuple(v["matched"]) for v in got]

    def tool_call_validity(self, questions: Sequence[ToolCallQuestion]) -> list[bool]:
        got = self._ask("tool_call_validity", questions, _check_valid)
        return [v["valid"] for v in got]

    def step_scores(self, questions: Sequence[StepScoreQuestion]) -> list[tuple[float, ...]]:
        got = self._ask("step_scores", questions, _check_scores)
        return [tuple(v["scores"]) for v in got]

    # ------------------------------------------------------------- machinery
    def _ask(self, kind: str, questions: Sequence[Any],
             check: Callable[[dict[str, Any], Any], dict[str, Any]]) -> list[dict[str, Any]]:
        if not questions:
            return []
        version = f"{kind}.{PROMPT_VERSIONS[kind]}"
        payloads = [q.payload() for q in questions]
        hashes = [input_hash(p) for p in payloads]
        known: dict[str, dict[str, Any]] = {}
        if self.cache is not None:
            known = dict(self.cache.get_many(self.name, version, set(hashes)))
        todo: dict[str, int] = {}  # identical questions in one batch are asked once
        for i, h in enumerate(hashes):
            if h not in known and h not in todo:
                todo[h] = i
        if todo:
            prompt = self._prompts[kind]

            def one(i: int) -> dict[str, Any]:
                return self._request(kind, prompt, payloads[i], questions[i], check)

            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(todo))) as pool:
                fresh = dict(zip(todo, pool.map(one, todo.values())))
            if self.cache is not None:
                self.cache.set_many(self.name, version, fresh)
            known.update(fresh)
        return [known[h] for h in hashes]

    def _request(self, kind: str, prompt: str, payload: dict[str, Any], question: Any,
                 check: Callable[[dict[str, Any], Any], dict[str, Any]]) -> dict[str, Any]:
        content = orjson.dumps(payload).decode()
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep(self.backoff * 2 ** (attempt - 1))
            try:
                resp = self._client.chat.completions.create(
                    model=self.model,
                    messages=[{"role": "system", "content": prompt},
                              {"role": "user", "content": content}],
                    response_format={"type": "json_object"},
                    temperature=0,
                )
                text = resp.choices[0].message.content or ""
                data = orjson.loads(text)
                if type(data) is not dict:
                    raise MalformedVerdict(f"expected a JSON object, got {text[:80]!r}")
                return check(data, question)
            except (MalformedVerdict, orjson.JSONDecodeError, IndexError, AttributeError) as exc:
                last = exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                last = exc
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code not in _RETRIABLE_STATUS:
                    raise JudgeError(
                        f"judge {self.name}: {kind} request refused with HTTP "
                        f"{exc.status_code}: {exc.message}"
                    ) from exc
                last = exc
        raise JudgeError(
            f"judge {self.name}: no valid {kind} verdict after {self.max_retries + 1} attempts; "
            f"last error: {type(last).__name__}: {last}"
        ) from last


def openai_judge_from_settings(settings: Any, cache: VerdictCache | None = None) -> OpenAIJudge:
    """Build the judge from the JUDGE_OPENAI_* settings (a django.conf.settings-like object)."""
    return OpenAIJudge(
        model=settings.JUDGE_OPENAI_MODEL,
        base_url=settings.JUDGE_OPENAI_BASE_URL or None,
        api_key=settings.JUDGE_OPENAI_API_KEY or None,
        timeout=float(settings.JUDGE_OPENAI_TIMEOUT),
        max_concurrency=int(settings.JUDGE_OPENAI_CONCURRENCY),
        max_retries=int(settings.JUDGE_OPENAI_MAX_RETRIES),
        cache=cache,
    )
