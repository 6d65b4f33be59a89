"""One chat-completions request of a run: the cache first, then the shared gate (requests and
tokens per minute, Retry-After), retries with backoff, and the budget (evaluation/endpoint_limits).

A request that still fails after its retries ends the (sample, mode) with a failure class:
``timeout`` (the last attempt timed out) or ``provider_error`` (refused, 5xx, a broken answer). A
4xx other than 408/409/429 is not retried, nor is an address the guard refuses or an answer over
the size cap (safe_http.py: both end the pair as ``provider_error`` with the guard's words).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evaluation.endpoint_limits import (PAUSE_STATUS, BudgetExceeded, Gate, Spending, estimate_tokens,
                                        is_retriable, rate_limit_wait, retry_after_seconds)
from evaluation.harness.cache import RequestCache, endpoint_identity, request_key
from evaluation.harness.safe_http import EndpointRefused, ResponseRefused, safe_http_client

if TYPE_CHECKING:
    import openai

# The openai SDK is imported where a request is made, not with this module: every Django process imports this one
# (the URLs reach it through the runs' API), and importing the SDK and its types cost 1-2.5 s of CPU at each start of
# a web process, a worker or a management command (docs/performance.md, "Round five").

log = logging.getLogger(__name__)
IMAGE_TOKENS = 765  # what one image is reckoned at before the endpoint reports usage (a 1024 px tile grid)


class EndpointUnusable(Exception):
    """The endpoint cannot be called at all (its address was refused at connection: it turned private,
    DNS rebinding): the run ends failed at once, with this reason; no pair is answered by retrying."""


class RunCancelled(Exception):
    """The run was cancelled: no new request is sent; the pair writes no line."""


class Failure(Exception):
    """The (sample, mode) ends without an answer, with this class (spec/runs.md). ``retriable``: the
    endpoint was unavailable (timeouts, 5xx, connection errors after their retries, rate limits beyond
    the run's patience); the run asks the pair again in a later pass. Otherwise asking again cannot
    change it (a 4xx, a content filter, the turn limit, an answer over the size cap)."""

    def __init__(self, klass: str, detail: str, *, retriable: bool = False) -> None:
        super().__init__(detail)
        self.klass = klass
        self.detail = detail
        self.retriable = retriable


@dataclass(frozen=True)
class Settings:
    """What a run sends and how: recorded on every line (``sampling``) and part of every cache key."""

    model: str
    base_url: str
    api_key: str = ""
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 1024
    timeout: float = 120.0
    max_retries: int = 3
    backoff: float = 0.5
    # Seconds without an answer after which rate limits (429/503) end a request, and the run stops
    # retrying unavailable pairs (runner.py): "the provider was unavailable".
    patience: float = 1800.0
    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    price_input: float = 0.0  # USD per million tokens
    price_output: float = 0.0
    budget_usd: float = 0.0
    # A checkout calling its own vLLM is the common case; a hosted run passes False (safe_http.py).
    allow_private_addresses: bool = True
    max_response_bytes: int = 16_000_000

    def sampling(self) -> dict[str, Any]:
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            out["seed"] = self.seed
        return out


@dataclass
class Counters:
    """What the run did, all threads: requests sent and replayed from the cache, tokens, retries."""

    sent: int = 0
    cached: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **values: int) -> None:
        with self.lock:
            for key, value in values.items():
                setattr(self, key, getattr(self, key) + value)


def estimate_request_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """The request's tokens as the shared rule reckons text (endpoint_limits.estimate_tokens), plus
    IMAGE_TOKENS an image."""
    texts: list[str] = []
    images = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                else:
                    images += 1
        texts.extend(str(call) for call in message.get("tool_calls") or ())
    texts.extend(str(tool) for tool in tools or ())
    return estimate_tokens("".join(texts)) + images * IMAGE_TOKENS


class Endpoint:
    def __init__(self, settings: Settings, *, cache: RequestCache | None = None,
                 client: openai.OpenAI | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.cache = cache
        self.gate = Gate(settings.requests_per_minute, settings.tokens_per_minute)
        self.spending = Spending(price_input=settings.price_input, price_output=settings.price_output,
                                 budget_usd=settings.budget_usd)
        self.counters = Counters()
        self.cancel: threading.Event | None = None  # set: no new request is sent (the run's cancel)
        self._sleep = sleep
        import openai

        # Retries are ours (a 429 pauses every thread), so the client makes none.
        self._client = client or openai.OpenAI(
            base_url=settings.base_url, api_key=settings.api_key or "none", timeout=settings.timeout, max_retries=0,
            http_client=safe_http_client(allow_private=settings.allow_private_addresses, timeout=settings.timeout,
                                         max_response_bytes=settings.max_response_bytes))

    def close(self) -> None:
        self._client.close()

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> tuple[dict[str, Any], bool]:
        """(the answer as a plain dict, whether it came from the cache); raises Failure, BudgetExceeded or
        EndpointUnusable. The cache is looked up by its owner and this endpoint (cache.py)."""
        request: dict[str, Any] = {"endpoint": endpoint_identity(self.settings.base_url), "model": self.settings.model,
                                   "messages": messages, "sampling": self.settings.sampling()}
        if tools:
            request["tools"] = tools
        key = request_key(self.cache.owner, request) if self.cache is not None else ""
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.counters.add(cached=1)
                return hit, True
        if self.cancel is not None and self.cancel.is_set():
            raise RunCancelled("cancelled by its owner")
        if self.cache is None:
            return self._send(messages, tools), False
        self.cache.sending(key)
        try:
            answer = self._send(messages, tools)
        except Exception:
            self.cache.unanswered(key)
            raise
        usage = answer.get("usage") or {}  # kept as soon as it is paid for, with what it cost
        self.cache.put(key, answer, cost_usd=self.spending.cost_usd(int(usage.get("prompt_tokens") or 0),
                                                                    int(usage.get("completion_tokens") or 0)))
        return answer, False

    def _send(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """One request, retried: a timeout, a connection error, a 5xx, 408, 409 or 425 uses one of
        ``max_retries`` (with backoff); a 429 or 503 uses none, it pauses every thread of the run for its
        Retry-After (or the rate-limit headers' reset) and is asked again, until ``patience`` seconds have
        gone by without an answer. What still fails is a retriable Failure (the run tries the pair again
        in a later pass, runner.py), except a refusal that asking again cannot change."""
        import openai

        est_in = estimate_request_tokens(messages, tools)
        est_out = self.settings.max_tokens
        last: Exception | None = None
        attempt = 0  # retries used (429/503 use none)
        started = time.monotonic()
        while True:
            if last is not None:
                if isinstance(last, openai.APIStatusError) and last.status_code in PAUSE_STATUS:
                    if time.monotonic() - started > self.settings.patience:
                        break
                else:
                    if attempt >= self.settings.max_retries:
                        break
                    attempt += 1
                    self._sleep(self.settings.backoff * 2 ** (attempt - 1))
                if self.cancel is not None and self.cancel.is_set():
                    raise RunCancelled("cancelled by its owner")
                self.counters.add(retries=1)
            reserved = self.spending.reserve(est_in, est_out, what="model request")
            used_in = used_out = 0
            try:
                self.gate.enter(est_in + est_out)
                self.counters.add(sent=1)
                kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages,
                                          **self.settings.sampling()}
                if tools:
                    kwargs["tools"] = tools
                raw = self._client.chat.completions.with_raw_response.create(**kwargs)
                wait_s = rate_limit_wait(raw.headers)
                if wait_s:  # the endpoint says its window is spent: every thread waits for the reset
                    self.gate.pause(wait_s)
                answer = _plain(raw.parse())
                usage = answer.get("usage") or {}
                used_in = int(usage.get("prompt_tokens") or 0)
                used_out = int(usage.get("completion_tokens") or 0)
                self.counters.add(input_tokens=used_in, output_tokens=used_out)
                return answer
            except EndpointRefused as exc:  # the address: the same for every request of the run
                raise EndpointUnusable(str(exc)) from exc
            except ResponseRefused as exc:  # this answer (too large): the same again on a retry
                raise Failure("provider_error", str(exc)) from exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                guard = _guard_error(exc)
                if isinstance(guard, EndpointRefused):
                    raise EndpointUnusable(str(guard)) from exc
                if guard is not None:
                    raise Failure("provider_error", str(guard)) from exc
                last = exc
            except openai.APIStatusError as exc:
                if not is_retriable(exc.status_code):
                    raise Failure("provider_error", f"the endpoint refused the request with HTTP {exc.status_code}: "
                                                    f"{_short(exc.message)}") from exc
                if exc.status_code in PAUSE_STATUS:
                    headers = getattr(exc.response, "headers", None)
                    wait_s = retry_after_seconds(headers)
                    if wait_s is None:
                        wait_s = rate_limit_wait(headers)
                    self.gate.pause(wait_s if wait_s is not None else self.settings.backoff * 2 ** attempt)
                last = exc
            except (openai.OpenAIError, ValueError) as exc:  # an answer the client cannot read
                last = exc
            finally:
                self.spending.settle(reserved, used_in, used_out)
        klass = "timeout" if isinstance(last, openai.APITimeoutError) else "provider_error"
        tries = (f"{attempt + 1} attempts" if not isinstance(last, openai.APIStatusError)
                 or last.status_code not in PAUSE_STATUS else f"{self.settings.patience:g} s of rate limits")
        raise Failure(klass, f"no answer after {tries}; last error: {_describe(last)}", retriable=True)


def _guard_error(exc: BaseException) -> BaseException | None:
    """The guard's refusal behind an SDK error, if the SDK wrapped it (openai 3.54 does not)."""
    seen = exc.__cause__ or exc.__context__
    for _ in range(8):
        if seen is None or isinstance(seen, (EndpointRefused, ResponseRefused)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _describe(exc: Exception | None) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {_short(exc.message)}"
    return f"{type(exc).__name__}: {_short(str(exc))}"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _plain(response: Any) -> dict[str, Any]:
    """The parts of a completion a run reads, as JSON-ready data (what the cache stores)."""
    data = response.model_dump(mode="json") if hasattr(response, "model_dump") else dict(response)
    choices = data.get("choices") or []
    if not choices:
        raise ValueError("the answer has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    kept_message = {"content": message.get("content"), "tool_calls": message.get("tool_calls") or []}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        kept_message["reasoning"] = reasoning
    return {"id": data.get("id"), "model": data.get("model"), "finish_reason": choice.get("finish_reason"),
            "message": kept_message, "usage": data.get("usage") or {}}


__all__ = ["BudgetExceeded", "Counters", "Endpoint", "EndpointUnusable", "Failure", "RunCancelled", "Settings",
           "estimate_request_tokens"]
