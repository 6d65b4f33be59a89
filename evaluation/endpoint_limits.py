"""What every caller of an OpenAI-compatible endpoint shares: the judge (evaluation/judges) and the
harness (evaluation/harness) both go through these, so a rate limit, a Retry-After or a budget
means the same thing for both.

- ``Gate``: requests and estimated tokens per minute stay under their limits, and a 429/503 pauses
  every thread of the caller for its Retry-After, not only the one refused;
- ``retry_after_seconds``: the wait a 429/503 asks for;
- ``estimate_tokens``: the rough token count used by gates, budgets and estimates;
- ``Spending``: money spent and reserved by requests in flight, against a budget.

Plain Python: no Django import (a test checks it).
"""

from __future__ import annotations

import email.utils
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

RETRIABLE_STATUS = frozenset({408, 409, 425, 429})  # besides every 5xx
PAUSE_STATUS = frozenset({429, 503})  # the server asks everyone to slow down
MAX_PAUSE = 300.0  # a Retry-After longer than this is read as this


def retry_after_seconds(headers: Any) -> float | None:
    """The wait a 429/503 asks for: ``retry-after-ms``, or ``Retry-After`` in seconds or as a date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration_seconds(value: str) -> float | None:
    """``6m0s``, ``1.5s``, ``20ms`` (the rate-limit headers' reset) or plain seconds."""
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def rate_limit_wait(headers: Any) -> float | None:
    """The wait the rate-limit headers ask for when a window is spent (``x-ratelimit-remaining-requests``
    or ``-tokens`` at 0: until its ``x-ratelimit-reset-*``), else None."""
    if headers is None:
        return None
    waits = []
    for kind in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{kind}")
        reset = headers.get(f"x-ratelimit-reset-{kind}")
        if remaining is None or reset is None:
            continue
        try:
            spent = float(remaining) <= 0
        except ValueError:
            continue
        seconds = _duration_seconds(reset) if spent else None
        if seconds is not None:
            waits.append(seconds)
    return max(waits) if waits else None


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), the same for the rate gate and the estimate."""
    return len(text) // 4 + 1


def is_retriable(status: int) -> bool:
    return status >= 500 or status in RETRIABLE_STATUS


class Gate:
    """What every request thread of one caller passes before sending: a pause set by any thread
    (Retry-After of a 429/503) holds them all, and the requests and estimated tokens of the last
    60 s stay under their per-minute limits (0 = no limit)."""

    def __init__(self, requests_per_minute: int = 0, tokens_per_minute: int = 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self.clock = clock
        self.lock = threading.Lock()
        self.resume_at = 0.0
        self.sent: deque[tuple[float, int]] = deque()
        self.tokens = 0
        self.paused_seconds = 0.0  # the time every thread was held by pauses (their union), for the bench

    def pause(self, seconds: float) -> None:
        with self.lock:
            now = self.clock()
            until = now + min(seconds, MAX_PAUSE)
            self.paused_seconds += max(0.0, until - max(self.resume_at, now))
            self.resume_at = max(self.resume_at, until)

    def enter(self, tokens: int) -> None:
        while True:
            with self.lock:
                now = self.clock()
                while self.sent and self.sent[0][0] <= now - 60:
                    self.tokens -= self.sent.popleft()[1]
                delay = self.resume_at - now
                if delay <= 0 and self.sent and (
                        (self.rpm and len(self.sent) >= self.rpm)
                        or (self.tpm and self.tokens + tokens > self.tpm)):
                    delay = self.sent[0][0] + 60 - now
                if delay <= 0:
                    self.sent.append((now, tokens))
                    self.tokens += tokens
                    return
            time.sleep(min(delay, 1.0))


class BudgetExceeded(RuntimeError):
    """The next request would take the spending past the budget; nothing more is sent."""


class Spending:
    """Dollars spent (reported usage) and reserved (estimates of requests in flight), against a
    budget (0: no limit). ``reserve`` before sending, ``settle`` when the answer (or the failure)
    comes back; both thread-safe."""

    def __init__(self, *, price_input: float = 0.0, price_output: float = 0.0, budget_usd: float = 0.0) -> None:
        self.price_input = price_input  # USD per million tokens
        self.price_output = price_output
        self.budget_usd = budget_usd
        self.lock = threading.Lock()
        self.reserved_usd = 0.0
        self.spent_usd = 0.0
        self.requests = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_input + output_tokens * self.price_output) / 1e6

    def reserve(self, input_tokens: int, output_tokens: int, *, what: str = "request") -> float:
        """Reserves the estimate of one request; raises BudgetExceeded when it would not fit."""
        amount = self.cost_usd(input_tokens, output_tokens)
        with self.lock:
            if self.budget_usd and self.spent_usd + self.reserved_usd + amount > self.budget_usd:
                raise BudgetExceeded(
                    f"the budget of ${self.budget_usd:g} would be exceeded (${self.spent_usd:.4f} spent on "
                    f"{self.requests} requests, the next {what} about ${amount:.4f}); nothing more was sent")
            self.reserved_usd += amount
            self.requests += 1
        return amount

    def settle(self, reserved: float, input_tokens: int, output_tokens: int) -> None:
        with self.lock:
            self.reserved_usd -= reserved
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            self.spent_usd += self.cost_usd(input_tokens, output_tokens)
