"""A whole run: the estimate before it starts, every (sample, mode) on a pool of threads, progress,
the budget, and the prediction file.

Lines are written in the benchmark's order (samples, then modes), whatever order they finish in,
so the same run makes the same file. A pair stopped by the budget writes no line (the scorer counts
it missing); everything finished before is kept. Interrupting a run loses nothing paid for: the
request cache holds every answer, and running again replays them. An endpoint whose address is
refused at connection (it turned private) stops the run at the first refusal (``refused``): its
caller ends the run failed and makes no submission of it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.endpoint_limits import BudgetExceeded
from evaluation.harness.client import IMAGE_TOKENS, Endpoint, EndpointUnusable, RunCancelled
from evaluation.harness.items import RunItem
from evaluation.harness.loop import Protocol, run_one
from evaluation.harness.prompts import load_prompt, question_block
from evaluation.harness.tools import function_schemas

# What the estimate assumes of an adaptive answer: this many requests (a call or two, then the
# answer); the upper bound is max_turns. Output tokens per request are reckoned at this share of
# max_tokens (answers rarely use all of it).
ADAPTIVE_TURNS_EXPECTED = 3
CANCELLED = "cancelled by its owner"
OUTPUT_SHARE = 0.5


@dataclass
class Estimate:
    pairs: int
    requests: int
    requests_max: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None without prices

    def describe(self) -> str:
        cost = "cost unknown (no prices given)" if self.cost_usd is None else f"about ${self.cost_usd:,.2f}"
        return (f"{self.pairs:,} (sample, mode) pairs: about {self.requests:,} requests (at most "
                f"{self.requests_max:,}), {self.input_tokens:,} input and {self.output_tokens:,} output tokens, {cost}")


def estimate(items: Sequence[RunItem], modes: Sequence[str], endpoint: Endpoint, protocol: Protocol) -> Estimate:
    settings = endpoint.settings
    requests = requests_max = tokens_in = 0
    for mode in modes:
        prompt = load_prompt(protocol.family, mode)
        base = (len(prompt.system) + len(prompt.user)) // 4
        if mode == "adaptive":
            base += sum(len(json.dumps(t)) for t in _schemas(protocol)) // 4
        turns = min(ADAPTIVE_TURNS_EXPECTED, protocol.max_turns) if mode == "adaptive" else 1
        for item in items:
            images = 0 if mode == "blind" else (1 if mode == "oracle" else len(item.media))
            first = base + len(question_block(item)) // 4 + images * IMAGE_TOKENS
            # Each later turn resends the conversation, plus one tool image and the last answer.
            tokens_in += sum(first + k * (IMAGE_TOKENS + int(settings.max_tokens * OUTPUT_SHARE)) for k in range(turns))
            requests += turns
            requests_max += protocol.max_turns if mode == "adaptive" else 1
    tokens_out = int(requests * settings.max_tokens * OUTPUT_SHARE)
    priced = settings.price_input or settings.price_output
    cost = endpoint.spending.cost_usd(tokens_in, tokens_out) if priced else None
    return Estimate(pairs=len(items) * len(modes), requests=requests, requests_max=requests_max,
                    input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)


def _schemas(protocol: Protocol) -> list[dict[str, Any]]:
    return function_schemas(protocol.tools)


@dataclass
class Progress:
    total: int
    done: int = 0
    answered: int = 0
    failures: Counter = field(default_factory=Counter)
    sent: int = 0
    cached: int = 0
    spent_usd: float = 0.0


@dataclass
class RunSummary:
    lines: int
    answered: int
    failures: dict[str, int]
    requests_sent: int
    requests_cached: int
    input_tokens: int
    output_tokens: int
    spent_usd: float
    stopped: str | None  # why the run stopped early (the budget, the provider's unavailability), else None
    model_ids: list[str]
    path: Path | None
    refused: str | None = None  # why the endpoint could not be called at all (the run failed), else None
    retried: dict[str, int] = field(default_factory=dict)  # pairs asked again, by the class they had failed with
    unavailable: bool = False  # stopped because the provider stayed unavailable past the patience


@dataclass
class Patience:
    """How a run waits out an unavailable provider (spec/runs.md): pairs whose failure was retriable are
    asked again in later passes, the n-th after ``backoff * 2**(n-1)`` seconds (at most ``backoff_max``,
    with jitter), until every pair is answered or failed for good, or ``seconds`` have gone by without a
    single answer: then the run stops, "the provider was unavailable"."""

    seconds: float = 1800.0
    backoff: float = 2.0
    backoff_max: float = 60.0

    def wait(self, n: int, rng: random.Random) -> float:
        base = min(self.backoff_max, self.backoff * 2 ** (n - 1))
        return float(base * (0.5 + rng.random() / 2))  # "equal jitter": never less than half the step


MALLOC_ARENAS = 2  # glibc malloc arenas for the process once a run's threads start (limit_malloc_arenas)


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas (``mallopt(M_ARENA_MAX)``, as ``MALLOC_ARENA_MAX`` would): each thread that
    decoded and encoded images otherwise keeps what it freed in an arena of its own. On 8K images with 16 pairs
    in flight that held the run's process at 1,070 MB; with 2 arenas, 628 MB (docs/performance.md). True when
    set; elsewhere than glibc, nothing."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(-8, arenas))  # M_ARENA_MAX
    except (OSError, AttributeError):
        return False


def run(items: Sequence[RunItem], modes: Sequence[str], endpoint: Endpoint, protocol: Protocol, *,
        concurrency: int = 4, out: Path | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None, patience: Patience | None = None) -> tuple[list[dict[str, Any]], RunSummary]:
    """Runs every (item, mode); returns the lines in order and the summary, and writes them to
    ``out`` (JSON Lines, replaced atomically) when given. Setting ``cancel`` stops the run as the
    budget does: pairs not started are not run, those finished are kept. A pair that failed because the
    endpoint was unavailable is asked again in a later pass (``Patience``)."""
    patience = patience or Patience()
    endpoint.cancel = cancel  # a cancel stops new requests at once, mid-conversation too
    pairs = [(i, item, mode) for i, item in enumerate(items) for mode in modes]
    results: dict[int, dict[str, Any]] = {}
    progress = Progress(total=len(pairs))
    stop = threading.Event()
    stopped: str | None = None
    refused: str | None = None
    lock = threading.Lock()
    last_answer = [time.monotonic()]  # when an answer last arrived (any pair)
    retried: Counter = Counter()
    unavailable = False

    def impatient() -> bool:
        return time.monotonic() - last_answer[0] > patience.seconds

    def one(index: int, item: RunItem, mode: str) -> tuple[int, dict[str, Any] | None]:
        if stop.is_set() or (cancel is not None and cancel.is_set()) or impatient():
            return index, None
        try:
            return index, run_one(item, mode, endpoint, protocol)
        except EndpointUnusable:
            stop.set()  # at once, from this thread: no pair starts after the first refusal
            raise

    def keep(index: int, line: dict[str, Any]) -> None:
        with lock:
            old = results.get(index)
            if old is not None:  # a pass asked it again: its earlier failure is replaced
                progress.done -= 1
                progress.failures[old["failure"]] -= 1
                if not progress.failures[old["failure"]]:
                    del progress.failures[old["failure"]]
            results[index] = line
            progress.done += 1
            if line.get("failure"):
                progress.failures[line["failure"]] += 1
            else:
                progress.answered += 1
                last_answer[0] = time.monotonic()
            progress.sent = endpoint.counters.sent
            progress.cached = endpoint.counters.cached
            progress.spent_usd = endpoint.spending.spent_usd
        if on_progress is not None:
            on_progress(progress)

    rng = random.Random(0)
    todo = list(range(len(pairs)))
    passes = 0
    limit_malloc_arenas()  # before the pool's threads allocate
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="run")
    try:
        while todo:
            pending: set[Future] = {pool.submit(one, n, pairs[n][1], pairs[n][2]) for n in todo}
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    try:
                        index, line = future.result()
                    except BudgetExceeded as exc:
                        if stopped is None:
                            stopped = str(exc)
                            stop.set()
                        continue
                    except RunCancelled:
                        stop.set()
                        continue
                    except EndpointUnusable as exc:  # the first refusal ends the run: no pair is worth trying
                        if refused is None:
                            refused = str(exc)
                            stop.set()
                        continue
                    if line is not None:
                        keep(index, line)
            todo = [n for n in sorted(results) if _retriable(results[n])]
            if not todo or stop.is_set() or (cancel is not None and cancel.is_set()):
                break
            passes += 1
            pause = patience.wait(passes, rng)
            if time.monotonic() + pause - last_answer[0] > patience.seconds:
                unavailable = True
                break
            if cancel is not None:
                cancel.wait(pause)
            else:
                stop.wait(pause)
            for n in todo:
                retried[results[n]["failure"]] += 1
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    if stopped is None and cancel is not None and cancel.is_set() and (
            len(results) < len(pairs) or any(_retriable(line) for line in results.values())):
        stopped = CANCELLED
    if stopped is None and refused is None and (unavailable or len(results) < len(pairs)):
        unavailable = True
        left = sum(1 for line in results.values() if _retriable(line)) + len(pairs) - len(results)
        stopped = (f"the provider was unavailable: no answer for {patience.seconds:g} s, {left} of {len(pairs)} "
                   "answers still missing")
    lines = [results[n] for n in sorted(results)]
    if out is not None:
        write_lines(out, lines)
    model_ids = sorted({m for line in lines for m in line.get("run", {}).get("model_ids", [])})
    summary = RunSummary(
        lines=len(lines), answered=progress.answered, failures=dict(progress.failures),
        requests_sent=endpoint.counters.sent, requests_cached=endpoint.counters.cached,
        input_tokens=endpoint.counters.input_tokens, output_tokens=endpoint.counters.output_tokens,
        spent_usd=endpoint.spending.spent_usd, stopped=stopped, model_ids=model_ids, path=out, refused=refused,
        retried=dict(retried), unavailable=unavailable and stopped is not None and stopped != CANCELLED)
    return lines, summary


def _retriable(line: dict[str, Any]) -> bool:
    return bool(line.get("failure")) and bool(line.get("run", {}).get("retriable"))


def write_lines(path: Path, lines: Sequence[dict[str, Any]]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    with partial.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(path)
