"""A judge that asks any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, a gateway).

Questions of one kind go in batches (``batch_size``, default 20): one request whose user message
is ``{"questions": [{"id": 0, ...payload}, ...]}`` under the kind's batch prompt (v2), answered by
``{"answers": [{"id": 0, ...verdict}, ...]}`` in the same order. With ``batch_size=1`` each
question is its own request under the single-question prompt (v1), the payload itself as the
user message. Every answer is strictly checked: a batch answered in the wrong order, with the
wrong number of answers or in a wrong shape is split in two and each half asked again (down to
single questions, which are retried with backoff), so one confused answer never costs the batch.

Batches run on a pool of ``max_concurrency`` threads that share one gate (``_Gate``): requests
and estimated tokens per minute stay under ``requests_per_minute`` / ``tokens_per_minute``, and
a 429 or 503 pauses *every* thread for its ``Retry-After`` (or the backoff), not only the one
refused. A timeout, a connection error, a 5xx, 408, 409 or 429 is retried with exponential
backoff (at most ``max_backoff`` between tries); other 4xx fail at once. A batch gives up (a
JudgeError) after ``max_retries`` retries, unless the judge is merely *flaky*: with ``patience``
set, it keeps trying as long as the judge has answered some request within the last ``patience``
seconds (a judge that answers half the time is slow, not dead), but never past ``deadline`` (the
run's time limit; the budget stops it as well). ``questions_asked`` and ``questions_judged``
count what a run asked and got, for the reason a failed run gives.

Verdicts go through an optional VerdictCache: a question already answered is never sent again,
and each batch's verdicts are stored as soon as it is answered (from the calling thread), so a
crash or a failure later in the run never pays for them twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import orjson

from evaluation.metrics.questions import (
    AnswerQuestion,
    KeyStepQuestion,
    StepScoreQuestion,
    ToolCallQuestion,
)

from evaluation.metrics.agentx_judged import (
    TRACE_FIGURES,
    AgentXStepQuestion,
    AgentXToolQuestion,
    AgentXTraceQuestion,
    is_unit,
)

from evaluation.endpoint_limits import (PAUSE_STATUS, BudgetExceeded, Gate, Spending, estimate_tokens, is_retriable,
                                        retry_after_seconds)

from .base import PROMPT_VERSIONS, SINGLE_PROMPT_VERSIONS, JudgeBudgetExceeded, JudgeError, load_prompt
from .cache import VerdictCache, input_hash

log = logging.getLogger(__name__)


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


def _unit_list(data: dict[str, Any], key: str, m: int) -> list[float]:
    v = data.get(key)
    if type(v) is not list or len(v) != m or not all(is_unit(x) for x in v):
        raise MalformedVerdict(f"'{key}' must be a list of {m} numbers from 0 to 1, got {v!r}")
    return [float(x) for x in v]


def _check_agentx_steps(data: dict[str, Any], q: AgentXStepQuestion) -> dict[str, Any]:
    return {"grounding": _unit_list(data, "grounding", q.n_pairs), "context": _unit_list(data, "context", q.n_pairs)}


def _check_agentx_tool(data: dict[str, Any], q: AgentXToolQuestion) -> dict[str, Any]:
    return {"tool_accuracy": _unit_list(data, "tool_accuracy", len(q.calls))}


def _check_agentx_trace(data: dict[str, Any], q: AgentXTraceQuestion) -> dict[str, Any]:
    out = {}
    for key in TRACE_FIGURES:
        v = data.get(key)
        if not is_unit(v):
            raise MalformedVerdict(f"'{key}' must be a number from 0 to 1, got {v!r}")
        out[key] = float(v)
    return out


Check = Callable[[dict[str, Any], Any], dict[str, Any]]
_OUTPUT_TOKENS_PER_QUESTION = 12  # for the tokens-per-minute estimate: {"id": 3, "valid": true}
# Agent-X's verdicts are longer: three named scores, or two lists of a few scores.
_OUTPUT_TOKENS_BY_KIND = {"agentx_trace": 32, "agentx_steps": 32, "agentx_tool_accuracy": 20}
_Gate = Gate  # the name the judge's tests know it by


def output_tokens_per_question(kind: str) -> int:
    """The output tokens one verdict of ``kind`` is reckoned at (rate gate, budget, estimate)."""
    return _OUTPUT_TOKENS_BY_KIND.get(kind, _OUTPUT_TOKENS_PER_QUESTION)


class OpenAIJudge:
    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_concurrency: int = 16,
        max_retries: int = 3,
        backoff: float = 0.5,
        batch_size: int = 20,
        requests_per_minute: int = 0,
        tokens_per_minute: int = 0,
        price_input: float = 0.0,
        price_output: float = 0.0,
        budget_usd: float = 0.0,
        cache: VerdictCache | None = None,
        name: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        patience: float = 0.0,
        deadline: float | None = None,
        max_backoff: float = 30.0,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.name = name or f"openai:{model}"
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.backoff = backoff
        self.batch_size = batch_size
        self.cache = cache
        self._sleep = sleep
        self.patience = patience  # seconds without any answer before a failing batch gives up (0: count only)
        self.deadline = deadline  # time.monotonic() after which no retry starts (None: none)
        self.max_backoff = max_backoff
        self._last_answer = time.monotonic()  # the judge's last good answer, from any thread
        self.questions_asked = 0  # distinct questions asked over this judge's calls (cached ones included)
        self.questions_judged = 0  # of which a verdict was had (from the cache or the server)
        self.gate = Gate(requests_per_minute, tokens_per_minute)
        import openai  # here, not with the module: evaluation/harness/client.py says why

        # Retries are ours (they also cover malformed answers), so the client makes none.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=0
        )
        self.versions = PROMPT_VERSIONS if batch_size > 1 else SINGLE_PROMPT_VERSIONS
        self._prompts = {kind: load_prompt(kind, v) for kind, v in self.versions.items()}
        # Dollars per million tokens, and what this judge may spend (0: no limit). Spending is
        # the answered requests' reported tokens, plus the estimate of those in flight.
        self.price_input = price_input
        self.price_output = price_output
        self.budget_usd = budget_usd
        # Spending against the budget is the shared machinery's (evaluation/endpoint_limits.py), as the
        # harness's is; `usage` is this judge's report of it (all threads), plus the questions answered.
        self.spending = Spending(price_input=price_input, price_output=price_output, budget_usd=budget_usd)
        self._usage_lock = threading.Lock()
        self.usage: dict[str, Any] = {"requests": 0, "questions": 0, "input_tokens": 0, "output_tokens": 0,
                                      "cost_usd": 0.0}

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        return self.spending.cost_usd(input_tokens, output_tokens)

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

    # ------------------------------------------------------------- Agent-X's judged figures
    def agentx_steps(self, questions: Sequence[AgentXStepQuestion]) -> list[tuple[tuple[float, float], ...]]:
        """(grounding, context) per aligned pair of each question."""
        got = self._ask("agentx_steps", questions, _check_agentx_steps)
        return [tuple(zip(v["grounding"], v["context"])) for v in got]

    def agentx_tool_accuracy(self, questions: Sequence[AgentXToolQuestion]) -> list[tuple[float, ...]]:
        got = self._ask("agentx_tool_accuracy", questions, _check_agentx_tool)
        return [tuple(v["tool_accuracy"]) for v in got]

    def agentx_trace(self, questions: Sequence[AgentXTraceQuestion]) -> list[tuple[float, float, float]]:
        """(faithfulness, factual precision, semantic accuracy) of each question."""
        got = self._ask("agentx_trace", questions, _check_agentx_trace)
        return [tuple(v[k] for k in TRACE_FIGURES) for v in got]  # type: ignore[misc]

    def close(self) -> None:
        self._client.close()
        close = getattr(self.cache, "close", None)
        if close is not None:
            close()

    # ------------------------------------------------------------- machinery
    def _ask(self, kind: str, questions: Sequence[Any], check: Check) -> list[dict[str, Any]]:
        if not questions:
            return []
        version = f"{kind}.{self.versions[kind]}"
        payloads = [q.payload() for q in questions]
        hashes = [input_hash(p) for p in payloads]
        known: dict[str, dict[str, Any]] = {}
        if self.cache is not None:
            known = dict(self.cache.get_many(self.name, version, set(hashes)))
        todo: dict[str, int] = {}  # identical questions in one call are asked once
        for i, h in enumerate(hashes):
            if h not in known and h not in todo:
                todo[h] = i
        items = [(h, payloads[i], questions[i]) for h, i in todo.items()]
        batches = [items[s:s + self.batch_size] for s in range(0, len(items), self.batch_size)]
        failure: BaseException | None = None
        if batches:
            pool = ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(batches)),
                                      thread_name_prefix="judge")
            try:
                pending: set[Future] = {pool.submit(self._batch, kind, b, check) for b in batches}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    fresh: dict[str, dict[str, Any]] = {}
                    for fut in done:
                        try:
                            fresh.update(fut.result())
                        except BaseException as exc:  # noqa: BLE001 - kept, raised once the rest is stored
                            if failure is None:
                                failure = exc
                                for other in pending:
                                    other.cancel()  # not started: never sent
                    if fresh:
                        # Kept as they arrive: what is paid for is stored even if a later batch fails.
                        if self.cache is not None:
                            self.cache.set_many(self.name, version, fresh)
                        known.update(fresh)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        with self._usage_lock:
            wanted = set(hashes)
            self.questions_asked += len(wanted)
            self.questions_judged += len(wanted.intersection(known))
        if failure is not None:
            raise failure
        return [known[h] for h in hashes]

    def _keeps_trying(self, attempt: int) -> bool:
        """After the failed try number ``attempt`` (0: the first) of a batch: try it again?"""
        now = time.monotonic()
        if self.deadline is not None and now >= self.deadline:
            return False
        if attempt < self.max_retries:
            return True
        return self.patience > 0 and now - self._last_answer < self.patience

    def _backoff(self, attempt: int) -> float:
        wait_s = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        if self.deadline is not None:
            wait_s = min(wait_s, max(0.0, self.deadline - time.monotonic()))
        return wait_s

    def _batch(self, kind: str, items: list[tuple[str, Any, Any]], check: Check) -> dict[str, dict[str, Any]]:
        """Verdicts by hash for one batch; a malformed answer splits it, other faults retry it."""
        import openai

        last: Exception | None = None
        attempt = -1
        while attempt < 0 or self._keeps_trying(attempt):
            attempt += 1
            if attempt and not (isinstance(last, openai.APIStatusError) and last.status_code in PAUSE_STATUS):
                self._sleep(self._backoff(attempt))  # (a 429/503 paused the gate instead)
            started = time.monotonic()
            try:
                got = self._request(kind, items, check)
            except MalformedVerdict as exc:
                if len(items) > 1:
                    half = len(items) // 2
                    log.warning("judge %s: %s batch of %d answered malformed (%s); asking its halves",
                                self.name, kind, len(items), exc)
                    return {**self._batch(kind, items[:half], check), **self._batch(kind, items[half:], check)}
                last = exc
                continue
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                last = exc
                continue
            except openai.APIStatusError as exc:
                if not is_retriable(exc.status_code):
                    raise JudgeError(
                        f"judge {self.name}: {kind} request refused with HTTP "
                        f"{exc.status_code}: {exc.message}"
                    ) from exc
                if exc.status_code in PAUSE_STATUS:
                    wait_s = retry_after_seconds(getattr(exc.response, "headers", None))
                    self.gate.pause(wait_s if wait_s is not None else self._backoff(attempt + 1))
                last = exc
                continue
            self._last_answer = time.monotonic()
            log.info("judge %s: %s batch of %d answered in %.2f s%s", self.name, kind, len(items),
                     time.monotonic() - started, f" (attempt {attempt + 1})" if attempt else "")
            return got
        raise JudgeError(
            f"judge {self.name}: no valid {kind} verdict after {attempt + 1} attempts; "
            f"last error: {type(last).__name__}: {last}"
        ) from last

    def _request(self, kind: str, items: list[tuple[str, Any, Any]], check: Check) -> dict[str, dict[str, Any]]:
        single = self.batch_size == 1
        if single:
            content = orjson.dumps(items[0][1]).decode()
        else:
            content = orjson.dumps({"questions": [{"id": i, **p} for i, (_, p, _) in enumerate(items)]}).decode()
        prompt = self._prompts[kind]
        est_in = estimate_tokens(prompt) + estimate_tokens(content)
        est_out = output_tokens_per_question(kind) * len(items)
        try:
            reserve = self.spending.reserve(est_in, est_out, what=f"{kind} request")
        except BudgetExceeded as exc:
            raise JudgeBudgetExceeded(
                f"judge {self.name}: the judge budget of ${self.budget_usd:g} would be exceeded "
                f"(${self.usage['cost_usd']:.4f} spent on {self.usage['questions']} questions, "
                f"the next {kind} request about ${self.cost_usd(est_in, est_out):.4f}); nothing more was asked"
            ) from exc
        with self._usage_lock:
            self.usage["requests"] += 1
        self.gate.enter(est_in + est_out)
        try:
            resp = self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": prompt}, {"role": "user", "content": content}],
                response_format={"type": "json_object"},
                temperature=0,
            )
            usage = getattr(resp, "usage", None)
            used_in = getattr(usage, "prompt_tokens", None)
            used_out = getattr(usage, "completion_tokens", None)
            if used_in is None or used_out is None:  # a server that does not report usage: the estimate
                used_in, used_out = est_in, est_out
        except BaseException:
            used_in = used_out = 0  # refused or lost: not billed (a timeout may be; it is not known)
            raise
        finally:
            self.spending.settle(reserve, used_in, used_out)
            with self._usage_lock:
                self.usage["input_tokens"] += used_in
                self.usage["output_tokens"] += used_out
                self.usage["cost_usd"] += self.cost_usd(used_in, used_out)
        try:
            text = resp.choices[0].message.content or ""
            data = orjson.loads(text)
        except (orjson.JSONDecodeError, IndexError, AttributeError) as exc:
            raise MalformedVerdict(f"not a JSON answer: {exc}") from exc
        if type(data) is not dict:
            raise MalformedVerdict(f"expected a JSON object, got {text[:80]!r}")
        if single:
            verdicts = {items[0][0]: check(data, items[0][2])}
        else:
            answers = data.get("answers")
            if type(answers) is not list or len(answers) != len(items):
                n = len(answers) if type(answers) is list else answers
                raise MalformedVerdict(f"'answers' must be a list of {len(items)} answers, got {n!r}")
            verdicts = {}
            for i, (answer, (h, _, q)) in enumerate(zip(answers, items)):
                if type(answer) is not dict or answer.get("id") != i:
                    got = answer.get("id") if type(answer) is dict else answer
                    raise MalformedVerdict(f"answer {i} must carry id {i}, got {got!r} (wrong order?)")
                verdicts[h] = check(answer, q)
        with self._usage_lock:
            self.usage["questions"] += len(items)
        return verdicts


def openai_judge_from_settings(settings: Any, cache: VerdictCache | None = None,
                               deadline: float | None = None) -> OpenAIJudge:
    """Build the judge from the JUDGE_OPENAI_* settings (a django.conf.settings-like object); ``deadline``
    (a time.monotonic() value): the run's time limit, past which a failing request is not tried again."""
    return OpenAIJudge(
        patience=float(getattr(settings, "JUDGE_OPENAI_PATIENCE_SECONDS", 0)),
        deadline=deadline,
        model=settings.JUDGE_OPENAI_MODEL,
        base_url=settings.JUDGE_OPENAI_BASE_URL or None,
        api_key=settings.JUDGE_OPENAI_API_KEY or None,
        timeout=float(settings.JUDGE_OPENAI_TIMEOUT),
        max_concurrency=int(settings.JUDGE_OPENAI_CONCURRENCY),
        max_retries=int(settings.JUDGE_OPENAI_MAX_RETRIES),
        batch_size=int(settings.JUDGE_OPENAI_BATCH),
        requests_per_minute=int(settings.JUDGE_OPENAI_RPM),
        tokens_per_minute=int(settings.JUDGE_OPENAI_TPM),
        price_input=float(settings.JUDGE_PRICE_INPUT),
        price_output=float(settings.JUDGE_PRICE_OUTPUT),
        budget_usd=float(settings.JUDGE_BUDGET_USD),
        cache=cache,
    )
