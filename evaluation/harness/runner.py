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

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.endpoint_limits import BudgetExceeded
from evaluation.harness.client import IMAGE_TOKENS, Endpoint, EndpointUnusable
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
    stopped: str | None  # why the run stopped early (the budget), else None
    model_ids: list[str]
    path: Path | None
    refused: str | None = None  # why the endpoint could not be called at all (the run failed), else None


def run(items: Sequence[RunItem], modes: Sequence[str], endpoint: Endpoint, protocol: Protocol, *,
        concurrency: int = 4, out: Path | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None) -> tuple[list[dict[str, Any]], RunSummary]:
    """Runs every (item, mode); returns the lines in order and the summary, and writes them to
    ``out`` (JSON Lines, replaced atomically) when given. Setting ``cancel`` stops the run as the
    budget does: pairs not started are not run, those finished are kept."""
    pairs = [(i, item, mode) for i, item in enumerate(items) for mode in modes]
    results: dict[int, dict[str, Any]] = {}
    progress = Progress(total=len(pairs))
    stop = threading.Event()
    stopped: str | None = None
    refused: str | None = None
    lock = threading.Lock()

    def one(index: int, item: RunItem, mode: str) -> tuple[int, dict[str, Any] | None]:
        if stop.is_set() or (cancel is not None and cancel.is_set()):
            return index, None
        try:
            return index, run_one(item, mode, endpoint, protocol)
        except EndpointUnusable:
            stop.set()  # at once, from this thread: no pair starts after the first refusal
            raise

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="run")
    try:
        pending: set[Future] = {pool.submit(one, n, item, mode) for n, (_, item, mode) in enumerate(pairs)}
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
                except EndpointUnusable as exc:  # the first refusal ends the run: no pair is worth trying
                    if refused is None:
                        refused = str(exc)
                        stop.set()
                    continue
                if line is None:
                    continue
                with lock:
                    results[index] = line
                    progress.done += 1
                    if line.get("failure"):
                        progress.failures[line["failure"]] += 1
                    else:
                        progress.answered += 1
                    progress.sent = endpoint.counters.sent
                    progress.cached = endpoint.counters.cached
                    progress.spent_usd = endpoint.spending.spent_usd
                if on_progress is not None:
                    on_progress(progress)
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    if stopped is None and cancel is not None and cancel.is_set() and len(results) < len(pairs):
        stopped = CANCELLED
    lines = [results[n] for n in sorted(results)]
    if out is not None:
        write_lines(out, lines)
    model_ids = sorted({m for line in lines for m in line.get("run", {}).get("model_ids", [])})
    summary = RunSummary(
        lines=len(lines), answered=progress.answered, failures=dict(progress.failures),
        requests_sent=endpoint.counters.sent, requests_cached=endpoint.counters.cached,
        input_tokens=endpoint.counters.input_tokens, output_tokens=endpoint.counters.output_tokens,
        spent_usd=endpoint.spending.spent_usd, stopped=stopped, model_ids=model_ids, path=out, refused=refused)
    return lines, summary


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
